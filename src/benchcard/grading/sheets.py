"""Blind human grading: export a shuffled sheet of outputs, import the grades, compare them with the scorer.

The sheet is built from `outputs.jsonl` alone — the exporter never opens the sealed assignment — and holds a
sheet row id, the fixture id, the output text and empty `grade` and `note` columns: no variant, model,
repetition or cell id. Its order is a seeded shuffle (seeded from the seal root, the run and the sheet's name,
so the same export is reproducible). The row → cell mapping is kept in the run folder under
`sealed/sheet-<name>.jsonl`, which only the verdict reads.

`import_grades` validates a filled sheet (one-line errors naming the file, row and column) and stores it as
`grades/<name>.csv`; `imported_grades` reads them back, each row joined to its cell through the sealed mapping.
When the verdict is given, `verdict/_agreement.py` compares them with the automatic scores.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import IO

import msgspec
import numpy as np

from benchcard._util.files import write_atomic
from benchcard._util.hashing import digest, seed_from
from benchcard._util.lastrow import last_per_cell
from benchcard._util.names import windows_name_problem
from benchcard._util.safeio import read_regular_text
from benchcard._util.safewrite import refuse_existing, write_new
from benchcard._util.text import ascii_decimal, ascii_int, displayable, plain_text, spreadsheet_text
from benchcard.card.load import card_of_run, check_seal_root
from benchcard.card.seal import root_for_scratch
from benchcard.errors import BenchcardError, RunError, VerdictError
from benchcard.project import Project
from benchcard.records.cardruns import find_run
from benchcard.records.rows import VERDICT as VERDICT_FILE
from benchcard.records.rows import Manifest, OutputRow, dumps_line, read_rows
from benchcard.records.runreader import held_still, read_manifest
from benchcard.records.setaside import refuse_set_aside
from benchcard.scoring.judge import blind_output

SHEET_COLUMNS = ("row", "fixture", "output", "grade", "note")
REQUIRED_COLUMNS = ("row", "fixture", "grade")
STORED_COLUMNS = ("row", "fixture", "grade", "note")  # grades/<sheet>.csv, as `grade` writes it
DEFAULT_NAME = "human"
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_DIGITS = re.compile(r"[0-9]+")  # ASCII digits only: a grade's thousands group, as `ascii_decimal` reads numbers


@dataclass(frozen=True)
class Sheet:
    """An exported blind sheet."""

    path: Path
    name: str
    rows: int
    mapping: Path
    left_out: Mapping[str, int]  # status → count of outputs not on the sheet (truncated, failed)
    backup: Path | None = None  # where --force moved a file that was in the way


@dataclass(frozen=True)
class GradeImport:
    """Grades imported from a filled sheet."""

    path: Path
    name: str
    graded: int
    ungraded: int
    backup: Path | None = None  # where --force moved grades imported before


def _check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise RunError(f"sheet name {name!r}: expected lowercase letters, digits, '-' or '_' (up to 40)")
    device = windows_name_problem(name)  # grades/<name>.csv is committed with the run, and cloned anywhere
    if device is not None:
        raise RunError(f"sheet name {name!r}: {device}, which names a file in the run's folder; choose another")
    return name


class SheetRow(msgspec.Struct, frozen=True):
    """One line of `sealed/sheet-<name>.jsonl`: which cell (and fixture) a sheet row stands for."""

    row: int
    cell: str
    fixture: str


def _mapping_path(run_dir: Path, name: str) -> Path:
    return run_dir / "sealed" / f"sheet-{name}.jsonl"


def _outputs(run_dir: Path, retried: bool) -> list[OutputRow]:
    """Each cell's outcome (a retried run's earlier attempts are not graded)."""
    path = run_dir / "outputs.jsonl"
    if not path.is_file():
        raise RunError(f"run {run_dir.name} has no outputs.jsonl; nothing to grade")
    rows = read_rows(path, OutputRow)
    return last_per_cell(rows, attrgetter("cell")) if retried else rows


def blind_sheet(project: Project, run: str | Path, out: Path | None = None, name: str = DEFAULT_NAME,
                force: bool = False) -> Sheet:
    """Write a blind grading sheet (CSV) of the run's answered outputs, shuffled; keep the mapping sealed.

    Only outputs with status `ok` go on the sheet: truncated and failed cells are never scored, by the
    scorer or by a person. Exporting the same sheet name again reproduces the same sheet. A run that already has
    a verdict is refused, as `import_grades` would refuse the grades: a sheet whose grades can never count is a trap.
    `run` is found as every command finds one (`find_run`: an id, a prefix, a card's newest run, or its folder).
    Each output is shown as the judge is shown it: any verbatim echo of a variant's text (`_variant_texts`, read
    here from the run's sealed card, so that no caller can leave them out) written […]
    (`scoring.judge.blind_output`), so an output that quotes its own instruction cannot tell the grader its variant.
    """
    run_dir = find_run(project, run)
    _check_name(name)
    if (run_dir / VERDICT_FILE).exists():
        raise RunError(f"run {run_dir.name} already has a verdict; grades of a sheet exported now could never be "
                       "part of it")
    refuse_set_aside(run_dir, f"run {run_dir.name}")  # never judged: a sheet of it could never count either
    manifest = read_manifest(run_dir)
    if not manifest.finished_at:
        raise RunError(f"run {run_dir.name} has not finished; export a sheet when every cell is answered")
    texts = _variant_texts(project, run_dir, manifest)
    graded, left_out = _answered(_outputs(run_dir, bool(manifest.retries)))
    if not graded:
        raise RunError(f"run {run_dir.name} has no answered output to grade")
    seed = seed_from(digest(f"{manifest.seal_root}|{run_dir.name}|sheet|{name}"))
    order = np.random.default_rng(seed).permutation(len(graded)).tolist()
    out = Path(out) if out is not None else Path.cwd() / f"blind-{run_dir.name}-{name}.csv"
    project.refuse_protected(out, str(out))
    shuffled = [(row_id, graded[i]) for row_id, i in enumerate(order, 1)]
    rows = [[row_id, spreadsheet_text(o.fixture), spreadsheet_text(displayable(blind_output(o.text, texts).text)),
             "", ""] for row_id, o in shuffled]
    mapping = [SheetRow(row_id, o.cell, o.fixture) for row_id, o in shuffled]
    path = _mapping_path(run_dir, name)
    _same_mapping(project, path, name, mapping)

    def write(fh: IO[str]) -> None:
        writer = csv.writer(fh)
        writer.writerow(SHEET_COLUMNS)
        writer.writerows(rows)

    refuse_existing(out, force=force, shown=str(out), error=RunError)  # before the mapping is written
    # The mapping first: it is the same for every export of this name, so a kill between the two files leaves a
    # mapping the same command completes; a sheet without its mapping could never be graded, and the command
    # given again refused it as a file that exists.
    if not path.is_file():
        try:
            write_atomic(path, b"".join(dumps_line(m) for m in mapping), overwrite=False)
        except FileExistsError:  # another export of the same name got there first: it must have the same rows
            _same_mapping(project, path, name, mapping)
    backup = write_new(out, write, force=force, shown=str(out), error=RunError)
    return Sheet(out, name, len(mapping), path, left_out, backup)


def _answered(outputs: list[OutputRow]) -> tuple[list[OutputRow], dict[str, int]]:
    """The outputs a sheet shows (status `ok`), and how many of each other status it leaves out."""
    left_out: dict[str, int] = {}
    for row in outputs:
        if row.status != "ok":
            left_out[row.status] = left_out.get(row.status, 0) + 1
    return [row for row in outputs if row.status == "ok"], left_out


def _variant_texts(project: Project, run_dir: Path, manifest: Manifest) -> tuple[str, ...]:
    """The texts the variants of the run's card insert (none for a probe): the card at the run's version, its seal
    the one the run was made under, or one line (as the verdict would refuse it: grades of that run never count)."""
    card = card_of_run(project, run_dir.name, manifest, RunError, doing="export a blind sheet of")
    check_seal_root(project, run_dir.name, card, manifest,
                    lambda: root_for_scratch(card, project, bool(manifest.scratch)), RunError)
    return tuple(card.variants.values()) if card.is_ab else ()


def _same_mapping(project: Project, path: Path, name: str, mapping: list[SheetRow]) -> None:
    """Refuse a second export under a name whose sealed mapping holds other rows (compared as rows, so a
    mapping written in the older spaced dialect still matches; it is never rewritten)."""
    if path.is_file() and read_rows(path, SheetRow) != mapping:
        raise RunError(f"{project.relative(path)}: a sheet named {name!r} was exported with other rows; "
                       "export under another --name")


def _read_mapping(run_dir: Path, name: str, error: type[BenchcardError] = RunError) -> dict[int, SheetRow]:
    path = _mapping_path(run_dir, name)
    if not path.is_file():
        raise RunError(f"run {run_dir.name} has no sheet named {name!r} (no sealed/sheet-{name}.jsonl); "
                       "export one with `benchcard blind-sheet`")
    return {m.row: m for m in read_rows(path, SheetRow, error)}


def _sheet_names(run_dir: Path) -> list[str]:
    return sorted(p.name[len("sheet-"):-len(".jsonl")] for p in (run_dir / "sealed").glob("sheet-*.jsonl"))


def parse_grade(text: str, separator: str = ",") -> str | float | None:
    """`pass`, `fail`, a number from 0 to 1 (1 and 0 included), or empty (not graded). Else ValueError, its
    message one clause ending in what was got.

    The decimal mark is the one the sheet's cell separator implies: `.` in a sheet separated by `,`, `,` in one
    separated by `;` (Excel in a locale with a decimal comma: `0,5`). The other mark, which such a locale puts
    between thousands, is read as a decimal mark only where it cannot be one (`0,5` in a `,` sheet, `0.5` in a `;`
    one): before three digits after a first group of 1 to 9, it is refused, `1,000` being 1000 or 1.0 (one thousand
    is no grade, 1.0 is); `0,250` groups no thousands, and is 0.25 as it was before."""
    t = text.strip().lower()
    if not t:
        return None
    if t in ("pass", "fail"):
        return t
    point, other = (",", ".") if separator == ";" else (".", ",")
    got = f"got {text[:80]!r}"
    if t.count(other) == 1 and point not in t:
        whole, _, part = t.partition(other)
        if _groups_thousands(whole, part):
            said = {",": "a decimal comma", ".": "a decimal point"}[other]
            decimal = f"{int(whole)}.{part.rstrip('0') or '0'}"
            raise ValueError(f"expected pass, fail or a number from 0 to 1, {got}, which reads as "
                             f"{int(whole + part)} ({other!r} between thousands) or as {decimal} ({said}); the "
                             f"sheet's cells are separated by {separator!r}, so write its decimal mark as "
                             f"{point!r}: {decimal.replace('.', point)}")
        t = t.replace(other, ".")
    elif t.count(point) == 1:
        t = t.replace(point, ".")
    value = ascii_decimal(t)  # float() would read '0_0' as 0 and '٠.٥' as 0.5
    if value is None or not 0.0 <= value <= 1.0:
        raise ValueError(f"expected pass, fail or a number from 0 to 1, {got}")
    return value


def _groups_thousands(whole: str, part: str) -> bool:
    """Whether `whole` and `part`, either side of one mark, may be a number with its thousands set apart (`1,000`):
    a first group of one to three digits, not starting with 0 (no one writes 250 as `0,250`), then three."""
    return (len(part) == 3 and _DIGITS.fullmatch(part) is not None and _DIGITS.fullmatch(whole) is not None
            and len(whole) <= 3 and not whole.startswith("0"))


def import_grades(project: Project, run: str | Path, sheet: Path, name: str | None = None,
                  force: bool = False) -> GradeImport:
    """Validate a filled sheet and store it as `grades/<name>.csv` (row, fixture, grade, note); `run` is found as
    `blind_sheet` finds it."""
    run_dir = find_run(project, run)
    read_manifest(run_dir)  # a malformed manifest is the one line every command that takes a run refuses it with
    sheet = Path(sheet)
    shown = str(sheet)
    if (run_dir / VERDICT_FILE).exists():
        raise RunError(f"run {run_dir.name} already has a verdict; grades imported now would not be part of it")
    refuse_set_aside(run_dir, f"run {run_dir.name}")  # never judged: its grades would never count either
    name = _one_sheet(run_dir) if name is None else name
    _check_name(name)
    mapping = _read_mapping(run_dir, name)
    rows, separator = _read_csv(sheet, shown)
    header = [h.strip().lower() for h in rows[0]]
    for col in REQUIRED_COLUMNS:
        if col not in header:
            raise RunError(f"{shown}: row 1: missing column '{col}' (expected {','.join(SHEET_COLUMNS)})")
    at = {c: header.index(c) for c in SHEET_COLUMNS if c in header}
    seen: set[int] = set()
    grades = [_grade_row(raw, n, at, mapping, seen, shown, name, separator)
              for n, raw in enumerate(rows[1:], 2) if any(cell.strip() for cell in raw)]
    graded = [g for g in grades if g[2] is not None]
    if not graded:
        raise RunError(f"{shown}: no row has a grade (column 'grade' is empty everywhere)")
    out = run_dir / "grades" / f"{name}.csv"

    def write(fh: IO[str]) -> None:
        writer = csv.writer(fh)
        writer.writerow(STORED_COLUMNS)
        for row_id, fixture, grade, note in sorted(graded):
            writer.writerow((row_id, spreadsheet_text(fixture), grade if isinstance(grade, str) else repr(grade),
                             spreadsheet_text(note)))

    with held_still(run_dir, alone=True) as alone:  # no verdict reads the run's grades while they are written
        if not alone:
            raise RunError(f"run {run_dir.name} is being judged or written by another benchcard process now; import "
                           "the grades once it is done (grades imported after the verdict are not part of it)")
        if (run_dir / VERDICT_FILE).exists():  # given since the check above
            raise RunError(f"run {run_dir.name} already has a verdict; grades imported now would not be part of it")
        backup = write_new(out, write, force=force, shown=project.relative(out), error=RunError)
    return GradeImport(out, name, len(graded), len(mapping) - len(graded), backup)


def _one_sheet(run_dir: Path) -> str:
    """The name of the run's only exported sheet (several, or none, is a one-line refusal)."""
    names = _sheet_names(run_dir)
    if len(names) != 1:
        raise RunError(f"run {run_dir.name} has {len(names)} exported sheets"
                       f"{' (' + ', '.join(names) + ')' if names else ''}; name one with --name")
    return names[0]


def _read_csv(sheet: Path, shown: str) -> tuple[list[list[str]], str]:
    """The filled sheet's rows (a BOM a spreadsheet wrote left out), at least its header, and the separator of its
    cells, which says its decimal mark (`parse_grade`). Read as every file a user
    hands benchcard is (`_util/safeio`): a FIFO, a device or a folder is one line, never a hang or an endless read."""
    if not os.path.lexists(sheet):
        raise RunError(f"{shown}: no such file")
    text = read_regular_text(sheet, shown, RunError).removeprefix("\ufeff")
    # a spreadsheet in a locale whose decimal mark is a comma (German, French Excel) separates cells with `;`:
    # read so when the header holds the columns only so (a column a grader added may hold a comma)
    header = text.partition("\n")[0]
    delimiter = ";" if not _has_columns(header, ",") and _has_columns(header, ";") else ","
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise RunError(f"{shown}: not a readable CSV sheet: {exc}") from None
    if not rows:
        raise RunError(f"{shown}: empty; expected the header {','.join(SHEET_COLUMNS)}")
    return rows, delimiter


def _has_columns(header: str, delimiter: str) -> bool:
    """Whether a sheet's first line, its cells separated by `delimiter`, names every required column."""
    names = {h.strip().lower() for h in next(csv.reader([header], delimiter=delimiter), [])}
    return all(col in names for col in REQUIRED_COLUMNS)


def _grade_row(raw: list[str], n: int, at: dict[str, int], mapping: dict[int, SheetRow], seen: set[int],
               shown: str, name: str, separator: str) -> tuple[int, str, str | float | None, str]:
    """One filled row (line `n` of the file) checked against the sealed mapping: (row id, fixture, grade, note);
    a row id off the sheet or given twice, a fixture not the one exported, or a grade that is none is one line
    naming the row and the column."""

    def cell(col: str) -> str:
        i = at.get(col)
        return raw[i] if i is not None and i < len(raw) else ""

    def fail(col: str, why: str) -> RunError:
        return RunError(f"{shown}: row {n}, column '{col}': {why}")

    row_id = ascii_int(cell("row").strip())
    if row_id is None:  # int() would read '1_2' as 12 and '٣' as 3: another row's grade
        raise fail("row", f"expected a sheet row id (a whole number in the digits 0-9), got {cell('row')!r}")
    if row_id not in mapping:
        raise fail("row", f"sheet row {row_id} is not on the exported sheet {name!r}")
    if row_id in seen:
        raise fail("row", f"sheet row {row_id} appears twice")
    seen.add(row_id)
    fixture = plain_text(cell("fixture").strip())
    if fixture != mapping[row_id].fixture:
        raise fail("fixture", f"sheet row {row_id} was exported as fixture {mapping[row_id].fixture!r}, "
                              f"not {fixture!r} (rows were edited or mixed up)")
    try:
        grade = parse_grade(cell("grade"), separator)
    except ValueError as exc:
        raise fail("grade", str(exc)) from None
    return row_id, fixture, grade, plain_text(cell("note").strip())


@dataclass(frozen=True)
class ImportedGrade:
    """One row of `grades/<sheet>.csv`, joined to its cell through the sheet's sealed mapping; its grade as written
    (`parse_grade` reads it: None when the row was left ungraded)."""

    sheet: str
    row: int
    cell: str
    grade: str
    note: str


def grade_files(run_dir: Path) -> list[Path]:
    """The run's imported grades, one CSV per sheet, by name."""
    folder = run_dir / "grades"
    return sorted(folder.glob("*.csv")) if folder.is_dir() else []


def imported_grades(project: Project, run_dir: Path, path: Path) -> Iterator[ImportedGrade]:
    """The rows of one imported sheet, in its order; a row its sealed mapping does not hold, or that is not as
    `grade` wrote it (edited by hand since), is a VerdictError naming the file and the line (only the verdict
    reads grades back)."""
    name = path.stem
    mapping = _read_mapping(run_dir, name, VerdictError)
    shown = project.relative(path)
    with open(path, encoding="utf-8", newline="") as fh:
        lines = csv.reader(fh)
        header = next(lines, [])
        if header != list(STORED_COLUMNS):
            raise VerdictError(f"{shown}: expected the columns {', '.join(STORED_COLUMNS)} on its first line, got "
                               f"{', '.join(header)[:80]!r} (the file `benchcard grade` wrote was edited)")
        for n, raw in enumerate(lines, 2):
            record = dict(zip(STORED_COLUMNS, raw, strict=False))
            row_id = _stored_row(record, shown, n)
            m = mapping.get(row_id)
            if m is None:
                raise VerdictError(f"{shown}: sheet row {row_id} is not in sealed/sheet-{name}.jsonl")
            yield ImportedGrade(name, row_id, m.cell, record.get("grade", ""), plain_text(record.get("note") or ""))


def _stored_row(record: dict[str, str], shown: str, n: int) -> int:
    """A stored row's sheet row id, its grade checked as `grade` checked it on import."""
    row = record.get("row", "")
    row_id = ascii_int(row)  # as `grade` read it on import
    if row_id is None:
        raise VerdictError(f"{shown}: line {n}, column 'row': expected a sheet row id (a whole number), got "
                           f"{row[:40]!r}")
    try:
        parse_grade(record.get("grade", ""))
    except ValueError as exc:
        raise VerdictError(f"{shown}: line {n}, column 'grade': {exc}") from None
    return row_id
