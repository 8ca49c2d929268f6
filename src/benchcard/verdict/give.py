"""The verdict: the one place a run is unblinded, judged by its sealed win rule, and entered in the ledger.

Until here nothing has joined an output to its variant: `outputs.jsonl` and `scores.jsonl` name cells only.
`give_verdict` refuses anything it cannot stand behind — an unfinished run, outputs changed since the run
finished, a card whose seal no longer matches the run's — joins the scores with `sealed/assignment.jsonl`,
applies the card's predeclared rule (docs/verdict.md), writes `verdict.json` and `table.csv` into the run folder
and appends one dated, hash-chained row to `results/ledger.jsonl`. (For speed the join and the statistics start
while the seal and the digests are checked; a refusal still wins, and nothing computed before it is shown or
written.)

A verdict is given once. A second `give_verdict` on the same run refuses and names the ledger row it already
has; `load_verdict` reads the one that was written.

The parts: `runfolder` reads and joins the run's files, `runstats` computes the statistics, `winrule`
judges each clause, `findings` writes what verdict.json says, `tablecsv` writes table.csv.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from benchcard._util.files import discard, fresh_tmp, move_into_place, write_atomic
from benchcard._util.hashing import file_digest, seed_from
from benchcard._util.safeio import present
from benchcard.card.load import card_of_run, check_seal_root, moved_on
from benchcard.card.model import Card
from benchcard.errors import VerdictError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.ledgerrow import Latency, LedgerRow
from benchcard.records.rows import ASSIGNMENT, SEALED, Manifest, utc_stamp
from benchcard.records.runreader import RunReader, held_still, outcomes, read_manifest
from benchcard.records.setaside import refuse_set_aside
from benchcard.records.verdictfile import (
    AbVerdict,
    LedgerEntry,
    VerdictFile,
    VerdictHead,
    decode_verdict,
    encode_verdict,
)
from benchcard.run.grid import assignment_columns, assignment_digest_of
from benchcard.run.griddraws import GridColumns
from benchcard.verdict._agreement import agreement
from benchcard.verdict._gaterule import with_gate
from benchcard.verdict._replication import linked_row, with_replication
from benchcard.verdict.clausestats import BOOTSTRAP_RESAMPLES, Pending, ab_stats
from benchcard.verdict.columns import Grid, drawn_grid
from benchcard.verdict.entry import verdict_row
from benchcard.verdict.findings import ab_body, probe_body
from benchcard.verdict.integrity import (
    check_sealed,
    evidence_digests,
    evidence_files,
    record_problems,
    verdict_digest,
)
from benchcard.verdict.judgefigures import with_judge
from benchcard.verdict.looks import with_looks
from benchcard.verdict.runfolder import VERDICT_FILE, RunData, finish_outputs, read_run_data
from benchcard.verdict.table import TABLE_FILE, write_table

__all__ = ["Verdict", "give_verdict", "load_verdict"]


@dataclass(frozen=True)
class Verdict:
    """A given verdict: what `verdict.json` holds, and the ledger row it was entered as."""

    run: str
    card: str
    version: int
    kind: str
    finding: str
    outcome: str
    run_dir: Path
    file: VerdictFile = field(repr=False)  # what verdict.json holds, typed: the terminal's lines and the gate read it
    ledger_row: LedgerRow | None = field(default=None, repr=False)
    # what of the run's record no longer matches its ledger row (`integrity.record_problems`); when there is
    # anything, `finding` and `outcome` are the row's, and the file is not to be trusted
    changed: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The verdict as strict JSON data (no NaN, no infinities): exactly `verdict.json`; for a record changed
        since the verdict, the ledger row's finding, what changed, and the row itself instead."""
        if not self.changed:
            return self.file.fields()
        row = self.ledger_row.fields() if self.ledger_row is not None else None
        return {"run": self.run, "card": self.card, "version": self.version, "kind": self.kind,
                "finding": self.finding, "outcome": self.outcome, "changed": list(self.changed), "ledger_row": row}


