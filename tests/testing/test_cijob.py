"""docs/ci.md's workflow read and run as a GitHub runner runs it: the job's steps from the doc's block, each `run:`
through `bash --noprofile --norc -eo pipefail` with its own env, the first failure ending the job, and a process a
step leaves behind ended with it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchcard.testing.cijob import job_steps, run_steps

from ..helpers_project import REPO
from ..helpers_wait import wait_until

DOC = """\
# CI

```yaml
on: push   # an example of another block, not the workflow
```

```yaml
# .github/workflows/bench.yml
jobs:
  first:
    steps:
      - uses: actions/checkout@v4
      - name: Say
        run: echo "$GREETING from $(pwd)"
        env: {GREETING: hello}
  second:
    steps:
      - run: "true"
```
"""


def _doc(tmp_path: Path, text: str = DOC) -> Path:
    path = tmp_path / "ci.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_jobs_steps_are_read_from_the_workflow_block(tmp_path: Path) -> None:
    steps = job_steps(_doc(tmp_path), "first")
    assert steps == [{"uses": "actions/checkout@v4"},
                     {"name": "Say", "run": 'echo "$GREETING from $(pwd)"', "env": {"GREETING": "hello"}}]


def test_a_job_the_workflow_lacks_is_named_with_those_it_has(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"ci\.md: no job 'third'; the workflow has first, second$"):
        job_steps(_doc(tmp_path), "third")


def test_a_doc_without_a_workflow_block_says_so(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"ci\.md: no workflow block"):
        job_steps(_doc(tmp_path, "# CI\n\n```yaml\non: push\n```\n"), "first")


def test_the_repositorys_ci_doc_has_both_jobs() -> None:
    for job in ("fake-server", "embedded-model"):
        assert any("run" in step for step in job_steps(REPO / "docs" / "ci.md", job))


def test_each_run_step_runs_in_the_checkout_with_its_env_and_the_uses_steps_are_skipped(tmp_path: Path) -> None:
    seen: list[str] = []
    results = run_steps(job_steps(_doc(tmp_path), "first"), tmp_path, dict(os.environ), tmp_path,
                        report=lambda result: seen.append(result.name))
    assert [(r.name, r.code, r.output) for r in results] == [("Say", 0, f"hello from {tmp_path}\n")]
    assert seen == ["Say"]


def test_a_failing_command_inside_a_pipe_fails_the_step_and_ends_the_job(tmp_path: Path) -> None:
    """pipefail, as on a runner: `false | cat` fails its step (under `bash -e` alone it passed), and the step after
    it does not run."""
    steps = [{"run": "echo one"}, {"name": "Piped", "run": "false | cat\necho reached"}, {"run": "echo three"}]
    results = run_steps(steps, tmp_path, dict(os.environ), tmp_path)
    assert [(r.name, r.code, r.output) for r in results] == [("echo one", 0, "one\n"), ("Piped", 1, "")]


def test_edit_changes_the_script_before_it_runs(tmp_path: Path) -> None:
    [result] = run_steps([{"run": "echo port 8765"}], tmp_path, dict(os.environ), tmp_path,
                         edit=lambda script: script.replace("8765", "4321"))
    assert result.output == "port 4321\n"


def test_a_process_a_step_leaves_behind_is_ended_with_the_job(tmp_path: Path) -> None:
    """The fake-server job starts its server in the background in one step and uses it in the next: the server
    outlives its step, and is ended when the job ends."""
    steps = [{"run": "sleep 300 >/dev/null 2>&1 &\necho $! > pid"}, {"run": "kill -0 $(cat pid)"}]
    results = run_steps(steps, tmp_path, dict(os.environ), tmp_path)
    assert [r.code for r in results] == [0, 0]  # still there for the second step
    pid = int((tmp_path / "pid").read_text())
    wait_until(lambda: not _alive(pid), 60, f"the step's background process {pid} to be ended with the job", every=0.05)


def _alive(pid: int) -> bool:
    """Whether `pid` is a process not yet ended (a zombie, ended but not reaped by its parent, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
