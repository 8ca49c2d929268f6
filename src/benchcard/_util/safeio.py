"""Reading the files a user hands benchcard (cards, fixtures, keys, benchcard.yaml) without hanging or crashing.

A path that names a FIFO, a device or a folder is refused before a byte is read (it is opened non-blocking and
checked with `fstat`, so no name swap between the check and the read can slip one in); text that is not
UTF-8 and files over a size limit become one line naming the file. JSON a person wrote (keys, a data file's rows)
is read strictly (`strict_json`): a field written twice or a lone surrogate is refused, as in a card.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from benchcard._util.names import folded
from benchcard.errors import BenchcardError, JsonProblem


def read_regular_bytes(path: Path | str, source: str, error: type[BenchcardError],
                       max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; anything else (a FIFO, a folder, a device, a missing file) is `error`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise error(f"{source}: cannot read: {exc.strerror}{shut_folder(path, source, exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{source}: not a regular file ({_kind(info.st_mode)}); expected a text file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise error(f"{source}: {info.st_size:,} bytes; expected at most {max_bytes:,}")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if max_bytes is not None and sum(map(len, chunks)) > max_bytes:
                raise error(f"{source}: more than {max_bytes:,} bytes; expected at most {max_bytes:,}")
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{source}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_regular_text(path: Path | str, source: str, error: type[BenchcardError],
                      max_bytes: int | None = None) -> str:
    """`read_regular_bytes` decoded as UTF-8; a byte that is not UTF-8 is one line naming where it is."""
    return decode_utf8(read_regular_bytes(path, source, error, max_bytes), source, error)


#: What an editor saving a file as "UTF-8 with BOM" (Notepad, Excel's CSV UTF-8) puts before its first byte.
UTF8_BOM = b"\xef\xbb\xbf"


def bom_said(data: bytes) -> str:
    """Why a file benchcard wrote does not read back, when it starts with a byte-order mark: an editor opened and
    saved it as "UTF-8 with BOM" (Notepad's default once), which no JSON reader benchcard uses takes, and which
    changes nothing else of it; "" for bytes without one. It is said, not read past: the record was not written so,
    and a digest over its bytes no longer holds."""
    if data.startswith(UTF8_BOM):
        return (" (it starts with a byte-order mark: an editor saved it as 'UTF-8 with BOM', which benchcard never "
                "writes; remove those 3 bytes, or save it again as UTF-8 without BOM)")
    return ""


def decode_utf8(data: bytes, source: str, error: type[BenchcardError]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        wide = " (it starts with UTF-16's byte-order mark)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise error(f"{source}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}){wide}; "
                    "save the file as UTF-8") from None


def present(path: Path, shown: str, error: type[BenchcardError]) -> bool:
    """Whether a file benchcard writes and reads back (the ledger, a run's rows) is there: False when nothing is
    (not written yet). Anything else put in its place (a folder, a FIFO) is `error`, never read as absent: a ledger
    that is a folder read as no verdicts yet, and a run's outputs as no cell recorded."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise error(f"{shown}: cannot read: {exc.strerror}{shut_folder(path, shown, exc)}") from None
    if stat.S_ISREG(info.st_mode):
        return True
    raise error(f"{shown}: not a regular file ({_kind(info.st_mode)}), where benchcard keeps one; move it aside and "
                "put the file back")


def given(path: Path, shown: str, error: type[BenchcardError]) -> bool:
    """Whether a file the user may keep in the project (`.env`, `benchcard.yaml`) is there: False only when
    nothing is. A link to nothing or to itself is `error`: read as absent, the keys or providers it was meant to
    hold were silently not used. A folder or a FIFO is True, for its reader to refuse."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if not os.path.islink(path):
            return False
        raise error(f"{shown}: a symbolic link to {os.readlink(path)}, which is not there; expected the file: "
                    "point the link at it or put the file in its place") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{shown}: a symbolic link that leads back to itself (a loop); expected the file: put it in "
                        "the link's place") from None
        raise error(f"{shown}: cannot read: {exc.strerror}{shut_folder(path, shown, exc)}") from None
    return True


def listing(folder: Path, shown: str, error: type[BenchcardError]) -> dict[str, os.DirEntry[str]]:
    """A folder's entries by name; a folder that may be entered but not read (`chmod 311`) is `error` naming it
    as `shown`, never an empty folder (pathlib's glob says nothing) nor a bare absolute path."""
    try:
        with os.scandir(folder) as entries:
            return {e.name: e for e in entries}
    except OSError as exc:
        fix = f"; expected a folder benchcard may list: chmod u+r {shown}" if isinstance(exc, PermissionError) else ""
        raise error(f"{shown}: cannot list its files: {exc.strerror}{shut_folder(folder, shown, exc)}{fix}") from None


def miscased(root: Path, written: str) -> tuple[str, str] | None:
    """The first component of `written` (a path relative to `root`, as a card writes it) not listed under its own
    name where one differing from it only by case or Unicode form is, with that name: (written, on disk). macOS
    and Windows open `Fixtures/` for `fixtures/`, Linux does not, so a card written so works on the first and a
    clone on the other finds nothing. None when every component is listed as written, or one is not there."""
    here = root
    for part in Path(written).parts:
        if part == "..":
            here = here.parent
            continue
        if part == ".":
            continue
        try:
            names = os.listdir(here)
        except OSError:
            return None
        if part not in names:
            other = next((name for name in sorted(names) if folded(name) == folded(part)), None)
            return None if other is None else (part, other)
        here = here / part
    return None


def shut_folder(path: Path | str, shown: str, exc: OSError) -> str:
    """When a file could not be reached for a folder on its way that may not be opened (no search permission: a
    `chmod 000 keys/<card>`), that folder, as `shown` writes the file's path: the line named a seal that was
    never written, and a key whose own permissions were fine. Empty for any other refusal."""
    if not isinstance(exc, PermissionError):
        return ""
    target = Path(os.path.abspath(path))
    for k, folder in reversed(list(enumerate(target.parents))):
        try:
            os.lstat(target.parents[k - 1] if k else target)
        except PermissionError:
            shown_parents = Path(shown).parents
            named = shown_parents[k] if k < len(shown_parents) - 1 else folder
            return f" (the folder {named}/ may not be opened)"
        except OSError:
            return ""
    return ""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


MAX_JSON_BYTES = 16 << 20  # an answer key is a few kilobytes
_SURROGATE = re.compile("[\ud800-\udfff]")


def _distinct(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's fields, each written once (json's default keeps the last of two silently)."""
    obj: dict[str, Any] = {}
    for name, value in pairs:
        if name in obj:
            raise JsonProblem(None if _SURROGATE.search(name) else name, "written twice; keep one")
        obj[name] = value
    return obj


def json_loads(data: str | bytes) -> Any:
    """`json.loads` for a file benchcard wrote and reads back (a ledger row, a manifest, a row of a run): JSON
    nested deeper than Python's stack, which only an edit makes, is a ValueError like any JSON that is not a
    row, never a RecursionError that the caller's one-line refusal does not catch."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested deeper than a reader's stack") from None


def record_loads(data: str | bytes) -> Any:
    """`json_loads` for a record whose digest is over its parsed fields (a ledger row, a manifest, a verdict.json):
    a field written twice is a JsonProblem (a ValueError) naming it. json keeps the last of two silently, so a row
    holding `"finding":"loss"` before its own `"finding":"win"` hashed as the unedited row and verified, while a
    reader that keeps the first (or a person reading the line) saw the loss."""
    try:
        return json.loads(data, object_pairs_hook=_distinct)
    except RecursionError:
        raise ValueError("JSON nested deeper than a reader's stack") from None


class _NotFinite:
    """A number as written that JSON cannot hold (`NaN`, `-Infinity`, `1e400`, beyond a double): Python's json
    reads these as nan and inf, which no other JSON reader takes and no canonical JSON can write."""

    def __init__(self, text: str) -> None:
        self.text = text


def _number(text: str) -> float | _NotFinite:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


class _TooManyDigits:
    """A whole number longer than Python converts (`sys.get_int_max_str_digits`, 4,300): json's own error said to
    call `sys.set_int_max_str_digits()`, which a user of benchcard cannot."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))


def _integer(text: str) -> int | _TooManyDigits:
    limit = sys.get_int_max_str_digits()
    return _TooManyDigits(text) if limit and len(text.lstrip("-")) > limit else int(text)


def strict_json(text: str | bytes) -> Any:
    """`json.loads` for JSON a person wrote: a field written twice, a lone surrogate (`"\\ud800"`, which no
    UTF-8 file can hold and which fails later, in a hash) in any string, or NaN, an infinity or a number beyond a
    double (which json alone reads as nan and inf) is a JsonProblem naming the top-level field it is under.
    Nesting deeper than Python's stack is the caller's RecursionError, as with json."""
    data = json.loads(text, object_pairs_hook=_distinct, parse_constant=_NotFinite, parse_float=_number,
                      parse_int=_integer)
    stack: list[tuple[Any, str | None]] = [(data, None)]
    while stack:
        value, top = stack.pop()
        if isinstance(value, _NotFinite):
            raise JsonProblem(top, f"{value.text} is not a JSON number (JSON has no NaN or infinity, and 1e400 is "
                                   "beyond a double); write a finite number, or quote it as text")
        if isinstance(value, _TooManyDigits):
            raise JsonProblem(top, f"a whole number of {value.digits:,} digits, more than the "
                                   f"{sys.get_int_max_str_digits():,} digits a number is read with; quote it as text")
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise JsonProblem(top, "a lone surrogate (\\ud800-\\udfff) is not text; write the character itself")
        elif isinstance(value, dict):
            for k, v in value.items():
                if _SURROGATE.search(k):
                    raise JsonProblem(top, "a field name holds a lone surrogate (\\ud800-\\udfff); write the "
                                      "character itself")
                stack.append((v, top if top is not None else k))
        elif isinstance(value, list):
            stack.extend((v, top) for v in value)
    return data


class WrittenNumber(str):
    """A JSON number as written (`70`, `-0`, `1e0`): an id read from JSON is read as written, never as the number a
    JSON reader makes of it (`-0` is 0, `1e0` is 1.0, so two ids written apart would be one)."""


def numbers_as_written(text: str | bytes) -> Any:
    """JSON that `strict_json` read, every number in it a `WrittenNumber`."""
    return json.loads(text, parse_int=WrittenNumber, parse_float=WrittenNumber)


#: What json's error says of a value it cannot read: a bare word or a number spelt as JSON does not spell one.
NOT_JSON = ("is not JSON; expected text in double quotes, or a number as JSON writes one (no '+', no leading 0, no 0x, "
            "no '_')")
_BARE = re.compile(r"[0-9A-Za-z_.+-]+")
_FIELD_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*$')


def unread_value(text: str, pos: int) -> str | None:
    """`field 'x': 01 is not JSON; …` for the value json stopped at (`pos`, its error's position) when it is a bare
    word or a number JSON does not write (`01`, `+1`, `0x1`, `1_0`, `nan`, `q1`) given to a field; None for any
    other error (a comma left out, a quote never closed), which json's own words say well enough."""
    start = pos
    while start > 0 and _BARE.fullmatch(text[start - 1]):
        start -= 1
    token = _BARE.match(text, start)
    field = _FIELD_BEFORE.search(text, 0, start)
    if token is None or field is None:
        return None
    return f"field {json.loads(chr(34) + field.group(1) + chr(34))!r}: {token.group()} {NOT_JSON}"


def load_json_file(path: Path | str, source: str, error: type[BenchcardError],
                   max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A JSON file a person wrote (an answer key): one line for a file that is unreadable, not UTF-8, not JSON
    or nested deeper than Python's stack."""
    text = read_regular_text(path, source, error, max_bytes)
    try:
        return strict_json(text)
    except RecursionError:
        raise error(f"{source}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:
        raise error(f"{source}: not valid JSON ({exc})") from None
