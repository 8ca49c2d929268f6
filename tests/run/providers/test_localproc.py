"""The worker process of the embedded model as its parent sees it: how it ended, named for the user."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.errors import ProviderError
from benchcard.run.providers._localproc import WorkerProcess, exit_cause


def test_exit_causes_are_named() -> None:
    assert exit_cause(-9) == "killed (SIGKILL), most often by the out-of-memory killer"
    assert exit_cause(-4).startswith("illegal instruction (SIGILL)")
    assert exit_cause(3) == "exited with code 3"
    assert exit_cause(None) == "stopped answering"
    assert exit_cause(-15) == "killed by SIGTERM"
    assert exit_cause(-200) == "killed by signal 200"  # a number no signal has


@pytest.mark.local_model
def test_a_worker_that_cannot_load_says_why_and_is_started_again_after_it_ends(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"GGUF but not really")
    worker = WorkerProcess(str(bad), 256)
    try:
        with pytest.raises(ProviderError) as info:
            worker.request({"op": "load"})
        assert str(info.value).startswith(f"cannot load the local model {bad}: ")
        first = worker.pid
        assert first is not None and worker.starts == 1 and not worker.ready()  # alive, but holds no model
        worker.end()
        assert worker.pid is None
        with pytest.raises(ProviderError):
            worker.request({"op": "load"})
        assert worker.starts == 2 and worker.pid not in (None, first)
    finally:
        worker.close()
    assert worker.pid is None
