"""What `verdict.json` says: the finding, why, notes and figures of an ab run or a probe run.

`ab_body` applies the win rule (`winrule`) to every variant against the baseline and turns the results into
the overall finding and its explanation; `probe_body` reports a probe's score and rule pass rates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchcard.card.model import Card
from benchcard.verdict import stats
from benchcard.verdict.clausestats import SIGNFLIP_DRAWS, Figures, Gap
from benchcard.verdict.columns import FAILED, MISSING, OK, TRUNCATED, FloatArray
from benchcard.verdict.runfolder import RunData
from benchcard.verdict.winrule import EQ_TOL, ClauseResult, clause_text, fmt, fmt_ci, gap_clause, holds_clause, judge

RESULT_FINDINGS = frozenset({"win", "loss", "scored"})


@dataclass
class _Comparison:
    """One variant against the baseline: its finding, why, and each clause's result."""

    variant: str
    finding: str
    why: str
    clauses: list[ClauseResult]
    gaps: dict[tuple[str, str | None], Gap]
    equivalence: dict[str, Any]


def _mean(grid: FloatArray) -> float:
    """Mean over fixtures of each fixture's mean over its scored repetitions."""
    with np.errstate(all="ignore"):
        counts = (~np.isnan(grid)).sum(axis=1)
        rows = np.where(counts > 0, np.nansum(grid, axis=1) / np.maximum(counts, 1), np.nan)
    keep = ~np.isnan(rows)
    return float(rows[keep].mean()) if keep.any() else math.nan


def _counts(data: RunData) -> dict[str, int]:
    return {"planned": len(data.cells), "scored": data.count(OK), "truncated": data.count(TRUNCATED),
            "failed": data.count(FAILED), "missing": data.count(MISSING)}


def ab_body(card: Card, data: RunData, figures: Figures) -> dict[str, Any]:
    """verdict.json of an ab run: the win rule applied to every variant, the overall finding and the figures."""
    win = card.win
    assert win is not None and card.baseline is not None
    baseline = card.baseline
    alpha = win.alpha
    others = [v for v in data.variants if v != baseline]
    counts = _counts(data)
    allowed = win.allow_failed
    lost = counts["failed"] + counts["missing"]
    incomplete = lost > allowed
    gaps, floors, gap_keys = figures.gaps, figures.floors, figures.gap_keys
    first = win.clauses[0]

    # 2. the clauses and the finding, variant by variant
    comparisons: list[_Comparison] = []
    for variant in others:
        results = []
        for clause in win.clauses:
            if clause.test == "holds":
                results.append(holds_clause(clause, data, variant, baseline, alpha))
            else:
                results.append(gap_clause(clause, gaps[(variant, (clause.metric, clause.fixture))], alpha))
        first_gap = gaps[(variant, (first.metric, first.fixture))]
        finding, why, eq = judge(win, results, first_gap)
        comparisons.append(_Comparison(variant, finding, why, results,
                                       {k[1]: g for k, g in gaps.items() if k[0] == variant}, eq))

    # 3. the overall finding
    findings = [c.finding for c in comparisons]
    if incomplete:
        finding = "incomplete"
        what = []
        if counts["failed"]:
            what.append(f"{counts['failed']} cell(s) failed in transport")
        if counts["missing"]:
            what.append(f"{counts['missing']} cell(s) have no output or score")
        summary_why = (f"{' and '.join(what)} and the card allows {allowed}; a grid with more failures than its "
                       "card allows is not judged (the figures below are for information only).")
    else:
        if "win" in findings:
            finding = "win"
        elif "loss" in findings:
            finding = "loss"
        elif findings and all(f == "no-effect" for f in findings):
            finding = "no-effect"
        else:
            finding = "inconclusive"
        if len(comparisons) == 1:
            summary_why = comparisons[0].why
        else:
            summary_why = "; ".join(f"{c.variant}: {c.finding}" for c in comparisons) + (
                f". Each of the {len(comparisons)} variants was tested against {baseline} at α = {alpha:g}; the "
                f"chance that at least one wins by luck is up to {len(comparisons)}·α.")
    outcome = "result" if finding in RESULT_FINDINGS else "non-result"
    truncated_by = {v: data.count(TRUNCATED, v) for v in data.variants}
    failed_by = {v: data.count(FAILED, v) + data.count(MISSING, v) for v in data.variants}
    notes = []
    if counts["truncated"]:
        notes.append(
            f"{counts['truncated']} cell(s) were cut off by the token limit ("
            + ", ".join(f"{v} {n}" for v, n in truncated_by.items())
            + "); they are reported apart, left out of the means and never scored as wrong."
        )
    if lost:
        notes.append(f"{lost} cell(s) failed in transport or are missing ("
                     + ", ".join(f"{v} {n}" for v, n in failed_by.items())
                     + f"); the card allows {allowed}.")

    # 4. figures per metric, per clause
    metrics_out: dict[str, Any] = {}
    for metric, fixture in gap_keys:
        name = metric if fixture is None else f"{metric} on {fixture}"
        entry: dict[str, Any] = {}
        any_g = gaps[(others[0], (metric, fixture))]
        entry["means"] = {baseline: _mean(any_g.base)} | {v: _mean(gaps[(v, (metric, fixture))].var) for v in others}
        nf = floors.get((metric, fixture))
        entry["noise_floor"] = nf.value if nf else None
        entry["baseline_run_means"] = list(nf.run_means) if nf else None
        per_variant = {v: _gap_figures(gaps[(v, (metric, fixture))], alpha) for v in others}
        if len(others) == 1:
            entry.update(per_variant[others[0]])
        else:
            entry["by_variant"] = per_variant
        metrics_out[name] = entry
    clauses_out = []
    for comp in comparisons:
        for r in comp.clauses:
            c = r.clause
            row = {"variant": comp.variant, "metric": c.metric, "test": c.test, "fixture": c.fixture,
                   "margin": c.margin, "text": clause_text(c), "holds": r.holds, **r.figures, "why": r.why}
            if c.test == "holds":
                row["equals"] = c.equals
            if r.broken:
                row["broken"] = True
            clauses_out.append(row)
    level = 1 - alpha
    summary = (f"{card.id} v{card.version}, run {data.run_dir.name}: {finding} ({outcome}). {summary_why}"
               + ("" if not notes else " " + " ".join(notes)))
    return {
        "finding": finding,
        "outcome": outcome,
        "summary": summary,
        "why": summary_why,
        "baseline": baseline,
        "variants": others,
        "alpha": alpha,
        "confidence": level,
        "equivalence_margin": win.equivalence_margin,
        "allow_failed": allowed,
        "cells": len(data.cells),
        "counts": counts,
        "truncated_by_variant": truncated_by,
        "failed_by_variant": failed_by,
        "notes": notes,
        "bootstrap": {"resamples": figures.n_resamples, "seed": figures.seed,
                      "method": "cluster (fixtures), percentile"},
        "signflip": {"draws": SIGNFLIP_DRAWS if data.fixtures and len(data.fixtures) > 20 else "exact"},
        "comparisons": [
            {"variant": c.variant, "finding": c.finding,
             "outcome": "result" if c.finding in RESULT_FINDINGS else "non-result",
             "why": c.why, "equivalence": c.equivalence,
             "clauses": [row for row in clauses_out if row["variant"] == c.variant]}
            for c in comparisons
        ],
        "clauses": clauses_out,
        "metrics": metrics_out,
    }


