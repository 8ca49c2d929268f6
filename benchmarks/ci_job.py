"""Run one of docs/ci.md's GitHub Actions jobs as a runner would, on this machine, to see that it passes as written.

The job is read from the workflow in docs/ci.md itself. A fresh clone of the repository, a fresh venv standing in
for `actions/setup-python`, and a fresh pip cache (so the embedded-model job builds llama-cpp-python from source,
as a runner's first run does); each `run:` goes through the runner's shell (`bash --noprofile --norc -eo
pipefail`, as tests/test_newuser.py runs it) in the clone, with the step's `env`. `uses:` steps are skipped (the
clone is the checkout; the venv is the Python) and `sudo` is dropped when running as root. Prints each step's exit
code, wall time and the end of its output, and exits with the first failing step's code. A step that leaves a
process behind (the fake server) is ended with its process group at the end. The reading and the step loop are
`benchcard.testing.cijob`'s, which tests/test_newuser.py runs the fake-server job through too.

    python benchmarks/ci_job.py embedded-model        # about 18 min here at load 7-10: the source build
    python benchmarks/ci_job.py fake-server --keep /tmp/job
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchcard.testing.cijob import StepResult, job_steps, run_steps

REPO = Path(__file__).resolve().parents[1]


def runner_env(work: Path) -> dict[str, str]:
    """The environment of a step: the fresh venv first on PATH, a pip cache of its own, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PIP_CACHE_DIR", "VIRTUAL_ENV"}}
    env.update(PATH=f"{work / 'venv' / 'bin'}:{env['PATH']}", VIRTUAL_ENV=str(work / "venv"),
               PIP_CACHE_DIR=str(work / "pip-cache"))
    return env


def show(result: StepResult) -> None:
    """A step as it ends: its name, exit code, wall time and the end of its output."""
    print(f"--- {result.name!r}: exit {result.code}, {result.seconds:.1f} s\n{result.output[-2000:]}", flush=True)


def as_root(script: str) -> str:
    """The script as root runs it: `sudo` dropped (a container's root has none)."""
    return script if os.geteuid() else script.replace("sudo ", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", help="the job's name in docs/ci.md's workflow (fake-server, embedded-model)")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary folder, removed)")
    args = parser.parse_args()
    try:
        steps = job_steps(REPO / "docs" / "ci.md", args.job)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    work = args.keep or Path(tempfile.mkdtemp(prefix="benchcard-ci-job-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["git", "clone", "-q", str(REPO), str(work / "checkout")], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        results = run_steps(steps, work / "checkout", runner_env(work), work, edit=as_root, report=show)
        code = next((r.code for r in results if r.code), 0)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"job {args.job}: {'passed' if code == 0 else f'failed, exit {code}'}")
    raise SystemExit(code)


if __name__ == "__main__":
    main()