def _in_progress(project: Project, run_dir: Path, manifest: Manifest) -> str:
    """What a verdict on an unfinished run says: how far it got, whether it runs now, how to finish it."""
    outputs = run_dir / "outputs.jsonl"
    recorded = outputs.read_bytes().count(b"\n") if outputs.is_file() else 0
    if manifest.retries:  # a retried cell has several rows; one reopened by the retry is not recorded again yet
        recorded = outcomes(RunReader(run_dir)).recorded
    with held_still(run_dir) as still:
        now = "" if still else " and is running now"
    cells = "?" if manifest.cells is None else manifest.cells
    moved = moved_on(project, run_dir.name, manifest, "resume")
    head = (f"run {run_dir.name} is still in progress ({recorded} of {cells} cells recorded, not closed{now}); a "
            "verdict waits for the run to finish")
    if moved:
        return f"{head}. {moved[0].upper()}{moved[1:]}"
    if now:  # a --resume now would be refused (another process runs it): the verdict waits for that one
        return f"{head}: give it once that run ends (`benchcard status {run_dir.name}` shows how far it got)"
    return f"{head}: `benchcard run {manifest.card} --resume {run_dir.name}`"


def _no_trial_of(run: str, manifest: Manifest) -> str:
    """The refusal of `verdict RUN --scratch` for a sealed run: a trial verdict would unblind it with no ledger row,
    so that a loss could be shown as a trial and a win entered once its trial verdict.json was deleted."""
    return (f"run {run} is a sealed run, not a trial (it was started without --scratch): its verdict is given once "
            "and entered in the ledger, whatever it finds, and a trial verdict would unblind it with no record; "
            f"`benchcard verdict {run}` gives it (a trial is `benchcard run {manifest.card} --scratch`)")


def _card_to_judge(project: Project, run_dir: Path, manifest: Manifest) -> Card:
    """The first refusals: set aside, unfinished, already judged; then the run's card, checked (`card_of_run`)."""
    run = run_dir.name
    refuse_set_aside(run_dir, f"run {run}")
    if not manifest.finished_at:
        raise VerdictError(_in_progress(project, run_dir, manifest))
    if (run_dir / VERDICT_FILE).exists():
        raise VerdictError(f"run {run} already has a verdict ({project.relative(run_dir / VERDICT_FILE)}); a verdict "
                           f"is given once — `benchcard verdict {run} --show` prints it")
    return card_of_run(project, run, manifest, VerdictError)


def _check_sealed(project: Project, run_dir: Path, manifest: Manifest, card: Card,
                  outputs_digest: Future[str] | None = None, scores_digest: Future[str] | None = None,
                  assignment: Future[str] | None = None,
                  sealed_root: Future[str] | None = None) -> None:
    """The next refusals: seal changed, sealed plan changed or not the card's (`integrity.check_sealed`), outputs
    changed, scores changed. The digests and the seal's root may be computed meanwhile on another thread."""
    run = run_dir.name
    check_seal_root(project, run, card, manifest, sealed_root.result if sealed_root is not None
                    else lambda: _seal_root(project, card, manifest), VerdictError)
    check_sealed(run_dir, RunReader(run_dir).manifest_as_written(), card,
               assignment.result() if assignment is not None else None)
    expected = manifest.outputs_digest
    outputs = run_dir / "outputs.jsonl"
    if not present(outputs, str(outputs), VerdictError):
        raise VerdictError(f"run {run}: outputs.jsonl is missing")
    actual = outputs_digest.result() if outputs_digest is not None else file_digest(outputs)
    if actual != expected:
        raise VerdictError(
            f"run {run}: outputs.jsonl changed after the run finished (manifest {expected}, file now {actual})"
        )
    scores_expected = manifest.scores_digest
    scores_path = run_dir / "scores.jsonl"
    if not present(scores_path, str(scores_path), VerdictError):
        raise VerdictError(f"run {run}: scores.jsonl is missing")
    if (scores_digest.result() if scores_digest is not None else file_digest(scores_path)) != scores_expected:
        raise VerdictError(f"run {run}: scores.jsonl changed after the run was scored (manifest {scores_expected})")


def _seal_root(project: Project, card: Card, manifest: Manifest) -> str:
    """The root of the card's seal as it is now (every fixture and key hashed); SealError if it cannot be."""
    from benchcard.card import seal

    root: str = seal.root_for_scratch(card, project, bool(manifest.scratch))
    return root


def _totals(data: RunData) -> tuple[float | None, Latency]:
    """Total cost (None when no call reported one) and latency (median and total over calls that report it)."""
    cost_known = ~np.isnan(data.cost)
    cost = float(data.cost[cost_known].sum()) if cost_known.any() else None
    lat = data.latency_ms[~np.isnan(data.latency_ms)]
    latency = Latency(median_ms=float(np.median(lat)) if lat.size else None,
                      total_ms=float(lat.sum()) if lat.size else None)
    return cost, latency


