"""Fixtures from one data file: a CSV or JSONL file, one row per fixture, holding its id, its input(s) and its key.

A card says `fixtures: data/q.jsonl` (columns `id`, `input`, and the key fields the scorer reads) or names the
columns, `fixtures: {file: data/q.csv, id: qid, input: question, key: [answer]}`; `input` may list several
columns, each then shown in the prompt at `{{fixture.<column>}}`. The file is sealed byte for byte, like a
fixture file; each row is checked as a fixture file and its key file are (ids unique, keys complete and read
by the scorer), and every error names `file:line` and the field. CSV is read with the csv module, JSONL
through jsonlines.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonlines

from benchcard._util.names import shown as shown_name
from benchcard._util.safeio import WrittenNumber, numbers_as_written, read_regular_text, strict_json, unread_value
from benchcard._util.slots import slots_in
from benchcard.errors import CardError, JsonProblem
from benchcard.project import Project
from benchcard.records.answerkey import AnswerKey
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.judge.spec import JudgeSpec
from benchcard.scoring.keys import NOTE_FIELD, describe, key_fields
from benchcard.scoring.scorers import ScoringSpec

SUFFIXES = (".csv", ".jsonl")
SPEC_FIELDS = ("file", "id", "input", "key")
MAX_ID = 128
ID_PATTERN = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9._-]{{0,{MAX_ID - 1}}}")
ID_RULE = f"a fixture id (up to {MAX_ID} ASCII letters, digits, '.', '_', '-', not starting with '.' or '-')"
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
MAX_BYTES = 256 << 20
Fail = Callable[[Sequence[str | int], str], CardError]


@dataclass(frozen=True)
class DataRow:
    """One fixture of a data file: the line it starts on, its input text(s) by column, its answer key."""

    line: int
    inputs: Mapping[str, str]
    key: AnswerKey | None  # {"fixture": id, <key field>: answer} from `<file>:<line>`; None when none is read


@dataclass(frozen=True)
class DataFile:
    """The fixtures of a card read from one data file (`path` resolved inside the project, `shown` as written)."""

    path: Path
    shown: str
    id_column: str
    inputs: tuple[str, ...]
    key_columns: tuple[str, ...]
    rows: Mapping[str, DataRow]

    @property
    def several(self) -> bool:
        """Whether the prompt shows each input at `{{fixture.<column>}}` rather than one text at `{{fixture}}`."""
        return len(self.inputs) > 1

    def text(self, fixture: str) -> str:
        """The fixture's text as scorers, judges and pages read it: the one input, or each `column: value`."""
        inputs = self.rows[fixture].inputs
        if not self.several:
            return inputs[self.inputs[0]]
        return "\n\n".join(f"{name}: {inputs[name]}" for name in self.inputs)


def input_slot(column: str) -> str:
    """Where a prompt shows one input of a fixture with several: `{{fixture.<column>}}`."""
    return "{{fixture." + column + "}}"


def is_data_file(value: Any) -> bool:
    """Whether a card's `fixtures` names a data file (a mapping, or one literal .csv/.jsonl path) not a glob."""
    if isinstance(value, Mapping):
        return True
    return (isinstance(value, str) and value.endswith(SUFFIXES)
            and not any(c in value for c in "*?["))


@dataclass(frozen=True)
class _Spec:
    file: str
    id: str
    inputs: tuple[str, ...]
    key: tuple[str, ...] | None  # None: every other column (but `note`)


def read_spec(value: Any, fail: Fail) -> _Spec:
    """The card's `fixtures` field as a data file's columns; defaults `id`, `input`, key: the other columns."""
    if isinstance(value, str):
        return _Spec(value, "id", ("input",), None)
    extra = sorted(set(map(str, value)) - set(SPEC_FIELDS))
    if extra:
        raise fail(("fixtures", extra[0]), f"unknown field; expected one of {', '.join(SPEC_FIELDS)}")
    file = value.get("file")
    if not isinstance(file, str) or not file.endswith(SUFFIXES):
        raise fail(("fixtures", "file"), f"expected a .csv or .jsonl file in the project, got {file!r}")
    ident = value.get("id", "id")
    if not isinstance(ident, str) or not ident:
        raise fail(("fixtures", "id"), f"expected the name of the id column, got {ident!r}")
    inputs = _names(value.get("input", "input"), ("fixtures", "input"), fail)
    key = None if value.get("key") is None else _names(value["key"], ("fixtures", "key"), fail, allow_empty=True)
    columns = [ident, *inputs, *(key or ())]
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise fail(("fixtures",), f"column {twice[0]!r} is named twice (id, input and key are distinct columns)")
    return _Spec(file, ident, inputs, key)


