"""`benchcard run --batch`: the sealed plan sent through the vendor's batch API, resumable at every step.

The order of steps, each recorded in the journal (`_journal.py`) before the next is taken:

1. the plan is cut into upload files under the vendor's limits (`batch/chunk-NNN.jsonl`, digests recorded);
2. per chunk: upload (OpenAI), `creating`, create, `created` with the batch id — a resume that finds `creating`
   without `created` first looks for the batch the vendor may have made, so no cell is submitted twice, and takes
   one only on what this run alone put there (`vendors.Claim`; each custom_id is `cell-tag`, the tag drawn at
   random for the plan and kept in the journal); a batch that cannot be told yet is waited for;
3. polls, each recorded, until the batch ends; `--no-wait` (options.wait False) stops after the first round;
4. the result files downloaded whole (a `.part` name renamed at the end), then `downloaded`;
5. one row per cell appended to `outputs.jsonl` (cells already there are skipped), then `collected`.

A cell with no result in its batch's files is recorded `failed` with the cause, so every cell ends with a row. A
result line whose custom_id is not of the batch is refused, and a cell answered twice is recorded `failed`
(neither answer is taken): each is one line naming the file, the line and the id (docs/scale.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import msgspec

from benchcard._util.files import AtomicFile
from benchcard._util.hashing import file_digest
from benchcard._util.safeio import json_loads
from benchcard.errors import ProviderError, RetryableError, RunError
from benchcard.records.rows import AssignmentRow, dumps_line, iter_rows
from benchcard.run._calls import Session
from benchcard.run._retry import done_cells
from benchcard.run.batch._journal import (
    FOLDER,
    Added,
    Chunk,
    Collected,
    Created,
    Creating,
    Downloaded,
    Journal,
    Limits,
    NotOurs,
    Planned,
    PlannedChunk,
    Polled,
    Uploaded,
)
from benchcard.run.batch._results import Unread, Where, output_row, read_results, result_ids
from benchcard.run.batch._vendors import Claim, OpenAIBatches, Poll, Vendor, vendor_for
from benchcard.run.providers.base import HttpProvider, redact, without_secret
from benchcard.run.store import OutputWriter, RunStore

WRAPPER_BYTES = 32  # an Anthropic batch body is `{"requests":[` + lines + `]}`
REFUSED_KEPT = 20  # refused result lines a `collected` event keeps (each cell's own row names its cause too)


def plan_chunks(store: RunStore, vendor: Vendor, journal: Journal, only: set[str] | None = None,
                first: int = 0) -> list[Chunk]:
    """Write the upload files from the sealed plan, cut under the limits, and record them (`planned`); with
    `only`, just those cells, as chunks numbered from `first` (`added`: cells a `--retry-failed` reopened, or a
    sequential run's next stretch, one batch per stretch; `planned` when they are the first)."""
    limits = vendor.limits
    cfg = vendor.config.batch_limits
    max_requests = min(limits.requests, cfg.get("requests", limits.requests))
    max_bytes = min(limits.bytes, cfg.get("bytes", limits.bytes)) - WRAPPER_BYTES
    journal.folder.mkdir(parents=True, exist_ok=True)
    tag = secrets.token_hex(8)  # this plan's mark in every custom_id: what only this run puts in a batch
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
        chunks.append(Chunk(first + len(chunks), cells, size, "sha256:" + sha.hexdigest(), name, tag))

    try:
        for cell, body in sealed_bodies(store):
            if only is not None and cell not in only:
                continue
            line = vendor.line(f"{cell}-{tag}", body)
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
    plan = Planned if only is None or first == 0 else Added
    journal.append(plan(vendor=vendor.name, limits=Limits(max_requests, max_bytes + WRAPPER_BYTES),
                        chunks=[PlannedChunk(c.chunk, c.cells, c.bytes, c.digest, c.file) for c in chunks], tag=tag))
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
                    cell = json_loads(head)["cell"]
                except (ValueError, KeyError):
                    cell = None
                if isinstance(cell, str):
                    yield cell, line[at + len(_BODY_KEY):-2]
                    continue
            try:
                row = json_loads(line)
            except ValueError:
                raise RunError(f"{store.requests_path}: line {n} is not JSON") from None
            yield str(row["cell"]), dumps_line(row["body"])[:-1]


def chunk_ids(path: Path) -> list[str]:
    """The custom_ids of an upload file, in order (each line starts with its custom_id, which holds no quote)."""
    prefix = b'{"custom_id":"'
    ids = []
    with open(path, "rb") as fh:
        for line in fh:
            end = line.find(b'"', len(prefix)) if line.startswith(prefix) else -1
            ids.append(line[len(prefix):end].decode("ascii") if end > 0 else str(json_loads(line)["custom_id"]))
    return ids


def cell_of(custom_id: str, tag: str) -> str:
    """The cell a custom_id of a plan with this tag asks for (`cell-tag`; a plan without a tag used the cell)."""
    return custom_id[:-len(tag) - 1] if tag and custom_id.endswith(f"-{tag}") else custom_id


class BatchRun:
    """One invocation's batch work on one run folder."""

    def __init__(self, s: Session, writer: OutputWriter, done: set[str]):
        if not isinstance(s.provider, HttpProvider):
            raise RunError("--batch needs the openai or anthropic provider")
        self.s = s
        self.writer = writer
        self.done = done
        # cells skipped only because a later stretch of a sequential run holds them: never shown as collected
        self.ahead = len(done - done_cells(s.store))
        self.vendor = vendor_for(s.provider, s.options.attempts, (s.options.backoff_base, s.options.backoff_cap))
        self.journal = Journal(s.store.folder)
        self.folder = s.store.folder
        self._fixtures: dict[str, str] | None = None

    async def go(self) -> int:
        chunks = self.journal.chunks()
        if not chunks:  # the first plan: every cell not done (a sequential run: its first stretch's only)
            wanted = set(self.fixtures()) - self.done
            whole = len(wanted) == len(self.fixtures())
            chunks = plan_chunks(self.s.store, self.vendor, self.journal, None if whole else wanted)
        if all(c.collected for c in chunks):  # every batch collected, yet cells lack a row: --retry-failed
            missing = set(self.fixtures()) - self.done
            if missing:
                chunks += plan_chunks(self.s.store, self.vendor, self.journal, missing, len(chunks))
        while True:
            await self.submit(chunks)  # each round: a chunk still telling whether a batch is its own looks again
            for c in chunks:
                if c.batch is not None and not c.collected:
                    await self.advance(c)
            self.show(chunks)
            if not self.s.options.wait or all(c.collected for c in chunks):
                return self.writer.written
            if any(not c.ended for c in chunks):
                await asyncio.sleep(self.s.options.poll_interval)

    # ------------------------------------------------------------------------------------------- steps

    async def submit(self, chunks: list[Chunk]) -> None:
        """Create the batch of each chunk that has none; after a kill between `creating` and `created`, first
        look for the one that create may have made, and take it only if it holds this run's own requests."""
        for c in chunks:
            if c.batch or c.collected:
                continue
            path = self.folder / c.file
            if file_digest(path) != c.digest:
                raise RunError(f"{path}: changed since it was planned (digest {c.digest}); it is never re-cut")
            if isinstance(self.vendor, OpenAIBatches) and c.file_id is None:
                c.file_id = await self.vendor.upload(path, self.s.store.run_id)
                self.journal.append(Uploaded(chunk=c.chunk, file_id=c.file_id, digest=c.digest))
            claim = self.claim(c, chunks)
            if c.creating_at is not None and not await self.adopt(c, claim):
                continue  # a batch that may be this chunk's is still running: it is looked at when it ends
            c.status = None
            if c.batch is None:
                await self.create(c, path, claim)

    async def create(self, c: Chunk, path: Path, claim: Claim) -> None:
        """Send the chunk's create. One whose answer was lost (a timeout, a dropped connection, a 5xx) may have
        been made: it is never sent again blindly, but looked for first, as after a kill; a 429 is looked for
        too (one list call) rather than trusted to mean nothing was made."""
        waited = 0.0
        for attempt in range(1, self.vendor.attempts + 1):
            c.creating_at = self.journal.append(Creating(chunk=c.chunk)).at
            try:
                c.batch = await self.vendor.submit(path, claim)
            except RetryableError as exc:
                if attempt == self.vendor.attempts:
                    raise ProviderError(f"creating batch {c.chunk}: {exc} (gave up after {attempt} attempts); "
                                        "nothing is lost and nothing was sent twice, resume the run later") from None
                delay = self.vendor.pause(exc, attempt, waited, f"creating batch {c.chunk}")  # resume looks first
                waited += delay
                await asyncio.sleep(delay)
                if not await self.adopt(c, replace(claim, since=c.creating_at)) or c.batch is not None:
                    return  # its own batch taken, or one that may be its own still running: looked at later
                continue  # none was made: the create is sent again
            self.journal.append(Created(chunk=c.chunk, batch=c.batch))
            return

    def claim(self, c: Chunk, chunks: list[Chunk]) -> Claim:
        taken = {b for other in chunks if (b := other.batch)}  # the scratch below: a work file, hidden, never evidence
        return Claim(run=self.s.store.run_id, digest=c.digest, cells=c.cells,
                     ids=frozenset(chunk_ids(self.folder / c.file)), since=c.creating_at or "", file_id=c.file_id,
                     passed=frozenset(taken | c.foreign),
                     scratch=self.folder / f"{FOLDER}/.chunk-{c.chunk:03d}.seen.tmp")

    async def adopt(self, c: Chunk, claim: Claim) -> bool:
        """Look for the batch a killed create may have made: True when the chunk may go on (its batch was found,
        or none is there to be found), False while a batch that may be its own cannot be told yet."""
        found = await self.vendor.find(claim)
        for batch in found.foreign:
            self.journal.append(NotOurs(chunk=c.chunk, batch=batch))
            c.foreign.add(batch)
        if found.batch is not None:
            c.batch = found.batch
            self.journal.append(Created(chunk=c.chunk, batch=found.batch, adopted=True))
            return True
        if found.waiting:
            c.status = (f"telling whether {', '.join(found.waiting)} (of its size, made since its create was "
                        "sent) is its own: looked at when it ends")
            return False
        return True

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
                await self.vendor.download(source, self.folder / name, c.cells)
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
        cells = {custom_id: cell_of(custom_id, c.tag) for custom_id in chunk_ids(self.folder / c.file)}
        paths = [self.folder / f for f in c.results]
        unread: list[Unread] = []
        refused, untrusted = self.refusals(c, cells, result_ids(paths, unread))
        refused += [self.unread(c, cells, u, untrusted) for u in unread]
        fixtures = self.fixtures()
        secret = os.environ.get(s.secret_env) if s.secret_env else None
        hidden = [x for x in (secret, *s.hidden) if x]  # the key and the base URL's password, as _calls keeps them
        for custom_id, outcome in read_results(paths, self.vendor.name == "anthropic"):
            cell = cells.get(custom_id)
            if cell is None or cell in untrusted or cell in self.done:
                continue
            row = output_row(cell, fixtures[cell], outcome, batch, s.model, s.prices)
            if not isinstance(outcome, str):
                s.note_reply(outcome)
            row = msgspec.structs.replace(row, text=_without(row.text, hidden),
                                          error=_redacted(row.error, hidden) if row.error else row.error,
                                          finish_reason=(_redacted(row.finish_reason, hidden) if row.finish_reason
                                                         else row.finish_reason))
            self.writer.append(row)
            s.progress.advance(row)  # its failed, truncated and cost counts (`show` sets the cells done)
            self.done.add(cell)
        how = "" if c.ended == "ended" else f" {c.ended}"  # Anthropic's word is `ended` itself: not "ended ended"
        why = (f"the batch failed: {c.error}" if c.error else
               f"no result for this cell in batch {batch} (it ended{how})")
        for cell in cells.values():
            if cell not in self.done:
                cause = untrusted.get(cell, why)
                failed = output_row(cell, fixtures[cell], _redacted(cause, hidden)[:300], batch, s.model, s.prices)
                self.writer.append(failed)
                s.progress.advance(failed)
                self.done.add(cell)
        self.journal.append(Collected(chunk=c.chunk, batch=batch, refused=refused[:REFUSED_KEPT] or msgspec.UNSET,
                                      refused_count=len(refused) or msgspec.UNSET))
        s.notes.extend(refused)
        c.collected, c.refused = True, refused[:REFUSED_KEPT]

    def refusals(self, c: Chunk, cells: dict[str, str], seen: dict[str, list[Where]]
                 ) -> tuple[list[str], dict[str, str]]:
        """The result lines that are not taken, one line each naming the file, the line and the custom_id: an id
        that is not a request of this batch (the line is not used), and an id answered more than once (its
        cell is recorded failed with that line as the cause: neither answer decides it)."""
        refused: list[str] = []
        untrusted: dict[str, str] = {}
        for custom_id, where in seen.items():
            if custom_id not in cells:
                refused += [f"{self.shown(p)}: line {n}: custom_id {custom_id!r} is not a request of batch "
                            f"{c.batch} (chunk {c.chunk}); the line is not used" for p, n in where]
            elif len(where) > 1:
                (p0, n0), (p, n) = where[0], where[1]
                first = f"line {n0}" if p == p0 else f"{self.shown(p0)}: line {n0}"
                line = (f"{self.shown(p)}: line {n}: custom_id {custom_id!r} is answered {len(where)} times (first "
                        f"at {first}); cell {cells[custom_id]} is recorded failed, neither answer taken")
                refused.append(line)
                untrusted[cells[custom_id]] = line
        return refused, untrusted

    def unread(self, c: Chunk, cells: dict[str, str], u: Unread, untrusted: dict[str, str]) -> str:
        """The line naming a result line that cannot be read. When its bytes name a cell of the batch, that cell
        is recorded failed with this line as the cause: the line may be its answer, or a second one (a cell
        answered by it and by a line that reads was taken on the one that reads, its duplicate unseen)."""
        head = f"{self.shown(u.path)}: line {u.line} {u.why}"
        mine = [cells[i] for i in u.named if i in cells]
        if not mine:
            named = f"; it names custom_id {u.named[0]!r}, not a request of batch {c.batch}" if u.named else ""
            return f"{head}{named}; the line is not used (a cell it may answer is recorded failed, no result)"
        line = (f"{head}; it names custom_id {', '.join(repr(i) for i in u.named if i in cells)}: cell "
                f"{', '.join(mine)} is recorded failed, no answer taken (this line may be one)")
        for cell in mine:
            untrusted.setdefault(cell, line)
        return line

    def shown(self, path: Path) -> str:
        """A result file as a line names it: relative to the run folder."""
        return path.relative_to(self.folder).as_posix()

    def fixtures(self) -> dict[str, str]:
        if self._fixtures is None:
            rows = iter_rows(self.s.store.assignment_path, AssignmentRow)
            self._fixtures = {r.cell: r.fixture for r in rows}
        return self._fixtures

    def show(self, chunks: list[Chunk]) -> None:
        remote = sum(c.done for c in chunks if not c.collected)
        states = ", ".join(sorted({c.status or "submitted" for c in chunks if not c.collected})) or "collected"
        batches = f"{len(chunks)} batch{'es' if len(chunks) > 1 else ''}"
        self.s.progress.update(len(self.done) - self.ahead + remote, f"{batches} · {states}")


def _without(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = without_secret(text, secret)
    return text


def _redacted(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return redact(text, None)


async def run_batch(s: Session, writer: OutputWriter, done: set[str]) -> int:
    """Carry a batch run as far as it goes now; returns the cells recorded by this invocation."""
    return await BatchRun(s, writer, done).go()
