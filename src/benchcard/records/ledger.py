"""The ledger: `results/ledger.jsonl`, append-only, dated and hash-chained.

Every row carries `prev`, the hash of the row before it, and `hash`, the digest of its own canonical JSON
without `hash`. Editing a row breaks its own hash; deleting or reordering rows breaks the `seq` count and the
`prev` chain; either way `verify` names the first row that does not fit.

A last line cut short by a crash (no final newline, not a whole row) is *torn*: readers skip it, `verify`
callers report it, and `append` refuses until `repair` has moved it to a dated side file (it is never deleted).

Each row is a `ledgerrow.LedgerRow`: built through it by `append`, decoded into it by `read` (a row that is
not one is named by line and field); the hash is over the row's fields as written, so old rows verify unchanged.

Appends are serialised by a file lock (`results/ledger.jsonl.lock`) held across reading the last row and
writing the new one, so two verdicts given at the same moment — from two processes — cannot both chain onto
the same row. A ledger that fails verification is never appended to: the whole chain is checked first, under
the lock, so an edit anywhere in it stops the next verdict with `verify`'s own line instead of going unseen until
someone runs `ledger --verify` (the check reads each row once: `benchmarks/ledger_append.py`).
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import jsonlines
import msgspec
from filelock import FileLock, Timeout

from benchcard._util.files import write_atomic, writing
from benchcard._util.hashing import digest, strict
from benchcard._util.safeio import bom_said, present, record_loads
from benchcard.errors import JsonProblem, LedgerError
from benchcard.project import Project
from benchcard.records.ledgerrow import CHAIN_FIELDS, FIELD_ORDER, LedgerRow
from benchcard.records.verdictfile import LedgerEntry

__all__ = ["CHAIN_FIELDS", "FIELD_ORDER", "Entry", "LedgerRow", "Torn", "Walk", "append", "card_rows",
           "check_entries", "encode_row", "entries", "locked", "read", "repair", "row_hash", "row_of_run", "rows",
           "strict", "torn_message", "torn_tail", "verify", "walk"]

LOCK_TIMEOUT_S = 60.0
_LOCKS: dict[str, FileLock] = {}  # one lock object per ledger, so nested `locked` blocks re-enter it


def _lock_path(project: Project) -> str:
    return str(project.ledger_path) + ".lock"


@contextmanager
def locked(project: Project) -> Iterator[None]:
    """Hold the ledger's lock (reentrant within one process) for a read-check-append sequence."""
    project.results_dir.mkdir(parents=True, exist_ok=True)
    path = _lock_path(project)
    lock = _LOCKS.get(path)
    if lock is None:
        lock = _LOCKS[path] = FileLock(path, timeout=LOCK_TIMEOUT_S)
    try:
        with lock:
            yield
    except Timeout:
        raise LedgerError(
            f"{project.relative(project.ledger_path)}: another benchcard process has held the ledger lock "
            f"for {LOCK_TIMEOUT_S:g} s"
        ) from None


def row_hash(row: Mapping[str, Any] | LedgerRow) -> str:
    """Digest of the row's canonical JSON without its own `hash` field."""
    fields = row.fields() if isinstance(row, LedgerRow) else row
    return digest({k: v for k, v in fields.items() if k != "hash"})


@dataclass(frozen=True)
class Torn:
    """The ledger's last line when a write was cut short: no final newline and not a whole row."""

    line: int  # 1-based line number
    offset: int  # byte offset where it starts
    size: int  # bytes


def read(project: Project) -> list[LedgerRow]:
    """Every ledger row in file order, typed; a torn last line (`torn_tail`) is skipped, any other line that is
    not a ledger row is an error naming the line (and the field, for a row of the wrong shape)."""
    return list(rows(project))


def rows(project: Project) -> Iterator[LedgerRow]:
    """`read`, a row at a time as the file is read: what a reader of every row (`ledger`, `ledger --verify`) goes
    through, so that its memory does not grow with the ledger."""
    return (item[1] for item in _stream(project) if not isinstance(item, Torn))


def torn_tail(project: Project) -> Torn | None:
    """The torn last line, if a write was cut short (a crash, a full disk); `repair` moves it aside."""
    return next((item for item in _stream(project) if isinstance(item, Torn)), None)


#: A row as read: its JSON object exactly as written (what its hash covers) and the typed row.
_Read = tuple[dict[str, Any], LedgerRow]


