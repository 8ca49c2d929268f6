"""A batch run's record in its folder: `batch/journal.jsonl`, one event a line, appended, flushed and synced.

Every step of a batch is written here before the next is taken, so a process killed at any point knows on resume
what the vendor already has: `planned` (the upload files and their digests; `added`, more of them for the
cells a `--retry-failed` reopened), `uploaded` (OpenAI's file id),
`creating` then `created` (the batch id; a `creating` without `created` means the vendor may hold a batch whose
id was never heard: it is looked for before another is created, and taken only when it holds what only this run
put there, `not_ours` recording each batch looked at and found another's), every `poll` (status, done/total),
`downloaded` (the result files, complete) and `collected` (every cell of the chunk has its row in outputs.jsonl;
with the result lines that were refused, a `custom_id` answered twice or not of this batch).
Each kind is one struct below, written and read through it. Nothing is ever rewritten; a torn last line (a kill
mid-write) is dropped before the next append.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.files import writing
from benchcard.errors import RunError
from benchcard.records.rows import dumps_line, utc_stamp

FOLDER = "batch"
JOURNAL = "journal.jsonl"


# ------------------------------------------------------------------------------------------------ the events
# One struct per event kind, told apart by the line's `event` field. Fields are declared in the order they have
# always been written, `at` last (stamped by `Journal.append`); a field that older journals may lack, or that
# only some events carry, is UNSET when absent and then not written.


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="event"):
    """A journal line: its kind is its `event` field."""


class PlannedChunk(msgspec.Struct, frozen=True):
    """One upload file of the plan: its cells, size and digest (checked before it is sent)."""

    chunk: int
    cells: int
    bytes: int
    digest: str
    file: str  # relative to the run folder


class Limits(msgspec.Struct, frozen=True):
    """The vendor's limits the plan was cut under."""

    requests: int
    bytes: int


class _Plan(_Event, frozen=True, kw_only=True):
    vendor: str | UnsetType = UNSET
    limits: Limits | UnsetType = UNSET
    chunks: list[PlannedChunk]
    tag: str | UnsetType = UNSET  # the run's own mark in each custom_id (`cell-tag`); older plans: the cell alone
    at: str = ""


class Planned(_Plan, frozen=True, kw_only=True, tag="planned"):
    """The plan of batches, recorded before any upload; a new plan replaces the chunks of an older one."""


class Added(_Plan, frozen=True, kw_only=True, tag="added"):
    """More chunks, for the cells a `--retry-failed` reopened, numbered after the others."""


class Uploaded(_Event, frozen=True, kw_only=True, tag="uploaded"):
    """OpenAI holds the chunk's file under `file_id`."""

    chunk: int
    file_id: str
    digest: str | UnsetType = UNSET
    at: str = ""


class Creating(_Event, frozen=True, kw_only=True, tag="creating"):
    """A create is about to be sent: without a `created` after it, the vendor may hold a batch never heard of."""

    chunk: int
    at: str = ""


class Created(_Event, frozen=True, kw_only=True, tag="created"):
    """The chunk's batch id; `adopted` when it was found at the vendor after a kill rather than created."""

    chunk: int
    batch: str
    adopted: bool | UnsetType = UNSET
    at: str = ""


class NotOurs(_Event, frozen=True, kw_only=True, tag="not_ours"):
    """A batch that might have been the chunk's (made after its `creating`, of its size) holds another run's
    requests: it is never taken for this chunk."""

    chunk: int
    batch: str
    at: str = ""


class Polled(_Event, frozen=True, kw_only=True, tag="poll"):
    """One poll of the batch; when it `ended`, its cause of failure (if any) and where its results are."""

    chunk: int
    batch: str | UnsetType | None = UNSET
    status: str
    done: int
    failed: int = 0
    total: int | UnsetType = UNSET
    ended: bool | UnsetType = UNSET
    error: str | UnsetType | None = UNSET
    sources: list[str] | UnsetType = UNSET
    at: str = ""


class Downloaded(_Event, frozen=True, kw_only=True, tag="downloaded"):
    """The result files, complete, relative to the run folder."""

    chunk: int
    files: list[str]
    at: str = ""


class Collected(_Event, frozen=True, kw_only=True, tag="collected"):
    """Every cell of the chunk has its row in outputs.jsonl; `refused`, the first result lines that were not
    taken (each one line naming the file, the line and the custom_id), `refused_count` all of them."""

    chunk: int
    batch: str | UnsetType = UNSET
    refused: list[str] | UnsetType = UNSET
    refused_count: int | UnsetType = UNSET
    at: str = ""


Event = Planned | Added | Uploaded | Creating | Created | NotOurs | Polled | Downloaded | Collected
_DECODER = msgspec.json.Decoder(Event)


