"""Blind human grading: the sheet hides everything but the output and its fixture; grades are validated on
import and read back joined to their cells (the verdict's agreement with the scorer:
tests/verdict/test_agreement.py)."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.errors import RunError, VerdictError
from benchcard.grading.sheets import blind_sheet, grade_files, import_grades, imported_grades
from benchcard.project import Project
from benchcard.records.verdictfigures import HumanGrades
from benchcard.verdict import give
from benchcard.verdict.give import give_verdict

from ..helpers_run import killed_at
from ..helpers_verdict import (
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    auto_scores,
    make_run,
    read_sheet,
    strong_run,
    the_card,
    write_sheet,
)


def test_blind_sheet_hides_variant_model_repetition_and_cell(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project, status={("A", "ex-02", 1): "truncated", ("baseline", "ex-05", 0): "failed"})
    out = tmp_path / "sheet.csv"
    result = CliRunner().invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 34 outputs, shuffled" in result.output
    assert re.search(r"left out \(never scored\): (1 truncated, 1 failed|1 failed, 1 truncated)", result.output)
    text = out.read_text(encoding="utf-8")
    with open(out, encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    assert header == ["row", "fixture", "output", "grade", "note"]
    rows = read_sheet(out)
    assert len(rows) == 34 and [r["row"] for r in rows] == [str(i) for i in range(1, 35)]
    assert all(r["grade"] == "" and r["note"] == "" for r in rows)
    for secret in ("baseline", "variant", "repetition", "test/model-1", "Test API", "c000000"):
        assert secret not in text
    assert all(r["fixture"] in {f"ex-{i:02d}" for i in range(1, 7)} for r in rows)
    # shuffled relative to the outputs file, and reproducible
    outputs = [json.loads(line) for line in (run_dir / "outputs.jsonl").read_text().splitlines()]
    in_file_order = [o["text"] for o in outputs if o["status"] == "ok"]
    assert [r["output"] for r in rows] != in_file_order
    assert sorted(r["output"] for r in rows) == sorted(in_file_order)
    mapping = run_dir / "sealed" / "sheet-human.jsonl"
    first = mapping.read_text()
    again = blind_sheet(project, run_dir.name, tmp_path / "again.csv")  # the run by its id, as the command names it
    assert again.path.read_text(encoding="utf-8") == text and mapping.read_text() == first


def test_sheet_names_shuffle_differently(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    a = blind_sheet(project, run_dir, tmp_path / "a.csv", name="alice")
    b = blind_sheet(project, run_dir, tmp_path / "b.csv", name="bob")
    assert [r["output"] for r in read_sheet(a.path)] != [r["output"] for r in read_sheet(b.path)]
    assert (run_dir / "sealed" / "sheet-alice.jsonl").is_file()
    with pytest.raises(RunError, match=r"2 exported sheets .*name one with --name"):
        import_grades(project, run_dir, a.path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[2].update(grade="maybe"),
         "row 4, column 'grade': expected pass, fail or a number from 0 to 1, got 'maybe'"),
        (lambda rows: rows[0].update(grade="1.5"), "row 2, column 'grade': expected pass, fail or a number"),
        (lambda rows: rows[4].update(row="999"), "row 6, column 'row': sheet row 999 is not on the exported sheet"),
        (lambda rows: rows[4].update(row="x"), "row 6, column 'row': expected a sheet row id"),
        # int() read these as rows 5 and 3 (hostile audit 11); float() read '0_1' as 1 and '٠' as 0
        (lambda rows: rows[4].update(row="0_" + rows[4]["row"]), "row 6, column 'row': expected a sheet row id "
                                                                 "(a whole number in the digits 0-9), got '0_"),
        (lambda rows: rows[4].update(row="".join(chr(0x660 + int(c)) for c in rows[4]["row"])),
         "row 6, column 'row': expected a sheet row id (a whole number in the digits 0-9), got '"),
        (lambda rows: rows[0].update(grade="0_1"), "row 2, column 'grade': expected pass, fail or a number"),
        (lambda rows: rows[0].update(grade="\u0660.\u0665"), "row 2, column 'grade': expected pass, fail or a number"),
        (lambda rows: rows[1].update(row=rows[0]["row"]), "row 3, column 'row': sheet row 1 appears twice"),
        (lambda rows: rows[7].update(fixture="ex-99"), "row 9, column 'fixture': sheet row 8 was exported as fixture"),
    ],
)
def test_grade_validation_names_file_row_and_column(project: Project, tmp_path: Path, edit: object,
                                                    message: str) -> None:
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    rows = read_sheet(sheet.path)
    for r in rows:
        r["grade"] = "pass"
    edit(rows)  # type: ignore[operator]
    write_sheet(sheet.path, rows)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(sheet.path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {sheet.path}: ") and message in lines[0]
    assert not (run_dir / "grades").exists()


def test_a_sheet_saved_by_a_spreadsheet_with_a_decimal_comma_imports_as_the_same_grades(project: Project,
                                                                                        tmp_path: Path) -> None:
    """Hostile audit (hostile21, locales): Excel in a German or French locale saves "CSV" with `;` between cells
    (its decimal mark is the comma) and writes a half as `0,5`: `grade` said `row 1: missing column 'row'` of a
    sheet whose header reads row;fixture;output;grade;note. It imports as the sheet saved with commas does."""
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    rows = read_sheet(sheet.path)
    for n, row in enumerate(rows):
        row["grade"], row["note"] = ("0.5" if n % 2 else "pass"), "a note; with, both marks"
    write_sheet(sheet.path, rows)
    german = tmp_path / "de.csv"
    with open(german, "w", encoding="utf-8-sig", newline="") as fh:  # BOM, `;`, CRLF: Excel's "CSV UTF-8"
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=";", lineterminator="\r\n")
        writer.writeheader()
        writer.writerows({**row, "grade": row["grade"].replace(".", ",")} for row in rows)
    assert "0,5" in german.read_text(encoding="utf-8-sig")
    import_grades(project, run_dir, german, name="human")
    stored = (run_dir / "grades" / "human.csv").read_bytes()
    import_grades(project, run_dir, sheet.path, name="human", force=True)
    assert (run_dir / "grades" / "human.csv").read_bytes() == stored
    # review21b: a column the grader added whose name holds a comma made the sheet read with commas, and
    # `grade` said `row 1: missing column 'row'` of it
    text = german.read_bytes().decode("utf-8-sig").splitlines(keepends=True)
    added = tmp_path / "de-added.csv"
    head = text[0].replace("\r\n", ';"Kommentar, intern"\r\n')
    added.write_bytes((head + "".join(text[1:])).encode("utf-8-sig"))
    import_grades(project, run_dir, added, name="human", force=True)
    assert (run_dir / "grades" / "human.csv").read_bytes() == stored


def _graded(project: Project, tmp_path: Path, run_dir: Path, grades: dict[int, str], separator: str) -> Result:
    """`grade` of the run's sheet filled `pass` but for `grades` (by its position), saved with `separator`."""
    sheet = tmp_path / "s.csv"
    if not sheet.exists():
        blind_sheet(project, run_dir, sheet)
    rows = read_sheet(sheet)
    for n, row in enumerate(rows):
        row["grade"] = grades.get(n, "pass")
    with open(tmp_path / "filled.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=separator)
        writer.writeheader()
        writer.writerows(rows)
    return CliRunner().invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(tmp_path / "filled.csv"),
                                    "--force"])