def _own(project: Project) -> Path:
    """The ledger's path, refused when it is a symbolic link: a link to another project's ledger made this one
    show that project's rows as its own, and a verdict here appended its row there (evidence it does not hold,
    under a lock file of this project's, so unserialised with that project's own appends)."""
    path = project.ledger_path
    if path.is_symlink():
        raise LedgerError(f"{path.relative_to(project.root)}: a symbolic link (to {os.readlink(path)}); a project's "
                          "ledger is a file of its own, never read or appended through a link: replace the link "
                          "with this project's ledger")
    return path


def _opened(project: Project) -> BinaryIO | None:
    """The ledger open for reading a line at a time, or None when the project has none yet."""
    path = _own(project)
    if not present(path, project.relative(path), LedgerError):
        return None
    try:
        return path.open("rb")
    except OSError as exc:
        raise LedgerError(f"{project.relative(path)}: unreadable: {exc}") from None


def _stream(project: Project) -> Iterator[_Read | Torn]:
    """The rows in file order, read a line at a time, then the torn last line if there is one. Nothing is kept:
    a check of the whole chain holds one row at a time, so an append's memory does not grow with the ledger
    (reading it whole held about nine times its size: 1.3 GB for 100,000 rows, `benchmarks/ledger_append.py`)."""
    fh = _opened(project)
    if fh is None:
        return
    with fh:
        yield from _lines(project, fh)


def _lines(project: Project, fh: BinaryIO, offsets: array[int] | None = None) -> Iterator[_Read | Torn]:
    """`_stream` of a ledger already open, each whole row's byte offset added to `offsets` when given."""
    offset = 0
    for n, line in enumerate(fh, 1):
        if line.endswith(b"\n"):
            item = _typed(project, _object(project, line[:-1], n), n)
        else:  # the last line, without its newline: a whole row, or torn
            try:
                raw = _object(project, line, n)
            except LedgerError:
                yield Torn(n, offset, len(line))
                return
            item = _typed(project, raw, n)
        if offsets is not None:
            offsets.append(offset)
        yield item
        offset += len(line)


def _object(project: Project, line: bytes, n: int) -> dict[str, Any]:
    """One line as written (the hash covers every field, typed or not); the file's shown path is worked out only
    for an error, since resolving it took most of a whole-chain check's time."""
    if not line.strip():
        raise LedgerError(f"{project.relative(project.ledger_path)}: line {n} is empty; the ledger has no blank "
                          "lines")
    try:
        row = record_loads(line.decode("utf-8"))
    except JsonProblem as exc:
        raise LedgerError(f"{project.relative(project.ledger_path)}: line {n}: {exc} (an edited row: its hash covers "
                          "one value of a field, a reader may see the other)") from None
    except (ValueError, UnicodeDecodeError):
        why = bom_said(line) if n == 1 else ""  # a mark is no row's: the hashes cover the rows' fields, not bytes
        raise LedgerError(f"{project.relative(project.ledger_path)}: line {n} is not JSON"
                          + (why or " (an edited row)")) from None
    if not isinstance(row, dict):
        raise LedgerError(f"{project.relative(project.ledger_path)}: line {n} is not a JSON object")
    return row


def _typed(project: Project, raw: dict[str, Any], n: int) -> _Read:
    """The row decoded through LedgerRow; a missing or mistyped field is named with the line."""
    try:
        return raw, msgspec.convert(raw, LedgerRow)
    except msgspec.ValidationError as exc:
        raise LedgerError(f"{project.relative(project.ledger_path)}: line {n} is not a ledger row: {exc}") from None


def torn_message(project: Project, torn: Torn) -> str:
    return (f"{project.relative(project.ledger_path)}: line {torn.line} is torn ({torn.size} bytes without a final "
            "newline: a write cut short); readers skip it; `benchcard ledger --repair` moves it to a dated side "
            "file")


def repair(project: Project) -> Path | None:
    """Move a torn last line to `results/ledger.jsonl.torn-<UTC time>` (never deleted) and cut it from the
    ledger, so that verdicts can be appended again. Returns the side file, or None when nothing was torn."""
    with locked(project):
        torn = torn_tail(project)
        if torn is None:
            return None
        path = project.ledger_path
        with open(path, "rb") as fh:
            fh.seek(torn.offset)
            tail = fh.read()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        for n in range(1000):
            side = path.with_name(f"{path.name}.torn-{stamp}" + (f"-{n}" if n else ""))
            try:
                write_atomic(side, tail, overwrite=False)  # whole and synced before the ledger is cut
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover
            raise LedgerError(f"{project.relative(path)}: no free name for the torn line's side file")
        with open(path, "rb+") as fh:
            fh.truncate(torn.offset)
            fh.flush()
            os.fsync(fh.fileno())
        return side


