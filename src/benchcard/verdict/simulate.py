"""Power by simulation of the rule itself: `benchcard plan`'s figures come from the verdict's own decision.

A pilot's paired table Δ_fr = variant − baseline is split into its variance components (fixture effects ω²,
a run-level term σ²_run, cell noise σ²_e: the two-way random-effects mean squares), and thousands of runs
of the planned size are drawn from them, Δ_fr = δ + a_f + c_r + e_fr, and judged by `crossed` + `decision`
exactly as a verdict would (sign-flip included). Seeded, with common random numbers across gaps, so the
power curve is monotone and the same plan always prints the same figures. The decision is invariant to the
scale of the data, so the pilot's uncertainty (its variances are estimates on few degrees of freedom) is a
range on the needed gap: the gap times √(df/χ²) at the 10% and 90% points.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchcard.verdict.crossed import FloatArray, batch_signflip, crossed
from benchcard.verdict.decision import p_beyond, p_effect

DRAWS = 2000
POWER = 0.80


@dataclass(frozen=True)
class Components:
    """Variances of one clause's paired table, per cell of Δ (fixture, run and residual parts)."""

    fixture: float
    run: float
    cell: float
    df: int
    """Degrees of freedom behind the estimate (pilot fixtures − 1), for the range."""

    @property
    def total(self) -> float:
        return self.fixture + self.run + self.cell


def components(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> Components:
    """The two-way random-effects components of Δ over the pilot's fixtures scored in every repetition of
    both arms (method of moments, each floored at 0). One repetition: no run or cell term can be told apart,
    so the whole spread of the fixture differences is taken as the fixture term."""
    delta = np.asarray(variant, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    delta = delta[np.isfinite(delta).all(axis=1)]
    f, r = delta.shape
    if f < 2:
        raise ValueError("the pilot has fewer than two fixtures scored in every repetition of both arms")
    if r < 2:
        return Components(fixture=float(delta[:, 0].var(ddof=1)), run=0.0, cell=0.0, df=f - 1)
    rows, cols, grand = delta.mean(axis=1), delta.mean(axis=0), float(delta.mean())
    ms_fix = r * float(((rows - grand) ** 2).sum()) / (f - 1)
    ms_rep = f * float(((cols - grand) ** 2).sum()) / (r - 1)
    ms_err = float(((delta - rows[:, None] - cols[None, :] + grand) ** 2).sum()) / ((f - 1) * (r - 1))
    return Components(fixture=max(0.0, (ms_fix - ms_err) / r), run=max(0.0, (ms_rep - ms_err) / f),
                      cell=ms_err, df=f - 1)


@dataclass(frozen=True)
class Draws:
    """Standardised noise of S simulated runs of F fixtures × R repetitions, scaled per plan."""

    a: FloatArray
    c: FloatArray
    e: FloatArray


def draws(fixtures: int, repetitions: int, seed: int, n: int = DRAWS) -> Draws:
    rng = np.random.default_rng(seed)
    return Draws(a=rng.standard_normal((n, fixtures, 1)), c=rng.standard_normal((n, 1, repetitions)),
                 e=rng.standard_normal((n, fixtures, repetitions)))


def _table(comp: Components, z: Draws, gap: float) -> FloatArray:
    out: FloatArray = (gap + math.sqrt(comp.fixture) * z.a + math.sqrt(comp.run) * z.c
                       + math.sqrt(comp.cell) * z.e)
    return out


def effect_power(comp: Components, z: Draws, gap: float, alpha: float, min_effect: float = 0.0) -> float:
    """The share of simulated runs in which a `rises` clause holds at a true gap (the verdict's decision)."""
    delta = _table(comp, z, gap)
    c = crossed(np.zeros_like(delta), delta)
    flip = batch_signflip(c.d, c.n_fixtures)
    held = (p_effect(c, flip, True) <= alpha) & (c.gap >= min_effect)
    return float(held.mean())


def guard_power(comp: Components, z: Draws, gap: float, margin: float, alpha: float) -> float:
    """The share of simulated runs in which a `not_rises` guard holds at a true gap."""
    delta = _table(comp, z, gap)
    c = crossed(np.zeros_like(delta), delta)
    return float((p_beyond(c, margin, False) <= alpha).mean())


def needed_gap(comp: Components, z: Draws, alpha: float, power: float = POWER, min_effect: float = 0.0,
               tol: float = 5e-3) -> float:
    """The smallest true gap at which the rule's simulated power reaches `power` (bisection; inf if none)."""
    scale = math.sqrt(comp.total) if comp.total > 0 else 1.0
    hi = scale
    while effect_power(comp, z, hi, alpha, min_effect) < power:
        hi *= 2
        if hi > 1e3 * scale:
            return math.inf
    return _bisect(lambda gap: effect_power(comp, z, gap, alpha, min_effect) >= power, 0.0, hi, tol * scale)[1]


def guard_limit(comp: Components, z: Draws, margin: float, alpha: float, power: float = POWER,
                tol: float = 5e-3) -> float:
    """The largest true gap below which a `not_rises` guard (margin) holds with probability `power`."""
    scale = math.sqrt(comp.total) if comp.total > 0 else max(margin, 1e-9)
    lo, hi = margin - 50 * scale, margin
    if guard_power(comp, z, lo, margin, alpha) < power:
        return -math.inf
    return _bisect(lambda gap: guard_power(comp, z, gap, margin, alpha) < power, lo, hi, tol * scale)[0]


def _bisect(passes: Callable[[float], bool], lo: float, hi: float, width: float) -> tuple[float, float]:
    """Narrow [lo, hi] to `width`, keeping `passes` false at lo's side and true at hi's (a monotone power)."""
    while hi - lo > width:
        mid = (lo + hi) / 2
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


def pilot_range(df: int, level: float = 0.80) -> tuple[float, float]:
    """Factors on a needed gap for the pilot's uncertainty: √(df/χ²) at the (1+level)/2 and (1−level)/2 points."""
    from scipy import special

    upper_q, lower_q = (1 + level) / 2, (1 - level) / 2
    chi_hi = float(special.chdtri(df, 1 - upper_q))  # χ² quantile at upper_q
    chi_lo = float(special.chdtri(df, 1 - lower_q))
    return math.sqrt(df / chi_hi), math.sqrt(df / chi_lo)
