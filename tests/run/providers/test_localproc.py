"""The worker process of the embedded model as its parent sees it: how it ended, named for the user."""

from __future__ import annotations

from benchcard.run.providers.localproc import exit_cause


def test_exit_causes_are_named() -> None:
    assert exit_cause(-9) == "killed (SIGKILL), most often by the out-of-memory killer"
    assert exit_cause(-4).startswith("illegal instruction (SIGILL)")
    assert exit_cause(3) == "exited with code 3"
    assert exit_cause(None) == "stopped answering"
