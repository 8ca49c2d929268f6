"""The CLI as a user meets it: invoke `benchcard` on a project, and the shape of a user error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import benchcard
from benchcard.cli import cli


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def one_line_error(result: Result) -> str:
    """A user error: exit 1, nothing on stdout, exactly one line on stderr starting `error:`, no traceback."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def exit_and_streams(project: Path, *args: str) -> tuple[int, str, str]:
    """`benchcard -C project args…` as (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, ["-C", str(project), *args])
    return result.exit_code, result.stdout, result.stderr


def as_a_user(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m benchcard args…` in a child process that file permissions hold for: as root (a container) without
    the capabilities that override them, which `setpriv` drops; as any other user, as it is."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root, and no setpriv to drop the capabilities that pass over file permissions")
        caps = "-dac_override,-dac_read_search,-fowner"
        prefix = [setpriv, "--bounding-set", caps, "--inh-caps", caps]
    src = str(Path(benchcard.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([*prefix, sys.executable, "-m", "benchcard", *args], capture_output=True, text=True,
                          timeout=120, env=env, check=False)