def test_a_grade_that_reads_two_ways_is_refused_unless_the_sheets_separator_settles_it(project: Project,
                                                                                       tmp_path: Path) -> None:
    """left22: a grade '1,000' (quoted) in a sheet separated by ',' was read as 1.0, the comma taken for a decimal
    one; where ',' separates the cells, '.' is the decimal mark and a comma before three digits separates
    thousands (1000, no grade) or is a slip: one line naming the file, the row and the column, and what to write.
    In a sheet separated by ';' (a locale with a decimal comma), '1,000' is 1.0 for certain, and '1.000' the one
    that reads two ways. A mark that cannot separate thousands ('0,5', '0.5') is read as a decimal one in both."""
    run_dir = strong_run(project)
    filled = tmp_path / "filled.csv"
    for separator, ambiguous, said in ((",", "1,000", "1000 (',' between thousands) or as 1.0 (a decimal comma)"),
                                       (";", "1.000", "1000 ('.' between thousands) or as 1.0 (a decimal point)")):
        result = _graded(project, tmp_path, run_dir, {2: ambiguous}, separator)
        assert result.exit_code == 1
        point = "." if separator == "," else ","
        assert result.output == (
            f"error: {filled}: row 4, column 'grade': expected pass, fail or a number from 0 to 1, got "
            f"'{ambiguous}', which reads as {said}; the sheet's cells are separated by '{separator}', so write its "
            f"decimal mark as '{point}': 1{point}0\n"), result.output
        assert not (run_dir / "grades").exists()
    refused = _graded(project, tmp_path, run_dir, {0: "2,500"}, ",")
    assert "got '2,500', which reads as 2500 (',' between thousands) or as 2.5 (a decimal comma)" in refused.output
    # the separator settles it: ';' makes ',' the decimal mark; a lone mark before one or two digits is decimal
    _assert_read_as(project, tmp_path, run_dir, {";": {2: "1,000", 3: "0,250", 4: "0.5"},
                                                  ",": {2: "1.000", 3: "0.250", 4: "0,5"}}, ["1.0", "0.25", "0.5"])


