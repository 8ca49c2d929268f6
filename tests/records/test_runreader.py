"""The run folder read: a run found by id or path, a manifest's errors in one line, damage in outputs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.runreader import JudgeReader, Outcomes, RunReader, outcomes

RUN = "20261130T151200Z-0000"


@pytest.fixture
def reader(tmp_path: Path) -> RunReader:
    folder = Project(tmp_path).run_dir("card", 1, RUN)
    folder.mkdir(parents=True)
    return RunReader(folder)


def test_a_run_is_found_by_its_id_or_its_folder(tmp_path: Path, reader: RunReader) -> None:
    project = Project(tmp_path)
    assert reader.folder == tmp_path / "results" / "card" / "v1" / RUN
    assert RunReader.find(project, "card", 1, RUN).folder == reader.folder
    assert RunReader.find(project, "card", 1, str(reader.folder)).folder == reader.folder
    with pytest.raises(RunError, match="no such run"):
        RunReader.find(project, "card", 1, "20991130T151200Z-ffff")


def test_a_manifest_missing_a_field_is_one_line_naming_it(reader: RunReader) -> None:
    reader.manifest_path.write_text(json.dumps({"run": reader.run_id, "card": "card", "version": "1"}))
    with pytest.raises(RunError, match=r"manifest.json: Expected `int`, got `str` - at `\$.version`"):
        reader.read_manifest()


def test_damage_before_the_last_line_is_an_error(reader: RunReader) -> None:
    reader.outputs_path.write_bytes(b'{"cell": "c1", "fixture": "f", "status": "ok"}\nnot json\n'
                                   b'{"cell": "c3", "fixture": "f", "status": "ok"}\n')
    with pytest.raises(RunError, match="line 2 is not"):
        reader.done_cells()
    with pytest.raises(RunError, match="line 2 is not JSON"):
        list(reader.iter_outputs())
    reader.outputs_path.write_bytes(b'{"cell": "c1", "fixture": "f", "status": "done"}\n')
    with pytest.raises(RunError, match=r"line 1: Invalid enum value 'done' - at `\$.status`"):
        list(reader.iter_outputs())


def test_reading_skips_a_torn_final_line(reader: RunReader) -> None:
    """A kill mid-write leaves a partial last line: the cells before it are read, the torn one is not."""
    whole = b'{"cell":"c1","fixture":"f","status":"ok"}\n'
    torn = whole + b'{"cell":"c2","fixture":"f","status":"o'
    reader.outputs_path.write_bytes(torn)
    assert reader.done_cells() == {"c1"}
    assert [row.cell for row in reader.iter_outputs()] == ["c1"]
    assert reader.outputs_path.read_bytes() == torn  # reading never repairs


def _row(cell: str, status: str) -> bytes:
    return json.dumps({"cell": cell, "fixture": "f", "status": status}, separators=(",", ":")).encode() + b"\n"


def test_each_cells_outcome_is_its_last_row_and_a_reopened_cell_waits(reader: RunReader) -> None:
    """A retried run: c2 failed and was called again (ok now); c3 failed before the retry began and has no new
    row yet (waiting: the next resume calls it); c4 failed after. Never retried, every row is a cell."""
    head = {"run": RUN, "card": "card", "version": 1, "kind": "ab", "seal_root": "sha256:00"}
    before = _row("c1", "ok") + _row("c2", "failed") + _row("c3", "failed")
    reader.outputs_path.write_bytes(before + _row("c2", "ok") + _row("c4", "failed"))
    reader.manifest_path.write_text(json.dumps(head))
    assert outcomes(reader) == Outcomes(recorded=5, failed=3)
    reader.manifest_path.write_text(json.dumps({**head, "retries": [
        {"at": "2026-12-01T12:00:00Z", "cells": 2, "from": len(before)}]}))
    assert outcomes(reader) == Outcomes(recorded=3, failed=1, waiting=frozenset({"c3"}))


def test_the_judges_files_read_as_a_runs_outputs(reader: RunReader) -> None:
    judged = JudgeReader(reader.folder)
    assert judged.outputs_path.name == "judge-outputs.jsonl"
    with pytest.raises(RunError, match=r"judge-requests\.jsonl: missing; the judging was never planned"):
        list(judged.iter_judge_requests())
    judged.outputs_path.write_bytes(_row("j1", "ok") + b'{"cell":"j2"')
    assert [row.cell for row in judged.iter_outputs()] == ["j1"]  # a torn final line skipped, as in outputs.jsonl