def _upper_bound(data: RunData, cost: float | None) -> bool | UnsetType:
    """Whether the total cost is an upper bound (a cell's cached input priced in full): true, or left out."""
    return True if cost is not None and data.cost_upper_bound else UNSET


def give_verdict(project: Project, run_dir: Path, *, allow_incomplete: bool = False,
                 n_resamples: int = BOOTSTRAP_RESAMPLES, timings: dict[str, float] | None = None,
                 scratch: bool = False) -> Verdict:
    """Unblind a finished run, apply its card's sealed rule, write verdict.json and table.csv, enter it in the
    ledger. VerdictError (one line) when the run cannot be judged; see the module docstring.

    `timings`, if given, receives the seconds spent in each phase (for benchmarks/verdict_speed.py). A scratch
    verdict (`scratch`, or a run the runner marked scratch) is written, marked, and never entered in the ledger.
    """
    run_dir = Path(run_dir).resolve()
    with held_still(run_dir) as still:  # from the first read to the last write: no resume or retry meanwhile
        if not still:
            manifest = read_manifest(run_dir)
            if not manifest.finished_at:
                raise VerdictError(_in_progress(project, run_dir, manifest))
            raise VerdictError(f"run {run_dir.name} is being written by another benchcard process (a resume, a "
                               "retry of its failed cells, or grades imported); a verdict waits for it to finish")
        return _give(project, run_dir, allow_incomplete, n_resamples, timings, scratch)


def _give(project: Project, run_dir: Path, allow_incomplete: bool, n_resamples: int,
          timings: dict[str, float] | None, scratch: bool) -> Verdict:
    """`give_verdict` with the run held still."""
    clock = _Clock(timings)
    manifest = read_manifest(run_dir)
    if scratch and not manifest.scratch:
        raise VerdictError(_no_trial_of(run_dir.name, manifest))
    table_tmp = fresh_tmp(run_dir / TABLE_FILE)  # hidden; one a killed verdict left is removed here
    table_job: Future[None] | None = None
    with ThreadPoolExecutor(max_workers=2) as pool, ThreadPoolExecutor(max_workers=1) as io, \
            ThreadPoolExecutor(max_workers=1) as tables:
        # Numpy statistics, hashing and file writes release the GIL; reading and the table are Python work.
        # The run is read and its statistics started before the seal and the digests are checked, so that they
        # run meanwhile; the table is formed on its own thread then, filling the main thread's waits for those
        # checks and for the statistics. A refusal of the checks still comes first, and nothing computed before
        # it leaves this function (the table's temporary file is removed). File work has its own thread, so
        # that it never queues behind the statistics' chunks.
        digest, scores_digest = _start_digests(io, run_dir, manifest)
        try:
            card = _card_to_judge(project, run_dir, manifest)
            sealed_root = io.submit(_seal_root, project, card, manifest)
            planned, planned_digest = _start_grid(io, tables, card, manifest)
            clock.lap("checks (card)")
            read_error: VerdictError | None = None
            figures = None
            try:
                data = read_run_data(run_dir, manifest=manifest, baseline=card.baseline,
                                     allow_incomplete=allow_incomplete, defer_outputs=True,
                                     sealed_plan=lambda: _sealed_grid(card, manifest, planned),
                                     upto=manifest.looks[-1].repetitions if manifest.looks else None)
                _check_grid(card, data)
                figures = ab_stats(card, data, seed_from(manifest.seal_root), n_resamples, pool) if card.is_ab else None
                table_job = tables.submit(write_table, table_tmp, data, manifest.rig_line)
            except VerdictError as exc:
                read_error = exc
            clock.lap("read plan and scores")
            # outputs.jsonl joined and checked against the scores (the table needs neither), while the digests
            # are computed; what it finds waits for the checks
            read_error = read_error or _outputs_problem(data)
            clock.lap("outputs (beside the statistics, the table and the digests)")
            try:
                _check_sealed(project, run_dir, manifest, card, digest, scores_digest, planned_digest, sealed_root)
            except VerdictError:
                pool.shutdown(wait=False, cancel_futures=True)  # the statistics of a refused run are not needed
                raise
            if read_error is not None:
                raise read_error
            assert table_job is not None
            clock.lap("checks (seal, digests)")
            scratch = scratch or bool(manifest.scratch)
            body = _findings(project, run_dir, card, data, figures, scratch)
            clock.lap("statistics (waiting)")
            body = _annotated(project, run_dir, manifest, card, data, body)
            table_job.result()
            clock.lap("table (waiting)")
            verdict = _commit(project, run_dir, card, body, table_tmp, scratch)
        finally:
            if table_job is not None:
                wait([table_job])
            discard(table_tmp)
    clock.lap("grades, ledger, files")
    return verdict