def test_a_grade_whose_first_group_is_0_groups_no_thousands(project: Project, tmp_path: Path) -> None:
    """review22: '0,250' in a sheet separated by ',' (and '0.250' in one separated by ';') read as 0.25 before
    the grades that read two ways were refused, and was then refused as 'reads as 250 or as 0.25', though no one
    writes 250 so: a sheet graded in thousandths ('0,250', '0,000') is read as it was."""
    run_dir = strong_run(project)
    _assert_read_as(project, tmp_path, run_dir, {",": {2: "0,250", 3: "0,000", 4: "0,125"},
                                                  ";": {2: "0.250", 3: "0.000", 4: "0.125"}}, ["0.25", "0.0", "0.125"])


def test_a_grade_written_out_to_many_places_is_taken(project: Project, tmp_path: Path) -> None:
    """A grade of `=1/3` written out to 19 places (a tool that writes every digit) was refused as 'expected pass,
    fail or a number from 0 to 1', though it is one: after the point, as many places as the cell holds are read."""
    run_dir = strong_run(project)
    third, half = "0." + "3" * 19, "0." + "5" + "0" * 30
    _assert_read_as(project, tmp_path, run_dir, {",": {2: third, 3: half, 4: "1." + "0" * 20},
                                                  ";": {2: third.replace(".", ","), 3: half.replace(".", ","),
                                                        4: "1," + "0" * 20}},
                    ["0.3333333333333333", "0.5", "1.0"])


def _assert_read_as(project: Project, tmp_path: Path, run_dir: Path, sheets: dict[str, dict[int, str]],
                    stored: list[str]) -> None:
    """Each sheet (its separator, the grades written in rows 2-4) is taken, and rows 2-4 are stored as `stored`."""
    for separator, grades in sheets.items():
        result = _graded(project, tmp_path, run_dir, grades, separator)
        assert result.exit_code == 0, result.output
        rows = read_sheet(run_dir / "grades" / "human.csv")
        assert [r["grade"] for r in rows][2:5] == stored, rows


