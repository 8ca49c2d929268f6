"""The demo card run once on the embedded model and shared: the suite's most expensive run (100 cells of SmolLM2),
made by the first test that asks for it (tests/helpers_once.py) and copied into each test that reads it
(tests/conftest.py's `demo_run`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from benchcard.cli import cli

from .helpers_once import made_once
from .helpers_project import copy_project

DEMO = "demo-answer-cue"
BENCHCARD = Path(sys.executable).with_name("benchcard")


@dataclass(frozen=True)
class DemoRun:
    """`benchcard run demo-answer-cue --provider local --json`, run in a subprocess as a user runs it, in a project
    holding the demo card sealed: the project folder and what the command returned (the run is not judged)."""

    root: Path
    returncode: int
    stdout: str
    stderr: str
    wall: float

    def copy_to(self, dest: Path) -> DemoRun:
        """The same run in a folder of the caller's own, which it may judge, gate or change."""
        shutil.copytree(self.root, dest)
        return replace(self, root=dest)


def sealed_demo(dest: Path) -> Path:
    """The demo card with the repository's seals (v4, ten fixtures × 5 repetitions, the version `make demo`
    runs), sealed again by `benchcard seal`."""
    root = copy_project(dest, (DEMO,), seals=True)
    result = CliRunner().invoke(cli, ["-C", str(root), "seal", DEMO])
    assert result.exit_code == 0, result.output
    return root


def benchcard_exe() -> str:
    """The installed `benchcard` script beside this Python (the one a user's shell finds)."""
    assert BENCHCARD.is_file() or shutil.which("benchcard")
    return str(BENCHCARD) if BENCHCARD.is_file() else "benchcard"


def run_demo(root: Path) -> DemoRun:
    started = time.perf_counter()
    done = subprocess.run([benchcard_exe(), "-C", str(root), "run", DEMO, "--provider", "local", "--json"],
                          capture_output=True, text=True, timeout=600, check=False)
    return DemoRun(root, done.returncode, done.stdout, done.stderr, time.perf_counter() - started)


def shared_demo_run(folder: Path) -> DemoRun:
    """The demo run made once in `folder` (`helpers_once.made_once`) and read by every test that asks."""
    def make(made: Path) -> dict[str, Any]:
        return {k: v for k, v in asdict(run_demo(sealed_demo(made / "proj"))).items() if k != "root"}

    return DemoRun(folder / "made" / "proj", **made_once(folder, make))
