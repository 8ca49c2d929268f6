"""What `verdict.json` says: the finding, why, notes and figures of an ab run or a probe run.

`ab_body` applies the win rule (`winrule`) to every variant against the baseline and turns the results into
the overall finding and its explanation; `probe_body` reports a probe's score and rule pass rates. Each builds
the file's struct (`verdictfile.AbVerdict`, `ProbeVerdict`) under the head its caller gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import msgspec
import numpy as np
from msgspec import UNSET

from benchcard._util.numfmt import fixed, interval, level
from benchcard.card.model import Card, Clause
from benchcard.records.ledgerrow import RowCounts, RuleRate
from benchcard.records.replied import judge_replies_line, replies_line
from benchcard.records.verdictfigures import (
    Bootstrap,
    ClauseFigures,
    Equivalence,
    GapFigures,
    MetricFigures,
    Number,
    SignFlip,
    VariantFigures,
    VariantFindingFigures,
    given,
)
from benchcard.records.verdictfile import AbVerdict, ProbeVerdict, VerdictHead
from benchcard.stats import paired as stats
from benchcard.stats.crossed import BoolArray
from benchcard.stats.decision import (
    FINDINGS,
    Evidence,
    decide,
    effect_evidence,
    guard_evidence,
    holds_evidence,
    overall,
    p_tost,
)
from benchcard.verdict._winrule import (
    EQ_TOL,
    ClauseResult,
    finding_of,
    gap_clause,
    gap_figures,
    holds_clause,
)
from benchcard.verdict.clausestats import SIGNFLIP_DRAWS, Figures, Gap
from benchcard.verdict.columns import FAILED, MISSING, OK, TRUNCATED, FloatArray, IntArray
from benchcard.verdict.runfolder import RunData, unscored_said

RESULT_FINDINGS = frozenset({"win", "loss", "scored"})


@dataclass
class _VariantFinding:
    """One variant against the baseline: its finding, why, and each clause's result."""

    variant: str
    finding: str
    why: str
    clauses: list[ClauseResult]
    gaps: dict[tuple[str, str | None], Gap]
    equivalence: Equivalence


def _mean(grid: FloatArray) -> float:
    """Mean over fixtures of each fixture's mean over its scored repetitions."""
    with np.errstate(all="ignore"):
        counts = (~np.isnan(grid)).sum(axis=1)
        rows = np.where(counts > 0, np.nansum(grid, axis=1) / np.maximum(counts, 1), np.nan)
    keep = ~np.isnan(rows)
    return float(rows[keep].mean()) if keep.any() else math.nan


def _counts(data: RunData) -> RowCounts:
    return RowCounts(planned=len(data.cells), scored=data.count(OK), truncated=data.count(TRUNCATED),
                     failed=data.count(FAILED), missing=data.count(MISSING))


def _unscored_parts(counts: RowCounts, data: RunData) -> list[str]:
    """The cells without a score and not cut off, by why: failed in transport, no output, or an output the
    scorer gave no score (on a judge card: none of its judgements could be read as a grade). A comparison's cells
    are samples of two logs: failed in its log (an error, or no number for a metric of the rule), or in one only."""
    no_output = counts.missing - data.unscored
    if data.manifest.kind == "compare":
        parts = [f"{counts.failed} sample(s) failed in their log (an error, or no number for a metric of the "
                 "rule)"] if counts.failed else []
        return parts + ([f"{no_output} cell(s) are samples of one log only"] if no_output else [])
    parts = [f"{counts.failed} cell(s) failed in transport"] if counts.failed else []
    parts += [f"{no_output} cell(s) have no output"] if no_output else []
    if data.unscored and data.manifest.judge is not None:
        parts.append(f"{data.unscored} cell(s) have an output but no readable judgement (the judge's answers were "
                     "unreadable, cut off or failed: judge-outputs.jsonl)")
    elif data.unscored:
        parts.append(f"{data.unscored} cell(s) have an output but no score{unscored_said(data.unscored_why)}")
    return parts


@dataclass
class RuleEvidence:
    """Each clause's evidence per variant (`decision.decide`'s arguments), and the `holds` clauses' results."""

    evidence: list[list[Evidence]]
    held: dict[tuple[int, int], ClauseResult]
    tost: list[FloatArray]
    measurable: list[BoolArray]