def _start_digests(io: ThreadPoolExecutor, run_dir: Path,
                   manifest: Manifest) -> tuple[Future[str] | None, Future[str] | None]:
    """outputs.jsonl's (of a finished run) and scores.jsonl's digests, started on the file thread."""
    outputs, scores = run_dir / "outputs.jsonl", run_dir / "scores.jsonl"
    return (io.submit(file_digest, outputs) if manifest.finished_at and outputs.is_file() else None,
            io.submit(file_digest, scores) if scores.is_file() else None)


def _start_grid(io: ThreadPoolExecutor, tables: ThreadPoolExecutor, card: Card,
                manifest: Manifest) -> tuple[Future[GridColumns | None] | None, Future[str] | None]:
    """The re-derived plan on the table's thread, idle until the table is formed; its digest (for the check,
    not for the statistics) on the file thread once the seal's root is known. (None, None) without a seed."""
    if manifest.seed is None:
        return None, None
    planned = tables.submit(assignment_columns, card, manifest.seed)
    return planned, io.submit(_digest_of, card, manifest.seed, planned)


def _outputs_problem(data: RunData) -> VerdictError | None:
    """outputs.jsonl joined to the read run; what is wrong with it, kept until the seal's checks have spoken."""
    try:
        finish_outputs(data)
    except VerdictError as exc:
        return exc
    return None


def _findings(project: Project, run_dir: Path, card: Card, data: RunData, figures: Pending | None,
              scratch: bool) -> VerdictFile:
    """The sealed rule's findings (waiting for the statistics), a sequential run's looks, a gated probe's gate."""
    head = _head(project, run_dir, card, data, scratch)
    body = ab_body(card, data, figures.result(), head) if figures is not None else probe_body(card, data, head)
    if card.sequential is not None:  # the decision of the look the run stopped at, and its looks
        body = with_looks(card, run_dir, body)
    return with_gate(card, body)  # a gated probe's gate, decided on the findings and their looks


def _annotated(project: Project, run_dir: Path, manifest: Manifest, card: Card, data: RunData,
               body: VerdictFile) -> VerdictFile:
    """What the verdict adds beside the rule's findings: the blind graders' agreement, the judge's figures and,
    for a replication, its judgement against the original."""
    human = agreement(project, data)
    if human is not None:  # the blind scorer notes also at the top, as the site expects
        body = msgspec.structs.replace(body, human=human, disagreements=human.disagreements)
    return with_replication(project, manifest, with_judge(card, data, body), run_dir)


class _Clock:
    def __init__(self, sink: dict[str, float] | None):
        self.sink = sink
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.last
        self.last = now


def _digest_of(card: Card, seed: int, columns: Future[GridColumns | None]) -> str:
    return assignment_digest_of(card, seed, columns.result())


def _sealed_grid(card: Card, manifest: Manifest, planned: Future[GridColumns | None] | None) -> Grid | None:
    """The plan re-derived from the card and the seed, when the manifest seals an assignment file: the verdict
    is given only if the file holds exactly this plan (`check_sealed`: its digest is the plan's, or every line
    agrees with it), so the file is not decoded again, and the statistics need not wait for the digest. None
    otherwise: the file is read as it is, and the checks say what is wrong."""
    if planned is None or not manifest.sealed or f"{SEALED}/{ASSIGNMENT}" not in manifest.sealed:
        return None
    columns = planned.result()
    if columns is None:
        return None
    return drawn_grid(columns, card.variant_names(), card.baseline)


def _check_grid(card: Card, data: RunData) -> None:
    expected_variants = set(card.variant_names())
    if set(data.variants) != expected_variants:
        raise VerdictError(f"run {data.run_dir.name}: its plan has variants {sorted(data.variants)} but the card "
                           f"has {sorted(expected_variants)}")
    missing = sorted(set(card.fixture_ids()) - set(data.fixtures))
    if missing:
        raise VerdictError(f"run {data.run_dir.name}: fixture {missing[0]} of the card is not in the run's plan")


