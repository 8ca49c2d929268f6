"""The win rule: each clause judged from a run's statistics, and the finding of one variant against the
baseline (docs/verdict.md). Pure functions over figures already computed by `runstats`; each result carries
the sentence that explains it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from msgspec import UNSET, UnsetType

from benchcard._util.numfmt import fixed, interval, level, p_equals
from benchcard.card.model import Clause, WinRule
from benchcard.records.verdictfigures import Equivalence, GapFigures, HoldsFigures
from benchcard.stats import paired as stats
from benchcard.stats.crossed import half_width, run_floor
from benchcard.stats.decision import FINDINGS, Evidence, p_two_sided
from benchcard.verdict.clausestats import SIGNFLIP_DRAWS, Gap
from benchcard.verdict.columns import TRUNCATED
from benchcard.verdict.runfolder import RunData

EQ_TOL = 1e-9


@dataclass
class ClauseResult:
    """One clause judged: whether it holds, its figures, and the sentence that explains it."""

    clause: Clause
    holds: bool
    mirror: bool = False  # the first clause's effect significantly the wrong way (beyond the noise floor)
    broken: bool = False  # a guard's own hypothesis rejected
    figures: GapFigures | HoldsFigures | None = None  # None when a gap clause cannot be judged
    why: str = ""
    cause: str = ""  # why it does not hold, in a few words, for the finding's summary


def possible_gaps(g: Gap) -> tuple[float, float]:
    """The values a gap of g's metric can take: ±(highest − lowest value of the metric). An interval is never
    drawn beyond them (the true gap is always inside, so cutting there loses no coverage). The metric's range is
    the scorer's (`metric_range`) when every value of both arms lies inside it; a metric of another tool's log
    with values beyond it has no known range unless one was declared (`compare --range`, checked against every
    value when the logs were read)."""
    lo, hi = g.known_range()
    if lo is None or hi is None:
        return -math.inf, math.inf
    return lo - hi, hi - lo


def _interval(gap: float, below: float, above: float, span: tuple[float, float]) -> list[float]:
    """[gap − below, gap + above], cut to the gaps the metric can take. Where no spread could be measured (one
    fixture or one repetition: an infinite half-width) it is all of them, [−1, 1] for a 0–1 metric: the true gap
    is surely inside, and [−∞, ∞] would be an interval beyond the metric's range (it was, until hostile audit 13b).
    A metric of no known range stays unbounded."""
    return [max(gap - below, span[0]), min(gap + above, span[1])]


def gap_figures(g: Gap, alpha: float) -> GapFigures:
    """The figures of one gap as verdict.json shows them: the calibrated interval of the observed gap (truncated
    cells left out), its parts, and the bounded gaps when cells were truncated."""
    c = g.obs
    assert c is not None
    se, zero = float(c.se[0]), bool(c.zero_se[0])
    half, one = float(half_width(c, 1 - alpha / 2)[0]), float(half_width(c, 1 - alpha)[0])
    gap = float(c.gap[0])
    p_flip = float(g.p_flip(c)[0])
    draws = g.flip_draws.get(id(c))
    bounded: list[float] | UnsetType = UNSET
    if g.truncated:
        assert g.low is not None and g.high is not None
        # an open side (a count's cut-off cells) is no bound: written null, never the largest value seen
        bounded = [-math.inf if g.open_low else float(g.low.gap[0]), math.inf if g.open_high else float(g.high.gap[0])]
    span = possible_gaps(g)
    return GapFigures(
        gap=gap, ci=None if zero else _interval(gap, half, half, span),
        # none when resampling the fixtures measures nothing (equal d's: resample.Resamples.intervals gives None)
        ci_bootstrap=list(g.boot) if g.boot and not zero else None,
        p=float(p_two_sided(c, g.p_flip(c))[0]), p_signflip=p_flip,
        noise_floor=float(run_floor(c, alpha)[0]), se=se, se_fixture=math.sqrt(float(c.var_fixture[0])),
        run_var=float(c.var_run[0]), df=float(c.df[0]),
        lower_one_sided=None if zero else _interval(gap, one, one, span)[0],
        upper_one_sided=None if zero else _interval(gap, one, one, span)[1],
        n_fixtures=int(c.n_fixtures[0]),
        # stopped once the p was surely above α (signflip.py)
        p_signflip_draws=draws if draws and draws < SIGNFLIP_DRAWS else UNSET,
        truncated=g.truncated or UNSET, bounded_gaps=bounded,
    )


def run_spread_unmeasured(g: Gap) -> str:
    """Why the run-to-run spread is unknown: one repetition, or fewer than two fixtures scored in every
    repetition of both arms (cells left unscored: truncated, failed, or no readable judgement)."""
    reps = int(g.base.shape[1]) if g.base.ndim == 2 else 1
    if reps < 2:
        return "the run-to-run spread cannot be measured from one repetition"
    whole = int((np.isfinite(g.base).all(axis=1) & np.isfinite(g.var).all(axis=1)).sum())
    return (f"the run-to-run spread cannot be measured: it needs two fixtures scored in all {reps} repetitions of "
            f"both arms, and {whole} {'is' if whole == 1 else 'are'} (unscored cells leave the others out)")


def gap_clause(clause: Clause, g: Gap, alpha: float, ev: Evidence | None, lost: bool,
               min_effect: float = 0.0) -> ClauseResult:
    """A `rises`/`falls` clause or a guard, from its evidence (decision.py) and whether its loss was shown."""
    if ev is None or g.obs is None:
        reason = g.error or "no fixture is scored in both arms"
        return ClauseResult(clause, False, why=f"{clause.text}: cannot be judged — {reason}.",
                            cause=reason)
    figures = gap_figures(g, alpha)
    head = f"{clause.text} ({g.variant} − baseline)"
    bounded = _bounded_text(g, figures)
    unbounded = _unbounded(clause, g)
    if clause.test in ("rises", "falls"):
        return _effect_clause(clause, g, figures, ev, lost, alpha, min_effect, head, bounded, unbounded)
    return _guard_clause(clause, g, figures, ev, lost, alpha, head, bounded, unbounded)


def _bounded_text(g: Gap, figures: GapFigures) -> str:
    """"; judged with its 2 truncated cell(s) bounded at the worst case for the claim (gaps +0.208 to +0.375)";
    a side a count's cut-off cells leave open reads ∓∞."""
    if isinstance(figures.bounded_gaps, UnsetType):
        return ""
    low, high = figures.bounded_gaps
    ends = [fixed(x, signed=True) if x is not None and math.isfinite(x) else sign + "∞"
            for x, sign in ((low, "−"), (high, "+"))]
    if not (g.open_low or g.open_high):
        return f"; judged with its {g.truncated} truncated cell(s) bounded at the worst case for the claim " \
               f"(gaps {ends[0]} to {ends[1]})"
    return f"; its {g.truncated} truncated cell(s) allow gaps from {ends[0]} to {ends[1]}"