def _chained(rows: Iterator[_Read | Torn], source: str) -> Iterator[_Read | Torn]:
    """The rows, each checked as it passes against the one before it (the hash covers every field a row holds,
    known to LedgerRow or not); the first bad row is a LedgerError. A torn last line is passed on unchecked."""
    prev: str | None = None
    for n, item in enumerate(rows, 1):
        if isinstance(item, Torn):
            yield item
            continue
        bad = _unchained(item[0], n, prev, source)
        if bad is not None:
            raise LedgerError(bad)
        prev = item[0]["hash"]
        yield item


def _unchained(raw: Mapping[str, Any], n: int, prev: str | None, source: str) -> str | None:
    """Why the row on line `n` does not follow the row whose hash is `prev`, or None when it does."""
    seq = raw.get("seq")
    name = f"seq {seq} (line {n})" if isinstance(seq, int) and not isinstance(seq, bool) else f"line {n}"
    if seq != n:
        if isinstance(seq, int) and not isinstance(seq, bool) and seq > n:
            why = f"expected seq {n}; {seq - n} row(s) before it are missing (deleted) or it was moved"
        else:
            why = f"expected seq {n}; rows were reordered, duplicated or renumbered"
        return f"{source}: {name} is the first bad row: {why}"
    if raw.get("prev") != prev:
        return (f"{source}: {name} is the first bad row: its prev does not match the hash of the row before it "
                f"(that row was edited or replaced, or rows were removed or reordered)")
    if not _hash_holds(raw):
        return f"{source}: {name} is the first bad row: its content does not match its hash (the row was edited)"
    return None


def _hash_holds(raw: Mapping[str, Any]) -> bool:
    """Whether a row read back hashes to its `hash`. A row holding a lone surrogate (`"\\ud800"`, written by a hand:
    benchcard's canonical JSON, UTF-8, cannot hold one) has no hash, and was edited."""
    try:
        return bool(raw.get("hash") == row_hash(raw))
    except UnicodeEncodeError:
        return False


class _Entered(msgspec.Struct, frozen=True):
    """The one part of a verdict.json the chain's check reads: the row it was entered as."""

    ledger: LedgerEntry | None = None


def verify(project: Project, copied: Collection[str] = ()) -> None:
    """Check the whole chain; LedgerError naming the first bad `seq` (edited, deleted or reordered rows).

    A chain cannot see its own tail cut off, so every run's `verdict.json`, which records the seq and hash of
    the row it was entered as, is checked against the ledger too; but for the runs in `copied` (folders relative
    to the project): originals copied in from another project, whose rows are in that project's ledger (named
    by a replication row of this one, `verdict/_replication.py`).
    """
    entered = [e for e in entries(project) if project.recorded(e[0].parent) not in copied]
    wanted = {seq for _, seq, _ in entered}  # the chain's rows are not kept (200,000 rows), only these
    hashes = {item[1].seq: item[1].hash for item in _chained(_stream(project), project.relative(project.ledger_path))
              if not isinstance(item, Torn) and item[1].seq in wanted}
    check_entries(project, entered, hashes)


#: A run's verdict.json, and the seq and hash of the ledger row it records it was entered as.
Entry = tuple[Path, int, str]


def check_entries(project: Project, entered: Collection[Entry], hashes: Mapping[int, str]) -> None:
    """LedgerError when a verdict.json records a row the ledger does not hold (`hashes`: the seqs and hashes of
    the rows `entered` names, as a walk found them): rows deleted from the end, or replaced."""
    source = project.relative(project.ledger_path)
    for path, seq, hashed_as in entered:
        hashed = hashes.get(seq)
        if hashed is None:
            raise LedgerError(f"{source}: seq {seq} is missing (it is recorded in {project.relative(path)}): "
                              "rows were deleted from the end of the ledger")
        if hashed != hashed_as:
            raise LedgerError(f"{source}: seq {seq} does not match the row recorded in "
                              f"{project.relative(path)}")


