"""`benchcard status RUN`: where a run stands — cells recorded, and for a batch run each batch's state, polled
now when the key is at hand (and recorded in the journal like any poll), else as last recorded.

A batch run can be left while its batches run and picked up from another process: `status` shows it,
`benchcard run CARD --resume RUN` collects it.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchcard.card.load import moved_on
from benchcard.errors import ProviderError
from benchcard.project import Project
from benchcard.records.cardruns import find_run
from benchcard.records.replied import judge_replies_line, replies_line
from benchcard.records.rows import Manifest, open_looks_line, stop_line
from benchcard.records.runreader import outcomes, set_aside_of
from benchcard.run._calls import make_client
from benchcard.run._conventions import load_dotenv_keys
from benchcard.run.batch._driver import BatchRun
from benchcard.run.batch._journal import Chunk, Journal
from benchcard.run.batch._vendors import vendor_for
from benchcard.run.providers import make_provider, provider_config, stored_url
from benchcard.run.providers.base import HttpProvider, require_key
from benchcard.run.store import RunStore


@dataclass(frozen=True)
class BatchState:
    chunk: int
    batch: str | None
    status: str  # planned | submitted | the vendor's status | collected
    done: int
    cells: int
    failed: int
    polled_at: str | None


@dataclass(frozen=True)
class RunStatus:
    """What `benchcard status` shows: `--json` prints `to_json()`, a person reads `lines()`."""

    run: str
    card: str
    version: int
    folder: str
    mode: str  # interactive | batch
    cells: int
    recorded: dict[str, int]  # ok, truncated, failed
    finished: bool
    state: str
    batches: tuple[BatchState, ...]
    note: str | None
    refused: tuple[str, ...] = ()  # result lines the batches' collection refused (as the journal keeps them)
    scratch: str | None = None  # why the run is a trial (its manifest's `scratch`), None for a run of the rig
    replicates: str | None = None  # a replication's (or transfer's) original, said in a line (`benchcard replicate`)
    replies: str | None = None  # replies naming another model than the one asked, or never counted (records/replied)
    judge_replies: str | None = None  # the same of a judge card's judge
    looks: str | None = None  # a sequential run's looks: where it stopped, or those taken and the next

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """The text of `benchcard status`."""
        c = self.recorded
        trial = [f"  scratch run ({self.scratch}): a trial, never entered in the ledger"] if self.scratch else []
        lines = [f"{self.run} · {self.card} v{self.version} · {self.mode}{' · scratch' if self.scratch else ''} → "
                 f"{self.folder}",
                 *trial,
                 *([f"  {self.replicates}"] if self.replicates else []),
                 *([f"  {self.looks}"] if self.looks else []),
                 f"  {self.cells} cell{'' if self.cells == 1 else 's'}: {c['ok']} ok, {c['truncated']} truncated, "
                 f"{c['failed']} failed recorded",
                 f"  {self.state}",
                 *[f"  {line}" for line in (self.replies, self.judge_replies) if line]]
        for b in self.batches:
            failed = f", {b.failed} failed" if b.failed else ""
            when = f" (polled {b.polled_at})" if b.polled_at else ""
            lines.append(f"  batch {b.chunk}: {b.batch or '-'} · {b.status} {b.done}/{b.cells}{failed}{when}")
        lines += [f"  refused: {self.folder}/{line}" for line in self.refused]
        if self.note:
            lines.append(f"  note: {self.note}")
        return lines


def run_status(project: Project, name: str | Path, poll: bool = True) -> RunStatus:
    """`benchcard status RUN`'s core: the run found (an id, a prefix, a card's newest run, or its folder) and where
    it stands; a batch run's batches polled now unless `poll` is False."""
    folder = find_run(project, name)
    store = RunStore(folder)
    manifest = store.read_manifest()
    counts = store.counts()
    if manifest.retries:  # the cells a retry reopened are not recorded again until called
        counts["failed"] -= len(outcomes(store).waiting)
    recorded = counts["ok"] + counts["truncated"] + counts["failed"]
    cells = int(manifest.cells or 0)
    finished = manifest.finished_at is not None
    journal = Journal(folder)
    chunks = journal.chunks()
    note = None
    if manifest.batch and poll and not finished and any(c.batch and not c.ended for c in chunks):
        note = _poll(project, manifest, store, chunks)
    batches = tuple(_state(c) for c in chunks)
    card, run = manifest.card, store.run_id
    state = "finished" if finished else _open_state(project, run, manifest, chunks, recorded, cells) + \
        _unread_failures(manifest, store)
    foreign = None if finished else store.foreign_row()
    if foreign is not None:  # which a resume refuses before any call (`RunStore.refuse_foreign_rows`)
        state = (f"{recorded}/{cells} cells recorded, not finished; {store.outputs_path.name} {foreign}: a row this "
                 f"run did not write, which a resume refuses. Put the file back as it was, or set the run aside "
                 f"(`benchcard set-aside {run} --why …`) and start a new one")
    aside = set_aside_of(folder)
    if aside is not None:  # never resumed: no command to continue it
        state = f"{aside.label}: kept as it is, never resumed or judged"
    return RunStatus(run, card, manifest.version, project.relative(folder),
                     "batch" if manifest.batch else "interactive", cells, counts, finished, state, batches, note,
                     tuple(line for c in chunks for line in c.refused), manifest.scratch or None,
                     _replicates(manifest), replies_line(manifest) or None, judge_replies_line(manifest) or None,
                     _looks(manifest))


