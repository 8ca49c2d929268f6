"""An answer key, typed once: one fixture's answers as `keys/<card>/<fixture>.json` holds them, or as a row of a
card's data file gives them.

The scorers that read keys check their own shape on it (a small key's `exact` and `rules` fields,
`scoring/keys.py`; the field-extraction key, `scoring/fields.py`; a judge's `{{key}}`, any object,
`scoring/judge/keys.py`); every error about a key names its file, the line its field starts on, and the field
(`keys/c/f01.json:3: field 'label': expected …`; a data file's row, `fixtures/c.jsonl:7: field 'label': …`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import msgspec

from benchcard._util.names import differ_by, folded, one_file_on
from benchcard._util.names import shown as shown_name
from benchcard._util.safeio import MAX_JSON_BYTES, numbers_as_written, read_regular_text, strict_json, unread_value
from benchcard.errors import CardError, JsonProblem

_SPACE = re.compile(r"[ \t\n\r]*")


class AnswerKey(msgspec.Struct, frozen=True, gc=False):
    """One fixture's answer key: its fields as written, in their order (a judge is shown the object as is), and
    where it was read, so that every error about it says where to look."""

    fixture: str
    source: str  # the key file as shown, or `<data file>:<line>` for a data file's row
    body: dict[str, Any]
    lines: dict[str, int] = msgspec.field(default_factory=dict)  # the line each field starts on in a key file
    written: dict[str, str] = msgspec.field(default_factory=dict)  # a top-level number as written (`-0`, `1e0`)

    def get(self, field: str) -> Any:
        """A field's value as written; None when the key has no such field."""
        return self.body.get(field)

    def where(self, field: str | None = None) -> str:
        """`file:LINE: field 'x'`, the place an error about `field` names (the file alone for the whole key)."""
        line = self.lines.get(field) if field is not None else None
        place = f"{self.source}:{line}" if line else self.source
        return place if field is None else f"{place}: field {field!r}"

    def said(self, field: str) -> str:
        """A field's value as a line says it back: a number as written (`got the number -0`, which JSON reads as 0),
        text quoted, anything else as JSON writes it; `missing` when the key has no such field."""
        if field not in self.body:
            return "missing"
        if field in self.written:
            return f"got the number {self.written[field]}"
        value = self.body[field]
        return f"got {value!r}" if isinstance(value, str) else f"got {json.dumps(value, ensure_ascii=False)[:60]}"

    def not_its_fixture(self, fixture: str) -> CardError:
        """The line refusing a `fixture` field that is not `fixture`, the id its file is named for, saying what it
        holds as written: a number, even one whose digits are the id, is told to be text (ids are read as written)."""
        quote = f' in double quotes ("{fixture}")' if self.written.get("fixture") == fixture else ""
        return self.fail("fixture", f"expected the fixture id {fixture!r}{quote}; {self.said('fixture')}")

    def fail(self, field: str | None, expected: str) -> CardError:
        """The one-line error for `field` (None: the key as a whole)."""
        return CardError(f"{self.where(field)}: {expected}")

    def text(self) -> str:
        """The key as a judge reads it: JSON on one line, non-ASCII kept."""
        return json.dumps(self.body, ensure_ascii=False)


def read_key_file(path: Path, shown: str | None = None) -> AnswerKey:
    """`keys/<card>/<fixture>.json`: a JSON object (any other JSON, or none, is one line naming the file), with
    the line each of its fields starts on. Its shape is the scorer's to check. A byte-order mark (an editor's
    UTF-8 "with BOM") is read past, as a data file's is: JSON allows a reader to, and no model is sent a key."""
    shown = shown or str(path)  # the caller's name for it: project-relative, as a card's other files are
    text = read_regular_text(path, shown, CardError, MAX_JSON_BYTES).removeprefix("\ufeff")
    try:
        data = strict_json(text)
    except RecursionError:
        raise CardError(f"{shown}: not valid JSON (nested too deeply)") from None
    except JsonProblem as exc:
        line = field_lines(text).get(exc.field) if exc.field is not None else None
        raise CardError(f"{shown}:{line}: {exc}" if line else f"{shown}: {exc}") from None
    except json.JSONDecodeError as exc:
        unread = unread_value(text, exc.pos)  # `"fixture": 01`: json's words name no field and no line of ours
        raise CardError(f"{shown}:{exc.lineno}: {unread}" if unread else f"{shown}: not valid JSON ({exc})") from None
    except ValueError as exc:
        raise CardError(f"{shown}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CardError(f"{shown}: expected a JSON object, got {type(data).__name__}")
    numbers = [k for k, v in data.items() if isinstance(v, int | float) and not isinstance(v, bool)]
    written = numbers_as_written(text) if numbers else {}
    return AnswerKey(path.stem, shown, data, field_lines(text), {k: written[k] for k in numbers})


def field_lines(text: str) -> dict[str, int]:
    """The line each field of a JSON object (the top level of `text`, which parses) starts on; the first, for a
    field written twice."""
    decoder = json.JSONDecoder(parse_int=str)  # only skipped: a number of 5,000 digits is not converted, nor refused
    lines: dict[str, int] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return lines
    at = _skip(text, at + 1)
    while text.startswith('"', at):
        name, end = decoder.raw_decode(text, at)  # a field name is a JSON string
        lines.setdefault(name, text.count("\n", 0, at) + 1)
        at = _skip(text, _skip(text, end) + 1)  # past the colon
        at = _skip(text, decoder.raw_decode(text, at)[1])
        if not text.startswith(",", at):
            break
        at = _skip(text, at + 1)
    return lines


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def key_path(keys_dir: Path, fixture: str, names: Collection[str] | None, shown: Callable[[Path], str],
             reads: str) -> Path:
    """Where the key of `fixture` is, `keys_dir/<fixture>.json` named exactly so among `names` (the folder's
    listing; None when it cannot be listed: then whatever is there is read, and its reader names what refused it).
    A file whose name differs from it only by case or Unicode form is refused: macOS and Windows open it for the
    fixture, Linux does not, and the seal, which lists the folder, never covered it (its digest missing, it could
    change after sealing unseen)."""
    path = keys_dir / f"{fixture}.json"
    if names is None or path.name in names:
        if names is not None or not _absent(path):
            return path  # a folder or a FIFO there, or one that cannot be reached, is named by the key's reader
    else:
        other = next((name for name in sorted(names) if folded(name) == folded(path.name)), None)
        if other is not None:
            raise CardError(f"{shown(keys_dir / other)}: named for fixture {shown_name(fixture)} but for its "
                            f"{differ_by(other, path.name)}; expected {shown_name(path.name)} exactly: on "
                            f"{one_file_on(other, path.name)} it is read for the fixture, on "
                            "Linux it is not, and the seal does not cover it; rename it")
    raise CardError(f"{shown(path)}: missing answer key for fixture '{fixture}' ({reads})")


def names_in(keys_dir: Path) -> set[str] | None:
    """The names in a keys folder, listed once for all its fixtures: `key_path` finds each key by its exact name
    there, as the seal lists it, where opening the path would find it by the disk's fold. None when the folder
    cannot be listed (or is not there)."""
    try:
        return set(os.listdir(keys_dir))
    except OSError:
        return None


def _absent(path: Path) -> bool:
    """Nothing is at `path`; a path that cannot be looked at (a folder on its way that may not be opened) is not
    absent, though `os.path.lexists` says so: the key's reader names what refused it."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False
