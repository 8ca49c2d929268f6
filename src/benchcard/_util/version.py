"""The package version, and how to add an extra to this installation, kept apart so that any module may import
them without importing the public API."""

import shlex
import sys
from pathlib import Path

__version__ = "0.1.0"


def pip_install(extra: str) -> str:
    """The command that adds one of pyproject.toml's extras to the running installation. benchcard is installed
    from its clone and is not on PyPI, where `pip install 'benchcard[x]'` finds nothing (or a stranger's
    package): from a clone, the clone's folder with the pip of the Python running now."""
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file() and (root / "src" / "benchcard").is_dir():
        return f"{shlex.quote(sys.executable)} -m pip install -e {shlex.quote(f'{root}[{extra}]')}"
    return f"pip install {shlex.quote(f'benchcard[{extra}]')}"