def _head(project: Project, run_dir: Path, card: Card, data: RunData, scratch: bool) -> VerdictHead:
    """What the verdict starts with: the run, its card and rig (marked when scratch), what it cost."""
    manifest = data.manifest
    cost, latency = _totals(data)
    rig_line = manifest.rig_line
    if scratch and not rig_line.endswith(" · scratch"):
        rig_line += " · scratch"
    return VerdictHead(run=run_dir.name, card=card.id, version=card.version, kind=card.kind, rig=rig_line,
                       seal_root=manifest.seal_root, evidence=project.recorded(run_dir), cost=cost,
                       cost_upper_bound=_upper_bound(data, cost), latency=latency)


def _commit(project: Project, run_dir: Path, card: Card, pending: VerdictFile, table_tmp: Path,
            scratch: bool = False) -> Verdict:
    """Enter the verdict in the ledger and write its files, under the ledger's lock, exactly once. A scratch
    verdict is written the same way, marked, and has no ledger row."""
    run = run_dir.name
    manifest = RunReader(run_dir).manifest_as_written()
    files = evidence_files(run_dir, manifest, {TABLE_FILE: file_digest(table_tmp)})
    row = verdict_row(card, pending, anchors=evidence_digests(manifest), digest=verdict_digest(pending.fields()),
                      files=files)
    row = linked_row(row, RunReader(run_dir).read_manifest(), pending)
    with ledger.locked(project):
        if (run_dir / VERDICT_FILE).exists():
            raise VerdictError(f"run {run} already has a verdict ({project.relative(run_dir / VERDICT_FILE)})")
        refuse_set_aside(run_dir, f"run {run}")  # set aside while the verdict was being computed
        existing = ledger.row_of_run(project, run)
        if existing is not None and (scratch or existing.verdict_digest != row.verdict_digest):
            raise VerdictError(f"run {run} is already in the ledger (seq {existing.seq}) but has no "
                               f"{VERDICT_FILE}, and the verdict given now is not the one entered there; it is not "
                               "entered twice")
        if scratch:
            entered = None
            written = _unsealed_if_so(project, card, msgspec.structs.replace(pending, scratch=True,
                                                                              given_at=utc_stamp(), ledger=None))
        else:
            # a verdict whose process died (or whose disk filled) after its row was appended: the same verdict,
            # computed again, completes its files under that row instead of refusing the run for ever
            entered = existing or ledger.append(project, row)
            written = msgspec.structs.replace(pending, given_at=entered.at,
                                              ledger=LedgerEntry(entered.seq, entered.hash, entered.at))
        move_into_place(table_tmp, run_dir / TABLE_FILE)
        raw = encode_verdict(written)
        write_atomic(run_dir / VERDICT_FILE, raw)
    written = decode_verdict(raw, project.relative(run_dir / VERDICT_FILE), VerdictError)  # as the file holds it
    return Verdict(run=run, card=card.id, version=card.version, kind=card.kind, finding=written.finding,
                   outcome=written.outcome, run_dir=run_dir, file=written, ledger_row=entered)


def _unsealed_if_so(project: Project, card: Card, verdict: VerdictFile) -> VerdictFile:
    """A scratch ab verdict of a version with no seal says `sealed: false`: its rule was never sealed, and its
    run's root (which seeds the bootstrap) is the one the material would be sealed with, not a seal's."""
    from benchcard.card import seal

    if isinstance(verdict, AbVerdict) and seal.read(card.id, card.version, project) is None:
        return msgspec.structs.replace(verdict, sealed=False)
    return verdict


def load_verdict(project: Project, run_dir: Path) -> Verdict:
    """The verdict already given for a run (from its verdict.json)."""
    path = Path(run_dir) / VERDICT_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        read_manifest(run_dir)  # a malformed manifest is the one line `verdict` would refuse the run with, not a hint
        raise VerdictError(f"run {Path(run_dir).name} has no verdict yet (`benchcard verdict "
                           f"{Path(run_dir).name}` gives it)") from None
    except OSError as exc:
        raise VerdictError(f"{project.relative(path)}: unreadable: {exc}") from None
    verdict = decode_verdict(raw, project.relative(path), VerdictError)
    row = ledger.row_of_run(project, Path(run_dir).name)
    changed = tuple(record_problems(project, Path(run_dir), verdict, row))
    said = row if changed and row is not None else verdict
    return Verdict(run=Path(run_dir).name, card=verdict.card, version=verdict.version or 0, kind=verdict.kind,
                   finding=said.finding, outcome=said.outcome, run_dir=Path(run_dir), file=verdict,
                   ledger_row=row, changed=changed)

