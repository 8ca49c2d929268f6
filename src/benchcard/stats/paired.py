"""The statistics behind a verdict, as plain functions over numpy arrays shaped (fixtures, repetitions).

Kept free of cards, runs and files so that every figure a verdict prints can be checked against scipy and
against worked numbers. Conventions shared by every function:

- Row f of an array is fixture f, column r is repetition (run) r. Baseline and variant are paired by row.
- A cell that has no score (a transport failure or a cut-off output the card allowed) is NaN: it is left out
  of the means (the clause rules bound cut-off cells at the worst case, worstcase.py). A
  fixture with no score at all in either arm is left out of the pairing.
- Where a quantity cannot be estimated (one fixture, one run) the answer is the conservative one: an
  infinite interval or noise floor, a p-value of 1. Nothing can rise above noise that cannot be measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import overload

import numpy as np
import numpy.typing as npt
from scipy import special  # not scipy.stats: the same t and normal functions without its import time

from benchcard.stats.signflip import signflip_p

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "NoiseFloor",
    "PairedGap",
    "fixture_differences",
    "noise_floor",
    "norm_ppf",
    "paired_gap",
    "signflip_p",
    "t_ppf",
    "t_sf",
    "wilson",
    "wilson_at",
]

#: Relative tolerance under which a set of differences counts as constant (se == 0).
_CONSTANT_RTOL = 1e-12


# --------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PairedGap:
    """The paired comparison of one metric: variant minus baseline, fixture by fixture."""

    gap: float
    """Mean over fixtures of d_f = m_variant,f − m_baseline,f (each m the mean over repetitions)."""
    se: float
    """sd(d, ddof=1) / √F; inf with fewer than two fixtures; 0 when every fixture moved alike (the sample's
    spread, not certainty: then no interval is estimated and the sign-flip p stands in for the t p)."""
    t: float
    """gap / se; 0 when se is 0 or inf (no t statistic)."""
    df: int
    """F − 1."""
    ci_low: float
    """Two-sided 1 − alpha t interval, lower end (−inf when none can be estimated: see `no_interval`)."""
    ci_high: float
    """Two-sided 1 − alpha t interval, upper end (+inf when none can be estimated)."""
    p_value: float
    """Two-sided paired t p-value; the sign-flip p when se is 0; 1 with one fixture."""
    p_signflip: float
    """Two-sided sign-flip permutation p-value over fixtures."""
    upper_one_sided: float
    """One-sided 1 − alpha upper confidence bound of the gap (the `not_rises` guard compares it to margin)."""
    lower_one_sided: float
    """One-sided 1 − alpha lower confidence bound of the gap (mirror, for a `not_falls` guard)."""
    n_fixtures: int
    """F: the fixtures that were paired (scored in both arms)."""
    alpha: float
    """The alpha the intervals were computed at."""

    @property
    def no_interval(self) -> str | None:
        """Why no interval could be estimated (shown instead of one), or None."""
        if self.n_fixtures < 2:
            return "one fixture: no spread can be measured"
        if self.se == 0.0:
            return "every fixture moved alike: zero spread is no measure of the uncertainty"
        return None


@dataclass(frozen=True)
class NoiseFloor:
    """How far the baseline moves between its own runs, scaled to the gap between two arms of R runs."""

    run_means: tuple[float, ...]
    """M_r: the baseline's mean over fixtures in run r."""
    sd: float
    """sd(M_r, ddof=1) (sampling noise and run shocks together); inf with fewer than two runs."""
    value: float
    """NF = t(1 − alpha/2, R − 1) · √(2·σ²_run/R), σ²_run the excess run-level variance; inf if unmeasurable."""


# ------------------------------------------------------------------------------------------- helpers


def _as_grid(scores: npt.ArrayLike, name: str) -> FloatArray:
    """An (F, R) float array; 1-D input is one repetition per fixture."""

    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be shaped (fixtures, repetitions), got {arr.ndim} dimensions")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{name} holds an infinite score")
    return arr


