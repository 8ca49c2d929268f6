"""The ledger row a verdict is entered as, built through `ledgerrow.LedgerRow` from its typed verdict.json.

A row carries the finding and the figures a reader of the ledger needs without opening the run (means, gap,
intervals, p-values per metric; each clause's outcome; a probe's score, rule pass rates and gate), and the digests
that anchor its evidence; `ledger.append` adds the chain fields.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from benchcard.card.model import Card
from benchcard.records.ledgerrow import (
    ClauseOutcome,
    HumanAgreement,
    JudgeFigures,
    LedgerRow,
    RowFigures,
    RowLooks,
    VariantFinding,
)
from benchcard.records.verdictfigures import MetricFigures, VariantFigures, given
from benchcard.records.verdictfile import AbVerdict, VerdictFile
from benchcard.verdict.integrity import Anchors

#: The figures of a metric a row keeps (verdict.json has them all).
LEDGER_FIGURES = ("means", "gap", "ci", "ci_bootstrap", "p", "p_signflip", "noise_floor", "by_variant", "tost_p")
#: Per-variant figures of an ab verdict with several variants that its row leaves out (verdict.json keeps them:
#: it is the evidence; the row stays compact, as rows have always been).
VARIANT_DETAIL = ("se", "df", "lower_one_sided", "upper_one_sided", "n_fixtures", "paired", "of", "left_out", "means")


def _comparisons(v: AbVerdict) -> list[VariantFinding]:
    return [VariantFinding(c.variant, c.finding, c.outcome) for c in v.comparisons]


def _clauses(v: AbVerdict) -> list[ClauseOutcome]:
    return [ClauseOutcome(c.variant, c.metric, c.test, c.fixture, c.margin, c.holds) for c in v.clauses]


def _row_figures(m: MetricFigures) -> RowFigures:
    """A metric's figures as its row keeps them: LEDGER_FIGURES, each variant's without VARIANT_DETAIL."""
    kept = {k: v for k, v in given(m).items() if k in LEDGER_FIGURES}
    if not isinstance(m.by_variant, UnsetType):
        kept["by_variant"] = {variant: VariantFigures(**{k: v for k, v in given(figs).items()
                                                         if k not in VARIANT_DETAIL})
                              for variant, figs in m.by_variant.items()}
    return RowFigures(**kept)


def _metrics(v: AbVerdict) -> dict[str, RowFigures]:
    return {name: _row_figures(m) for name, m in v.metrics.items()}


def _human(v: VerdictFile) -> HumanAgreement | UnsetType:
    """The graders' headline figures, when the verdict has them."""
    h = v.human
    return UNSET if isinstance(h, UnsetType) else HumanAgreement(h.graded, h.agreement, h.kappa, len(h.disagreements))


def _judge(v: VerdictFile) -> JudgeFigures | UnsetType:
    """The judge's headline figures, when the verdict has them."""
    j = v.judge
    return UNSET if isinstance(j, UnsetType) else JudgeFigures(j.rig, j.per_output, j.self_agreement.alpha, j.floor,
                                                              j.floor_met, j.cost, j.cost_upper_bound)


def verdict_row(card: Card, verdict: VerdictFile, *, anchors: Anchors, digest: str,
                files: dict[str, str]) -> LedgerRow:
    """The row of a run's verdict (`verdict/give.py`): `verdict` is its verdict.json as built, `anchors` the
    run's evidence digests (`integrity.evidence_digests`), `digest` verdict.json's own, `files` the digests of
    every other file the verdict rests on (`integrity.evidence_files`)."""
    row = LedgerRow(
        card=card.id, version=card.version, kind=card.kind, rig=verdict.rig, run=verdict.run, cells=verdict.cells,
        counts=verdict.counts, outcome=verdict.outcome, finding=verdict.finding, human=_human(verdict),
        judge=_judge(verdict), cost=None if isinstance(verdict.cost, UnsetType) else verdict.cost,
        cost_upper_bound=verdict.cost_upper_bound, latency=verdict.latency, plan_digest=anchors.plan_digest,
        outputs_digest=anchors.outputs_digest,
        scores_digest=anchors.scores_digest, verdict_digest=digest, evidence_files=files, seal_root=verdict.seal_root,
        evidence=verdict.evidence,
    )
    if not isinstance(verdict.sequential, UnsetType):
        lk = verdict.sequential
        row = msgspec.structs.replace(row, looks=RowLooks(look=lk.look, looks=lk.looks, decision=lk.decision,
                                                          cells=lk.cells, planned=lk.planned, saved=lk.saved))
    if isinstance(verdict, AbVerdict):
        return msgspec.structs.replace(row, comparisons=_comparisons(verdict), metrics=_metrics(verdict),
                                       clauses=_clauses(verdict))
    return msgspec.structs.replace(row, model=verdict.model, score=verdict.score, passes=verdict.passes,
                                   score_ci=verdict.score_ci, rules=verdict.rules, sealed_gate=verdict.sealed_gate)


def compare_row(verdict: AbVerdict, *, table_digest: str, digest: str) -> LedgerRow:
    """The row of a `benchcard compare`: kind `compare`, `unsealed`, the ab row's figures, the two logs."""
    return LedgerRow(
        card=verdict.card, version=None, kind="compare", unsealed=True, rig=verdict.rig, run=verdict.run,
        cells=verdict.cells, counts=verdict.counts, outcome=verdict.outcome, finding=verdict.finding,
        comparisons=_comparisons(verdict), metrics=_metrics(verdict), clauses=_clauses(verdict),
        sources=[] if isinstance(verdict.sources, UnsetType) else verdict.sources,
        table_digest=table_digest, verdict_digest=digest, seal_root=None, evidence=verdict.evidence,
    )