def _names(value: Any, where: tuple[str, ...], fail: Fail, allow_empty: bool = False) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if (not isinstance(items, list) or not all(isinstance(v, str) and v for v in items)
            or (not items and not allow_empty)):
        raise fail(where, f"expected a column name or a list of column names, got {value!r}")
    return tuple(items)


def card_data_file(raw: Mapping[str, Any], project: Project, source: str, scoring: ScoringSpec,
                   fail: Fail, escapes: bool = True) -> DataFile:
    """The fixtures of a card (`raw`, its YAML) from its data file, and its prompt's slots for them checked (read
    by the card's slot rule, `escapes`: `_util/slots.py`)."""
    spec = read_spec(raw["fixtures"], fail)
    where = ("fixtures", "file") if isinstance(raw["fixtures"], Mapping) else ("fixtures",)
    path = project.inside(spec.file, source=source, field=".".join(where))
    if not path.is_file():
        there = os.path.lexists(path)  # a folder or a FIFO of that name was said to be no file at all
        raise fail(where, f"the data file {spec.file!r} is not a regular file (a folder, FIFO or device)" if there
                   else f"no data file {spec.file!r} in the project")
    dataset = read_data_file(spec, path, project.relative(path), scoring, fail)
    if dataset.several:
        prompt = raw["prompt"]
        slots = slots_in(prompt.get("system") or "", escapes=escapes) + slots_in(prompt["user"], escapes=escapes)
        if "{{fixture}}" in slots:
            raise fail(("prompt", "user"), "the fixtures have several inputs; expected {{fixture.<column>}} for "
                       f"each ({', '.join(dataset.inputs)}), not {{{{fixture}}}}")
        for name in dataset.inputs:
            if slots.count(input_slot(name)) != 1:
                raise fail(("prompt", "user"), f"an ab prompt must contain {input_slot(name)} exactly once")
    return dataset


def read_data_file(spec: _Spec, path: Path, shown: str, scoring: ScoringSpec, fail: Fail) -> DataFile:
    """Every row of the data file, checked: ids unique and well formed, inputs present, keys complete and read."""
    if isinstance(scoring, FieldsSpec):
        raise fail(("fixtures",), "fields scoring reads its keys from keys/<id>/<fixture>.json; a data file "
                   "holds small keys only (exact, rules, judge): use a fixtures glob")
    wanted = _wanted_keys(scoring)
    if spec.key is not None:
        problem = _key_problem(spec.key, wanted, scoring)
        if problem is not None:
            raise fail(("fixtures", "key"), problem[1])
    text = read_regular_text(path, shown, CardError, MAX_BYTES)
    text = text.removeprefix("\ufeff")  # a spreadsheet's "CSV UTF-8" opens with a byte-order mark: not a column's
    if "\0" in text:  # UTF-16 with no byte-order mark is valid UTF-8 with a NUL after every ASCII letter
        at = text.index("\0")
        wide = " (it reads as UTF-16)" if text.count("\0") * 3 >= len(text) else ""
        raise CardError(f"{shown}:{text.count(chr(10), 0, at) + 1}: a NUL character (U+0000), which no text file "
                        f"holds{wide}; expected UTF-8 text: save it as UTF-8 (a NUL meant for the model is written "
                        "\\u0000 in a JSONL row)")
    records = _csv_rows(text, shown) if shown.endswith(".csv") else _jsonl_rows(text, shown, spec.id)
    rows: dict[str, DataRow] = {}
    key_columns: tuple[str, ...] | None = spec.key
    lines: dict[str, int] = {}
    for line, record in records:
        if key_columns is None:
            key_columns = tuple(c for c in record if c not in (spec.id, *spec.inputs, NOTE_FIELD))
            problem = _key_problem(key_columns, wanted, scoring)
            if problem is not None:
                where = f" field {problem[0]!r}:" if problem[0] else ""
                raise CardError(f"{shown}:{line}:{where} {problem[1]}")
        fixture = _fixture_id(record, spec.id, shown, line)
        if fixture in lines:
            raise CardError(f"{shown}:{line}: field {spec.id!r}: the fixture id {fixture!r} is also on line "
                            f"{lines[fixture]}; ids must be unique")
        lines[fixture] = line
        _unknown(record, spec, key_columns, shown, line)
        inputs = {name: _input(record, name, shown, line) for name in spec.inputs}
        key = _key(record, fixture, key_columns, scoring, shown, line)
        rows[fixture] = DataRow(line, inputs, key)
    if not rows:
        raise fail(("fixtures",), f"{shown} holds no fixture (one row per fixture, after a header for CSV)")
    assert key_columns is not None
    return DataFile(path, shown, spec.id, spec.inputs, key_columns, rows)


