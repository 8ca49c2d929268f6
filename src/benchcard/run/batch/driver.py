"""`benchcard run --batch`: the sealed plan sent through the vendor's batch API, resumable at every step.

The order of steps, each recorded in the journal (`journal.py`) before the next is taken:

1. the plan is cut into upload files under the vendor's limits (`batch/chunk-NNN.jsonl`, digests recorded);
2. per chunk: upload (OpenAI), `creating`, create, `created` with the batch id — a resume that finds `creating`
   without `created` first looks for the batch the vendor may have made, so no cell is submitted twice;
3. polls, each recorded, until the batch ends; `--no-wait` (options.wait False) stops after the first round;
4. the result files downloaded whole (a `.part` name renamed at the end), then `downloaded`;
5. one row per cell appended to `outputs.jsonl` (cells already there are skipped), then `collected`.

A cell with no result in its batch's files is recorded `failed` with the cause, so every cell ends with a row.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from benchcard._util.files import AtomicFile
from benchcard._util.hashing import file_digest
from benchcard.errors import RunError
from benchcard.records.rows import AssignmentRow, dumps_line, iter_rows
from benchcard.run.batch.journal import (
    FOLDER,
    Added,
    Chunk,
    Collected,
    Created,
    Creating,
    Downloaded,
    Journal,
    Limits,
    Planned,
    PlannedChunk,
    Polled,
    Uploaded,
)
from benchcard.run.batch.results import output_row, read_results
from benchcard.run.batch.vendors import OpenAIBatches, Poll, Vendor, vendor_for
from benchcard.run.calls import Session
from benchcard.run.providers.base import HttpProvider, redact
from benchcard.run.store import OutputWriter, RunStore

WRAPPER_BYTES = 32  # an Anthropic batch body is `{"requests":[` + lines + `]}`


def plan_chunks(store: RunStore, vendor: Vendor, journal: Journal, only: set[str] | None = None,
                first: int = 0) -> list[Chunk]:
    """Write the upload files from the sealed plan, cut under the limits, and record them (`planned`); with
    `only`, just those cells, as chunks numbered from `first` (`added`: cells a `--retry-failed` reopened)."""
    limits = vendor.limits
    cfg = vendor.config.batch_limits
    max_requests = min(limits.requests, cfg.get("requests", limits.requests))
    max_bytes = min(limits.bytes, cfg.get("bytes", limits.bytes)) - WRAPPER_BYTES
    journal.folder.mkdir(parents=True, exist_ok=True)
    chunks: list[Chunk] = []
    fh: AtomicFile | None = None
    sha = hashlib.sha256()
    cells = size = 0

    def close() -> None:
        nonlocal fh
        if fh is None:
            return
        fh.commit()
        fh = None
        name = f"{FOLDER}/chunk-{first + len(chunks):03d}.jsonl"
        chunks.append(Chunk(first + len(chunks), cells, size, "sha256:" + sha.hexdigest(), name))

    try:
        for cell, body in sealed_bodies(store):
            if only is not None and cell not in only:
                continue
            line = vendor.line(cell, body)
            need = len(line) + limits.overhead
            if need > max_bytes:
                raise RunError(f"cell {cell}: its request is {len(line):,} bytes, more than a "
                               f"{vendor.name} batch may hold ({max_bytes:,}); run it interactively")
            if fh is not None and (cells >= max_requests or size + need > max_bytes):
                close()
            if fh is None:
                fh = AtomicFile(store.folder / f"{FOLDER}/chunk-{first + len(chunks):03d}.jsonl")
                sha, cells, size = hashlib.sha256(), 0, 0
            fh.write(line)
            sha.update(line)
            cells += 1
            size += len(line)
        close()
    except BaseException:
        if fh is not None:
            fh.abort()  # no half-written chunk is left behind
        raise
    plan = Planned if only is None else Added
    journal.append(plan(vendor=vendor.name, limits=Limits(max_requests, max_bytes + WRAPPER_BYTES),
                        chunks=[PlannedChunk(c.chunk, c.cells, c.bytes, c.digest, c.file) for c in chunks]))
    return chunks


_BODY_KEY = b',"body":'


def sealed_bodies(store: RunStore) -> Iterator[tuple[str, bytes]]:
    """(cell, the body's bytes exactly as sealed) for every line of `sealed/requests.jsonl`, in call order.

    The body is the last field of a request row, so its bytes are cut from the line without decoding it
    (inside a JSON string every quote is escaped, so the first `,"body":` is the row's own key); a line of
    another shape is decoded and its body encoded as the row writer does.
    """
    with open(store.requests_path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            at = line.find(_BODY_KEY)
            head = line[:at] + b"}" if at > 0 else b""
            if at > 0 and line.endswith(b"}\n"):
                try:
                    cell = json.loads(head)["cell"]
                except (ValueError, KeyError):
                    cell = None
                if isinstance(cell, str):
                    yield cell, line[at + len(_BODY_KEY):-2]
                    continue
            try:
                row = json.loads(line)
            except ValueError:
                raise RunError(f"{store.requests_path}: line {n} is not JSON") from None
            yield str(row["cell"]), dumps_line(row["body"])[:-1]


def chunk_cells(path: Path) -> list[str]:
    """The cell ids of an upload file, in order (each line starts with its custom_id)."""
    prefix = b'{"custom_id":"'
    cells = []
    with open(path, "rb") as fh:
        for line in fh:
            if line.startswith(prefix) and line[len(prefix) + 11:len(prefix) + 12] == b'"':
                cells.append(line[len(prefix):len(prefix) + 11].decode("ascii"))
            else:
                cells.append(str(json.loads(line)["custom_id"]))
    return cells


class BatchRun:
    """One invocation's batch work on one run folder."""

    def __init__(self, s: Session, writer: OutputWriter, done: set[str]):
        if not isinstance(s.provider, HttpProvider):
            raise RunError("--batch needs the openai or anthropic provider")
        self.s = s
        self.writer = writer
        self.done = done
        self.vendor = vendor_for(s.provider, s.options.attempts, (s.options.backoff_base, s.options.backoff_cap))
        self.journal = Journal(s.store.folder)
        self.folder = s.store.folder
        self._fixtures: dict[str, str] | None = None

    async def go(self) -> int:
        chunks = self.journal.chunks() or plan_chunks(self.s.store, self.vendor, self.journal)
        if all(c.collected for c in chunks):  # every batch collected, yet cells lack a row: --retry-failed
            missing = set(self.fixtures()) - self.done
            if missing:
                chunks += plan_chunks(self.s.store, self.vendor, self.journal, missing, len(chunks))
        await self.submit(chunks)
        while True:
            pending = [c for c in chunks if not c.collected]
            for c in pending:
                await self.advance(c)
            self.show(chunks)
            if not self.s.options.wait or all(c.collected for c in chunks):
                return self.writer.written
            if any(not c.ended for c in chunks):
                await asyncio.sleep(self.s.options.poll_interval)

    # ------------------------------------------------------------------------------------------- steps

    async def submit(self, chunks: list[Chunk]) -> None:
        taken = {c.batch for c in chunks if c.batch}
        for c in chunks:
            if c.batch:
                continue
            path = self.folder / c.file
            if file_digest(path) != c.digest:
                raise RunError(f"{path}: changed since it was planned (digest {c.digest}); it is never re-cut")
            if isinstance(self.vendor, OpenAIBatches) and c.file_id is None:
                c.file_id = await self.vendor.upload(path, self.s.store.run_id)
                self.journal.append(Uploaded(chunk=c.chunk, file_id=c.file_id, digest=c.digest))
            if c.creating_at is not None:  # a create may have reached the vendor before a kill
                found = await self.vendor.find(c.creating_at, c.cells, c.file_id, taken)
                if found is not None:
                    c.batch = found
                    taken.add(found)
                    self.journal.append(Created(chunk=c.chunk, batch=found, adopted=True))
                    continue
            c.creating_at = self.journal.append(Creating(chunk=c.chunk)).at
            c.batch = await self.vendor.submit(path, c.cells, c.file_id)
            taken.add(c.batch)
            self.journal.append(Created(chunk=c.chunk, batch=c.batch))

    async def advance(self, c: Chunk) -> None:
        """One step further for a chunk: poll it, or download its results, or collect them."""
        assert c.batch is not None
        if not c.ended:
            p = await self.vendor.poll(c.batch)
            self.record(c, p)
            if not p.ended:
                return
        if not c.downloaded or any(not (self.folder / f).is_file() for f in c.results):  # a file deleted: again
            files = []
            for i, source in enumerate(c.sources):
                name = f"{FOLDER}/chunk-{c.chunk:03d}.results-{i}.jsonl"
                await self.vendor.download(source, self.folder / name)
                files.append(name)
            self.journal.append(Downloaded(chunk=c.chunk, files=files))
            c.downloaded, c.results = True, files
        self.collect(c)

    def record(self, c: Chunk, p: Poll) -> None:
        self.record_poll(self.journal, c, p)

    @staticmethod
    def record_poll(journal: Journal, c: Chunk, p: Poll) -> None:
        """Every poll goes into the journal, the batch's end with where its results are."""
        event = Polled(chunk=c.chunk, batch=c.batch, status=p.status, done=p.done, failed=p.failed, total=p.total)
        if p.ended:
            event = msgspec.structs.replace(event, ended=True, error=p.error, sources=list(p.sources))
        journal.append(event)
        c.status, c.done, c.failed = p.status, p.done, p.failed
        if p.ended:
            c.ended, c.error, c.sources = p.status, p.error, list(p.sources)

    def collect(self, c: Chunk) -> None:
        s, batch = self.s, str(c.batch)
        cells = chunk_cells(self.folder / c.file)
        mine = set(cells)
        fixtures = self.fixtures()
        secret = os.environ.get(s.secret_env) if s.secret_env else None
        for cell, outcome in read_results([self.folder / f for f in c.results], self.vendor.name == "anthropic"):
            if cell not in mine or cell in self.done:
                continue
            row = output_row(cell, fixtures[cell], outcome, batch, s.model, s.prices)
            if row.error:
                row = msgspec.structs.replace(row, error=redact(row.error, secret))
            self.writer.append(row)
            self.done.add(cell)
        why = (f"the batch failed: {c.error}" if c.error else
               f"no result for this cell in batch {batch} (it ended {c.ended})")
        for cell in cells:
            if cell not in self.done:
                self.writer.append(output_row(cell, fixtures[cell], redact(why, secret)[:300], batch, s.model,
                                              s.prices))
                self.done.add(cell)
        self.journal.append(Collected(chunk=c.chunk, batch=batch))
        c.collected = True

    def fixtures(self) -> dict[str, str]:
        if self._fixtures is None:
            rows = iter_rows(self.s.store.assignment_path, AssignmentRow)
            self._fixtures = {r.cell: r.fixture for r in rows}
        return self._fixtures

    def show(self, chunks: list[Chunk]) -> None:
        remote = sum(c.done for c in chunks if not c.collected)
        states = ", ".join(sorted({c.status or "submitted" for c in chunks if not c.collected})) or "collected"
        self.s.progress.update(len(self.done) + remote, f"{len(chunks)} batch{'es' if len(chunks) > 1 else ''} · "
                                                        f"{states}")


async def run_batch(s: Session, writer: OutputWriter, done: set[str]) -> int:
    """Carry a batch run as far as it goes now; returns the cells recorded by this invocation."""
    return await BatchRun(s, writer, done).go()