def test_grade_refuses_a_sheet_without_grades_or_columns(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    with pytest.raises(RunError, match="no row has a grade"):
        import_grades(project, run_dir, sheet.path)
    bad = tmp_path / "bad.csv"
    bad.write_text("row,fixture,output\n1,ex-01,x\n")
    with pytest.raises(RunError, match=r"bad\.csv: row 1: missing column 'grade'"):
        import_grades(project, run_dir, bad)


def test_grade_after_the_verdict_is_refused(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    give_verdict(project, run_dir)
    with pytest.raises(RunError, match="already has a verdict"):
        import_grades(project, run_dir, sheet.path)


def test_blind_sheet_after_the_verdict_is_refused(project: Project, tmp_path: Path) -> None:
    """`grade` refuses a judged run, so a sheet exported from one could never count: the export is refused too."""
    run_dir = strong_run(project)
    give_verdict(project, run_dir)
    out = tmp_path / "late.csv"
    result = CliRunner().invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(out)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: run {run_dir.name} already has a verdict; grades of a sheet exported now could never be part of it"]
    assert not out.exists() and not (run_dir / "sealed" / "sheet-human.jsonl").exists()
    with pytest.raises(RunError, match="already has a verdict"):
        blind_sheet(project, run_dir, out, name="late")
    assert not out.exists() and not (run_dir / "sealed" / "sheet-late.jsonl").exists()


def _all_passed(project: Project, run_dir: Path, tmp_path: Path) -> Path:
    """The run's blind sheet exported to tmp_path/s.csv, every row graded pass, as a grader hands it back."""
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    rows = read_sheet(sheet.path)
    for row in rows:
        row["grade"] = "pass"
    write_sheet(sheet.path, rows)
    return sheet.path


def _bc(project: Project, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
    return result.exit_code, result.stdout, result.stderr


def test_exporting_again_never_erases_a_graders_sheet(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    out = tmp_path / "sheet.csv"
    assert _bc(project, "blind-sheet", run_dir.name, "--out", str(out))[0] == 0
    rows = read_sheet(out)
    rows[0]["grade"] = "pass"
    write_sheet(out, rows)
    filled = out.read_bytes()
    code, _, err = _bc(project, "blind-sheet", run_dir.name, "--out", str(out))
    assert code == 1 and "already exists" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert out.read_bytes() == filled
    code, stdout, _ = _bc(project, "blind-sheet", run_dir.name, "--out", str(out), "--force")
    assert code == 0 and "sheet.csv.bak" in stdout
    assert (tmp_path / "sheet.csv.bak").read_bytes() == filled and read_sheet(out)[0]["grade"] == ""


@pytest.mark.parametrize("at", ["write_atomic", "write_new"])
def test_a_blind_sheet_killed_between_its_two_files_is_exported_again_whole(project: Project, tmp_path: Path,
                                                                            at: str) -> None:
    """The sheet and its sealed mapping are two files: a kill between them once left the sheet without its
    mapping, which the same command then refused ("already exists") and `grade` could never read. The mapping
    goes first (it is the same for every export of the name), so the command given again completes the pair."""
    run_dir = strong_run(project)
    out = tmp_path / "sheet.csv"
    assert killed_at(f"benchcard.grading.sheets:{at}:", "-C", str(project.root), "blind-sheet", run_dir.name,
                     "--out", str(out)) == -9
    code, _, err = _bc(project, "blind-sheet", run_dir.name, "--out", str(out))
    assert code == 0, err
    assert len(read_sheet(out)) == 36 and (run_dir / "sealed" / "sheet-human.jsonl").is_file()
    rows = read_sheet(out)
    for row in rows:
        row["grade"] = "pass"
    write_sheet(out, rows)
    assert _bc(project, "grade", run_dir.name, str(out))[0] == 0


@pytest.mark.parametrize("target", ["results/ledger.jsonl", "keys/bench-01/v1.seal.json", "keys/bench-01/ex-01.json",
                                    "CARD", "RUN/outputs.jsonl", "LINK"])
def test_no_force_writes_over_the_ledger_a_seal_a_key_or_evidence(project: Project, tmp_path: Path,
                                                                   target: str) -> None:
    run_dir = strong_run(project)
    give_verdict(project, strong_run(project))  # the ledger has a row
    (project.root / "keys" / "bench-01").mkdir(parents=True, exist_ok=True)
    for name in ("v1.seal.json", "ex-01.json"):
        (project.root / "keys" / "bench-01" / name).write_text("{}\n", encoding="utf-8")
    (tmp_path / "LINK").symlink_to(project.ledger_path)
    path = (run_dir / "outputs.jsonl") if target.startswith("RUN/") else (
        tmp_path / "LINK" if target == "LINK" else the_card(project).path if target == "CARD"
        else project.root / target)
    before = path.read_bytes()
    code, _, err = _bc(project, "blind-sheet", run_dir.name, "--out", str(path), "--force")
    assert code == 1 and "never writes over it" in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.bak*"))


def test_importing_grades_again_keeps_the_first_import(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    rows = read_sheet(sheet.path)
    rows[0]["grade"] = "pass"
    write_sheet(sheet.path, rows)
    assert _bc(project, "grade", run_dir.name, str(sheet.path))[0] == 0
    first = (run_dir / "grades" / "human.csv").read_bytes()
    rows[1]["grade"] = "fail"
    write_sheet(sheet.path, rows)
    code, _, err = _bc(project, "grade", run_dir.name, str(sheet.path))
    assert code == 1 and "already exists" in err
    assert (run_dir / "grades" / "human.csv").read_bytes() == first
    assert _bc(project, "grade", run_dir.name, str(sheet.path), "--force")[0] == 0
    assert (run_dir / "grades" / "human.csv.bak").read_bytes() == first


def test_an_output_quoting_its_variants_instruction_is_shown_to_the_grader_as_the_judge_sees_it(
        project: Project, tmp_path: Path) -> None:
    """An output that quotes the instruction its variant added told a human grader which arm it came from: the
    judge's requests write such an echo […] (`blind_output`), the blind sheet showed it as the model wrote it
    (hostile audit, round 20)."""
    card = the_card(project)
    echo = "Score your own output before returning it."
    texts = {("A", f, r): f"Acme Ltd. {echo} Done." for f in card.fixture_ids() for r in range(card.repetitions)}
    run_dir = make_run(project, card, ab_metrics(STRONG_BASE, STRONG_VAR), texts=texts)
    out = tmp_path / "sheet.csv"
    result = CliRunner().invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(out)])
    assert result.exit_code == 0, result.output
    cells = [r["output"] for r in read_sheet(out)]
    assert "Acme Ltd. […] Done." in cells and not any(echo in c for c in cells)
    project.card_path(card.id).write_text(project.card_path(card.id).read_text(encoding="utf-8").replace(
        "version: 1", "version: 2"), encoding="utf-8")  # its card moved on: which texts to write out is not known
    moved = CliRunner().invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(out),
                                     "--force"])
    assert moved.exit_code == 1 and moved.stderr.startswith(f"error: run {run_dir.name} is of extract-ab v1, but "
                                                            "cards/extract-ab.yaml is now v2")
    assert "to export a blind sheet of it, put back cards/extract-ab.yaml as v1 was sealed" in moved.stderr


def test_a_sheet_from_python_writes_out_the_echo_as_the_command_does(project: Project, tmp_path: Path) -> None:
    """`blind_sheet` from Python was given the variants' texts by the command only: called without them, it showed
    the echo, and the grader could tell the arm. It reads them from the run's sealed card itself; a card edited
    since its seal (which texts were sent is then not known) is refused in one line, before any file is written."""
    card = the_card(project)
    echo = "Score your own output before returning it."
    texts = {("A", f, r): f"Acme Ltd. {echo} Done." for f in card.fixture_ids() for r in range(card.repetitions)}
    run_dir = make_run(project, card, ab_metrics(STRONG_BASE, STRONG_VAR), texts=texts)
    sheet = blind_sheet(project, run_dir, tmp_path / "api.csv")
    cells = [r["output"] for r in read_sheet(sheet.path)]
    assert "Acme Ltd. […] Done." in cells and not any(echo in c for c in cells)
    path = project.card_path(card.id)
    path.write_text(path.read_text(encoding="utf-8").replace(echo, "Check your output."), encoding="utf-8")
    with pytest.raises(RunError, match=f"^seal changed since run {run_dir.name}: ") as refused:
        blind_sheet(project, run_dir, tmp_path / "edited.csv", name="edited")
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "edited.csv").exists() and not (run_dir / "sealed" / "sheet-edited.jsonl").exists()