def _wanted_keys(scoring: ScoringSpec) -> tuple[str, ...] | None:
    """The key fields the scorer reads; None for a judge that shows the whole key (any fields)."""
    if isinstance(scoring, JudgeSpec):
        return None if scoring.uses_key else ()
    return key_fields(scoring)


def _key_problem(columns: tuple[str, ...], wanted: tuple[str, ...] | None,
                 scoring: ScoringSpec) -> tuple[str, str] | None:
    """(column, what is wrong) when the key columns are not exactly those the scorer reads; else None."""
    if wanted is None:
        if not columns:
            return "", (f"{describe(scoring)} shows each fixture's key, and there is no key column; add one, or "
                        "name it under the card's fixtures.key")
        return None
    for column in columns:
        if column not in wanted:
            reads = f"it reads {', '.join(wanted)}" if wanted else "it reads no answer key"
            return column, (f"{describe(scoring)} never reads the key column {column!r} ({reads}); remove it, "
                            f"or keep prose under {NOTE_FIELD!r}")
    for field in wanted:
        if field not in columns:
            return field, f"missing; {describe(scoring)} reads the key column {field!r} for each fixture"
    return None


def _fixture_id(record: Mapping[str, Any], column: str, shown: str, line: int) -> str:
    """The row's id as written: a CSV cell's text, a JSON string, or a JSON integer's digits (`70`); a JSON number
    with a fraction or an exponent (`1e0`) is refused, since a JSON reader makes another of it (1.0)."""
    value = record.get(column)
    if isinstance(value, WrittenNumber) and not _JSON_INTEGER.fullmatch(value):
        raise CardError(f"{shown}:{line}: field {column!r}: expected {ID_RULE}; got the number {value}, which a JSON "
                        f"reader reads as {float(value)!r} (a fraction or an exponent is no id as written); write "
                        f'the id in double quotes ("{value}")')
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise CardError(f"{shown}:{line}: field {column!r}: expected {ID_RULE}; {_id_problem(value)}")
    return str(value)  # a WrittenNumber's digits, as plain text


def _id_problem(value: object) -> str:
    """What keeps a value from being a fixture id, in a phrase: a length over the limit said as a number, the
    character that is not allowed named (an accented letter, a space), never only the pattern; a value that is no
    text as JSON writes it (`true`, `[1]`), a number as written (`-0`)."""
    if value in (None, ""):
        return "missing"
    if not isinstance(value, str):
        return f"got {json.dumps(value, ensure_ascii=False)[:60]}"
    number = isinstance(value, WrittenNumber)
    if len(value) > MAX_ID:
        return (f"got {f'the number {value[:40]}' if number else repr(value[:40])}…, {len(value):,} characters; "
                f"shorten it to at most {MAX_ID}")
    quoted = f"the number {value}" if number else shown_name(value)
    at, ch = next((i, c) for i, c in enumerate(value) if not ID_PATTERN.fullmatch("a" + c if i else c))
    name = unicodedata.name(ch, f"U+{ord(ch):04X}")
    if not ch.isascii():
        return f"got {quoted}, whose {ch!a} ({name}) is not ASCII; write the id in ASCII"
    return f"got {quoted}, which {'holds' if at else 'starts with'} {ch!r} ({name})"