def _open_state(project: Project, run: str, manifest: Manifest, chunks: list[Chunk], recorded: int, cells: int) -> str:
    """Where an unfinished run stands and the command that goes on; when the card file is now another version,
    which `run --resume` would refuse, why and what to do instead (`load.moved_on`)."""
    moved = moved_on(project, run, manifest, "resume")
    if moved:
        return f"{recorded}/{cells} cells recorded, not finished; {moved}"
    resume = f"benchcard run {manifest.card} --resume {run}"
    if manifest.batch and not chunks:
        return f"planned, not yet submitted; submit with: {resume}"
    if manifest.batch and any(not c.batch for c in chunks):
        return f"partly submitted; continue with: {resume}"
    if chunks and all(c.collected for c in chunks):  # a sequential run between stretches, or awaiting a retry
        return f"{recorded}/{cells} cells recorded, every batch collected; continue with: {resume}"
    if chunks and all(c.ended for c in chunks):
        return f"every batch has ended; collect the results with: {resume}"
    if chunks:
        done = recorded + sum(c.done for c in chunks if not c.collected)
        return f"in progress {done}/{cells}; collect when done with: {resume}"
    return f"{recorded}/{cells} cells recorded; continue with: {resume}"


def _unread_failures(manifest: Manifest, store: RunStore) -> str:
    """An open sequential run's failed cells no look has read yet: the choice its run put (`run/_looking`), which
    the plain resume the state names would settle for good, reading them as failed at a look that is final."""
    if manifest.sequential is None or manifest.stopped_look is not None:
        return ""
    unread = outcomes(store).failed
    if not unread:
        return ""
    return (f"; {unread} failed cell(s) no look has read yet: `benchcard run {manifest.card} --resume "
            f"{store.run_id} --retry-failed` calls them again first, a plain resume takes the next look with them "
            "failed, and a look taken is final")


def _looks(manifest: Manifest) -> str | None:
    """A sequential run's looks as `status` says them: a finished run's stop line (as `run` printed it), an open
    run's looks taken and the next; None for any other run."""
    if manifest.sequential is None:
        return None
    if manifest.finished_at is not None:
        return stop_line(manifest.sequential, manifest.looks[-1] if manifest.looks else None)
    return open_looks_line(manifest.sequential, manifest.looks or [])


def _replicates(manifest: Manifest) -> str | None:
    """What a replication run replicates, in words; None for any other run."""
    link = manifest.replicates
    if link is None:
        return None
    how = "its sealed requests sent to another rig" if link.transfer else "its sealed requests sent again"
    seed = "" if link.seed_kept else ", with a new seed"
    return f"{link.kind} of run {link.run} (ledger seq {link.seq}): {how}{seed}"


def _state(c: Chunk) -> BatchState:
    status = ("collected" if c.collected else c.status or ("submitted" if c.batch else "planned"))
    return BatchState(c.chunk, c.batch, status, c.cells if c.collected else c.done, c.cells, c.failed, c.polled_at)


def _poll(project: Project, manifest: Manifest, store: RunStore, chunks: list[Chunk]) -> str | None:
    """Ask the vendor where each running batch stands, and record each answer."""
    provider = manifest.rig.provider if manifest.rig else ""
    config = project.config()
    load_dotenv_keys(project.root, config)  # a key kept in the project's .env (run/_conventions.py)
    cfg = provider_config(provider, config)  # the configured URL keeps its credentials
    if stored_url(cfg) != manifest.base_url:
        cfg = provider_config(provider, config, manifest.base_url)
    if cfg.api_key_env and not os.environ.get(cfg.api_key_env):
        return f"{cfg.api_key_env} is not set: showing the last recorded poll"
    try:
        require_key(cfg)  # a key no header can carry is never sent (a newline in it would inject a header)
    except ProviderError as exc:
        return f"could not poll: {exc}"

    async def go() -> None:
        client = make_client(2, 60.0)
        try:
            provider = make_provider(cfg, client)
            assert isinstance(provider, HttpProvider)
            vendor = vendor_for(provider, 3, (0.5, 5.0))
            for c in chunks:
                if c.batch and not c.ended:
                    BatchRun.record_poll(Journal(store.folder), c, await vendor.poll(c.batch))
        finally:
            await client.aclose()

    try:
        asyncio.run(go())
    except ProviderError as exc:
        return f"could not poll: {exc}"
    return None