def test_a_run_set_aside_is_neither_exported_nor_graded(project: Project, tmp_path: Path) -> None:
    """A run set aside is never judged, so its grades could never count: `blind-sheet` and `grade` took it all
    the same, a grader's hours spent on a sheet no verdict would read (hostile audit, round 20)."""
    from benchcard.records.setaside import set_aside

    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir.name, tmp_path / "sheet.csv")
    write_sheet(sheet.path, [{**r, "grade": "pass"} for r in read_sheet(sheet.path)])
    set_aside(project, run_dir.name, "a pilot")
    refused = f"run {run_dir.name}: this run was set aside "
    for args in (("blind-sheet", run_dir.name, "--out", str(tmp_path / "again.csv")),
                 ("grade", run_dir.name, str(sheet.path))):
        code, out, err = _bc(project, *args)
        assert code == 1 and out == "" and err.startswith(f"error: {refused}"), (args, err)
    assert not (tmp_path / "again.csv").exists() and not (run_dir / "grades").exists()


def test_formula_outputs_are_text_in_the_sheet(project: Project, tmp_path: Path) -> None:
    card = the_card(project)
    formulas = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "plain"]
    texts = {("A", f, r): formulas[(i * card.repetitions + r) % len(formulas)]
             for i, f in enumerate(card.fixture_ids()) for r in range(card.repetitions)}
    run_dir = make_run(project, card, ab_metrics(STRONG_BASE, STRONG_VAR), texts=texts)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    cells = [r["output"] for r in read_sheet(sheet.path)]
    for formula in formulas[:-1]:
        assert "'" + formula in cells and formula not in cells
    assert "plain" in cells
    assert not any(c[:1] in "=+-@\t" for c in cells)