@dataclass(frozen=True)
class Walk:
    """One read of the ledger, a row at a time (`walk`): each row checked against the one before it as `verify`
    checks it, the hashes of the rows `wanted` names kept (`hashes`), the torn last line noted, and any run's last
    row found again afterwards (`last_row_of`) by seeking to its line, so that `ledger --verify` reads the file
    once (it read it four times). Each row's offset and a hash of its run are kept: 16 bytes a row."""

    project: Project
    fh: BinaryIO | None
    wanted: Collection[int]
    hashes: dict[int, str] = field(default_factory=dict)
    offsets: array[int] = field(default_factory=lambda: array("q"))
    runs: array[int] = field(default_factory=lambda: array("q"))
    ends: list[Torn] = field(default_factory=list)

    @property
    def torn(self) -> Torn | None:
        """The torn last line, once `rows` has gone through the file."""
        return self.ends[0] if self.ends else None

    def rows(self) -> Iterator[LedgerRow]:
        """The rows in file order, each checked against the one before it. The first bad row is a LedgerError once
        the file is read to its end, no row after it given: a line further down that does not read is the error
        instead, as it was when every row was read before the chain was checked."""
        if self.fh is None:
            return
        source = self.project.relative(self.project.ledger_path)
        prev: str | None = None
        broken: str | None = None
        for n, item in enumerate(_lines(self.project, self.fh, self.offsets), 1):
            if isinstance(item, Torn):
                self.ends.append(item)
                continue
            raw, row = item
            self.runs.append(hash(row.run))
            if broken is None:
                broken, prev = _unchained(raw, n, prev, source), raw.get("hash")
            if broken is not None:
                continue
            if row.seq in self.wanted:
                self.hashes[row.seq] = row.hash
            yield row
        if broken is not None:
            raise LedgerError(broken)

    def last_row_of(self, run: str) -> LedgerRow | None:
        """The run's last row among those `rows` went through, read again from its line."""
        if self.fh is None:
            return None
        key = hash(run)
        for i in range(len(self.runs) - 1, -1, -1):
            if self.runs[i] == key:
                self.fh.seek(self.offsets[i])
                line = self.fh.readline()
                row = _typed(self.project, _object(self.project, line.rstrip(b"\n"), i + 1), i + 1)[1]
                if row.run == run:
                    return row
        return None


@contextmanager
def walk(project: Project, wanted: Collection[int] = ()) -> Iterator[Walk]:
    """The ledger open for one `Walk` (a project without a ledger: a walk of no rows)."""
    fh = _opened(project)
    try:
        yield Walk(project, fh, frozenset(wanted))
    finally:
        if fh is not None:
            fh.close()


def entries(project: Project) -> Iterator[Entry]:
    """Each run's verdict.json and the seq and hash of the row it records it was entered as, in path order."""
    for path in sorted(project.results_dir.glob("*/v*/*/verdict.json")):
        try:
            entry = msgspec.json.decode(path.read_bytes(), type=_Entered).ledger
        except (OSError, msgspec.DecodeError):
            continue
        if entry is not None and entry.seq is not None and entry.hash is not None:
            yield path, entry.seq, entry.hash


