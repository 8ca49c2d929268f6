"""The command an extra's refusal gives is one a user of a clone can run: benchcard is not on PyPI, so
`pip install 'benchcard[parquet]'` found nothing."""

from __future__ import annotations

import re
import shlex
import sys
import tomllib
from pathlib import Path

from benchcard._util.version import pip_install

REPO = Path(__file__).resolve().parents[2]


def test_an_extra_is_installed_from_the_clone_by_the_running_python() -> None:
    assert shlex.split(pip_install("parquet")) == [sys.executable, "-m", "pip", "install", "-e", f"{REPO}[parquet]"]


def test_every_extra_a_refusal_names_is_one_pyproject_declares() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    named = {name for path in (REPO / "src").rglob("*.py")
             for name in re.findall(r"pip_install\(['\"](\w+)['\"]\)", path.read_text(encoding="utf-8"))}
    assert named == {"local", "parquet", "inspect"} and named <= set(extras)