def rule_evidence(card: Card, data: RunData, figures: Figures, others: list[str]) -> RuleEvidence:
    """The sealed rule's evidence on `data`, every clause of every variant in `others` against the baseline:
    what `ab_body` decides at α and a sequential card's look at the look's level (`verdict/looks.py`)."""
    win = card.win
    assert win is not None and card.baseline is not None
    first = win.clauses[0]
    out = RuleEvidence([], {}, [], [])
    for v, variant in enumerate(others):
        judged: list[Evidence] = []
        for k, clause in enumerate(win.clauses):
            if clause.test == "holds":
                out.held[(v, k)] = holds_clause(clause, data, variant, card.baseline, win.alpha)
                judged.append(holds_evidence(np.array([out.held[(v, k)].holds])))
            else:
                judged.append(_evidence(clause, figures.gaps[(variant, (clause.metric, clause.fixture))],
                                        win.min_effect if k == 0 else 0.0))
        out.evidence.append(judged)
        g1 = figures.gaps[(variant, (first.metric, first.fixture))]
        margin = float(win.equivalence_margin or 0.0)
        if g1.low is not None and g1.high is not None and margin > 0:
            unbounded = np.ones(1) if g1.open_low or g1.open_high else np.zeros(1)  # a count's cut-off cells
            out.tost.append(np.maximum.reduce([p_tost(g1.low, margin), p_tost(g1.high, margin), unbounded]))
            out.measurable.append(g1.low.spread | g1.high.spread)
        else:
            out.tost.append(np.ones(1))
            out.measurable.append(np.ones(1, dtype=bool))
    return out


def ab_body(card: Card, data: RunData, figures: Figures, head: VerdictHead) -> AbVerdict:
    """verdict.json of an ab run under `head`: the win rule applied to every variant, the overall finding and the
    figures."""
    win = card.win
    assert win is not None and card.baseline is not None
    baseline = card.baseline
    alpha = win.alpha
    others = [v for v in data.variants if v != baseline]
    counts = _counts(data)
    comparisons, codes = _comparisons(card, data, figures, others)
    finding, summary_why = _overall(card, data, counts, comparisons, codes)
    outcome = "result" if finding in RESULT_FINDINGS else "non-result"
    truncated_by = {v: data.count(TRUNCATED, v) for v in data.variants}
    failed_by = {v: data.count(FAILED, v) + data.count(MISSING, v) for v in data.variants}
    notes = _notes(data, counts, truncated_by, failed_by, win.allow_failed, judged=finding != "incomplete")
    clauses_out = [_clause_figures(comp.variant, r) for comp in comparisons for r in comp.clauses]
    summary = (f"{card.id} v{card.version}, run {data.run_dir.name}: {finding} ({outcome}). {summary_why}"
               + ("" if not notes else " " + " ".join(notes)))
    return AbVerdict(
        **given(head),
        finding=finding,
        outcome=outcome,
        summary=summary,
        why=summary_why,
        baseline=baseline,
        variants=others,
        alpha=alpha,
        confidence=1 - alpha,
        equivalence_margin=win.equivalence_margin,
        allow_failed=win.allow_failed,
        cells=len(data.cells),
        counts=counts,
        truncated_by_variant=truncated_by,
        failed_by_variant=failed_by,
        notes=notes,
        bootstrap=Bootstrap(resamples=figures.n_resamples, seed=figures.seed, method="cluster (fixtures), percentile"),
        signflip=SignFlip(SIGNFLIP_DRAWS if data.fixtures and len(data.fixtures) > 20 else "exact"),
        comparisons=[_unjudged(VariantFindingFigures(variant=c.variant, finding=c.finding,
                                                 outcome="result" if c.finding in RESULT_FINDINGS else "non-result",
                                                 why=c.why, equivalence=c.equivalence,
                                                 clauses=[row for row in clauses_out if row.variant == c.variant]),
                               finding)
                     for c in comparisons],
        clauses=clauses_out,
        metrics=_metric_figures(card, data, figures, others, {c.variant: c.equivalence for c in comparisons}),
    )


def _unjudged(comparison: VariantFindingFigures, finding: str) -> VariantFindingFigures:
    """A variant's win or loss in a grid that is not judged (the run incomplete) is no result: its line reads
    incomplete → non-result, as the run's, never 'win → result' under 'finding: incomplete'."""
    if finding != "incomplete" or comparison.finding not in RESULT_FINDINGS:
        return comparison
    why = (f"With every cell scored this variant's gap would be a {comparison.finding}, but the grid is incomplete "
           f"and not judged (for information: {comparison.why.rstrip('.')}).")
    return msgspec.structs.replace(comparison, finding="incomplete", outcome="non-result", why=why)