def test_the_mapping_is_compact_and_an_old_spaced_mapping_still_grades(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    runner = CliRunner()
    out = tmp_path / "sheet.csv"
    assert runner.invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(out)]).exit_code == 0
    mapping = run_dir / "sealed" / "sheet-human.jsonl"
    lines = mapping.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 36 and all(line.startswith('{"row":') and ": " not in line and ", " not in line
                                    for line in lines)
    assert sorted(p.name for p in (run_dir / "sealed").iterdir()) == ["assignment.jsonl", "requests.jsonl",
                                                                      "sheet-human.jsonl"]  # no temporary left
    # a run exported before: the mapping in the old dialect, with spaces
    old = "".join(json.dumps(json.loads(line), ensure_ascii=False) + "\n" for line in lines)
    assert '"row": 1, "cell": ' in old
    mapping.write_text(old, encoding="utf-8")
    again = runner.invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(tmp_path / "b.csv")])
    assert again.exit_code == 0, again.output  # the same rows: accepted, and the old file is not rewritten
    assert mapping.read_text(encoding="utf-8") == old
    auto = auto_scores(run_dir)
    rows = read_sheet(out)
    for r in rows:
        r["grade"] = "pass" if auto[int(r["row"])] == 1.0 else "fail"
    rows[0]["grade"] = "fail" if rows[0]["grade"] == "pass" else "pass"
    write_sheet(out, rows)
    graded = runner.invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(out)])
    assert graded.exit_code == 0, graded.output
    verdict = runner.invoke(cli, ["-C", str(project.root), "verdict", run_dir.name])
    assert verdict.exit_code == 0, verdict.output
    assert "human grades: 36 graded · agreement 0.972" in verdict.output and "1 disagreement(s)" in verdict.output


