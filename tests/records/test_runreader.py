"""The run folder read: a run found by id or path, a manifest's errors in one line, damage in outputs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.runreader import RunReader

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