def _unbounded(clause: Clause, g: Gap) -> str:
    """Why a clause's claim cannot be shown when it needs a bound the metric does not have: "2 cells of A were
    cut off and unsupported_values has no upper bound: the guard cannot be shown to hold" ("" when it has it)."""
    side = g.sides(clause.test)[0]
    if not side.open:
        return ""
    claim = {"rises": "the rise cannot be shown", "falls": "the fall cannot be shown"}.get(
        clause.test, "the guard cannot be shown to hold")
    if g.known_range()[0] is None:  # neither end known: the cells of both arms leave it open
        return (f"{side.open} cell{'s' if side.open != 1 else ''} {'were' if side.open != 1 else 'was'} cut off "
                f"and {g.metric} has no known range (values beyond [0, 1], none declared): {claim}")
    return (f"{side.open} cell{'s' if side.open != 1 else ''} of {side.arm} {'were' if side.open != 1 else 'was'} "
            f"cut off at max_tokens and {g.metric} has no upper bound: {claim}")


def _effect_clause(clause: Clause, g: Gap, figures: GapFigures, ev: Evidence, lost: bool, alpha: float,
                   min_effect: float, head: str, bounded: str, unbounded: str) -> ClauseResult:
    """`rises`/`falls`: holds, lost (the effect shown the wrong way), or why it does not hold."""
    zero = figures.ci is None
    ci = (f"gap {fixed(figures.gap, signed=True)}, " + ("no spread at all (every fixture moved alike, so no t interval)"
          if figures.ci is None else f"{level(alpha)} CI {interval(*figures.ci)}") + f", p {p_equals(figures.p)}, "
          f"sign-flip p {p_equals(figures.p_signflip)}")
    side = "above" if clause.test == "rises" else "below"
    if float(ev.p_hold[0]) <= alpha:
        shown = "the sign-flip puts" if zero else "the calibrated interval puts"
        if g.truncated and not _shown_holds(figures, alpha, clause.test == "rises"):
            # the figures shown leave the truncated cells out (a repetition of an arm all cut off leaves no run
            # spread: CI [−∞, ∞]); the evidence that holds is the bounded one, said as the refusal says it
            shown = f"with truncated cells bounded, the evidence (p {p_equals(float(ev.p_hold[0]))}) puts"
        why = f"holds — {ci}: {shown} the gap {side} 0{bounded}."
        return ClauseResult(clause, True, figures=figures, why=f"{head}: {why}")
    if lost:
        cause = "the effect goes significantly the wrong way"
        why = f"does not hold — {ci}: {cause}, by the same evidence a win needs{bounded}."
        return ClauseResult(clause, False, mirror=True, figures=figures, why=f"{head}: {why}", cause=cause)
    cause = unbounded or " and ".join(_effect_reasons(clause, g, figures, ev, alpha, min_effect))
    return ClauseResult(clause, False, figures=figures, why=f"{head}: does not hold — {ci}: {cause}{bounded}.",
                        cause=cause)