def _comparisons(card: Card, data: RunData, figures: Figures,
                 others: list[str]) -> tuple[list[_VariantFinding], IntArray]:
    """Each variant against the baseline: each clause's evidence, the decision (Holm across variants and
    loss-capable clauses) and its sentences; with the decision's codes, for the overall finding."""
    win = card.win
    assert win is not None
    gaps, first = figures.gaps, win.clauses[0]
    rule = rule_evidence(card, data, figures, others)
    decision = decide(rule.evidence, rule.tost, rule.measurable, win.alpha)
    comparisons: list[_VariantFinding] = []
    for v, variant in enumerate(others):
        results = []
        for k, clause in enumerate(win.clauses):
            if clause.test == "holds":
                results.append(rule.held[(v, k)])
                continue
            rejected = decision.loss_rejected[v][k]
            results.append(gap_clause(clause, gaps[(variant, (clause.metric, clause.fixture))], win.alpha,
                                      rule.evidence[v][k], bool(rejected is not None and rejected[0]),
                                      win.min_effect if k == 0 else 0.0))
        first_gap = gaps[(variant, (first.metric, first.fixture))]
        tost_p = float(rule.tost[v][0]) if first_gap.obs is not None else None
        finding, why, eq = finding_of(win, results, int(decision.codes[v, 0]), first_gap, tost_p,
                                      bool(rule.measurable[v][0]), len(others))
        comparisons.append(_VariantFinding(variant, finding, why, results,
                                       {k[1]: g for k, g in gaps.items() if k[0] == variant}, eq))
    return comparisons, decision.codes


def _overall(card: Card, data: RunData, counts: RowCounts, comparisons: list[_VariantFinding],
             codes: IntArray) -> tuple[str, str]:
    """The overall finding and why: a loss of any variant is never hidden by another's win, and a grid with more
    unscored cells than the card allows is not judged."""
    win = card.win
    assert win is not None
    allowed = win.allow_failed
    if counts.failed + counts.missing + counts.truncated > allowed:
        what = _unscored_parts(counts, data)
        if counts.truncated:
            what.insert(bool(counts.failed), f"{counts.truncated} cell(s) were cut off by the token limit")
        who = _allower(data)
        return "incomplete", (f"{' and '.join(what)} and the {who} allows {allowed}; a grid with more unscored cells "
                              f"than its {who} allows is not judged (the figures below are for information only).")
    finding = FINDINGS[int(overall(codes)[0])]
    if len(comparisons) == 1:
        return finding, comparisons[0].why
    return finding, "; ".join(f"{c.variant}: {c.finding}" for c in comparisons) + (
        f". Each of the {len(comparisons)} variants was tested against {card.baseline} at α = {win.alpha:g}, with "
        "Holm's correction across the variants and across every clause that can show a loss, so the "
        "chance of any false result stays within α.")


def _notes(data: RunData, counts: RowCounts, truncated_by: dict[str, int], failed_by: dict[str, int],
           allowed: int, *, judged: bool) -> list[str]:
    """What the verdict says of the cells cut off and the cells without a score, per variant. Cut-off cells are
    said to be bounded in the clauses only when the grid is `judged`: an incomplete grid (every cell cut off, or
    more than allow_failed) judges no clause, and the note must not say otherwise."""
    notes = []
    if counts.truncated:
        notes.append(
            f"{counts.truncated} cell(s) were cut off by the token limit ("
            + ", ".join(f"{v} {n}" for v, n in truncated_by.items())
            + "); they are never scored as wrong, count against allow_failed, and "
            + ("every clause is judged with them bounded at the worst case for what it claims." if judged else
               f"no clause is judged: more cells have no score than the {_allower(data)} allows.")
        )
    failed_only = counts.failed + counts.missing
    if failed_only:
        notes.append(f"{failed_only} cell(s) have no score ("
                     + ", ".join(f"{v} {n}" for v, n in failed_by.items())
                     + f"): {'; '.join(_unscored_parts(counts, data))}; the {_allower(data)} allows {allowed} unscored "
                       + ("cell(s) (allow_failed in a --rule file)." if data.manifest.kind == "compare"
                          else "cell(s)."))
    return notes + _replies_note(data)


