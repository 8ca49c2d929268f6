"""`benchcard replicate RUN`: a judged run's sealed requests sent again, as a new run linked to it.

The original is checked before anything is planned, and refused in one line naming what fails: a scratch run or
one without a verdict in a ledger (nothing to replicate), a card at another version, a seal that no longer
verifies (the seal is the contract: a run copied in from another project, with its card version and seal,
replicates like a run of this one), a sealed plan whose files no longer match their digests, an assignment
that its card and seed do not give. A ledger that would refuse the verdict's row (torn, or its chain broken)
is refused first, before any call is spent.

The new run is planned like any run (`runner.run`) with three differences, written in its manifest before the
first call: `replicates` (`records.replication.ReplicaLink`: the original, its ledger row's hash, whether this is
a transfer), `replication_rule` (the rule it will be judged by, with its digest) and its requests. On the same
rig every cell's body is the original's body for that (variant, fixture, repetition), byte for byte; the seed is
the original's unless `--seed` gives another (the same cells, then called in another order). With `--provider`
or `--model` naming another rig it is a *transfer*: the bodies are built for that rig from the same sealed card.
From then on it is a run like any other: resumed, retried, batched and pooled the same way, and judged by
`benchcard verdict`, which adds the replication judgement (`verdict/_replication.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import httpx
import msgspec

from benchcard.card import seal as sealmod
from benchcard.card.load import card_of_run, check_seal_root, moved_on
from benchcard.card.model import Card
from benchcard.card.schedule import recorded_rules
from benchcard.errors import RunError, SealError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.cardruns import find_run, unplanned
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.plandigest import sealed_problems
from benchcard.records.replication import ReplicaLink, RuleRecord, rule_record
from benchcard.records.rows import ASSIGNMENT, SEALED, VERDICT, AssignmentRow, Manifest, RequestRow, Rules, decode_line
from benchcard.records.runreader import set_aside_of
from benchcard.records.verdictfile import decode_verdict
from benchcard.run._headers import header_changes, headers_text, recorded_headers
from benchcard.run._looking import Looker
from benchcard.run.grid import PlannedCell, assignment_digest, plan_rows
from benchcard.run.options import RunOptions
from benchcard.run.providers import provider_config
from benchcard.run.providers.base import Provider
from benchcard.run.runner import run
from benchcard.run.store import RunStore
from benchcard.run.summary import RunSummary


@dataclass(frozen=True)
class Original:
    """A judged run checked for replication: its folder, manifest, card and the link a replication records."""

    folder: Path
    manifest: Manifest
    card: Card
    link: ReplicaLink

    @property
    def store(self) -> RunStore:
        return RunStore(self.folder)


def original_of(project: Project, name: str) -> Original:
    """The run `name` stands for (an id, a folder, or a card: its result), checked; RunError or SealError naming
    the file when it cannot be replicated (module docstring)."""
    folder = find_run(project, name, "result")
    where = project.relative(folder)
    store = RunStore(folder)
    manifest = store.read_manifest()
    if manifest.scratch:
        raise RunError(f"{where}: a scratch run (a trial, never in the ledger) has no result to replicate")
    link = _ledger_link(project, folder, manifest)
    card = card_of_run(project, folder.name, manifest, RunError, "replicate")  # the verdict's check, its own error
    check_seal_root(project, folder.name, card, manifest, lambda: sealmod.verify(card, project), SealError)
    problems = sealed_problems(folder, store.manifest_as_written())
    if problems:
        raise SealError(f"{where}: {problems[0]}; a replication sends only sealed requests that verify")
    sealed = (manifest.sealed or {}).get(f"{SEALED}/{ASSIGNMENT}")
    if manifest.seed is None or sealed != assignment_digest(card, manifest.seed):
        raise SealError(f"{where}/{SEALED}/{ASSIGNMENT}: not the assignment {card.id} v{card.version} gives with the "
                        f"run's seed {manifest.seed}; a replication sends only sealed requests that verify")
    return Original(folder, manifest, card, link)


def _ledger_link(project: Project, folder: Path, manifest: Manifest) -> ReplicaLink:
    """The original's verdict as entered in a ledger: this project's, or (a run copied in) another's."""
    where = project.recorded(folder)
    path = folder / VERDICT
    if not path.is_file():
        found = set_aside_of(folder)
        if found is not None:  # never judged: nothing to replicate, and no command would give it a verdict
            raise RunError(f"{where}: run {folder.name} was {found.label}; it has no verdict and never will, so it "
                           "has no result to replicate")
        if manifest.finished_at is None:  # `verdict` would refuse it too: finish it first
            recorded, cells = len(RunStore(folder).done_cells()), "?" if manifest.cells is None else manifest.cells
            raise RunError(f"{where}: run {folder.name} is still in progress ({recorded} of {cells} cells "
                           "recorded, not closed); a replication is judged against the original's verdict: finish it "
                           f"(`benchcard run {manifest.card} --resume {folder.name}`), then `benchcard verdict "
                           f"{folder.name}`")
        raise RunError(f"{where}: run {folder.name} has no verdict; a replication is judged against the original's "
                       f"verdict: `benchcard verdict {folder.name}` first")
    verdict = decode_verdict(path.read_bytes(), project.relative(path))
    entry = verdict.ledger
    if entry is None or isinstance(entry, msgspec.UnsetType) or entry.hash is None or entry.seq is None:
        raise RunError(f"{project.relative(path)}: a scratch verdict (never in the ledger) has no result to "
                       "replicate")
    row = ledger.row_of_run(project, folder.name)
    if row is not None and row.hash != entry.hash:
        raise RunError(f"{project.relative(project.ledger_path)}: the row of run {folder.name} (seq {row.seq}) is not "
                       f"the one {project.relative(path)} records; `benchcard ledger --verify` says what changed")
    return ReplicaLink(run=folder.name, hash=entry.hash, seq=entry.seq, evidence=where, foreign=row is None)