def test_a_mapping_with_a_broken_line_is_named(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    out = tmp_path / "sheet.csv"
    blind_sheet(project, run_dir, out)
    mapping = run_dir / "sealed" / "sheet-human.jsonl"
    mapping.write_text(mapping.read_text(encoding="utf-8").replace('"row":2,', '"row":"two",'), encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(out)])
    assert result.exit_code == 1
    assert re.search(r"sheet-human\.jsonl: line 2: Expected `int`, got `str` - at `\$\.row`", result.output)


def test_imported_grades_are_read_back_joined_to_their_cells(project: Project, tmp_path: Path) -> None:
    """What the verdict reads: each row of grades/<name>.csv with the cell the sealed mapping gives it, the grade as
    written (an ungraded row too) and the note; a row the mapping does not hold is a VerdictError naming the file."""
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    rows = read_sheet(sheet.path)
    for r in rows:
        r["grade"] = "pass"
    rows[0]["note"] = "fine"
    write_sheet(sheet.path, rows)
    import_grades(project, run_dir, sheet.path)
    [path] = grade_files(run_dir)
    mapping = {json.loads(line)["row"]: json.loads(line)["cell"]
               for line in (run_dir / "sealed" / "sheet-human.jsonl").read_text().splitlines()}
    read = list(imported_grades(project, run_dir, path))
    assert [(g.sheet, g.row, g.cell, g.grade) for g in read] == [("human", i, mapping[i], "pass")
                                                                 for i in range(1, 37)]
    assert read[0].note == "fine" and {g.note for g in read[1:]} == {""}
    path.write_text(path.read_text(encoding="utf-8").replace("\n1,", "\n99,", 1), encoding="utf-8")
    with pytest.raises(VerdictError, match=r"^results/.*/grades/human.csv: sheet row 99 is not in "
                                           r"sealed/sheet-human.jsonl$"):
        list(imported_grades(project, run_dir, path))