def _shown_holds(figures: GapFigures, alpha: float, up: bool) -> bool:
    """Whether the figures a clause line shows (the observed gap, truncated cells left out) put the gap on its side
    of 0 by themselves: the calibrated interval wholly there, or (no spread at all) the sign-flip p at most α."""
    if figures.ci is None:
        return figures.p_signflip <= alpha and (figures.gap > 0) == up
    low, high = figures.ci
    return figures.p <= alpha and (low > 0 if up else high < 0)


def _effect_reasons(clause: Clause, g: Gap, figures: GapFigures, ev: Evidence, alpha: float,
                    min_effect: float) -> list[str]:
    """Why a `rises`/`falls` clause that was not lost does not hold, each reason a phrase."""
    assert g.obs is not None
    up, zero = clause.test == "rises", figures.ci is None
    side = "above" if up else "below"
    if math.isinf(figures.run_var):
        return [run_spread_unmeasured(g)]
    if ev.trivial is not None and bool(ev.trivial[0]):
        return [f"the gap is significant but smaller than min_effect {min_effect:g}: significant but trivial"]
    reasons = []
    if zero:  # no interval: the gap itself is on its side or not, and the sign-flip decides
        if not (figures.gap > 0 if up else figures.gap < 0):
            reasons.append(f"the gap is not {side} 0")
    elif figures.p > alpha or (figures.gap > 0) != up:
        reasons.append(f"the interval is not wholly {side} 0")
    moved = int((np.abs(g.obs.d[0]) > 0).sum())
    if moved == 0:  # nothing for a sign flip to weigh: every fixture's mean is the same in both arms
        reasons.append(f"the sign-flip p {fixed(figures.p_signflip)} is above α (the gap is 0 on every fixture: "
                       "no fixture's mean moved)")
    elif 2.0 ** (1 - moved) > alpha:  # the sign-flip's smallest p: few fixtures cannot win
        few = _few(moved, int(g.obs.n_fixtures[0]))
        reasons.append(f"the sign-flip p {fixed(figures.p_signflip)} is above α ({few} can never reach α {alpha:g})")
    elif figures.p_signflip > alpha and (zero or not (reasons or g.truncated)):  # compare needs it too
        reasons.append(f"the sign-flip p {fixed(figures.p_signflip)} is above α")
    if not reasons:
        reasons.append(f"with truncated cells bounded, the evidence is p {p_equals(float(ev.p_hold[0]))}")
    return reasons


def _few(moved: int, fixtures: int) -> str:
    """"3 fixtures", or "the 2 of 6 fixtures that moved" when the others' gap was 0 (they weigh nothing)."""
    if moved == fixtures:
        return f"{moved} fixture{'s' if moved != 1 else ''}"
    return f"the {moved} of {fixtures} fixtures that moved"