def _row_means(arr: FloatArray) -> tuple[FloatArray, npt.NDArray[np.intp]]:
    """Per-row mean over the non-NaN cells, and how many there were (mean is NaN where none)."""

    valid = ~np.isnan(arr)
    counts = valid.sum(axis=1)
    sums = np.where(valid, arr, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return means, counts


def fixture_differences(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> FloatArray:
    """d_f = mean_r variant[f, r] − mean_r baseline[f, r], for fixtures scored in both arms.

    Repetitions of one fixture are not independent evidence about the prompt, so they are averaged first
    and the fixture is the unit of inference.
    """

    base = _as_grid(baseline, "baseline")
    var = _as_grid(variant, "variant")
    if base.shape[0] != var.shape[0]:
        raise ValueError(f"baseline has {base.shape[0]} fixtures but variant has {var.shape[0]}")
    m_base, n_base = _row_means(base)
    m_var, n_var = _row_means(var)
    keep = (n_base > 0) & (n_var > 0)
    if not keep.any():
        raise ValueError("no fixture is scored in both baseline and variant")
    return np.asarray(m_var[keep] - m_base[keep], dtype=np.float64)


def _is_constant(d: FloatArray) -> bool:
    """True when all differences are equal up to rounding: se is 0 and a t statistic would divide by 0."""

    scale = max(1.0, float(np.max(np.abs(d))))
    return float(np.ptp(d)) <= _CONSTANT_RTOL * scale


@overload
def t_ppf(q: float, df: float) -> float: ...
@overload
def t_ppf(q: float, df: FloatArray) -> FloatArray: ...
def t_ppf(q: float, df: float | FloatArray) -> float | FloatArray:
    """Quantile of Student's t with `df` degrees of freedom (scipy.stats.t.ppf): a number, or element-wise over an
    array of (possibly fractional) degrees of freedom. The one t quantile of the statistics."""
    if isinstance(df, np.ndarray):  # q as floats: np.full_like would give an integer df's dtype, q = 0.975 as 0
        out: FloatArray = special.stdtrit(df, np.full(df.shape, q, dtype=np.float64))
        return out
    return float(special.stdtrit(df, q))


@overload
def t_sf(x: float, df: float) -> float: ...
@overload
def t_sf(x: FloatArray, df: float | FloatArray) -> FloatArray: ...
def t_sf(x: float | FloatArray, df: float | FloatArray) -> float | FloatArray:
    """Upper tail of Student's t (scipy.stats.t.sf): a number, or element-wise over arrays. The one t tail of the
    statistics."""
    if isinstance(x, np.ndarray) or isinstance(df, np.ndarray):
        out: FloatArray = special.stdtr(df, -x)
        return out
    return float(special.stdtr(df, -x))


def norm_ppf(q: float) -> float:
    """Quantile of the standard normal (scipy.stats.norm.ppf)."""
    return float(special.ndtri(q))


# --------------------------------------------------------------------------------------- paired gap


def paired_gap(
    baseline: npt.ArrayLike,
    variant: npt.ArrayLike,
    alpha: float = 0.05,
    *,
    seed: int = 0,
    n_draws: int = 100_000,
) -> PairedGap:
    """Gap, paired t interval and p-values of variant minus baseline, pairing by fixture.

    Pairing removes fixture difficulty, which both arms share, from the error; the sign-flip p is reported
    beside the t p because it needs no normality, only that the sign of each fixture's difference is
    exchangeable under no effect. `seed` and `n_draws` only matter for the sign-flip when F > 20.
    """
    _check_alpha(alpha)
    d = fixture_differences(baseline, variant)
    n = int(d.size)
    gap = float(d.mean())
    p_flip = signflip_p(d, n_draws=n_draws, seed=seed)
    if n < 2:
        inf = math.inf
        return PairedGap(gap, inf, 0.0, 0, -inf, inf, 1.0, p_flip, inf, -inf, n, alpha)
    df = n - 1
    if _is_constant(d):
        # Every fixture moved by the same amount. A sample with no spread does not show a true gap without
        # uncertainty (ties are common with pass/fail scores and few repetitions): no t interval is estimated,
        # and the sign-flip p, which needs no spread, stands in for the t p (as in the verdict's decision).
        inf = math.inf
        return PairedGap(gap, 0.0, 0.0, df, -inf, inf, p_flip, p_flip, inf, -inf, n, alpha)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    t_stat = gap / se
    p = 2.0 * t_sf(abs(t_stat), df)
    half = t_ppf(1.0 - alpha / 2.0, df) * se
    one = t_ppf(1.0 - alpha, df) * se
    return PairedGap(
        gap=gap,
        se=se,
        t=t_stat,
        df=df,
        ci_low=gap - half,
        ci_high=gap + half,
        p_value=min(1.0, p),
        p_signflip=p_flip,
        upper_one_sided=gap + one,
        lower_one_sided=gap - one,
        n_fixtures=n,
        alpha=alpha,
    )


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")


# -------------------------------------------------------------------------------------- noise floor


def noise_floor(baseline: npt.ArrayLike, alpha: float = 0.05) -> NoiseFloor:
    """The baseline's run-to-run spread beyond its sampling noise, on the scale of a gap between two arms.

    A shock shared by every fixture of one run (an API-side change, a load spike) moves every fixture of
    that run together. The spread of the baseline's per-run means M_r holds such shocks *and* the cells'
    sampling noise, which the paired standard error already counts; so only the excess is the run-level
    part: σ²_run = max(0, MS_rep − MS_err)/F from the two-way table of the fixtures scored in every run,
    NF = t(1 − α/2, R − 1) · √(2·σ²_run/R). (The first version used sd(M_r) whole, which counted the
    sampling noise twice; docs/statistics.md.) Fewer than two runs or two complete fixtures: infinite.
    """

    _check_alpha(alpha)
    base = _as_grid(baseline, "baseline")
    col_means, col_counts = _row_means(base.T)
    run_means = col_means[col_counts > 0]
    means = tuple(float(m) for m in run_means)
    complete = base[~np.isnan(base).any(axis=1)]
    f, r = complete.shape
    if r < 2 or f < 2:
        return NoiseFloor(run_means=means, sd=math.inf if run_means.size < 2 else float(run_means.std(ddof=1)),
                          value=math.inf)
    sd = float(run_means.std(ddof=1))
    rows = complete.mean(axis=1, keepdims=True)
    cols = complete.mean(axis=0, keepdims=True)
    grand = float(complete.mean())
    ms_rep = f * float(((cols - grand) ** 2).sum()) / (r - 1)
    ms_err = float(((complete - rows - cols + grand) ** 2).sum()) / ((f - 1) * (r - 1))
    excess = max(0.0, ms_rep - ms_err) / f
    value = t_ppf(1.0 - alpha / 2.0, r - 1) * math.sqrt(2.0 * excess / r)
    return NoiseFloor(run_means=means, sd=sd, value=value)


# ------------------------------------------------------------------------------------------- Wilson


def wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials.

    Unlike the Wald interval it stays inside [0, 1] and does not collapse to a point at 0/n or n/n, which
    is exactly the case of a `holds` clause that held in all five repetitions.
    """
    _check_alpha(alpha)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 ≤ k ≤ n, got k={k}, n={n}")
    return wilson_at(k / n if n else 0.0, n, norm_ppf(1.0 - alpha / 2.0))


def wilson_at(p: float, n: int, z: float) -> tuple[float, float]:
    """The Wilson interval of a mean p over n trials at z standard errors: `wilson`'s, and the bounds a sequential
    probe's look held to its gate before the exact bound (`sequential.gate_bounds(..., "wilson")`, at the look's
    boundary z; a [0, 1] score of mean p varies at most as p(1 − p), so it holds for fractional scores too). One
    formula, in one order of operations: a look sealed with it re-verifies bit for bit (tests/stats/test_paired.py
    -k wilson_at holds both former copies' outputs over a grid). A mean of 1 (0) has the upper (lower) bound 1 (0)
    exactly, not 1 − 1e-16, which would put a perfect run below a gate of 1; no trial, or an infinite z (no α
    spent), bounds nothing: [0, 1]. (`replication.wilson_bounds`, vectorised over numpy arrays, orders one term
    otherwise and differs in the last bit on some inputs, so its figures stay its own.)"""
    if n == 0 or not math.isfinite(z):
        return 0.0, 1.0
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2n / (4 * n)) / (1 + z2n)
    return 0.0 if p <= 0 else max(0.0, centre - half), 1.0 if p >= 1 else min(1.0, centre + half)
