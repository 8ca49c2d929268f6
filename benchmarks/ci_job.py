"""Run one of docs/ci.md's GitHub Actions jobs as a runner would, on this machine, to see that it passes as written.

The job is read from the workflow in docs/ci.md itself. A fresh clone of the repository, a fresh venv standing in
for `actions/setup-python`, and a fresh pip cache (so the embedded-model job builds llama-cpp-python from source,
as a runner's first run does); each `run:` goes through the runner's shell (`bash --noprofile --norc -eo
pipefail`, as tests/test_newuser.py runs it) in the clone, with the step's `env`. `uses:` steps are skipped (the
clone is the checkout; the venv is the Python) and `sudo` is dropped when running as root. Prints each step's exit
code, wall time and the end of its output, and exits with the first failing step's code. A step that leaves a
process behind (the fake server) is ended with its process group at the end.

    python benchmarks/ci_job.py embedded-model        # about 18 min here at load 7-10: the source build
    python benchmarks/ci_job.py fake-server --keep /tmp/job
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
#: A `run:` step's shell on a GitHub runner (`shell: bash`'s expansion), the script as its last argument.
RUNNER_SHELL = ("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c")


def job_steps(job: str) -> list[dict[str, Any]]:
    """The steps of `job` in docs/ci.md's workflow block."""
    doc = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    found = re.search(r"```yaml\n(# \.github/workflows/.*?)```", doc, re.S)
    if found is None:
        raise SystemExit("docs/ci.md: no workflow block (```yaml starting '# .github/workflows/')")
    jobs = yaml.safe_load(found.group(1))["jobs"]
    if job not in jobs:
        raise SystemExit(f"docs/ci.md: no job {job!r}; the workflow has {', '.join(jobs)}")
    steps: list[dict[str, Any]] = jobs[job]["steps"]
    return steps


def runner_env(work: Path) -> dict[str, str]:
    """The environment of a step: the fresh venv first on PATH, a pip cache of its own, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PIP_CACHE_DIR", "VIRTUAL_ENV"}}
    env.update(PATH=f"{work / 'venv' / 'bin'}:{env['PATH']}", VIRTUAL_ENV=str(work / "venv"),
               PIP_CACHE_DIR=str(work / "pip-cache"))
    return env


def run_steps(steps: list[dict[str, Any]], work: Path) -> int:
    """Each `run:` step in order; the first failure's exit code, else 0."""
    env, groups = runner_env(work), []
    try:
        for step in steps:
            if "run" not in step:
                print(f"--- skipped: uses {step.get('uses')}")
                continue
            script = step["run"] if os.geteuid() else step["run"].replace("sudo ", "")
            started = time.monotonic()
            with (work / "step.log").open("w+", encoding="utf-8") as log:
                proc = subprocess.Popen([*RUNNER_SHELL, script], cwd=work / "checkout", stdout=log,
                                        stderr=subprocess.STDOUT, env={**env, **step.get("env", {})},
                                        start_new_session=True)
                groups.append(proc.pid)
                code = proc.wait()
                log.seek(0)
                tail = log.read()[-2000:]
            print(f"--- {step.get('name') or script.splitlines()[0]!r}: exit {code}, "
                  f"{time.monotonic() - started:.1f} s\n{tail}")
            if code:
                return code
        return 0
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGTERM)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", help="the job's name in docs/ci.md's workflow (fake-server, embedded-model)")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary folder, removed)")
    args = parser.parse_args()
    steps = job_steps(args.job)
    work = args.keep or Path(tempfile.mkdtemp(prefix="benchcard-ci-job-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["git", "clone", "-q", str(REPO), str(work / "checkout")], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        code = run_steps(steps, work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"job {args.job}: {'passed' if code == 0 else f'failed, exit {code}'}")
    raise SystemExit(code)


if __name__ == "__main__":
    main()
