"""The ledger row (`results/ledger.jsonl`), typed once: what every row carries and what some rows add.

`ledger.append` builds each row through `LedgerRow` and `ledger.read` decodes each row into it, so a mistyped
or missing field is named by file, line and field. A row's hash is the digest of the canonical JSON of its
fields exactly as written (`ledger.row_hash`): a field a row never had stays absent (`UNSET`), a field written
as null stays null, and numbers keep their JSON type (`Number`: an int is never turned into a float), so every
row written before the struct existed reads back to the same bytes and hash. Fields are declared in the order
rows have always been written; the ledger format is drawn in docs/architecture.md, "The ledger".
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard.records.replication import ReplicaLink, ReplicationJudgement
from benchcard.records.rows import looks_line
from benchcard.records.verdictfigures import Interval, Maybe, Number, VariantFigures


class RowFigures(msgspec.Struct, frozen=True, kw_only=True):
    """A metric's figures as its row keeps them (`verdict/entry.py`: the means, the gap and its intervals and
    p-values, each variant's without the detail verdict.json keeps), in the order rows have always had them;
    a figure a row lacks is `UNSET`."""

    means: dict[str, Number | None] | UnsetType = UNSET
    noise_floor: Maybe = UNSET
    by_variant: dict[str, VariantFigures] | UnsetType = UNSET
    gap: Maybe = UNSET
    ci: Interval | UnsetType | None = UNSET
    ci_bootstrap: Interval | UnsetType | None = UNSET
    p: Maybe = UNSET
    p_signflip: Maybe = UNSET
    tost_p: Maybe = UNSET


class RowCounts(msgspec.Struct, frozen=True):
    """What became of the planned cells (`verdict/findings.py`)."""

    planned: int
    scored: int
    truncated: int
    failed: int
    missing: int


class VariantFinding(msgspec.Struct, frozen=True):
    """One variant against the baseline: its own finding (an ab row's `comparisons`, the on-disk name)."""

    variant: str
    finding: str
    outcome: str


class ClauseOutcome(msgspec.Struct, frozen=True):
    """One clause of the win rule for one variant, and whether it held."""

    variant: str
    metric: str
    test: str
    fixture: str | None
    margin: Number | None
    holds: bool


class Latency(msgspec.Struct, frozen=True):
    """Median and total latency over the calls that reported one (None when none did)."""

    median_ms: Number | None
    total_ms: Number | None


class RuleRate(msgspec.Struct, frozen=True):
    """A probe's rule: how many scored repetitions passed it, with the Wilson interval."""

    passes: int
    n: int
    rate: Number | None
    wilson: list[Number | None]


class HumanAgreement(msgspec.Struct, frozen=True):
    """Blind human grades against the scorer (`benchcard grade`)."""

    graded: int
    agreement: Number | None
    kappa: Number | None
    disagreements: int


class JudgeFigures(msgspec.Struct, frozen=True):
    """A judge card's judge: its rig, judgements per output, self-agreement against the card's floor, cost."""

    rig: str | None
    per_output: int
    alpha: Number | None
    floor: Number | None
    floor_met: bool | None
    cost: Number | None
    cost_upper_bound: bool | UnsetType = UNSET  # the verdict's judge's: cached input priced in full (docs/prices.md)


class Source(msgspec.Struct, frozen=True):
    """A `benchcard compare` row's log: where it was, its digest, and what it says it is."""

    log: str
    digest: str
    tool: str
    model: str | None
    task: str | None
    label: str


class RowLooks(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential run's looks as its row keeps them: the look that decided (or the last), of how many, its
    decision, the calls made of those planned and the share saved."""

    look: int
    looks: int
    decision: str
    cells: int
    planned: int
    saved: Number

    @property
    def line(self) -> str:
        """The run's stop as its verdict says it (`rows.looks_line`), from the row alone: the ledger page shows it
        beside the row's cells, which are the calls made, not the design's."""
        return looks_line(self.look, self.looks, self.decision, self.cells, self.planned)


class GateFigures(msgspec.Struct, frozen=True, kw_only=True):
    """A gated probe's gate as its verdict decided it (verdict.json's and its row's `sealed_gate`, absent for an ab
    card, a probe without `gate: {min_score}` and every verdict given before 2026-12-08): the sealed threshold, the
    decision `verdict --gate` exits by (`pass`, `below` or `incomplete`) and the mean score it held to the
    threshold (a repetition cut off at max_tokens counted as failing; null when there was none to hold). Not named
    `gate`: `verdict --gate --json` puts the gate's exit decision beside verdict.json's fields under that key."""

    min_score: Number
    decision: str
    held: Number | None

    @property
    def words(self) -> str:
        """The gate in a few words, as the ledger's table and page show it: `gate min_score 0.8: below`."""
        return f"gate min_score {self.min_score:g}: {self.decision}"


class LedgerRow(msgspec.Struct, frozen=True, kw_only=True):
    """One ledger row. `seq`, `date`, `at`, `prev` and `hash` are set by `ledger.append` (a row built by a
    caller leaves them at their defaults); an ab row has comparisons, metrics and clauses, a probe row model,
    score, passes, score_ci and rules (and, sealed with a gate, `gate`), a `compare` row (`unsealed`, no card
    version or seal) its sources."""

    seq: int = 0
    date: str = ""
    at: str = ""
    card: str
    version: int | None  # None for a `compare` row, which has no card
    kind: str  # ab | probe | compare
    rig: str
    run: str
    cells: int
    counts: RowCounts | UnsetType = UNSET
    outcome: str  # result | non-result
    finding: str
    model: str | UnsetType = UNSET
    score: Number | UnsetType | None = UNSET
    passes: int | UnsetType = UNSET
    score_ci: list[Number | None] | UnsetType = UNSET
    rules: dict[str, RuleRate] | UnsetType = UNSET
    comparisons: list[VariantFinding] | UnsetType = UNSET
    metrics: dict[str, RowFigures] | UnsetType = UNSET  # metric → the figures a row keeps (`verdict/entry.py`)
    clauses: list[ClauseOutcome] | UnsetType = UNSET
    human: HumanAgreement | UnsetType = UNSET
    cost: Number | UnsetType | None = UNSET
    cost_upper_bound: bool | UnsetType = UNSET  # the verdict's: cached input priced in full (docs/prices.md)
    latency: Latency | UnsetType = UNSET
    unsealed: bool | UnsetType = UNSET
    sources: list[Source] | UnsetType = UNSET
    judge: JudgeFigures | UnsetType = UNSET
    looks: RowLooks | UnsetType = UNSET  # a sequential run's stop (docs/cards.md, "Sequential cards")
    sealed_gate: GateFigures | UnsetType = UNSET  # a gated probe's gate (docs/ci.md, "A probe's gate")
    plan_digest: str | UnsetType | None = UNSET  # the run's evidence, anchored (verdict/integrity.py)
    outputs_digest: str | UnsetType | None = UNSET
    scores_digest: str | UnsetType | None = UNSET
    table_digest: str | UnsetType = UNSET  # a `compare` row's table.csv
    verdict_digest: str | UnsetType = UNSET
    # every other file of the run the verdict rests on (judge requests and outputs, grades, blind-sheet mappings,
    # batch journal and chunks, table.csv): its path in the run folder → its digest (verdict/integrity.py)
    evidence_files: dict[str, str] | UnsetType = UNSET
    # a replication run's: the original's row it is linked to, and its judgement against it (docs/replication.md)
    replicates: ReplicaLink | UnsetType = UNSET
    replication: ReplicationJudgement | UnsetType = UNSET
    seal_root: str | None
    evidence: str  # the run's folder, relative to the project
    prev: str | None = None
    hash: str = ""

    def fields(self) -> dict[str, Any]:
        """The row as plain JSON data in its written order (what is hashed and written); unset fields absent."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


#: Fields `ledger.append` sets itself; a caller's row must leave them at their defaults.
CHAIN_FIELDS = ("seq", "date", "at", "prev", "hash")
#: The order fields are written in (the hash does not depend on it: canonical JSON sorts keys).
FIELD_ORDER: tuple[str, ...] = LedgerRow.__struct_fields__
