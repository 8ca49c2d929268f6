"""`verdict.json`, typed once: an ab run's (`AbVerdict`, also a `benchcard compare`'s) and a probe run's
(`ProbeVerdict`), written and read only through this module.

The two kinds are two structs because their files have always listed their fields in different orders, and
the bytes written stay the bytes benchcard has always written: fields in the order declared here, indented two
spaces, UTF-8 as is, numbers in Python's JSON form (`Number` keeps 3 and 3.0 apart). A field a file does not
carry (`cost` in a comparison, `sources` in a run's verdict, `judge` without a judge) is `UNSET`, hence absent.
The figures below the top level (metrics, clauses, comparisons, the judge's and the graders' blocks) are typed
in `verdictfigures.py`, the same way (docs/verdict.md, "Files"). Writers (`verdict/findings.py`, `give.py`,
`compare/_comparison.py`) build these structs and `encode_verdict` writes them: the file is strict JSON, so a figure
that is not finite (a NaN mean, an infinite spread) is written null. Readers: `decode_verdict`; a missing or
mistyped field names the file and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.hashing import strict
from benchcard._util.safeio import json_loads
from benchcard.errors import BenchcardError, RunError
from benchcard.records.ledgerrow import GateFigures, Latency, RowCounts, RuleRate, Source
from benchcard.records.replication import ReplicationJudgement
from benchcard.records.rows import Look, Schedule
from benchcard.records.verdictfigures import (
    Bootstrap,
    ClauseFigures,
    CompareRule,
    Disagreement,
    HumanGrades,
    JudgeBlock,
    MetricFigures,
    Number,
    SignFlip,
    VariantFindingFigures,
)


class LedgerEntry(msgspec.Struct, frozen=True):
    """Where a verdict was entered in the ledger (verdict.json's `ledger`; None for a scratch verdict)."""

    seq: int | None = None
    hash: str | None = None
    at: str | None = None


class VerdictHead(msgspec.Struct, frozen=True, kw_only=True):
    """What every verdict.json starts with: the run, its card and rig, and what it cost (a comparison names its
    two logs and its rule instead). `version` and `seal_root` are None for a comparison, which has no card."""

    run: str
    card: str
    version: int | None
    kind: str  # ab | probe | compare
    rig: str
    seal_root: str | None
    evidence: str
    cost: Number | UnsetType | None = UNSET
    # true when `cost` is an upper bound: some cells' input read from the prompt cache priced at the full input
    # price (their model's price gives no `cached_input`); absent otherwise (docs/prices.md)
    cost_upper_bound: bool | UnsetType = UNSET
    latency: Latency | UnsetType = UNSET
    sources: list[Source] | UnsetType = UNSET  # a comparison's two logs
    rule: CompareRule | UnsetType = UNSET  # a comparison's win rule

    def fields(self) -> dict[str, Any]:
        """The verdict as plain JSON data, exactly as its file holds it (what `verdict_digest` covers): strict,
        a figure that is not finite made null."""
        out: dict[str, Any] = strict(self)
        for name, figures in (out.get("metrics") or {}).items():
            out["metrics"][name] = legacy_metric_order(figures)
        return out


def legacy_metric_order(figures: dict[str, Any]) -> dict[str, Any]:
    """A metric's figures in the order its file has them: verdicts given before the baseline's own floor was
    reported (no `baseline_noise_floor`) wrote `noise_floor` right after the means, later ones after
    `baseline_run_means` (`MetricFigures`' order)."""
    if "baseline_noise_floor" in figures or "noise_floor" not in figures or "means" not in figures:
        return figures
    floor = figures.pop("noise_floor")
    means = figures.pop("means")
    return {"means": means, "noise_floor": floor, **figures}


class LooksFigures(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential run's looks in its verdict: the schedule, every look taken, the one that decided (`look`: the
    last one taken), its decision, the calls made of those planned, and the line the verdict says them in."""

    line: str
    look: int
    looks: int
    decision: str
    stopped: bool  # decided before the last look
    cells: int
    planned: int
    saved: Number
    schedule: Schedule
    taken: list[Look]


class AbVerdict(VerdictHead, frozen=True, kw_only=True):
    """verdict.json of an ab run or a `benchcard compare` (`verdict/findings.py`'s `ab_body`)."""

    finding: str
    outcome: str
    summary: str
    why: str
    baseline: str
    variants: list[str]
    alpha: Number
    confidence: Number
    equivalence_margin: Number | None
    allow_failed: int | None
    cells: int
    counts: RowCounts
    truncated_by_variant: dict[str, int]
    failed_by_variant: dict[str, int]
    notes: list[str]
    bootstrap: Bootstrap
    signflip: SignFlip
    comparisons: list[VariantFindingFigures]
    clauses: list[ClauseFigures]
    metrics: dict[str, MetricFigures]
    sealed: bool | UnsetType = UNSET  # False for a comparison
    sequential: LooksFigures | UnsetType = UNSET  # a sequential card's looks (`verdict/looks.py`)
    human: HumanGrades | UnsetType = UNSET  # blind human grades against the scorer (`benchcard grade`)
    disagreements: list[Disagreement] | UnsetType = UNSET
    judge: JudgeBlock | UnsetType = UNSET  # a judge card's judge (`verdict/judgefigures.py`)
    scratch: bool | UnsetType = UNSET  # a trial verdict, never entered in the ledger
    replication: ReplicationJudgement | UnsetType = UNSET  # a replication run against its original
    given_at: str | UnsetType = UNSET  # none for a comparison
    ledger: LedgerEntry | UnsetType | None = UNSET


class ProbeVerdict(VerdictHead, frozen=True, kw_only=True):
    """verdict.json of a probe run (`findings.probe_body`): the score, passes and each rule's pass rate, and what
    its sealed gate decided (`verdict/_gaterule.py`)."""

    finding: str
    outcome: str
    summary: str
    why: str
    model: str
    score: Number | None
    passes: int
    score_ci: list[Number | None]
    rules: dict[str, RuleRate]
    rule_lines: list[str]
    cells: int
    counts: RowCounts
    alpha: Number
    sequential: LooksFigures | UnsetType = UNSET
    sealed_gate: GateFigures | UnsetType = UNSET  # a probe sealed with `gate: {min_score}`: what its gate decided
    human: HumanGrades | UnsetType = UNSET
    disagreements: list[Disagreement] | UnsetType = UNSET
    judge: JudgeBlock | UnsetType = UNSET
    scratch: bool | UnsetType = UNSET
    replication: ReplicationJudgement | UnsetType = UNSET
    given_at: str | UnsetType = UNSET
    ledger: LedgerEntry | UnsetType | None = UNSET


VerdictFile = AbVerdict | ProbeVerdict


def _kind_of(data: Any) -> type[AbVerdict] | type[ProbeVerdict]:
    return ProbeVerdict if isinstance(data, dict) and data.get("kind") == "probe" else AbVerdict


def verdict_of(data: Any, path: Path | str, error: type[BenchcardError] = RunError) -> VerdictFile:
    """A verdict from its parsed JSON; a missing or mistyped field names the file and the field."""
    try:
        verdict: VerdictFile = msgspec.convert(data, _kind_of(data))
    except msgspec.ValidationError as exc:
        raise error(f"{path}: {exc}") from None
    return verdict


def decode_verdict(raw: bytes, path: Path | str, error: type[BenchcardError] = RunError) -> VerdictFile:
    """A verdict from its file's bytes (see `verdict_of`)."""
    try:
        data = json_loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"{path}: not JSON: {exc}") from None
    return verdict_of(data, path, error)


def encode_verdict(verdict: VerdictFile) -> bytes:
    """The file's bytes: indented two spaces, UTF-8 as is, ending in a newline."""
    return (json.dumps(verdict.fields(), indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
