"""A replication judged against its original (`benchcard replicate`'s verdict; the command is `replicate.py`).

A replication run (`run/replicate.py`) gets its own verdict under the card's sealed rule like any run; its
verdict then adds `replication` (`records.replication.ReplicationJudgement`): the new run against the original
under the rule its manifest fixed before the first call. An ab run is judged by `stats.replication`'s rule over
the two verdicts' first clause (`records.replicationinput.run_gap`): replicated, not replicated (the gap rose or
fell), or inconclusive. A probe is compared fixture by fixture over the two runs' scores
(`stats.replication.probe_drift`): changed (the score fell or rose) or no change shown, with both dates. The
ledger row carries the judgement and the link (`replicates`, with the original row's hash), which
`ledger --verify` checks (`replication_problems`).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from pathlib import Path

import msgspec
from msgspec import UnsetType

from benchcard._util.lastrow import last_per_cell
from benchcard.errors import BenchcardError, VerdictError
from benchcard.project import Project
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.replication import (
    SEQUENTIAL_RULE_NAME,
    ReplicaLink,
    ReplicationJudgement,
    RuleRecord,
    rule_record,
)
from benchcard.records.replicationinput import run_gap
from benchcard.records.rows import SCORES, VERDICT, Manifest, ScoreRow, decode_manifest, read_rows
from benchcard.records.verdictfile import AbVerdict, VerdictFile, decode_verdict
from benchcard.stats.replication import (
    INCONCLUSIVE,
    JUDGED,
    NO_CHANGE,
    NOT_REPLICATED,
    REPLICATED,
    ReplicationRule,
    probe_drift,
    replication_finding,
)

# -------------------------------------------------------------------------------------------- the judgement


def with_replication(project: Project, manifest: Manifest, body: VerdictFile, run_dir: Path) -> VerdictFile:
    """`body` with its judgement against the original, when the run is a replication (else as it is)."""
    link, rule = manifest.replicates, manifest.replication_rule
    if link is None:
        return body
    if rule is None:
        raise VerdictError(f"run {run_dir.name}: its manifest links it to run {link.run} but fixes no "
                           "replication_rule; it cannot be judged against it")
    judged = judgement(project, link, rule, body, run_dir, manifest)
    return msgspec.structs.replace(body, replication=judged)


def judgement(project: Project, link: ReplicaLink, rule: RuleRecord, body: VerdictFile, run_dir: Path,
              manifest: Manifest) -> ReplicationJudgement:
    """The new run (its verdict as built, `body`) against the original under the recorded rule."""
    folder = project.root / link.evidence
    try:
        original = decode_verdict((folder / VERDICT).read_bytes(), f"{link.evidence}/{VERDICT}", VerdictError)
    except (OSError, BenchcardError) as exc:
        return _judged(link, rule, INCONCLUSIVE, None, f"the original's verdict cannot be read: {exc}")
    if rule.name == SEQUENTIAL_RULE_NAME:
        if rule.digest != rule_record(body.kind, sequential=True).digest:
            raise VerdictError(f"run {run_dir.name}: manifest field 'replication_rule': its parameters give "
                               f"{rule_record(body.kind, sequential=True).digest}, not the recorded {rule.digest}")
        return _judged(link, rule, *by_findings(original, body))
    if body.kind == "probe":
        try:
            o_manifest = decode_manifest((folder / "manifest.json").read_bytes(), folder / "manifest.json")
            drift = probe_drift(_scores(folder, o_manifest), _scores(run_dir, manifest),
                                alpha=float(rule.parameters.get("alpha", 0.05)),
                                original_date=_date(original, o_manifest), new_date=_date(None, manifest))
        except (OSError, BenchcardError, ValueError) as exc:
            return _judged(link, rule, NO_CHANGE, None, f"not compared: {exc}")
        return _judged(link, rule, drift.finding, drift.direction, drift.text)
    found = replication_finding(run_gap(original), run_gap(body), _ab_rule(rule, run_dir))
    return _judged(link, rule, found.finding, found.direction, found.text.removeprefix(f"{found.finding}: "))


_FLIPPED = {("win", "loss"): "fell", ("loss", "win"): "rose", ("pass", "fail"): "fell", ("fail", "pass"): "rose"}


def by_findings(original: VerdictFile, new: VerdictFile) -> tuple[str, str | None, str]:
    """A sequential run's replication (`SEQUENTIAL_RULE_NAME`): each run decided at its own sealed looks, so
    the two decisions are compared, never the gaps (each selected by where its run stopped): the same decision is
    replicated, a win against a loss (a pass against a fail) not replicated, anything else inconclusive."""
    o, n = _decided(original), _decided(new)
    where = f"the original {_stop(original)}, the new run {_stop(new)}"
    if o is None or n is None:
        which = "the original" if o is None else "the new run"
        return INCONCLUSIVE, None, f"{which} decided nothing a replication compares ({where})"
    if (o, n) in _FLIPPED:
        return NOT_REPLICATED, _FLIPPED[(o, n)], f"the decision flipped, {o} → {n} ({where})"
    if o == n:
        return REPLICATED, None, f"{n} again, each at its own sealed looks ({where}; gaps not compared)"
    return INCONCLUSIVE, None, f"the new run's own decision is {n} (the original's: {o}; {where})"


def _decided(v: VerdictFile) -> str | None:
    """What a sequential run decided: an ab run's finding, a probe's gate decision at its last look."""
    looks = v.sequential
    if isinstance(looks, UnsetType):
        return None
    if isinstance(v, AbVerdict):
        return v.finding if v.finding in JUDGED else None
    return looks.decision if looks.decision in ("pass", "fail") else None


def _stop(v: VerdictFile) -> str:
    looks = v.sequential
    if isinstance(looks, UnsetType):
        return "not sequential"
    return f"{'stopped' if looks.stopped else 'ended'} at look {looks.look} of {looks.looks}: {looks.decision}"


def _ab_rule(rule: RuleRecord, run_dir: Path) -> ReplicationRule:
    """The recorded rule rebuilt, refused when its parameters no longer give its recorded digest."""
    try:
        rebuilt = ReplicationRule(**rule.parameters)
    except (TypeError, ValueError) as exc:
        raise VerdictError(f"run {run_dir.name}: manifest field 'replication_rule.parameters': {exc}") from None
    if rebuilt.digest() != rule.digest:
        raise VerdictError(f"run {run_dir.name}: manifest field 'replication_rule': its parameters give "
                           f"{rebuilt.digest()}, not the recorded {rule.digest}")
    return rebuilt


def _judged(link: ReplicaLink, rule: RuleRecord, finding: str, direction: str | None, why: str
            ) -> ReplicationJudgement:
    return ReplicationJudgement(original=link.run, transfer=link.transfer, finding=finding, direction=direction,
                                text=f"{finding}: {why}" if not why.startswith(finding) else why, rule=rule.name,
                                rule_digest=rule.digest)


def _scores(folder: Path, manifest: Manifest) -> dict[str, list[float | None]]:
    """A run's scores by fixture, each cell's last row (a retried run has several)."""
    rows = read_rows(folder / SCORES, ScoreRow, VerdictError)
    if manifest.retries:
        rows = last_per_cell(rows, attrgetter("cell"))
    out: dict[str, list[float | None]] = {}
    for row in rows:
        out.setdefault(row.fixture, []).append(row.score)
    return out


def _date(verdict: VerdictFile | None, manifest: Manifest) -> str:
    given = None if verdict is None or isinstance(verdict.given_at, UnsetType) else verdict.given_at
    return (given or manifest.started_at or "")[:10]


def linked_row(row: LedgerRow, manifest: Manifest, body: VerdictFile) -> LedgerRow:
    """A replication's ledger row: the link to the original's row and the judgement (the row of any other run
    as it is)."""
    if manifest.replicates is None:
        return row
    return msgspec.structs.replace(row, replicates=manifest.replicates, replication=body.replication)


# ------------------------------------------------------------------------------------------ ledger --verify


def link_problems(project: Project, links: list[LedgerRow], originals: Mapping[str, LedgerRow]
                  ) -> tuple[list[str], list[str]]:
    """What `ledger --verify` finds wrong with the replication rows' links (and the notes it adds): the original's
    row (`originals`, the last row of each of `linked_runs`) is in the ledger with the linked hash and seq, of the
    same card, version and seal; on the same rig unless the row states a transfer (and on another when it does).
    An original copied in from another project (its row in that project's ledger) is checked against its
    verdict.json, said in a note."""
    problems: list[str] = []
    notes: list[str] = []
    for row in links:
        link = row.replicates
        if isinstance(link, UnsetType):
            continue
        head = f"seq {row.seq} (run {row.run}, a {link.kind} of run {link.run})"
        if link.foreign:
            notes.append(f"{head}: the original's row is in another project's ledger; the link was checked against "
                         f"{link.evidence}/{VERDICT}")
            problems += [f"{head}: {p}" for p in _foreign_problems(project, row, link)]
            continue
        original = originals.get(link.run)
        if original is None:
            problems.append(f"{head}: the original has no row in the ledger (linked to seq {link.seq}, {link.hash})")
            continue
        problems += [f"{head}: {p}" for p in _row_problems(row, link, original)]
    return problems, notes


def _row_problems(row: LedgerRow, link: ReplicaLink, original: LedgerRow) -> list[str]:
    found = []
    if (original.hash, original.seq) != (link.hash, link.seq):
        found.append(f"the original's row is seq {original.seq}, {original.hash}, not the linked seq {link.seq}, "
                     f"{link.hash}")
    for name in ("card", "version", "seal_root"):
        if getattr(row, name) != getattr(original, name):
            found.append(f"its {name} is {getattr(row, name)}, the original's {getattr(original, name)}: a "
                         "replication sends the original's card and seal")
    same_rig = _rig(row.rig) == _rig(original.rig)
    if same_rig == link.transfer:
        found.append(f"stated as a transfer, but on the original's rig ({row.rig})" if link.transfer else
                     f"on another rig ({row.rig}) than the original's ({original.rig}), not stated as a transfer")
    return found


def _rig(line: str) -> str:
    return line.removesuffix(" · scratch")


def _foreign_problems(project: Project, row: LedgerRow, link: ReplicaLink) -> list[str]:
    path = project.root / link.evidence / VERDICT
    try:
        original = decode_verdict(path.read_bytes(), project.relative(path), VerdictError)
    except (OSError, BenchcardError) as exc:
        return [f"the original's verdict cannot be read: {exc}"]
    entry = original.ledger
    recorded = None if entry is None or isinstance(entry, UnsetType) else (entry.seq, entry.hash)
    found = []
    if recorded != (link.seq, link.hash):
        found.append(f"{project.relative(path)} records its row as {recorded}, not the linked ({link.seq}, "
                     f"{link.hash})")
    if (original.card, original.version, original.seal_root) != (row.card, row.version, row.seal_root):
        found.append(f"{project.relative(path)} is of {original.card} v{original.version} under "
                     f"{original.seal_root}, not the replication's card and seal")
    return found


def linked_runs(rows: list[LedgerRow]) -> set[str]:
    """The runs the replication rows link to in this project's ledger: the rows `link_problems` checks them
    against."""
    return {r.replicates.run for r in rows if not isinstance(r.replicates, UnsetType) and not r.replicates.foreign}


def foreign_originals(rows: list[LedgerRow]) -> set[str]:
    """The folders of originals copied in from another project, named by a replication row: their verdict.json
    records a row of that project's ledger, not of this one."""
    return {r.replicates.evidence for r in rows if not isinstance(r.replicates, UnsetType) and r.replicates.foreign}