def _replies_note(data: RunData) -> list[str]:
    """The run's (or its judge's) replies named another model than the one asked, or were never counted: said,
    never a change of the finding."""
    lines = (replies_line(data.manifest), judge_replies_line(data.manifest))
    return [f"{line.split(': ', 1)[1]}." for line in lines if line]  # without its `warning:` or `note:`


def _allower(data: RunData) -> str:
    """Who sets how many cells may go unscored: the card, or for a comparison its rule (`allow_failed`)."""
    return "rule" if data.manifest.kind == "compare" else "card"


def _metric_figures(card: Card, data: RunData, figures: Figures, others: list[str],
                    equivalence: dict[str, Equivalence]) -> dict[str, MetricFigures]:
    """The figures per metric (per metric and fixture, when a clause names one): the means, the baseline's noise
    floor and each variant's gap; one variant's figures stand flat beside the means."""
    win = card.win
    assert win is not None and card.baseline is not None
    baseline, gaps, first = card.baseline, figures.gaps, win.clauses[0]
    metrics_out: dict[str, MetricFigures] = {}
    for metric, fixture in figures.gap_keys:
        name = metric if fixture is None else f"{metric} on {fixture}"
        any_g = gaps[(others[0], (metric, fixture))]
        means: dict[str, Number | None] = {baseline: _mean(any_g.base)}
        means |= {v: _mean(gaps[(v, (metric, fixture))].var) for v in others}
        nf = figures.floors.get((metric, fixture))
        rows = [fixture] if fixture else list(data.fixtures)
        first_metric = (metric, fixture) == (first.metric, first.fixture)
        per_variant = {v: _variant_figures(gaps[(v, (metric, fixture))], win.alpha, rows, baseline,
                                           equivalence.get(v) if first_metric else None)
                       for v in others}
        if len(others) == 1:  # one variant: its figures flat beside the means (its paired means replace them)
            only = per_variant[others[0]]
            metrics_out[name] = MetricFigures(
                **{"means": means, "noise_floor": None, **given(only)},
                baseline_noise_floor=nf.value if nf else None,
                baseline_run_means=list(nf.run_means) if nf else None)
        else:
            metrics_out[name] = MetricFigures(means=means, baseline_noise_floor=nf.value if nf else None,
                                              baseline_run_means=list(nf.run_means) if nf else None,
                                              by_variant=per_variant)
    return metrics_out


def _clause_figures(variant: str, r: ClauseResult) -> ClauseFigures:
    """One clause for one variant as verdict.json writes it: the clause, whether it holds, its figures, why."""
    c = r.clause
    return ClauseFigures(variant=variant, metric=c.metric, test=c.test, fixture=c.fixture, margin=c.margin,
                         text=c.text, holds=r.holds, **given(r.figures), why=r.why,
                         equals=c.equals if c.test == "holds" else UNSET, broken=True if r.broken else UNSET)


def _variant_figures(g: Gap, alpha: float, fixtures: list[str], baseline: str,
                     equivalence: Equivalence | None) -> VariantFigures:
    """One variant's figures on one metric: its gap, the pairing behind it, and (on the first clause's metric,
    when there is a gap) the equivalence test's p."""
    gap = _gap_figures(g, alpha)
    pairing = _pairing(g, fixtures, baseline)
    tost = UNSET if equivalence is None or gap.gap is None else equivalence.tost_p
    return VariantFigures(**given(gap), **given(pairing), tost_p=tost)


def _pairing(g: Gap, fixtures: list[str], baseline: str) -> VariantFigures:
    """Which fixtures the paired figures stand on, and the means of both arms over exactly those, so that the
    means and the gap agree; each fixture left out is named with its reason (no scored cell in an arm)."""
    if g.base.shape[0] != len(fixtures) or g.var.shape[0] != len(fixtures):
        return VariantFigures()  # the scorer gave no such metric: nothing was paired, and `error` says why
    in_base = np.asarray(~np.isnan(g.base).all(axis=1), dtype=bool)
    in_var = np.asarray(~np.isnan(g.var).all(axis=1), dtype=bool)
    both = in_base & in_var
    left_out = {}
    for f, b, v in zip(fixtures, in_base.tolist(), in_var.tolist(), strict=True):
        if not (b and v):
            arm = "either arm" if not (b or v) else (g.variant if b else baseline)
            left_out[f] = f"no scored cell in {arm}"
    means = {baseline: _mean(g.base[both]) if both.any() else None,
             g.variant: _mean(g.var[both]) if both.any() else None}
    return VariantFigures(paired=int(both.sum()), of=len(fixtures), left_out=left_out, means=means)