# ------------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Replica:
    """What a replication adds to a new run's sealed plan: its link, its rule, the original's seed and requests."""

    original: Original
    link: ReplicaLink
    rule: RuleRecord

    @property
    def seed(self) -> int:
        assert self.original.manifest.seed is not None
        return self.original.manifest.seed

    def manifest_fields(self) -> dict[str, object]:
        return {"replicates": self.link, "replication_rule": self.rule}

    @property
    def rules(self) -> Rules | None:
        """A sequential original's rule parameters, as it ran them: the replication replays that rule."""
        m = self.original.manifest
        return None if m.sequential is None else recorded_rules(m.sequential, m.kind, m.started_at, m.looks or [])

    def rows(self, card: Card, cells: list[PlannedCell], provider: Provider, model: str, url: str
             ) -> Iterator[tuple[AssignmentRow, RequestRow]]:
        """The sealed rows of the new run: a transfer's bodies built for its rig, else the original's bodies."""
        if self.link.transfer:
            return plan_rows(card, cells, provider, model, url)
        return _original_bodies(self.original.store, cells, provider.config.name, url)


def _original_bodies(store: RunStore, cells: list[PlannedCell], provider: str, url: str
                     ) -> Iterator[tuple[AssignmentRow, RequestRow]]:
    """Each planned cell with the original's body for its (variant, fixture, repetition), read by its line's
    offset (a large plan's bodies are never all held at once)."""
    offsets: dict[tuple[str, str, int], int] = {}
    with open(store.assignment_path, "rb") as fa, open(store.requests_path, "rb") as fr:
        at = 0
        for a_line in fa:
            a = decode_line(a_line, AssignmentRow)
            offsets[(a.variant, a.fixture, a.repetition)] = at
            at += len(fr.readline())
    with open(store.requests_path, "rb") as fr:
        for c in cells:
            at = offsets.get((c.variant, c.fixture, c.repetition), -1)
            if at < 0:
                raise RunError(f"{store.requests_path}: no request for {c.variant} × {c.fixture} × repetition "
                               f"{c.repetition}")
            fr.seek(at)
            body = decode_line(fr.readline(), RequestRow).body
            yield (AssignmentRow(cell=c.cell, variant=c.variant, fixture=c.fixture, repetition=c.repetition,
                                 order=c.order),
                   RequestRow(cell=c.cell, provider=provider, url=url, body=body))


def replica_for(project: Project, original: Original, options: RunOptions, model: str | None
                ) -> tuple[Replica, RunOptions]:
    """The replication's plan and the options its run is started with: the original's rig unless another is
    given (a transfer), the original's seed unless --seed gives another."""
    rig = original.manifest.rig
    if rig is None:
        raise RunError(f"{original.link.evidence}: its manifest names no rig; it cannot be replicated")
    provider = options.provider or rig.provider
    local = provider_config(provider, project.config(), options.base_url).type == "local"
    transfer = provider != rig.provider or (model is not None and model != rig.model)
    models = (model,) if model else () if local else (rig.model,)
    link = msgspec.structs.replace(original.link, transfer=transfer,
                                   seed_kept=options.seed is None or options.seed == original.manifest.seed)
    plan = Replica(original, link, rule_record(original.manifest.kind, original.manifest.sequential is not None))
    return plan, replace(options, provider=provider, models=models,
                         seed=options.seed if options.seed is not None else plan.seed)


