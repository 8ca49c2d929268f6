"""The win rule: each clause judged from a run's statistics, and the finding of one variant against the
baseline (docs/verdict.md). Pure functions over figures already computed by `runstats`; each result carries
the sentence that explains it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchcard.card.model import Clause, WinRule
from benchcard.verdict import stats
from benchcard.verdict.clausestats import Gap
from benchcard.verdict.runfolder import RunData

EQ_TOL = 1e-9


def fmt(x: float | None, signed: bool = False) -> str:
    """A figure to three places, with a true minus sign; `n/a` for NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:+.3f}" if signed else f"{x:.3f}"
    return text.replace("-", "−")


def _p(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return "< 0.0001" if x < 0.0001 else f"{x:.4f}"


def fmt_peq(x: float | None) -> str:
    """`= 0.0123` or `< 0.0001`, to follow a `p`."""
    text = _p(x)
    return text if text.startswith("<") else f"= {text}"


def fmt_ci(lo: float, hi: float) -> str:
    """An interval `[lo, hi]` of `fmt` figures."""
    return f"[{fmt(lo)}, {fmt(hi)}]"


def fmt_level(alpha: float) -> str:
    """The confidence level of `alpha`, e.g. `95%`."""
    return f"{100 * (1 - alpha):g}%"


def clause_text(clause: Clause) -> str:
    """A clause in words, as verdicts and pages show it."""
    words = {"rises": "rises", "falls": "falls", "not_rises": "does not rise", "not_falls": "does not fall"}
    if clause.test == "holds":
        return f"{clause.metric} = {clause.equals:g} on {clause.fixture} in every repetition"
    text = f"{clause.metric} {words[clause.test]}"
    if clause.fixture:
        text += f" on {clause.fixture}"
    if clause.margin is not None:
        text += f" (margin {clause.margin:g})"
    return text


@dataclass
class ClauseResult:
    """One clause judged: whether it holds, its figures, and the sentence that explains it."""

    clause: Clause
    holds: bool
    mirror: bool = False  # the first clause's effect significantly the wrong way (beyond the noise floor)
    broken: bool = False  # a guard's own hypothesis rejected
    figures: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    cause: str = ""  # why it does not hold, in a few words, for the finding's summary


def gap_clause(clause: Clause, g: Gap, alpha: float) -> ClauseResult:
    """A `rises`/`falls` clause (CI beyond 0 and gap beyond the noise floor) or a guard (one-sided bound)."""
    if g.pg is None or g.nf is None:
        reason = g.error or "no fixture is scored in both arms"
        return ClauseResult(clause, False, figures={}, why=f"{clause_text(clause)}: cannot be judged — {reason}.",
                            cause=reason)
    pg, nf = g.pg, g.nf
    figures: dict[str, Any] = {
        "gap": pg.gap, "ci": [pg.ci_low, pg.ci_high], "ci_bootstrap": list(g.boot) if g.boot else None,
        "p": pg.p_value, "p_signflip": pg.p_signflip, "noise_floor": nf.value,
        "lower_one_sided": pg.lower_one_sided, "upper_one_sided": pg.upper_one_sided, "n_fixtures": pg.n_fixtures,
    }
    level = fmt_level(alpha)
    head = f"{clause_text(clause)} ({g.variant} − baseline)"
    ci = f"gap {fmt(pg.gap, True)}, {level} CI {fmt_ci(pg.ci_low, pg.ci_high)}, p {fmt_peq(pg.p_value)}"
    if clause.test in ("rises", "falls"):
        up = clause.test == "rises"
        sign = 1.0 if up else -1.0
        ci_ok = pg.ci_low > 0 if up else pg.ci_high < 0
        nf_ok = sign * pg.gap > nf.value
        mirror = (pg.ci_high < 0 and -pg.gap > nf.value) if up else (pg.ci_low > 0 and pg.gap > nf.value)
        holds = ci_ok and nf_ok
        side = "above" if up else "below"
        nf_text = ("the noise floor cannot be measured from fewer than two repetitions"
                   if math.isinf(nf.value) else f"the baseline's run-to-run noise floor {fmt(nf.value)}")
        cause = ""
        if holds:
            why = f"holds — {ci}: the CI lies wholly {side} 0 and the gap is beyond {nf_text}."
        elif mirror:
            cause = "the effect goes significantly the wrong way"
            why = (f"does not hold — {ci}: the effect goes significantly the wrong way, with the CI wholly "
                   f"{'below' if up else 'above'} 0 and the gap beyond {nf_text}.")
        else:
            short, told = [], []  # the summary's wording and the clause sentence's (which already shows the CI)
            if not ci_ok:
                short.append(f"the CI {fmt_ci(pg.ci_low, pg.ci_high)} is not wholly {side} 0")
                told.append(f"the CI is not wholly {side} 0")
            if not nf_ok:
                text = nf_text if math.isinf(nf.value) else f"the gap sits inside {nf_text}"
                short.append(text.replace("the gap", f"the gap {fmt(pg.gap, True)}", 1))
                told.append(text)
            cause = " and ".join(short)
            lead = f"the CI lies wholly {side} 0, but " if ci_ok else ""
            why = f"does not hold — {ci}: {lead}{' and '.join(told)}."
        return ClauseResult(clause, holds, mirror=mirror, figures=figures, why=f"{head}: {why}", cause=cause)
    margin = float(clause.margin or 0.0)
    if clause.test == "not_rises":
        bound, holds, broken = pg.upper_one_sided, pg.upper_one_sided < margin, pg.lower_one_sided > margin
        bound_name, cmp, limit = "upper", "below", fmt(margin)
        broken_text = (f"the one-sided lower bound {fmt(pg.lower_one_sided)} is above the margin: the guard is "
                       "significantly broken")
    else:
        bound, holds, broken = pg.lower_one_sided, pg.lower_one_sided > -margin, pg.upper_one_sided < -margin
        bound_name, cmp, limit = "lower", "above", fmt(-margin)
        broken_text = (f"the one-sided upper bound {fmt(pg.upper_one_sided)} is below −margin: the guard is "
                       "significantly broken")
    gap_text = f"gap {fmt(pg.gap, True)}, p {fmt_peq(pg.p_value)}"
    cause = "" if holds else (broken_text if broken else f"its one-sided {bound_name} bound {fmt(bound)} is not "
                                                          f"{cmp} {limit}")
    if holds:
        why = (f"holds — the one-sided {level} {bound_name} bound of the gap, {fmt(bound)}, is {cmp} {limit} "
               f"({gap_text}).")
    elif broken:
        why = f"does not hold — {broken_text} ({gap_text})."
    else:
        why = (f"does not hold — the one-sided {level} {bound_name} bound {fmt(bound)} is not {cmp} {limit} "
               f"({gap_text}); the data cannot rule out a change beyond the margin.")
    return ClauseResult(clause, holds, broken=broken, figures=figures, why=f"{head}: {why}", cause=cause)


def holds_clause(clause: Clause, data: RunData, variant: str, baseline: str, alpha: float) -> ClauseResult:
    """A `holds` clause: the condition true in every planned repetition of the variant on its fixture."""
    assert clause.fixture is not None
    values = data.metrics.get(clause.metric)
    planned = int(((data.variant == data.variants.index(variant)) &
                   (data.fixture == data.fixtures.index(clause.fixture))).sum()) if clause.fixture in data.fixtures \
        else 0
    if values is None or clause.fixture not in data.fixtures:
        why = f"no scored value of {clause.metric} on {clause.fixture}"
        return ClauseResult(clause, False, figures={"k": 0, "n": 0, "planned": planned},
                            why=f"{clause_text(clause)} ({variant}): cannot be judged — {why}.", cause=why)
    row = data.grid(values, variant, [clause.fixture])[0]
    scored = row[~np.isnan(row)]
    k = int((np.abs(scored - clause.equals) <= EQ_TOL).sum())
    n = int(scored.size)
    lo, hi = stats.wilson(k, n, alpha)
    base_row = data.grid(values, baseline, [clause.fixture])[0]
    base_scored = base_row[~np.isnan(base_row)]
    bk = int((np.abs(base_scored - clause.equals) <= EQ_TOL).sum())
    holds = n == planned and n > 0 and k == n
    figures = {"k": k, "n": n, "planned": planned, "rate": k / n if n else None, "wilson": [lo, hi],
               "baseline_k": bk, "baseline_n": int(base_scored.size)}
    tail = f"Wilson {fmt_level(alpha)} {fmt_ci(lo, hi)}; baseline {bk} of {base_scored.size}"
    head = f"{clause_text(clause)} ({variant})"
    cause = ""
    if holds:
        why = f"holds — {k} of {n} repetitions ({tail})."
    elif n < planned and k == n:
        cause = f"only {n} of {planned} repetitions were scored"
        why = (f"does not hold — only {n} of {planned} repetitions were scored (the others were cut off or "
               f"failed in transport, not scored as wrong) and the clause needs every one ({tail}).")
    else:
        cause = f"{k} of {n} repetitions"
        why = f"does not hold — {k} of {n} scored repetitions ({tail})."
    return ClauseResult(clause, holds, figures=figures, why=f"{head}: {why}", cause=cause)



def judge(win: WinRule, results: list[ClauseResult], first: Gap) -> tuple[str, str, dict[str, Any]]:
    """The finding of one variant against the baseline, why, and the equivalence figures (docs/verdict.md)."""
    alpha = win.alpha
    margin = float(win.equivalence_margin or 0.0)
    first_clause = results[0]
    eq: dict[str, Any] = {"margin": margin, "tost_p": first.tost_p, "ci": None, "level": 1 - 2 * alpha}
    if first.pg is not None:
        eq["ci"] = [first.pg.lower_one_sided, first.pg.upper_one_sided]
    guards = results[1:]  # every other clause: not_* guards and holds clauses alike
    if all(r.holds for r in results):
        return "win", "every clause holds.", eq
    broken = [r for r in results if r.broken]
    if first_clause.mirror or broken:
        if first_clause.mirror:
            return "loss", f"the first clause's effect goes significantly the wrong way — {first_clause.why}", eq
        return "loss", f"a guard is significantly broken — {broken[0].why}", eq
    equivalent = first.tost_p is not None and first.tost_p < alpha
    eq_ci = (f"the {100 * (1 - 2 * alpha):g}% CI of the {first_clause.clause.metric} gap "
             f"{fmt_ci(*eq['ci']) if eq['ci'] else 'n/a'}")
    if equivalent and all(g.holds for g in guards):
        return "no-effect", (f"{eq_ci} lies inside ±{margin:g} (TOST p {fmt_peq(first.tost_p)}) and every guard "
                             "holds: the change did nothing worth having."), eq
    reasons = ["; ".join(f"{clause_text(r.clause)} does not hold ({r.cause})" for r in results if not r.holds)]
    if equivalent:
        failed_guards = [clause_text(g.clause) for g in guards if not g.holds]
        reasons.append(f"the effect is within ±{margin:g} (TOST p {fmt_peq(first.tost_p)}) but "
                       f"{', '.join(failed_guards)} does not hold, so it is not shown to be harmless")
    else:
        reasons.append(f"{eq_ci} is not inside ±{margin:g} (TOST p {fmt_peq(first.tost_p)}), so no effect is not "
                       "shown either")
    return "inconclusive", "; ".join(reasons) + "; nothing is significantly the wrong way.", eq
