"""`python -m benchcard` is the same command line as `benchcard`."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "benchcard", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout and "verdict" in done.stdout
