"""A batch run's journal: every step recorded before the next, replayed on resume; a torn last line dropped."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from benchcard.errors import RunError
from benchcard.run.batch.journal import Journal
from benchcard.testing.fakeserver import FakeServer

from ...helpers_batch import FAST, journal, project_for
from ...helpers_run import bc, key, only_run, server

__all__ = ["key", "server"]  # fixtures used by name


def test_a_torn_journal_line_is_dropped_and_the_run_resumes(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "batch": {"in_progress_s": 0.3}})
    project = project_for(tmp_path, server, "openai", fixtures=2)
    assert bc(project, "run", "colour-ab", "--batch", "--no-wait").exit_code == 0
    folder = only_run(project, "colour-ab")
    with (folder / "batch" / "journal.jsonl").open("ab") as fh:
        fh.write(b'{"event":"poll","chunk":0,"sta')  # a kill in the middle of a write
    time.sleep(0.3)
    result = bc(project, "run", "colour-ab", "--resume", folder.name, *FAST, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["counts"]["ok"] == 4
    assert all(isinstance(e, dict) for e in journal(folder))  # every line whole again
    assert server.stats()["batch"]["submitted"] == 4


# ------------------------------------------------------------------------------------- the journal itself


def _planned(*cells: int) -> dict[str, object]:
    return {"event": "planned", "chunks": [{"chunk": i, "cells": n, "bytes": 100 * n, "digest": f"sha256:{i}",
                                            "file": f"batch/chunk-{i:03d}.jsonl"} for i, n in enumerate(cells)]}


def test_each_chunks_state_is_replayed_from_its_events(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    assert not j.exists() and j.events() == [] and j.chunks() == []
    j.append({"event": "poll", "chunk": 0, "status": "in_progress", "done": 1})  # before the plan: ignored
    j.append(_planned(3, 2))
    j.append({"event": "uploaded", "chunk": 0, "file_id": "file-1"})
    j.append({"event": "creating", "chunk": 0})
    j.append({"event": "created", "chunk": 0, "batch": "batch_1"})
    j.append({"event": "poll", "chunk": 0, "status": "in_progress", "done": 1})
    j.append({"event": "poll", "chunk": 0, "status": "completed", "done": 3, "failed": 1, "ended": True,
              "sources": ["file-out", "file-err"]})
    j.append({"event": "downloaded", "chunk": 0, "files": ["batch/result-000-0.jsonl"]})
    j.append({"event": "collected", "chunk": 0})
    j.append({"event": "creating", "chunk": 1})
    first, second = j.chunks()
    assert (first.file_id, first.batch, first.status, first.done, first.failed) == (
        "file-1", "batch_1", "completed", 3, 1)
    assert first.ended == "completed" and first.error is None and first.sources == ["file-out", "file-err"]
    assert first.downloaded and first.collected and first.results == ["batch/result-000-0.jsonl"]
    assert first.creating_at is not None and first.polled_at is not None
    # the second was being created when the process stopped: no batch id was heard
    assert second.creating_at is not None and second.batch is None and not second.ended
    assert (second.cells, second.bytes, second.file) == (2, 200, "batch/chunk-001.jsonl")
    assert all(e["at"].endswith("Z") for e in j.events())  # every event dated


def test_a_failed_batch_keeps_its_cause_and_a_retry_adds_chunks(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.append(_planned(2))
    j.append({"event": "poll", "chunk": 0, "status": "failed", "done": 0, "ended": True, "error": "bad file"})
    j.append({"event": "added", "chunks": [{"chunk": 1, "cells": 1, "bytes": 9, "digest": "d", "file": "f"}]})
    old, added = j.chunks()
    assert (old.ended, old.error, old.sources) == ("failed", "bad file", [])
    assert added.chunk == 1 and added.cells == 1 and added.batch is None
    j.append(_planned(4))  # a new plan replaces the old one
    assert [(c.chunk, c.cells) for c in j.chunks()] == [(0, 4)]


def test_a_torn_last_line_is_not_an_event_and_is_cut_before_the_next(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.append(_planned(1))
    with j.path.open("ab") as fh:
        fh.write(b'{"event":"created","chunk":0,"bat')
    assert [e["event"] for e in j.events()] == ["planned"]
    j.append({"event": "created", "chunk": 0, "batch": "b-2"})
    assert [e["event"] for e in j.events()] == ["planned", "created"]
    assert j.path.read_bytes().count(b"\n") == 2 and b'"bat\n' not in j.path.read_bytes()
    assert j.chunks()[0].batch == "b-2"


def test_damage_before_the_last_line_names_the_file_and_line(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.append(_planned(1))
    with j.path.open("ab") as fh:
        fh.write(b"not json\n")
    j.append({"event": "collected", "chunk": 0})
    with pytest.raises(RunError) as info:
        j.chunks()
    assert str(info.value) == f"{j.path}: line 2 is not JSON"
