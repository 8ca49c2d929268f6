"""A batch run's journal: every step recorded before the next, replayed on resume; a torn last line dropped."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import msgspec
import pytest

from benchcard.errors import RunError
from benchcard.records.rows import dumps_line
from benchcard.run.batch._journal import (
    Added,
    Collected,
    Created,
    Creating,
    Downloaded,
    Event,
    Journal,
    NotOurs,
    Planned,
    PlannedChunk,
    Polled,
    Uploaded,
)
from benchcard.testing.fakeserver import FakeServer

from ...helpers_batch import FAST, journal, project_for
from ...helpers_run import bc, only_run, read_jsonl


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


def _planned(*cells: int) -> Planned:
    return Planned(chunks=[PlannedChunk(i, n, 100 * n, f"sha256:{i}", f"batch/chunk-{i:03d}.jsonl")
                           for i, n in enumerate(cells)])


def test_each_chunks_state_is_replayed_from_its_events(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    assert not j.exists() and j.events() == [] and j.chunks() == []
    j.append(Polled(chunk=0, status="in_progress", done=1))  # before the plan: ignored
    j.append(_planned(3, 2))
    j.append(Uploaded(chunk=0, file_id="file-1"))
    j.append(Creating(chunk=0))
    j.append(Created(chunk=0, batch="batch_1"))
    j.append(Polled(chunk=0, status="in_progress", done=1))
    j.append(Polled(chunk=0, status="completed", done=3, failed=1, ended=True, sources=["file-out", "file-err"]))
    j.append(Downloaded(chunk=0, files=["batch/result-000-0.jsonl"]))
    j.append(Collected(chunk=0))
    j.append(Creating(chunk=1))
    first, second = j.chunks()
    assert (first.file_id, first.batch, first.status, first.done, first.failed) == (
        "file-1", "batch_1", "completed", 3, 1)
    assert first.ended == "completed" and first.error is None and first.sources == ["file-out", "file-err"]
    assert first.downloaded and first.collected and first.results == ["batch/result-000-0.jsonl"]
    assert first.creating_at is not None and first.polled_at is not None
    # the second was being created when the process stopped: no batch id was heard
    assert second.creating_at is not None and second.batch is None and not second.ended
    assert (second.cells, second.bytes, second.file) == (2, 200, "batch/chunk-001.jsonl")
    assert all(e.at.endswith("Z") for e in j.events())  # every event dated
    assert all(e["at"].endswith("Z") for e in read_jsonl(j.path))  # … on disk too


def test_the_plans_tag_the_batches_found_anothers_and_the_refused_lines_replay(tmp_path: Path) -> None:
    """What tells a run's own batch from another's (its plan's tag, the batches found another run's) and the
    result lines its collection refused are replayed from the journal, as written."""
    j = Journal(tmp_path)
    j.append(Planned(chunks=[PlannedChunk(0, 2, 100, "sha256:a", "batch/chunk-000.jsonl")], tag="ab12"))
    j.append(Creating(chunk=0))
    j.append(NotOurs(chunk=0, batch="msgbatch_7"))
    j.append(NotOurs(chunk=0, batch="msgbatch_8"))
    [c] = j.chunks()
    assert c.tag == "ab12" and c.foreign == {"msgbatch_7", "msgbatch_8"} and c.batch is None
    line = "batch/chunk-000.results-0.jsonl: line 3: custom_id 'x' is not a request of batch b (chunk 0)"
    j.append(Created(chunk=0, batch="msgbatch_9", adopted=True))
    j.append(Collected(chunk=0, batch="msgbatch_9", refused=[line], refused_count=1))
    [c] = j.chunks()
    assert c.collected and c.refused == [line]
    written = read_jsonl(j.path)
    assert written[0]["tag"] == "ab12" and written[2] == {"event": "not_ours", "chunk": 0, "batch": "msgbatch_7",
                                                          "at": written[2]["at"]}
    assert written[-1]["refused"] == [line] and written[-1]["refused_count"] == 1
    j.append(Planned(chunks=[PlannedChunk(0, 2, 100, "sha256:a", "batch/chunk-000.jsonl")]))  # a plan of before
    assert j.chunks()[0].tag == "" and "tag" not in read_jsonl(j.path)[-1]


def test_a_failed_batch_keeps_its_cause_and_a_retry_adds_chunks(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.append(_planned(2))
    j.append(Polled(chunk=0, status="failed", done=0, ended=True, error="bad file"))
    j.append(Added(chunks=[PlannedChunk(1, 1, 9, "d", "f")]))
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
    assert [type(e) for e in j.events()] == [Planned]
    j.append(Created(chunk=0, batch="b-2"))
    assert [e["event"] for e in read_jsonl(j.path)] == ["planned", "created"]
    assert j.path.read_bytes().count(b"\n") == 2 and b'"bat\n' not in j.path.read_bytes()
    assert j.chunks()[0].batch == "b-2"


def test_damage_before_the_last_line_names_the_file_and_line(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.append(_planned(1))
    with j.path.open("ab") as fh:
        fh.write(b"not json\n")
    j.append(Collected(chunk=0))
    with pytest.raises(RunError) as info:
        j.chunks()
    assert str(info.value) == f"{j.path}: line 2 is not JSON"


# ------------------------------------------------------------------------- journals written before the structs

JOURNALS = Path(__file__).resolve().parents[2] / "data" / "journals"


@pytest.mark.parametrize("name", ["openai-retry.jsonl", "anthropic.jsonl"])
def test_a_journal_written_before_the_structs_re_encodes_byte_for_byte(name: str) -> None:
    raw = (JOURNALS / name).read_bytes()
    lines = raw.splitlines(keepends=True)
    events = [msgspec.json.decode(line, type=Event) for line in lines]
    assert b"".join(dumps_line(e) for e in events) == raw


def test_a_journal_written_before_the_structs_replays(tmp_path: Path) -> None:
    (tmp_path / "batch").mkdir()
    shutil.copy(JOURNALS / "openai-retry.jsonl", tmp_path / "batch" / "journal.jsonl")
    first, added = Journal(tmp_path).chunks()
    assert (first.chunk, first.cells, first.file_id, first.batch, first.ended, first.failed) == (
        0, 6, "file-1", "batch_2", "completed", 2)
    assert first.sources == ["file-3"] and first.results == ["batch/chunk-000.results-0.jsonl"] and first.collected
    assert (added.chunk, added.cells, added.done, added.collected) == (1, 2, 2, True)


def test_an_older_events_missing_optional_fields_replay_and_an_unknown_kind_is_passed_over(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.folder.mkdir()
    j.path.write_bytes(
        b'{"event":"planned","chunks":[{"chunk":0,"cells":2,"bytes":9,"digest":"d","file":"f"}],"at":"T1"}\n'
        b'{"event":"created","chunk":0,"batch":"b","at":"T2"}\n'
        b'{"event":"paused","chunk":0,"at":"T3"}\n'  # a kind a newer benchcard might write
        b'{"event":"poll","chunk":0,"status":"completed","done":2,"ended":true,"at":"T4"}\n')
    [c] = j.chunks()
    assert (c.batch, c.status, c.done, c.failed, c.ended, c.error, c.sources, c.polled_at) == (
        "b", "completed", 2, 0, "completed", None, [], "T4")


@pytest.mark.parametrize(("line", "field"), [
    (b'{"event":"poll","chunk":0,"status":"completed","done":"2","at":"T"}', "$.done"),
    (b'{"event":"created","chunk":0,"at":"T"}', "batch"),
    (b'{"event":"planned","chunks":[{"chunk":0,"cells":2}],"at":"T"}', "$.chunks[0]"),
    (b'{"event":"created","chunk":0,"batch":"b"}', "missing required field `at`"),  # when it happened is the record
    (b'{"event":"creating","chunk":0,"at":""}', "missing required field `at`"),
])
def test_a_mistyped_event_is_named_by_file_line_and_field(tmp_path: Path, line: bytes, field: str) -> None:
    j = Journal(tmp_path)
    j.append(_planned(1))
    with j.path.open("ab") as fh:
        fh.write(line + b"\n")
    with pytest.raises(RunError) as info:
        j.chunks()
    message = str(info.value)
    assert message.startswith(f"{j.path}: line 2 is not a journal event: ") and field in message
    assert "\n" not in message


def test_the_run_records_each_step_as_its_event(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    project = project_for(tmp_path, server, "openai", fixtures=2)
    assert bc(project, "run", "colour-ab", "--batch", *FAST).exit_code == 0
    folder = only_run(project, "colour-ab")
    kinds = [type(e) for e in Journal(folder).events()]
    assert kinds[:4] == [Planned, Uploaded, Creating, Created] and kinds[-2:] == [Downloaded, Collected]
    assert set(kinds[4:-2]) == {Polled}
    assert [e["event"] for e in journal(folder)][:4] == ["planned", "uploaded", "creating", "created"]
