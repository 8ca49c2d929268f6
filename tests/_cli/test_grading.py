"""What `blind-sheet` and `grade` print (_cli/grading.py): the command to type next, with the sheet's path
as the user can type it from where they are, what was left off the sheet, and any file moved aside."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from benchcard._cli.grading import grade_report, sheet_report
from benchcard.grading.sheets import GradeImport, Sheet
from benchcard.project import Project

RUN = "20261130T151200Z-3f9a"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "proj" / "cards").mkdir(parents=True)
    return Project(tmp_path / "proj")


def _sheet(project: Project, path: Path, **kw: object) -> Sheet:
    mapping = project.root / "results" / "c" / "v1" / RUN / "sealed" / "sheet-human.jsonl"
    fields: dict[str, object] = {"path": path, "name": "human", "rows": 34, "mapping": mapping, "left_out": {}}
    return Sheet(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_sheet_below_the_current_folder_is_named_relative_to_it(project: Project, tmp_path: Path) -> None:
    said = sheet_report(project, _sheet(project, tmp_path / "sheets" / "grade me.csv"), RUN)
    data, lines = said.to_json(), said.lines()
    assert lines == [f"wrote 34 outputs, shuffled, to {tmp_path / 'sheets' / 'grade me.csv'}",
                     f"  grade each row pass, fail or 0–1, then: benchcard grade {RUN} 'sheets/grade me.csv'"]
    assert data == {"sheet": str(tmp_path / "sheets" / "grade me.csv"), "name": "human", "rows": 34,
                    "mapping": f"results/c/v1/{RUN}/sealed/sheet-human.jsonl", "left_out": {}, "backup": None}


def test_a_sheet_elsewhere_is_named_by_its_absolute_path_and_a_named_sheet_by_its_name(project: Project,
                                                                                       tmp_path: Path) -> None:
    elsewhere = tmp_path.parent / f"{tmp_path.name}-other" / "s.csv"
    sheet = _sheet(project, elsewhere, name="second", left_out={"truncated": 2, "failed": 1},
                   backup=tmp_path / "s.csv.1")
    said = sheet_report(project, sheet, RUN)
    data, lines = said.to_json(), said.lines()
    assert lines == [
        f"wrote 34 outputs, shuffled, to {elsewhere} (the file that was there is now {tmp_path / 's.csv.1'})",
        "  left out (never scored): 2 truncated, 1 failed",
        f"  grade each row pass, fail or 0–1, then: benchcard grade {RUN} {shlex.quote(str(elsewhere.resolve()))} "
        "--name second",
    ]
    assert data["left_out"] == {"truncated": 2, "failed": 1} and data["backup"] == str(tmp_path / "s.csv.1")


def test_a_sheet_whose_name_starts_with_a_dash_is_never_read_as_an_option(project: Project, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    said = sheet_report(project, _sheet(project, tmp_path / "--force.csv"), RUN)
    assert said.lines()[-1] == f"  grade each row pass, fail or 0–1, then: benchcard grade {RUN} ./--force.csv"


def test_grade_report_counts_graded_and_ungraded_rows(project: Project) -> None:
    grades = project.root / "results" / "c" / "v1" / RUN / "grades-human.jsonl"
    said = grade_report(project, GradeImport(grades, "human", 35, 1))
    data, lines = said.to_json(), said.lines()
    assert lines == [f"imported 35 grade(s) (1 row(s) left ungraded) → results/c/v1/{RUN}/grades-human.jsonl"]
    assert data == {"grades": f"results/c/v1/{RUN}/grades-human.jsonl", "name": "human", "graded": 35,
                    "ungraded": 1, "backup": None}
    moved = grades.with_name("grades-human.1.jsonl")
    said = grade_report(project, GradeImport(grades, "human", 36, 0, backup=moved))
    data, lines = said.to_json(), said.lines()
    assert lines[0].endswith(f"(the grades imported before are now results/c/v1/{RUN}/grades-human.1.jsonl)")
    assert data["backup"] == f"results/c/v1/{RUN}/grades-human.1.jsonl"