class _Kind(msgspec.Struct):
    """Only the event's name: to pass over an event a newer benchcard wrote and this one does not know."""

    event: str


_KINDS = {"planned", "added", "uploaded", "creating", "created", "not_ours", "poll", "downloaded", "collected"}


@dataclass
class Chunk:
    """One batch of the run as the journal tells it."""

    chunk: int
    cells: int
    bytes: int
    digest: str
    file: str  # the upload file, relative to the run folder
    tag: str = ""  # the run's mark in each custom_id of the chunk ("" in a plan made before there was one)
    file_id: str | None = None
    creating_at: str | None = None
    batch: str | None = None
    status: str | None = None
    done: int = 0
    failed: int = 0
    ended: str | None = None  # the vendor's final status
    error: str | None = None  # why the whole batch failed, when it did
    sources: list[str] = field(default_factory=list)  # where the vendor serves the results (file ids, a URL)
    results: list[str] = field(default_factory=list)  # downloaded result files, relative to the run folder
    downloaded: bool = False
    collected: bool = False
    polled_at: str | None = None
    foreign: set[str] = field(default_factory=set)  # batches found to be another run's (`not_ours`)
    refused: list[str] = field(default_factory=list)  # result lines not taken, as `collected` recorded them


class Journal:
    """`batch/journal.jsonl` of one run folder."""

    def __init__(self, run_folder: Path):
        self.run_folder = run_folder
        self.folder = run_folder / FOLDER
        self.path = self.folder / JOURNAL

    def exists(self) -> bool:
        return self.path.is_file()

    def events(self) -> list[Event]:
        """Every whole event, in order; a line that is not one is named by file and line."""
        if not self.path.is_file():
            return []
        events: list[Event] = []
        with open(self.path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    break  # a torn last line: that step was not recorded
                try:
                    event = _DECODER.decode(line)
                except msgspec.ValidationError as exc:  # (a DecodeError too: caught first)
                    if _unknown_kind(line):
                        continue
                    raise RunError(f"{self.path}: line {n} is not a journal event: {exc}") from None
                except msgspec.DecodeError:
                    raise RunError(f"{self.path}: line {n} is not JSON") from None
                if not event.at:  # `at` defaults to "" only so that an event can be built before it is stamped
                    raise RunError(f"{self.path}: line {n} is not a journal event: Object missing required field `at`")
                events.append(event)
        return events

    def append(self, event: Event) -> Event:
        """Record the event, dated now, and return it as written."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._repair()
        stamped = msgspec.structs.replace(event, at=utc_stamp())
        with writing(self.path), open(self.path, "ab") as fh:
            fh.write(dumps_line(stamped))
            fh.flush()
            os.fsync(fh.fileno())
        return stamped

    def _repair(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "rb+") as fh:
                fh.truncate(data.rfind(b"\n") + 1)

    def chunks(self) -> list[Chunk]:
        """Each chunk's state, replayed from the events; [] before the plan of batches was recorded."""
        chunks: dict[int, Chunk] = {}
        for e in self.events():
            if isinstance(e, Planned | Added):
                if isinstance(e, Planned):
                    chunks = {}
                tag = "" if isinstance(e.tag, UnsetType) else e.tag
                chunks.update({c.chunk: Chunk(c.chunk, c.cells, c.bytes, c.digest, c.file, tag) for c in e.chunks})
                continue
            c = chunks.get(e.chunk)
            if c is None:
                continue
            _replay(c, e)
        return [chunks[k] for k in sorted(chunks)]


def _replay(c: Chunk, e: Event) -> None:
    """One event after the plan, applied to the chunk it names."""
    if isinstance(e, Uploaded):
        c.file_id = e.file_id
    elif isinstance(e, Creating):
        c.creating_at = e.at
    elif isinstance(e, Created):
        c.batch = e.batch
    elif isinstance(e, NotOurs):
        c.foreign.add(e.batch)
    elif isinstance(e, Polled):
        c.status, c.done, c.failed, c.polled_at = e.status, e.done, e.failed, e.at
        if e.ended is True:
            c.ended, c.error = e.status, None if isinstance(e.error, UnsetType) else e.error
            c.sources = [] if isinstance(e.sources, UnsetType) else list(e.sources)
    elif isinstance(e, Downloaded):
        c.downloaded = True
        c.results = list(e.files)
    elif isinstance(e, Collected):
        c.collected = True
        c.refused = [] if isinstance(e.refused, UnsetType) else list(e.refused)


def _unknown_kind(line: bytes) -> bool:
    """Whether the line is an event of a kind this benchcard does not know (written by a newer one)."""
    try:
        return msgspec.json.decode(line, type=_Kind).event not in _KINDS
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