def append(project: Project, row: LedgerRow) -> LedgerRow:
    """Append one row and return it complete: `seq`, `date`, `at`, `prev` and `hash` are set here.

    The row is made strict JSON (NaN and infinities become null) and checked against LedgerRow before it is
    hashed. The ledger is verified first, under the lock; a broken chain is reported, not extended.
    """
    blank = LedgerRow(card="", version=None, kind="", rig="", run="", cells=0, outcome="", finding="",
                      seal_root=None, evidence="")
    clash = [k for k in CHAIN_FIELDS if getattr(row, k) != getattr(blank, k)]
    if clash:
        raise LedgerError(f"a ledger row may not set {', '.join(clash)}; the ledger sets them")
    body = strict(row)
    with locked(project):
        last = _appendable(project)
        now = datetime.now(UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if last and stamp < last.at:  # a clock that went backwards must not make dates disagree with seq
            stamp = last.at
        chain = {"seq": last.seq + 1 if last else 1, "date": stamp[:10], "at": stamp,
                 "prev": last.hash if last else None}
        try:
            full = msgspec.convert({**body, **chain}, LedgerRow)
        except msgspec.ValidationError as exc:
            raise LedgerError(f"a ledger row for run {row.run}: {exc}") from None
        full = msgspec.structs.replace(full, hash=row_hash(full))
        path = project.ledger_path
        with writing(path), open(path, "a", encoding="utf-8") as fh:
            if _lacks_final_newline(path):  # a whole, verified last row whose newline was lost
                fh.write("\n")
            with jsonlines.Writer(fh, dumps=_compact) as writer:
                writer.write(full.fields())
            fh.flush()
            os.fsync(fh.fileno())
        return full


def encode_row(row: LedgerRow) -> str:
    """A row's line (without its newline): compact, UTF-8 as is, fields in LedgerRow's order, numbers in
    Python's form (`1e-05`): the bytes every row has been written in."""
    return _compact(row.fields())


def _compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _lacks_final_newline(path: Any) -> bool:
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return False
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def check_appendable(project: Project) -> None:
    """LedgerError, as `append` would raise it, when the ledger cannot take a row (a torn last line, a chain
    that does not verify): asked before calls are spent on a run whose verdict would then be refused (`replicate`)."""
    _appendable(project)


def _appendable(project: Project) -> LedgerRow | None:
    """The last row, which a new one chains onto (None for an empty ledger), once the whole chain verifies; else
    the refusal, naming the torn line or the first bad row as `verify` does."""
    last: LedgerRow | None = None
    source = project.relative(project.ledger_path)
    checked = _chained(_stream(project), source)
    while True:
        try:
            item = next(checked, None)
        except LedgerError as exc:
            raise LedgerError(f"refusing to append to a ledger that fails verification: {exc}") from None
        if item is None:
            return last
        if isinstance(item, Torn):
            raise LedgerError(f"refusing to append: {source}: line {item.line} is torn ({item.size} bytes, a write "
                              "cut short); repair it first with `benchcard ledger --repair`, which keeps the torn "
                              "bytes in a dated side file")
        last = item[1]


def row_of_run(project: Project, run_id: str) -> LedgerRow | None:
    """The ledger row of a run, if it has one. Only the lines holding the run's id as a JSON string are decoded
    (benchcard writes it as is; a ledger rewritten by a JSON tool that escapes what is not ASCII holds it as
    `\\u00e9`, which is looked for too: the rows' hashes hold either way), so `verdict`'s look-up under the lock
    scans bytes rather than decoding every row; a row elsewhere that does not read is `verify`'s to name, as for
    `append`."""
    return next(_rows_whose(project, "run", run_id), None)


def card_rows(project: Project, card_id: str) -> list[LedgerRow]:
    """The card's rows, in file order (`records/cardruns.py` picks a card's run by them). As for `row_of_run`,
    only the lines holding the card's id as a JSON string are decoded, so a long ledger costs a byte scan, not a
    decode of every row; a line of the card's that does not read is the error `read` gives for it, and a row
    elsewhere that does not read is `verify`'s to name."""
    return list(_rows_whose(project, "card", card_id))


def _forms(value: str) -> list[bytes]:
    """A value as a ledger line may hold it: as benchcard writes it, and with what is not ASCII escaped."""
    return list(dict.fromkeys(json.dumps(value, ensure_ascii=escaped).encode("utf-8") for escaped in (False, True)))


def _rows_whose(project: Project, field: str, value: str) -> Iterator[LedgerRow]:
    """The rows whose `field` is `value`, in file order, the file read a line at a time (it was read whole: a
    ledger of 200,000 rows, 350 MB, held that much for every verdict's look-up): only the lines holding `value` as
    a JSON string are parsed, and only those whose `field` is it are typed, each named by its line as `read` names
    it. Another row may hold the value in another field (a card named `ab` in every ab row's `kind`, a run's id
    in its replication's `replicates`): one of those that does not read is `verify`'s to name, not this
    look-up's. A line that is not JSON cannot be told apart, so it is the error `read` gives; a torn last line is
    skipped, as every reader skips it."""
    fh = _opened(project)
    if fh is None:
        return
    needles = _forms(value)
    with fh:
        for n, line in enumerate(fh, 1):
            if not any(needle in line for needle in needles):
                continue
            if line.endswith(b"\n"):
                raw = _object(project, line[:-1], n)
            else:  # the last line, without its newline: whole, or torn
                try:
                    raw = _object(project, line, n)
                except LedgerError:
                    return
            if raw.get(field) == value:
                yield _typed(project, raw, n)[1]