def replicate_run(project: Project, name: str | None, options: RunOptions, model: str | None = None, *,
                  transport: httpx.AsyncBaseTransport | None = None, stream: IO[str] | None = None,
                  stop_after: int | None = None, looker: Looker | None = None,
                  tell: Callable[[str], None] | None = None,
                  evidence: Callable[[Path, LedgerRow], list[str]] | None = None,
                  card_check: Callable[[Card], None] | None = None) -> RunSummary:
    """Check the original, plan the replication and run it (with `options.resume`, continue one): the core of
    `benchcard replicate`; the verdict and the judgement against the original are `verdict/_replication.py`'s.
    `looker` takes a sequential card's looks (the replication keeps the original's sealed schedule); `tell` the
    run's notes, as `run` takes them; `evidence` (`verdict/integrity.evidence_problems`, a layer above) names
    what changed in the original's files since its ledger row anchored them: a replication is judged against
    that verdict, so an original whose record was edited is refused before a call is spent; `card_check` is given
    the card the replication runs (`replicate --gate` refuses a probe without a gate there), also before any call."""
    if options.scratch:
        raise RunError("a replication is a run of a sealed card; drop --scratch (a trial of the card is "
                       "`benchcard run CARD --scratch`)")
    ledger.check_appendable(project)  # its verdict enters the ledger: a ledger that would refuse it costs no call
    if options.resume is not None:
        folder, manifest = _replication(project, options.resume, name)
        if card_check is not None:
            card_check(card_of_run(project, folder.name, manifest, RunError, "resume"))
        return run(project, manifest.card, replace(options, resume=str(folder)), transport=transport,
                   stream=stream, stop_after=stop_after, looker=looker, tell=tell)[0]
    if name is None:
        raise RunError("name the run to replicate (its id, its folder, or its card for the card's result)")
    original = original_of(project, name)
    row = None if original.link.foreign else ledger.row_of_run(project, original.folder.name)
    if evidence is not None and row is not None and (problems := evidence(project.root, row)):
        raise RunError(f"{problems[0]}; a replication is judged against the original's record as its ledger row "
                       f"(seq {row.seq}) anchors it: `benchcard ledger --verify` names every change")
    if card_check is not None:
        card_check(original.card)
    plan, run_options = replica_for(project, original, options, model)
    for line in headers_lines(project, original, run_options):
        (tell or (lambda said: print(said, file=stream or sys.stderr)))(line)
    [summary] = run(project, original.card.id, run_options, transport=transport, stream=stream,
                    stop_after=stop_after, replica=plan, looker=looker, tell=tell)
    return summary


def headers_lines(project: Project, original: Original, options: RunOptions) -> list[str]:
    """What a replication says of its provider's headers of benchcard.yaml (`anthropic-beta`, a proxy's routing
    header: they can change what the model does): the original's, as its manifest recorded them, this run's, and
    whether they differ (a secret is named, never shown, and its value is not compared: it is not recorded);
    nothing when neither sets any."""
    was = {} if original.manifest.provider_type == "local" else original.manifest.headers
    assert options.provider is not None
    now = recorded_headers(provider_config(options.provider, project.config(), options.base_url)) or {}
    if not now and not was:  # none set, then or now: nothing to say
        return []
    lines = [f"headers of run {original.folder.name} (the original): {headers_text(was)}",
             f"headers of this replication: {headers_text(now)}"]
    if was is None:
        return [*lines[:1], lines[1] + "; not compared"]
    changes = header_changes(was, now)
    return [*lines[:1], lines[1] + (f"; they differ: {', '.join(changes)}" if changes else
                                    "; the same as the original's")]


def _replication(project: Project, name: str, original: str | None) -> tuple[Path, Manifest]:
    """A replication run to resume, and its manifest; RunError when it is not one, or not of `original`."""
    try:
        folder = find_run(project, name)
    except RunError:
        half = unplanned(project, "*", Path(name).name)
        if len(half) != 1:
            raise
        # not `run CARD --resume` (find_run's advice): that plans an ordinary run of the card in it
        raise RunError(f"{project.relative(half[0])} is a run stopped while it was planned (no manifest.json: no "
                       "call was made from it, and nothing in it names its original); delete the folder and give "
                       "`benchcard replicate RUN` again with the run it replicates") from None
    manifest = RunStore(folder).read_manifest()
    link = manifest.replicates
    if link is None:
        moved = moved_on(project, folder.name, manifest, "resume")  # where `run --resume` would refuse it too
        raise RunError(f"{project.relative(folder)}: not a replication (its manifest names no original); "
                       + (moved or f"resume it with `benchcard run {manifest.card} --resume {folder.name}`"))
    if original is not None and find_run(project, original, "result").name != link.run:
        raise RunError(f"{project.relative(folder)} replicates run {link.run}, not {original}")
    return folder, manifest