def _gap_figures(g: Gap, alpha: float) -> GapFigures | VariantFigures:
    """A gap's figures, or why there is none (the scorer gave no such metric)."""
    if g.obs is None:
        return VariantFigures(gap=None, ci=None, p=None, error=g.error)
    return gap_figures(g, alpha)


def _evidence(clause: Clause, g: Gap, min_effect: float) -> Evidence:
    """A gap clause's evidence, each side judged on the truncation bound worst for it (clausestats.Gap)."""
    if g.obs is None or g.low is None or g.high is None:
        return Evidence(p_hold=np.ones(1), p_loss=np.ones(1))
    hold_side, loss_side = g.sides(clause.test)
    hold_c, loss_c = hold_side.crossed, loss_side.crossed
    assert hold_c is not None and loss_c is not None
    if clause.test in ("rises", "falls"):
        up = clause.test == "rises"
        hold = effect_evidence(hold_c, g.p_flip(hold_c), up, min_effect)
        loss = effect_evidence(loss_c, g.p_flip(loss_c), up)
        evidence = Evidence(p_hold=hold.p_hold, p_loss=loss.p_loss, trivial=None if hold_side.open else hold.trivial)
    else:
        margin = float(clause.margin or 0.0)
        evidence = Evidence(p_hold=guard_evidence(hold_c, margin, clause.test).p_hold,
                            p_loss=guard_evidence(loss_c, margin, clause.test).p_loss)
    # a bound the metric does not have (a count's truncated cells): that side cannot be shown at all
    return Evidence(p_hold=np.ones(1) if hold_side.open else evidence.p_hold,
                    p_loss=np.ones(1) if loss_side.open else evidence.p_loss, trivial=evidence.trivial)


def probe_body(card: Card, data: RunData, head: VerdictHead) -> ProbeVerdict:
    """verdict.json of a probe run under `head`: the score, passes and each rule's pass rate, with Wilson
    intervals."""
    counts = _counts(data)
    alpha = card.gate_alpha  # the level the card seals for its gate (`gate: {alpha: …}`, default 0.05)
    ok = data.status == OK
    scores = data.score[ok]
    n = int(scores.size)
    passes = int((np.abs(scores - 1.0) <= EQ_TOL).sum())
    score = float(scores.mean()) if n else None
    lost = counts.failed + counts.missing
    finding = "incomplete" if lost or n == 0 else "scored"
    outcome = "result" if finding in RESULT_FINDINGS else "non-result"
    rules: dict[str, RuleRate] = {}
    rule_lines = []
    for rule_id, values in data.rules.items():
        v = values[ok]
        v = v[~np.isnan(v)]
        k = int((v > 0.5).sum())
        lo, hi = stats.wilson(k, int(v.size), alpha)
        rules[rule_id] = RuleRate(passes=k, n=int(v.size), rate=k / v.size if v.size else None, wilson=[lo, hi])
        rule_lines.append(f"rule {rule_id}: {k} of {v.size} pass (Wilson {level(alpha)} {interval(lo, hi)})")
    lo, hi = stats.wilson(passes, n, alpha)
    model = data.manifest.rig.model if data.manifest.rig is not None else ""
    reasons = []
    if counts.truncated:
        reasons.append(f"{counts.truncated} repetition(s) were cut off by the token limit: reported apart, "
                       "not scored as wrong")
    if counts.failed:
        reasons.append(f"{counts.failed} failed in transport")
    if counts.missing:
        reasons.append(f"{counts.missing} have no output or score")
    if finding == "scored":
        why = f"score {fixed(score)} over {n} scored repetition(s); {passes} of {n} pass (score 1)."
    elif n == 0:
        why = "no repetition could be scored."
    else:
        why = f"score {fixed(score)} over the {n} scored repetition(s), but not every planned call was answered."
    why = " ".join([why + ("" if not reasons else " " + "; ".join(reasons) + "."), *_replies_note(data)])
    return ProbeVerdict(
        **given(head),
        finding=finding,
        outcome=outcome,
        summary=f"{card.id} v{card.version}, run {data.run_dir.name}, {model}: {finding} ({outcome}). {why}",
        why=why,
        model=model,
        score=score,
        passes=passes,
        score_ci=[lo, hi],
        rules=rules,
        rule_lines=rule_lines,
        cells=len(data.cells),
        counts=counts,
        alpha=alpha,
    )