def _guard_clause(clause: Clause, g: Gap, figures: GapFigures, ev: Evidence, lost: bool, alpha: float, head: str,
                  bounded: str, unbounded: str) -> ClauseResult:
    """A guard (`not_rises`/`not_falls`): holds, broken (shown beyond the margin), or not shown within it."""
    margin = float(clause.margin or 0.0)
    upper = clause.test == "not_rises"
    bound = figures.upper_one_sided if upper else figures.lower_one_sided
    bound_name, cmp, limit = ("upper", "below", fixed(margin)) if upper else ("lower", "above", fixed(-margin))
    gap_text = f"gap {fixed(figures.gap, signed=True)}, p {p_equals(figures.p)}"
    shown = (f"the one-sided {level(alpha)} {bound_name} bound {fixed(bound)}" if figures.ci is not None
             else "the gap (no spread at all)")
    if float(ev.p_hold[0]) <= alpha:
        within = bound is not None and math.isfinite(bound) and (bound < margin if upper else bound > -margin)
        if g.truncated and figures.ci is not None and not within:  # held by the bounded evidence alone (as above)
            shown = f"with truncated cells bounded, the evidence (p {p_equals(float(ev.p_hold[0]))}) shows the gap"
        why = f"holds — {shown} is {cmp} {limit} ({gap_text}){bounded}."
        return ClauseResult(clause, True, figures=figures, why=f"{head}: {why}")
    if lost:
        cause = (f"the guard is significantly broken: the gap is shown {'above' if upper else 'below'} {limit} by "
                 "the same evidence a win needs")
        return ClauseResult(clause, False, broken=True, figures=figures,
                            why=f"{head}: does not hold — {cause} ({gap_text}){bounded}.", cause=cause)
    if unbounded:
        return ClauseResult(clause, False, figures=figures, why=f"{head}: does not hold — {unbounded} ({gap_text}"
                            f"{bounded}).", cause=unbounded)
    if math.isinf(figures.run_var):
        cause = run_spread_unmeasured(g)
    elif figures.ci is None and not g.truncated and (figures.gap < margin if upper else figures.gap > -margin):
        # every fixture's gap alike and on its side of the margin: only the one-sided sign-flip's 2^−F stood in the
        # way (decision.p_beyond), which so few fixtures never reach
        cause = (f"{shown} is {cmp} {limit}, but the one-sided sign-flip p {fixed(float(ev.p_hold[0]))} is above α "
                 f"({_few(int(g.obs.n_fixtures[0]), int(g.obs.n_fixtures[0]))} can never reach α {alpha:g})"
                 if g.obs is not None else f"{shown} is {cmp} {limit}, but not by evidence at α {alpha:g}")
    else:
        cause = f"{shown} is not {cmp} {limit}"
    why = (f"does not hold — {cause} ({gap_text}){bounded}; the data cannot rule out a change beyond the margin.")
    return ClauseResult(clause, False, figures=figures, why=f"{head}: {why}", cause=cause)


def holds_clause(clause: Clause, data: RunData, variant: str, baseline: str, alpha: float) -> ClauseResult:
    """A `holds` clause: the condition true in every planned repetition of the variant on its fixture."""
    assert clause.fixture is not None
    values = data.metrics.get(clause.metric)
    planned = int(((data.variant == data.variants.index(variant)) &
                   (data.fixture == data.fixtures.index(clause.fixture))).sum()) if clause.fixture in data.fixtures \
        else 0
    if values is None or clause.fixture not in data.fixtures:
        why = f"no scored value of {clause.metric} on {clause.fixture}"
        return ClauseResult(clause, False, figures=HoldsFigures(k=0, n=0, planned=planned),
                            why=f"{clause.text} ({variant}): cannot be judged — {why}.", cause=why)
    row = data.grid(values, variant, [clause.fixture])[0]
    scored = row[~np.isnan(row)]
    k = int((np.abs(scored - clause.equals) <= EQ_TOL).sum())
    n = int(scored.size)
    lo, hi = stats.wilson(k, n, alpha)
    base_row = data.grid(values, baseline, [clause.fixture])[0]
    base_scored = base_row[~np.isnan(base_row)]
    bk = int((np.abs(base_scored - clause.equals) <= EQ_TOL).sum())
    holds = n == planned and n > 0 and k == n
    figures = HoldsFigures(k=k, n=n, planned=planned, rate=k / n if n else None, wilson=[lo, hi],
                           baseline_k=bk, baseline_n=int(base_scored.size))
    tail = f"Wilson {level(alpha)} {interval(lo, hi)}; baseline {bk} of {base_scored.size}"
    head = f"{clause.text} ({variant})"
    cause = ""
    if holds:
        why = f"holds — {k} of {n} repetitions ({tail})."
    elif n < planned and k == n:
        cause = f"only {n} of {planned} repetitions were scored"
        unscored = _unscored(data, variant, clause.fixture, planned - n)
        why = (f"does not hold — only {n} of {planned} repetitions were scored ({unscored}) and the clause needs "
               f"every one ({tail}).")
    else:
        cause = f"{k} of {n} repetitions"
        why = f"does not hold — {k} of {n} scored repetitions ({tail})."
    return ClauseResult(clause, holds, figures=figures, why=f"{head}: {why}", cause=cause)



