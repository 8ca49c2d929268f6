"""The ledger row a verdict is entered as, built through `ledgerrow.LedgerRow` from what verdict.json says.

A row carries the finding and the figures a reader of the ledger needs without opening the run (means, gap,
intervals, p-values per metric; each clause's outcome; a probe's score and rule pass rates), and the digests
that anchor its evidence; `ledger.append` adds the chain fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchcard.card.model import Card
from benchcard.ledgerrow import (
    ClauseOutcome,
    Comparison,
    HumanAgreement,
    JudgeFigures,
    Latency,
    LedgerRow,
    RowCounts,
    RuleRate,
    Source,
)

#: The figures of a metric a row keeps (verdict.json has them all).
LEDGER_FIGURES = ("means", "gap", "ci", "ci_bootstrap", "p", "p_signflip", "noise_floor", "by_variant", "tost_p")
#: Per-variant figures of an ab verdict with several variants that its row leaves out (verdict.json keeps them:
#: it is the evidence; the row stays compact, as rows have always been).
VARIANT_DETAIL = ("se", "df", "lower_one_sided", "upper_one_sided", "n_fixtures", "paired", "of", "left_out", "means")


def _comparisons(body: Mapping[str, Any]) -> list[Comparison]:
    return [Comparison(c["variant"], c["finding"], c["outcome"]) for c in body["comparisons"]]


def _clauses(body: Mapping[str, Any]) -> list[ClauseOutcome]:
    return [ClauseOutcome(c.get("variant"), c.get("metric"), c.get("test"), c.get("fixture"), c.get("margin"),
                          c.get("holds")) for c in body["clauses"]]


def _row_figures(m: Mapping[str, Any]) -> dict[str, Any]:
    """A metric's figures as its row keeps them: LEDGER_FIGURES, each variant's without VARIANT_DETAIL."""
    out = {k: v for k, v in m.items() if k in LEDGER_FIGURES}
    if isinstance(out.get("by_variant"), Mapping):
        out["by_variant"] = {variant: {k: v for k, v in figs.items() if k not in VARIANT_DETAIL}
                             for variant, figs in out["by_variant"].items()}
    return out


def _metrics(body: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: _row_figures(m) for name, m in body["metrics"].items()}


def verdict_row(card: Card, run: str, rig: str, body: Mapping[str, Any], *, cost: float | None,
                latency: Mapping[str, Any], anchors: Mapping[str, Any], seal_root: str, evidence: str,
                digest: str) -> LedgerRow:
    """The row of a run's verdict (`verdict/give.py`): `body` is what verdict.json says below its head,
    `anchors` the run's evidence digests (`integrity.evidence_digests`), `digest`
    verdict.json's own."""
    ab: dict[str, Any] = {}
    probe: dict[str, Any] = {}
    if card.is_ab:
        ab = {"comparisons": _comparisons(body), "metrics": _metrics(body), "clauses": _clauses(body)}
    else:
        probe = {"model": body["model"], "score": body["score"], "passes": body["passes"],
                 "score_ci": body["score_ci"],
                 "rules": {rid: RuleRate(r["passes"], r["n"], r["rate"], r["wilson"])
                           for rid, r in body["rules"].items()}}
    extra: dict[str, Any] = {}
    if "human" in body:
        h = body["human"]
        extra["human"] = HumanAgreement(h["graded"], h["agreement"], h["kappa"], len(h["disagreements"]))
    if "judge" in body:
        j = body["judge"]
        extra["judge"] = JudgeFigures(j["rig"], j["per_output"], j["self_agreement"]["alpha"], j["floor"],
                                      j["floor_met"], j["cost"])
    return LedgerRow(
        card=card.id, version=card.version, kind=card.kind, rig=rig, run=run, cells=body["cells"],
        counts=RowCounts(**body["counts"]), outcome=body["outcome"], finding=body["finding"], **ab, **probe,
        **extra, cost=cost, latency=Latency(latency["median_ms"], latency["total_ms"]),
        plan_digest=anchors["plan_digest"], outputs_digest=anchors["outputs_digest"],
        scores_digest=anchors["scores_digest"], verdict_digest=digest, seal_root=seal_root, evidence=evidence,
    )


def compare_row(head: Mapping[str, Any], body: Mapping[str, Any], *, table_digest: str,
                digest: str) -> LedgerRow:
    """The row of a `benchcard compare`: kind `compare`, `unsealed`, the ab row's figures, the two logs."""
    return LedgerRow(
        card=head["card"], version=None, kind="compare", unsealed=True, rig=head["rig"], run=head["run"],
        cells=body["cells"], counts=RowCounts(**body["counts"]), outcome=body["outcome"], finding=body["finding"],
        comparisons=_comparisons(body), metrics=_metrics(body), clauses=_clauses(body),
        sources=[Source(s["log"], s["digest"], s["tool"], s["model"], s["task"], s["label"])
                 for s in head["sources"]],
        table_digest=table_digest, verdict_digest=digest, seal_root=None, evidence=head["evidence"],
    )