def _unknown(record: Mapping[str, Any], spec: _Spec, key_columns: tuple[str, ...], shown: str, line: int) -> None:
    known = {spec.id, *spec.inputs, *key_columns, NOTE_FIELD}
    extra = [c for c in record if c not in known]
    if extra:
        raise CardError(f"{shown}:{line}: field {extra[0]!r}: not the id, an input or a key column of the card's "
                        f"fixtures ({', '.join(sorted(known - {NOTE_FIELD}))}); remove it, or keep prose under "
                        f"{NOTE_FIELD!r}")


def _input(record: Mapping[str, Any], name: str, shown: str, line: int) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value:
        got = "missing" if value in (None, "") else f"got {value!r}"
        raise CardError(f"{shown}:{line}: field {name!r}: expected the fixture's input as text; {got}")
    return value


def _key(record: Mapping[str, Any], fixture: str, columns: tuple[str, ...], scoring: ScoringSpec, shown: str,
         line: int) -> AnswerKey | None:
    """The row's answer key as a key file would hold it; a missing or empty answer names the line and field."""
    if not columns:
        return None
    key: dict[str, Any] = {"fixture": fixture}
    for column in columns:
        value = record.get(column)
        ok = ((isinstance(value, str) and value != "")
              or (isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)))
        if isinstance(scoring, JudgeSpec):
            ok = value not in (None, "", [])
        if not ok:
            got = "missing" if value in (None, "") else f"got {value!r}"
            raise CardError(f"{shown}:{line}: field {column!r}: expected the answer as text, or a list of accepted "
                            f"answers; {got}")
        key[column] = value
    return AnswerKey(fixture, f"{shown}:{line}", key)


def _csv_rows(text: str, shown: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """CSV rows (a header first) with the line each starts on, every column of the header in each; an empty
    cell reads as missing (None)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        if len(header) == 1 and ";" in header[0]:
            raise CardError(f"{shown}:1: the header {header[0]!r} is one column: its cells are separated by ';', as "
                            "Excel saves CSV in a locale whose decimal mark is a comma; expected commas: save it "
                            "with commas (or as JSONL), so that every cell is read as written")
        for i, name in enumerate(header):
            if not name or header.index(name) != i:
                raise CardError(f"{shown}:1: column {i + 1}: expected a distinct, non-empty column name, "
                                f"got {name!r}")
        start = reader.line_num + 1
        for cells in reader:
            if cells and any(cells):
                if len(cells) != len(header):
                    raise CardError(f"{shown}:{start}: expected {len(header)} cells as in the header, got "
                                    f"{len(cells)}")
                yield start, {name: cell or None for name, cell in zip(header, cells, strict=True)}
            start = reader.line_num + 1
    except csv.Error as exc:
        raise CardError(f"{shown}:{reader.line_num}: not valid CSV ({exc})") from None


def _jsonl_rows(text: str, shown: str, id_column: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSONL rows, each a JSON object, read through jsonlines; blank lines are skipped. A number in the id column
    is kept as written (`WrittenNumber`): `-0` is not the id `0`."""
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = jsonlines.Reader([line], loads=strict_json).read(type=dict)
        except jsonlines.InvalidLineError as exc:
            if isinstance(exc.__cause__, JsonProblem):
                raise CardError(f"{shown}:{number}: {exc.__cause__}") from None
            unread = unread_value(line, exc.__cause__.pos) if isinstance(exc.__cause__, json.JSONDecodeError) else None
            raise CardError(f"{shown}:{number}: {unread}" if unread is not None else
                            f"{shown}:{number}: expected one JSON object per line ({exc.args[0]})") from None
        except RecursionError:
            raise CardError(f"{shown}:{number}: not valid JSON (nested too deeply)") from None
        ident = value.get(id_column)
        if isinstance(ident, int | float) and not isinstance(ident, bool):
            value[id_column] = numbers_as_written(line)[id_column]
        yield number, value
