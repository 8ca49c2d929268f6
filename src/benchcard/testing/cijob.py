"""docs/ci.md's GitHub Actions workflow, read and run step by step as a runner runs it.

One home for what tests/test_newuser.py and benchmarks/ci_job.py both do with the workflow the docs show: find the
block, take one job's steps, and run each `run:` through the runner's own shell (`bash --noprofile --norc -eo
pipefail`, so a failing command inside a pipe fails the step as on GitHub). Two copies of the loop had drifted
apart once already (`bash -e` in one of them).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: A `run:` step's shell on a GitHub runner (`shell: bash`'s expansion), the script as its last argument.
RUNNER_SHELL = ("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c")
#: The workflow block of docs/ci.md: a fenced yaml block whose first line names its file under .github/workflows.
_WORKFLOW = re.compile(r"```yaml\n(# \.github/workflows/.*?)```", re.S)


@dataclass(frozen=True)
class StepResult:
    """One `run:` step as it ended: its name (or its script's first line), exit code, wall time and output."""

    name: str
    code: int
    seconds: float
    output: str


def job_steps(doc: Path, job: str) -> list[dict[str, Any]]:
    """The steps of `job` in the workflow block of `doc` (docs/ci.md); a ValueError names what is missing."""
    found = _WORKFLOW.search(doc.read_text(encoding="utf-8"))
    if found is None:
        raise ValueError(f"{doc}: no workflow block (```yaml starting '# .github/workflows/')")
    jobs = yaml.safe_load(found.group(1))["jobs"]
    if job not in jobs:
        raise ValueError(f"{doc}: no job {job!r}; the workflow has {', '.join(jobs)}")
    steps: list[dict[str, Any]] = jobs[job]["steps"]
    return steps


def run_steps(steps: list[dict[str, Any]], cwd: Path, env: Mapping[str, str], logs: Path, *,
              edit: Callable[[str], str] = lambda script: script, timeout: float | None = None,
              report: Callable[[StepResult], None] = lambda result: None) -> list[StepResult]:
    """Each `run:` step in order (a `uses:` step is the runner's own, skipped) until one fails; what each did.

    A step's script is `edit`ed first (a test's free port, a root's dropped `sudo`), run in `cwd` with `env` and the
    step's own `env`, its output in a file under `logs` (not a pipe: a server the step starts outlives it). Each
    step has a process group of its own, ended when the job ends, so a step that leaves a process behind (the fake
    server) takes it with it. `report` sees each step as it ends (a long job's progress)."""
    results: list[StepResult] = []
    groups: list[int] = []
    try:
        for step in steps:
            if "run" in step:
                result = _run_step(step, edit(step["run"]), cwd, {**env, **step.get("env", {})},
                                   logs / f"step-{len(results)}.log", groups, timeout)
                results.append(result)
                report(result)
                if result.code:
                    break
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGTERM)
    return results


def _run_step(step: dict[str, Any], script: str, cwd: Path, env: dict[str, str], log: Path, groups: list[int],
              timeout: float | None) -> StepResult:
    """One step through the runner's shell; its group joins `groups` before it is waited for, so a timeout still
    ends it."""
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as sink:
        proc = subprocess.Popen([*RUNNER_SHELL, script], cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
        groups.append(proc.pid)
        code = proc.wait(timeout=timeout)
    name = step.get("name") or (script.splitlines() or [""])[0]
    return StepResult(str(name), code, time.monotonic() - started, log.read_text(encoding="utf-8"))