@pytest.mark.parametrize(("edit", "said"), [
    (lambda lines: [lines[0], "x" + lines[1][lines[1].index(","):], *lines[2:]],
     "line 2, column 'row': expected a sheet row id (a whole number), got 'x'"),
    (lambda lines: [lines[0], "9" * 5000 + lines[1][lines[1].index(","):], *lines[2:]],
     "line 2, column 'row': expected a sheet row id (a whole number), got '99999"),
    (lambda lines: [lines[0], lines[1].replace(",pass,", ",maybe,"), *lines[2:]],
     "line 2, column 'grade': expected pass, fail or a number from 0 to 1, got 'maybe'"),
    (lambda lines: lines[1:], "expected the columns row, fixture, grade, note"),
])
def test_imported_grades_edited_by_hand_are_one_line_at_the_verdict(project: Project, tmp_path: Path, edit: Any,
                                                                     said: str) -> None:
    """grades/<sheet>.csv is read back by the verdict: a row id that is not a number, a grade that is none or the
    header line removed, by a hand or a disk, ended `verdict` in a ValueError or KeyError traceback."""
    run_dir = strong_run(project)
    sheet = _all_passed(project, run_dir, tmp_path)
    assert _bc(project, "grade", run_dir.name, str(sheet))[0] == 0
    stored = run_dir / "grades" / "human.csv"
    stored.write_text("\n".join(edit(stored.read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")
    code, out, err = _bc(project, "verdict", run_dir.name)
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {project.relative(stored)}: ") and said in err
    assert not (run_dir / "verdict.json").exists()


def test_a_fifo_or_a_folder_named_as_the_sheet_is_one_line_not_a_hang(project: Project, tmp_path: Path) -> None:
    """`benchcard grade RUN sheet.csv` opened the sheet with a blocking open(): a FIFO nobody writes to (a sheet
    path reused for a pipe) hung the command for ever. The sheet is read as every file a user hands benchcard is:
    a regular file or one line."""
    run_dir = strong_run(project)
    blind_sheet(project, run_dir, tmp_path / "s.csv")
    os.mkfifo(tmp_path / "pipe.csv")  # nobody writes to it: a blocking open would hang here
    with pytest.raises(RunError, match=r"pipe\.csv: not a regular file \(a FIFO\); expected a text file$"):
        import_grades(project, run_dir, tmp_path / "pipe.csv")
    with pytest.raises(RunError, match=r"^/dev/zero: not a regular file \(a device\); expected a text file$"):
        import_grades(project, run_dir, Path("/dev/zero"))
    with pytest.raises(RunError, match=r"absent\.csv: no such file$"):
        import_grades(project, run_dir, tmp_path / "absent.csv")
    assert not (run_dir / "grades").exists()


def test_grades_imported_while_the_verdict_works_are_refused_not_anchored_unread(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchcard grade RUN sheet.csv` while `benchcard verdict RUN` worked: the grades landed after the verdict had
    read the run's grades (none) and before it entered its row, whose evidence then anchored grades/human.csv while
    its figures held no human agreement: a row that says the run had no blind grading, beside the grading it vouches
    for. A grade takes the run's lock alone, so it is refused while a verdict (or a run) holds the run."""
    run_dir = strong_run(project)
    sheet = _all_passed(project, run_dir, tmp_path)
    tried: list[str] = []
    commit = give._commit

    def meanwhile(*args: Any, **kwargs: Any) -> Any:  # another process, between the verdict's reading and writing
        with pytest.raises(RunError) as info:
            import_grades(project, run_dir, sheet)
        tried.append(str(info.value))
        return commit(*args, **kwargs)

    monkeypatch.setattr(give, "_commit", meanwhile)
    verdict = give_verdict(project, run_dir)
    assert tried == [f"run {run_dir.name} is being judged or written by another benchcard process now; import the "
                     "grades once it is done (grades imported after the verdict are not part of it)"]
    assert not (run_dir / "grades").exists() and not isinstance(verdict.file.human, HumanGrades)


@pytest.mark.parametrize("name", ["con", "aux", "nul", "prn", "com1", "lpt9"])
def test_a_sheet_named_as_a_windows_device_is_refused_before_anything_is_written(project: Project, tmp_path: Path,
                                                                                name: str) -> None:
    """`blind-sheet --name con` wrote sealed/sheet-con.jsonl, and its grades grades/con.csv, in a run folder that is
    committed and published: a file no Windows clone can hold (git's checkout fails there), as a card named con was
    before 4632932. The name is refused as a card's id is, and nothing is written."""
    run_dir = strong_run(project)
    code, out, err = _bc(project, "blind-sheet", run_dir.name, "--name", name, "--out", str(tmp_path / "s.csv"))
    assert (code, out) == (1, "")
    assert err == (f"error: sheet name {name!r}: is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, "
                   "with any extension or case), which names a file in the run's folder; choose another\n")
    assert not (tmp_path / "s.csv").exists() and not list((run_dir / "sealed").glob("sheet-*"))


def test_a_verdict_asked_while_grades_are_imported_waits_and_says_why(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other order of the race above: `benchcard verdict RUN` while `benchcard grade RUN sheet.csv` writes
    grades/human.csv is refused in one line naming the import (it said a resume or a retry was writing the run),
    and given once the grades are in, with them."""
    from benchcard._util.safewrite import write_new

    run_dir = strong_run(project)
    sheet = _all_passed(project, run_dir, tmp_path)
    tried: list[str] = []

    def meanwhile(*args: Any, **kwargs: Any) -> Any:  # another process, while the grades are written
        with pytest.raises(VerdictError) as info:
            give_verdict(project, run_dir)
        tried.append(str(info.value))
        return write_new(*args, **kwargs)

    monkeypatch.setattr("benchcard.grading.sheets.write_new", meanwhile)
    import_grades(project, run_dir, sheet)
    assert tried == [f"run {run_dir.name} is being written by another benchcard process (a resume, a retry of its "
                     "failed cells, or grades imported); a verdict waits for it to finish"]
    assert not (run_dir / "verdict.json").exists()
    assert isinstance(give_verdict(project, run_dir).file.human, HumanGrades)
