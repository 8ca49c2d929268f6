"""The guard every reader of another tool's file goes through before it trusts a byte of it.

Logs that inspect_ai or lm-eval wrote can be anything by the time they reach `compare`: truncated, edited,
hostile. Each reader checks here, before anything else, what the file may cost and what its values may be, and
refuses with one line naming the file (and line) and what was wrong:

- size: the file (`MAX_FILE_BYTES`), and for a zip archive the sizes its directory declares for the members a
  reader opens (`MAX_UNPACKED_BYTES`), checked before anything is decompressed (a zip bomb is refused unread);
- depth: JSON nested deeper than `MAX_DEPTH` (a Python parser would recurse until it fails);
- numbers: no integer longer than `MAX_INT_DIGITS` digits (none can overflow a float later), and a metric only
  within ±`MAX_METRIC` (sums and differences of 10^6 such values stay finite); NaN and infinities are not
  numbers: a metric holding one is left out and counted, as text is;
- identity: a sample id is an integer or a text, never both for one spelling (`1` and `"1"`), and a
  (sample, epoch) is seen once.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchcard.errors import CompareError
from benchcard.records.rows import MAX_METRIC, MAX_METRIC_WHY

MAX_FILE_BYTES = 2 * 1024**3
MAX_UNPACKED_BYTES = 1024**3  # all the members a reader opens, together
MAX_MEMBER_BYTES = 256 * 1024**2  # one of them (an inspect_ai log's summaries of 10,000 samples: about 16 MB)
MAX_MEMBERS = 1_000_000
MAX_DEPTH = 64
MAX_INT_DIGITS = 30


def sized(path: Path, limit: int | None = None) -> int:
    """The file's size, refused above `limit` (`MAX_FILE_BYTES` unless given), or when it cannot be read."""
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CompareError(f"{path}: unreadable: {exc.strerror or exc}") from None
    if size > limit:
        raise CompareError(f"{path}: {size:,} bytes; a log of more than {limit:,} bytes is not read")
    return size


def zip_members(path: Path, opened: Callable[[str], bool]) -> list[str]:
    """The member names of a zip archive, after checking the sizes its directory declares: no member a reader
    opens (`opened(name)`) above `MAX_MEMBER_BYTES`, nor all of them together above `MAX_UNPACKED_BYTES`.
    Python's zipfile never inflates a member past its declared size, so this is what reading can cost."""
    limit, member = MAX_UNPACKED_BYTES, MAX_MEMBER_BYTES
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CompareError(f"{path}: not a readable zip archive: {exc}") from None
    if len(members) > MAX_MEMBERS:
        raise CompareError(f"{path}: {len(members):,} members in the archive; at most {MAX_MEMBERS:,} are read")
    total = 0
    for info in members:
        if not opened(info.filename):
            continue
        total += info.file_size
        if info.file_size > member or total > limit:
            raise CompareError(f"{path}: member {info.filename} declares {info.file_size:,} bytes unpacked "
                               f"({total:,} in all so far); more than {member:,} bytes for one member or "
                               f"{limit:,} in all are never unpacked (refused before decompressing)")
    return [info.filename for info in members]


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS} are read)")
    return int(text)


def loads(text: str | bytes, where: str) -> Any:
    """JSON parsed under the caps: numbers bounded, nesting at most `MAX_DEPTH` deep. `where` names the file
    (and line) in the one-line refusal."""
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise CompareError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels; not read") from None
    except json.JSONDecodeError as exc:
        raise CompareError(f"{where}: not JSON: {exc}") from None
    except ValueError as exc:  # the caps above (and Python's own limit on integer digits)
        raise CompareError(f"{where}: {str(exc)[:200]}; not read") from None
    opening = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else text.count("[") + text.count("{")
    if opening > MAX_DEPTH:  # only then can it be deep: walk it
        _check_depth(value, where)
    return value


def _check_depth(value: Any, where: str) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise CompareError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels; not read")
        children: Iterable[Any] = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def metric(value: Any, where: str, name: str) -> float | None:
    """A metric value as a float: booleans and numbers within ±`MAX_METRIC` (an integer is compared before any
    conversion, so none can overflow); None for what is not a number (text, lists: left out and counted by the
    reader, as are NaN and infinities); finite numbers beyond the bound are refused."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int):
        if abs(value) > MAX_METRIC:
            raise CompareError(f"{where}: {name} is {value}: expected a number from {-MAX_METRIC:g} to "
                               f"{MAX_METRIC:g} ({MAX_METRIC_WHY})")
        return float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if abs(value) > MAX_METRIC:
            raise CompareError(f"{where}: {name} is {value!r}: expected a number from {-MAX_METRIC:g} to "
                               f"{MAX_METRIC:g} ({MAX_METRIC_WHY})")
        return value
    return None


def sample_id(value: Any, where: str, what: str = "sample id") -> tuple[str, str]:
    """A sample id as (text, kind): an integer (not a boolean) or a non-empty text of at most 200 characters."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise CompareError(f"{where}: {what} {json.dumps(value, default=str)[:60]}: expected an integer or a text")
    if isinstance(value, int):
        if len(str(abs(value))) > MAX_INT_DIGITS:
            raise CompareError(f"{where}: {what} is an integer of more than {MAX_INT_DIGITS} digits")
        return str(value), "integer"
    if not value or len(value) > 200:
        raise CompareError(f"{where}: {what} {value[:60]!r}: expected 1 to 200 characters")
    return value, "text"


class Seen:
    """Sample ids and (sample, epoch) keys of one log: each key once, each id's spelling of one kind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kinds: dict[str, str] = {}
        self.keys: set[tuple[str, int, str]] = set()

    def add(self, raw_id: Any, epoch: int, where: str, what: str = "sample id", part: str = "") -> tuple[str, int]:
        """The (id, epoch) key of a row; `part` tells rows of one key apart that may each appear once (lm-eval
        writes one row per document and filter)."""
        text, kind = sample_id(raw_id, where, what)
        known = self.kinds.setdefault(text, kind)
        if known != kind:
            raise CompareError(f"{where}: {what} {text} appears both as an integer and as a text; ids are paired "
                               "by what they are, so these two cannot be told apart")
        if (text, epoch, part) in self.keys:
            raise CompareError(f"{where}: {what} {text}" + (f" epoch {epoch}" if epoch else "")
                               + (f" with filter {part}" if part else "") + " appears twice; a comparison does "
                               "not guess which of the two is the answer")
        self.keys.add((text, epoch, part))
        return text, epoch