def _gap_figures(g: Gap, alpha: float) -> dict[str, Any]:
    if g.pg is None:
        return {"gap": None, "ci": None, "p": None, "error": g.error}
    pg = g.pg
    out = {"gap": pg.gap, "ci": [pg.ci_low, pg.ci_high], "ci_bootstrap": list(g.boot) if g.boot else None,
           "p": pg.p_value, "p_signflip": pg.p_signflip, "se": pg.se, "df": pg.df,
           "lower_one_sided": pg.lower_one_sided, "upper_one_sided": pg.upper_one_sided,
           "n_fixtures": pg.n_fixtures}
    if g.tost_p is not None:
        out["tost_p"] = g.tost_p
    return out


def probe_body(card: Card, data: RunData) -> dict[str, Any]:
    """verdict.json of a probe run: the score, passes and each rule's pass rate, with Wilson intervals."""
    counts = _counts(data)
    alpha = 0.05
    ok = data.status == OK
    scores = data.score[ok]
    n = int(scores.size)
    passes = int((np.abs(scores - 1.0) <= EQ_TOL).sum())
    score = float(scores.mean()) if n else None
    lost = counts["failed"] + counts["missing"]
    finding = "incomplete" if lost or n == 0 else "scored"
    outcome = "result" if finding in RESULT_FINDINGS else "non-result"
    rules: dict[str, Any] = {}
    for rule_id, values in data.rules.items():
        v = values[ok]
        v = v[~np.isnan(v)]
        k = int((v > 0.5).sum())
        lo, hi = stats.wilson(k, int(v.size), alpha)
        rules[rule_id] = {"passes": k, "n": int(v.size), "rate": k / v.size if v.size else None, "wilson": [lo, hi]}
    lo, hi = stats.wilson(passes, n, alpha)
    model = ""
    rig = data.manifest.get("rig")
    if isinstance(rig, Mapping):
        model = str(rig.get("model") or "")
    reasons = []
    if counts["truncated"]:
        reasons.append(f"{counts['truncated']} repetition(s) were cut off by the token limit: reported apart, "
                       "not scored as wrong")
    if counts["failed"]:
        reasons.append(f"{counts['failed']} failed in transport")
    if counts["missing"]:
        reasons.append(f"{counts['missing']} have no output or score")
    if finding == "scored":
        why = f"score {fmt(score)} over {n} scored repetition(s); {passes} of {n} pass (score 1)."
    elif n == 0:
        why = "no repetition could be scored."
    else:
        why = f"score {fmt(score)} over the {n} scored repetition(s), but not every planned call was answered."
    why = why + ("" if not reasons else " " + "; ".join(reasons) + ".")
    rule_lines = [f"rule {rid}: {r['passes']} of {r['n']} pass (Wilson 95% {fmt_ci(*r['wilson'])})"
                  for rid, r in rules.items()]
    return {
        "finding": finding,
        "outcome": outcome,
        "summary": f"{card.id} v{card.version}, run {data.run_dir.name}, {model}: {finding} ({outcome}). {why}",
        "why": why,
        "model": model,
        "score": score,
        "passes": passes,
        "score_ci": [lo, hi],
        "rules": rules,
        "rule_lines": rule_lines,
        "cells": len(data.cells),
        "counts": counts,
        "alpha": alpha,
    }
