"""A batch run's record in its folder: `batch/journal.jsonl`, one event a line, appended, flushed and synced.

Every step of a batch is written here before the next is taken, so a process killed at any point knows on resume
what the vendor already has: `planned` (the upload files and their digests; `added`, more of them for the
cells a `--retry-failed` reopened), `uploaded` (OpenAI's file id),
`creating` then `created` (the batch id; a `creating` without `created` means the vendor may hold a batch whose
id was never heard: it is looked for before another is created), every `poll` (status, done/total), `downloaded`
(the result files, complete) and `collected` (every cell of the chunk has its row in outputs.jsonl).
Nothing is ever rewritten; a torn last line (a kill mid-write) is dropped before the next append.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchcard.errors import RunError
from benchcard.records import dumps_line, utc_stamp

FOLDER = "batch"
JOURNAL = "journal.jsonl"


@dataclass
class Chunk:
    """One batch of the run as the journal tells it."""

    chunk: int
    cells: int
    bytes: int
    digest: str
    file: str  # the upload file, relative to the run folder
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


class Journal:
    """`batch/journal.jsonl` of one run folder."""

    def __init__(self, run_folder: Path):
        self.run_folder = run_folder
        self.folder = run_folder / FOLDER
        self.path = self.folder / JOURNAL

    def exists(self) -> bool:
        return self.path.is_file()

    def events(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        events = []
        with open(self.path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    break  # a torn last line: that step was not recorded
                try:
                    events.append(json.loads(line))
                except ValueError:
                    raise RunError(f"{self.path}: line {n} is not JSON") from None
        return events

    def append(self, event: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._repair()
        with open(self.path, "ab") as fh:
            fh.write(dumps_line({**event, "at": utc_stamp()}))
            fh.flush()
            os.fsync(fh.fileno())

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
            kind = e.get("event")
            if kind in ("planned", "added"):  # added: a later batch of cells a --retry-failed reopened
                if kind == "planned":
                    chunks = {}
                chunks.update({c["chunk"]: Chunk(c["chunk"], c["cells"], c["bytes"], c["digest"], c["file"])
                               for c in e["chunks"]})
                continue
            c = chunks.get(e.get("chunk", -1))
            if c is None:
                continue
            if kind == "uploaded":
                c.file_id = e["file_id"]
            elif kind == "creating":
                c.creating_at = e["at"]
            elif kind == "created":
                c.batch = e["batch"]
            elif kind == "poll":
                c.status, c.done, c.failed, c.polled_at = e["status"], e["done"], e.get("failed", 0), e["at"]
                if e.get("ended"):
                    c.ended, c.error = e["status"], e.get("error")
                    c.sources = list(e.get("sources") or [])
            elif kind == "downloaded":
                c.downloaded = True
                c.results = list(e["files"])
            elif kind == "collected":
                c.collected = True
        return [chunks[k] for k in sorted(chunks)]