def _unscored(data: RunData, variant: str, fixture: str, unscored: int) -> str:
    """Why a holds clause's repetitions have no score, each kind in its own words: an output cut off at
    max_tokens is the model's and counts against the claim; a failure of transport is no answer at all."""
    cells = (data.variant == data.variants.index(variant)) & (data.fixture == data.fixtures.index(fixture))
    cut = min(unscored, int((cells & (data.status == TRUNCATED)).sum()))
    parts = []
    if cut:
        parts.append(f"{cut} cut off at the card's max_tokens, which counts against the claim")
    if unscored - cut:
        parts.append(f"{unscored - cut} failed in transport or have no output, not scored as wrong")
    return "; ".join(parts)


def finding_of(win: WinRule, results: list[ClauseResult], code: int, first: Gap, tost_p: float | None,
               measurable: bool, several: int) -> tuple[str, str, Equivalence]:
    """The finding of one variant against the baseline, why, and the equivalence figures (docs/verdict.md)."""
    alpha = win.alpha
    margin = float(win.equivalence_margin or 0.0)
    first_clause = results[0]
    eq_interval: list[float] | None = None
    if first.obs is not None and not bool(first.obs.zero_se[0]):
        half = float(half_width(first.obs, 1 - alpha)[0])
        eq_interval = _interval(float(first.obs.gap[0]), half, half, possible_gaps(first))
    eq = Equivalence(margin, tost_p, list(eq_interval) if eq_interval is not None else None, 1 - 2 * alpha)
    guards = results[1:]  # every other clause: not_* guards and holds clauses alike
    finding = FINDINGS[code]
    if finding == "win":
        return "win", "every clause holds.", eq
    if finding == "loss":
        if first_clause.mirror:
            return "loss", f"the first clause's effect goes significantly the wrong way — {first_clause.why}", eq
        broken = [r for r in results if r.broken]
        return "loss", f"a guard is significantly broken — {broken[0].why}", eq
    eq_ci = (f"the {level(2 * alpha)} CI of the {first_clause.clause.metric} gap {interval(*eq_interval)}"
             if eq_interval else f"the {first_clause.clause.metric} gap, the same on every fixture (no spread, so no "
             "interval),")
    if finding == "no-effect":
        return "no-effect", (f"{eq_ci} lies inside ±{margin:g} (TOST p {p_equals(tost_p)}) and every guard "
                             "holds: the change did nothing worth having."), eq
    if not measurable:
        return "inconclusive", (f"inconclusive: no change can be measured here — every scored "
                                f"{first_clause.clause.metric} of both arms has the same value (a floor or "
                                "ceiling), so neither a change nor its absence can show."), eq
    failing = [r for r in results if not r.holds]
    reasons = ["; ".join(f"{r.clause.text} does not hold ({r.cause})" for r in failing)] if failing else []
    if not failing and several > 1:
        reasons.append(f"every clause holds at α = {alpha:g}, but the win does not survive Holm's correction across "
                       f"the {several} variants")
    equivalent = tost_p is not None and tost_p < alpha
    if equivalent:
        failed_guards = [g.clause.text for g in guards if not g.holds]
        reasons.append(f"the effect is within ±{margin:g} (TOST p {p_equals(tost_p)}) but "
                       f"{', '.join(failed_guards)} does not hold, so it is not shown to be harmless")
    elif (eq_interval is None and first.obs is not None and not first.truncated
          and abs(float(first.obs.gap[0])) < margin):
        # every fixture's gap alike and inside the margin: only the sign-flip's 2^−F stood in the way (p_beyond)
        n = int(first.obs.n_fixtures[0])
        reasons.append(f"{eq_ci} lies inside ±{margin:g}, but the sign-flip p {fixed(0.5 ** n)} is above α "
                       f"({_few(n, n)} can never reach α {alpha:g}; TOST p {p_equals(tost_p)}), so no effect is not "
                       "shown either")
    else:
        reasons.append(f"{eq_ci} is not inside ±{margin:g} (TOST p {p_equals(tost_p)}), so no effect is not "
                       "shown either")
    return "inconclusive", "; ".join(reasons) + "; nothing is significantly the wrong way.", eq
