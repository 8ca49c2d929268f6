"""The calibrated gap of one clause: a variance with a fixture term and a run-level term that is always in.

Vectorised over a leading axis of simulations, so that the verdict (one run: a batch of one), `benchcard plan`
and `benchmarks/calibration.py` all take their decisions from the same code. Arrays are shaped
(S, fixtures, repetitions); NaN is a cell without a score. docs/statistics.md derives every formula.

With Δ_fr = variant_fr − baseline_fr (repetition r of both arms runs in the same block of time), the gap
mean_f d_f (d_f = mean_r variant_f − mean_r baseline_f) has variance ω²/F + σ²_run/R + σ²_e/(F·R). The paired
variance sd(d)²/F = MS_fix/(F·R) estimates ω²/F + σ²_e/(F·R), MS_err/(F·R) estimates σ²_e/(F·R), and the run
term σ²_run/R + σ²_e/(F·R) is estimated twice: by the spread of the per-repetition gaps (MS_rep of Δ) and by
the spread of the arms' per-repetition sums (MS_rep of variant + baseline), which has the same expectation when
the arms' run shocks are independent, whatever their sizes (Var(c_A + c_B) = Var(c_A − c_B)). Pooled, MS_run is
the sum of the arms' own repetition mean squares: 2(R − 1) degrees of freedom when the arms spread alike, R − 1
when one arm's spread is all of it (Welch's df over the two). se² = (MS_fix + MS_run − MS_err)/(F·R), never
below 0.6·MS_run/(F·R) (worstcase.variance_and_df), and its p is calibrated to the worst case over the
variance components and over how the run variance splits between the arms (worstcase.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchcard.stats.paired import t_ppf, t_sf
from benchcard.stats.worstcase import RUN_SHARE, calibrate, critical_t, variance_and_df

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Below this share of the gap's scale a standard error counts as zero (every fixture moved alike).
ZERO_SE_RTOL = 1e-12
#: Sign patterns enumerated exactly up to this many fixtures in a batch; seeded draws above it.
BATCH_EXACT_FIXTURES = 12


@dataclass(frozen=True)
class Crossed:
    """The moments of one clause's gap, one entry per simulation (a verdict has one)."""

    gap: FloatArray
    var_fixture: FloatArray
    """sd(d)²/F: the paired, fixture-clustered variance of the gap (inf with fewer than two fixtures)."""
    var_run: FloatArray
    """The run term MS_run/(F·R): the arms' run-to-run spread as a variance of the gap (cell noise included);
    inf when it cannot be measured (R < 2). se² is never below RUN_SHARE of it."""
    df: FloatArray
    """The reference degrees of freedom: the run term's, R − 1 to 2(R − 1) by Welch over the arms' own run-to-run
    spreads (F − 1 when no run term is measured)."""
    n_fixtures: IntArray
    d: FloatArray
    """(S, F) per-fixture differences; 0 where a fixture is not scored in both arms (a sign-flip ignores it)."""
    spread: BoolArray
    """False when every scored cell of both arms holds one value: a floor or ceiling, nothing measurable."""
    repetitions: int = 1
    complete: IntArray | None = None
    """Fixtures scored in every repetition of both arms (the two-way table's rows), per simulation."""
    run_measured: BoolArray | None = None
    """Where the run term was measured (R ≥ 2, two complete fixtures): the t p is then calibrated
    (worstcase.py); elsewhere it is read off Student's t."""
    var_total: FloatArray | None = None
    """se², the gap's variance (worstcase.variance_and_df); None: var_fixture + var_run."""
    fixed_arm: BoolArray | None = None
    """One arm answered each fixture alike in every repetition: no run variance to split between the arms, and
    the calibration's worst case is over the null points where that arm has none (worstcase.calibrate)."""

    @property
    def se(self) -> FloatArray:
        total = self.var_fixture + self.var_run if self.var_total is None else self.var_total
        se: FloatArray = np.sqrt(total)
        return se

    @property
    def flip_floor(self) -> FloatArray:
        """The smallest two-sided p an exact sign-flip of these differences can reach: 2/2^n over the n
        fixtures that moved (1 when none did). Few fixtures cannot win, whatever the t says."""
        moved = (np.abs(self.d) > 0).sum(axis=1)
        out: FloatArray = np.minimum(1.0, np.power(0.5, moved.astype(np.float64) - 1.0))
        return out

    @property
    def zero_se(self) -> BoolArray:
        """No spread at all: the t statistic would divide by zero; the sign-flip decides alone."""
        scale = np.maximum(1.0, np.abs(self.gap))
        out: BoolArray = np.isfinite(self.se) & (self.se <= ZERO_SE_RTOL * scale)
        return out


def _grid3(a: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1, 1)
    elif arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(f"expected scores shaped (fixtures, repetitions) or (sims, fixtures, repetitions), "
                         f"got shape {arr.shape}")
    return arr


def crossed(baseline: npt.ArrayLike, variant: npt.ArrayLike, *, unmeasured_run_var: float = np.inf) -> Crossed:
    """The gap of variant over baseline and its two variance components (see the module docstring).

    With one repetition the run term cannot be measured: it is infinite (nothing can be shown) unless the caller
    states another value; only `compare` does, for one-epoch logs of other tools, and says so in its finding."""
    base, var = _grid3(baseline), _grid3(variant)
    if base.shape != var.shape:
        raise ValueError(f"baseline is shaped {base.shape} but variant {var.shape}")
    s, _, r = base.shape
    vb, vv = ~np.isnan(base), ~np.isnan(var)
    whole = bool(vb.all() and vv.all())  # every cell scored (a simulation's tables): nothing to mask
    nb, nv = vb.sum(axis=2), vv.sum(axis=2)
    mb = _scored(base, vb, whole).sum(axis=2) / np.maximum(nb, 1)
    mv = _scored(var, vv, whole).sum(axis=2) / np.maximum(nv, 1)
    keep = (nb > 0) & (nv > 0)
    n = keep.sum(axis=1)
    d = np.where(keep, mv - mb, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(n > 0, d.sum(axis=1) / np.maximum(n, 1), np.nan)
        dev = np.where(keep, d - gap[:, None], 0.0)
        s2 = (dev * dev).sum(axis=1) / np.maximum(n - 1, 1)
        var_fix = np.where(n >= 2, s2 / np.maximum(n, 1), np.inf)

    # the run term, from the two-way tables over the fixtures scored in every repetition of both arms
    delta = var - base
    complete: BoolArray = np.asarray(np.isfinite(delta).all(axis=2))
    fc = complete.sum(axis=1)
    if r >= 2:
        every = bool(complete.all())
        ms_rep, ms_err = _two_way(delta, complete, fc, r, every)
        ms_sum, _ = _two_way(var + base, complete, fc, r, every)
        rep_var, noise_var = _two_way(var, complete, fc, r, every)
        rep_base, noise_base = _two_way(base, complete, fc, r, every)
        measurable = fc >= 2
        fr = np.maximum(fc, 1) * r
        # the spread of the gaps and of the arms' sums, pooled: up to 2(R − 1) degrees of freedom
        ms_run = (ms_rep + ms_sum) / 2
        arm_var, arm_base = np.maximum(rep_var, noise_var) / fr, np.maximum(rep_base, noise_base) / fr
        if not whole:  # unscored cells weigh the repetitions' shocks unequally in the gap: each arm's part scaled
            weigh_v, weigh_b = _shock_weight(vv, keep, nv, n, r), _shock_weight(vb, keep, nb, n, r)
            ms_run = ms_run + (weigh_v - 1.0) * rep_var + (weigh_b - 1.0) * rep_base
            arm_var, arm_base = weigh_v * arm_var, weigh_b * arm_base
        fixed = _steady(var, complete, every) | _steady(base, complete, every)
        se2, ref_df = variance_and_df(var_fix, ms_run / fr, ms_err / fr, arm_var, arm_base, r, n, fixed)
        var_run = np.where(measurable, ms_run / fr, np.inf)
        run_measured = measurable & np.isfinite(var_fix)
        total = np.where(run_measured, se2, var_fix + var_run)
        df = np.where(run_measured, ref_df, np.maximum(n - 1, 1).astype(float))
    else:
        var_run = np.full(s, unmeasured_run_var)
        total = var_fix + var_run
        df = np.maximum(n - 1, 1).astype(float)
        run_measured = np.zeros(s, dtype=bool)
        fixed = np.zeros(s, dtype=bool)

    spread = _spread(base, var, whole)
    return Crossed(gap=gap, var_fixture=var_fix, var_run=var_run, df=np.maximum(df, 1.0), n_fixtures=n, d=d,
                   spread=spread, repetitions=r, complete=fc.astype(np.int64), run_measured=run_measured,
                   var_total=total, fixed_arm=fixed)


def _shock_weight(scored: BoolArray, keep: BoolArray, n_scored: IntArray, n: IntArray, r: int) -> FloatArray:
    """R·Σ_r w_r² for one arm, w_r the weight its repetition r's shock has in the gap (each kept fixture's mean
    over its scored cells, averaged over the kept fixtures): 1 when every kept fixture is scored in every
    repetition, more when unscored cells bunch in some repetitions (an outage). The arm's run term, measured on the
    complete fixtures as if each repetition weighed 1/R, is that many times too small for the gap without it: a
    variant whose last repetition failed on half of 24 fixtures, its shocks on the score scale, said "result" in
    0.057 of A/A runs at 24 × 3 (docs/statistics.md, "Audit, 2026-12-07")."""
    share = np.where(keep[:, :, None] & scored, 1.0, 0.0) / np.maximum(n_scored, 1)[:, :, None]
    w = share.sum(axis=1) / np.maximum(n, 1)[:, None]
    out: FloatArray = r * (w * w).sum(axis=1)
    return np.where(out > 1.0 + 1e-9, out, 1.0)  # ≥ 1 by Cauchy–Schwarz; rounding is not an outage


def _scored(x: FloatArray, keep: BoolArray, whole: bool) -> FloatArray:
    """x with its unscored cells as 0. Where every cell is scored and x is in C order (as np.where's copy would
    be), x itself: the same numbers in the same layout, so every sum over it adds in the same order, without
    a copy of the whole table (a simulation's tables are 2,000 runs or more)."""
    if whole and x.flags.c_contiguous:
        return x
    out: FloatArray = np.where(keep, x, 0.0)
    return out


def _spread(base: FloatArray, var: FloatArray, whole: bool) -> BoolArray:
    """Whether the scored cells of both arms hold more than one value (max and min are exact in any order)."""
    s = base.shape[0]
    if whole:  # every cell scored, so each run has some (no dimension of a table is 0)
        high = np.maximum(base.max(axis=(1, 2)), var.max(axis=(1, 2)))
        out: BoolArray = high > np.minimum(base.min(axis=(1, 2)), var.min(axis=(1, 2)))
        return out
    both = np.concatenate([base.reshape(s, -1), var.reshape(s, -1)], axis=1)
    scored = ~np.isnan(both)
    high = np.where(scored, both, -np.inf).max(axis=1)
    low = np.where(scored, both, np.inf).min(axis=1)
    out = scored.any(axis=1) & (high > low)
    return out


def _steady(x: FloatArray, complete: BoolArray, every: bool = False) -> BoolArray:
    """Whether an arm gave each complete fixture one score in every repetition (temperature 0, or a floor or
    ceiling): it has no run-to-run variance at all. `every`: every fixture is complete (nothing to mask)."""
    spread = x if every else np.where(complete[:, :, None], x, 0.0)
    out: BoolArray = (spread.max(axis=2) == spread.min(axis=2)).all(axis=1)
    return out


def _two_way(x: FloatArray, complete: BoolArray, fc: IntArray, r: int,
             every: bool = False) -> tuple[FloatArray, FloatArray]:
    """MS_repetition and MS_error of each simulation's two-way table over its complete fixtures. `every`: every
    fixture is complete, so nothing is masked and the residuals are made in one buffer (the same operations in
    the same order: the same numbers)."""
    xz = _scored(x, complete[:, :, None], every)
    row = xz.sum(axis=2) / r
    col = xz.sum(axis=1) / np.maximum(fc, 1)[:, None]
    grand = row.sum(axis=1) / np.maximum(fc, 1)
    ms_rep = fc * ((col - grand[:, None]) ** 2).sum(axis=1) / (r - 1)
    if every:
        resid = xz - row[:, :, None]
        resid -= col[:, None, :]
        resid += grand[:, None, None]
        np.multiply(resid, resid, out=resid)
    else:
        resid = np.where(complete[:, :, None], xz - row[:, :, None] - col[:, None, :] + grand[:, None, None], 0.0)
        resid = resid * resid
    ms_err = resid.sum(axis=(1, 2)) / (np.maximum(fc - 1, 1) * (r - 1))
    return ms_rep, ms_err


def batch_signflip(d: FloatArray, n: IntArray, *, seed: int = 0, n_draws: int = 4000) -> FloatArray:
    """Two-sided sign-flip p of each row of d (zeros are unpaired fixtures, which change no p).

    Exact over all 2^F patterns up to BATCH_EXACT_FIXTURES columns; above, `n_draws` seeded patterns shared by
    every row and the add-one estimate. The verdict itself uses `stats.signflip_p` (exact to 20 fixtures,
    100,000 draws above); this is its batch form for simulations.
    """
    s, f = d.shape
    if f <= BATCH_EXACT_FIXTURES:
        patterns = ((np.arange(1 << f)[:, None] >> np.arange(f)) & 1) * 2.0 - 1.0
        exact = True
    else:
        rng = np.random.default_rng(seed)
        patterns = rng.integers(0, 2, size=(n_draws, f)) * 2.0 - 1.0
        exact = False
    total = d.sum(axis=1)
    threshold = np.abs(total) - 1e-9 * np.maximum(np.abs(d).sum(axis=1), 1e-300)
    hits = np.zeros(s)
    step = max(1, (1 << 22) // patterns.shape[0])
    for i in range(0, s, step):
        sums = d[i:i + step] @ patterns.T
        hits[i:i + step] = (np.abs(sums) >= threshold[i:i + step, None]).sum(axis=1)
    if exact:
        p: FloatArray = hits / patterns.shape[0]
    else:
        p = (1.0 + hits) / (1.0 + patterns.shape[0])
    return np.where(n >= 1, p, 1.0)


def one_sided_flip(n: IntArray) -> FloatArray:
    """The one-sided sign-flip p of n equal, same-signed differences: 2^−n (only the observed pattern reaches)."""
    out: FloatArray = np.power(0.5, n.astype(np.float64))
    return out


def calibrated_p(c: Crossed, t: FloatArray, *, worst: bool = True) -> FloatArray:
    """One-sided p of a t statistic of this clause (at its df), calibrated to the worst case over the variance
    components where a run term was measured (worstcase.py); with `worst` False, its floor without the worst case
    (`calibrate`)."""
    if c.complete is None or c.run_measured is None:
        return t_sf(t, c.df)
    return calibrate(t, c.df, c.n_fixtures, c.complete, c.repetitions, c.run_measured, c.fixed_arm, worst=worst)


def calibrated_quantile(c: Crossed, q: float) -> FloatArray:
    """The t an interval at one-sided level q is drawn at, so that it agrees with the calibrated test."""
    if c.complete is None or c.run_measured is None:
        return t_ppf(q, c.df)
    return critical_t(1.0 - q, c.df, c.n_fixtures, c.complete, c.repetitions, c.run_measured, c.fixed_arm)


def half_width(c: Crossed, q: float) -> FloatArray:
    """t · se at the calibrated quantile for one-sided level q: the half-width of an interval (inf where se is)."""
    with np.errstate(invalid="ignore"):
        out: FloatArray = np.where(np.isfinite(c.se), calibrated_quantile(c, q) * c.se, np.inf)
    return out


def run_floor(c: Crossed, alpha: float) -> FloatArray:
    """The noise floor shown beside a clause: the half-width the run term alone guarantees (se² is never below
    RUN_SHARE·var_run), so a gap inside it is a non-result whatever the fixtures say."""
    with np.errstate(invalid="ignore"):
        share = RUN_SHARE if c.run_measured is not None else 1.0
        out: FloatArray = np.where(np.isfinite(c.var_run),
                                   calibrated_quantile(c, 1 - alpha / 2) * np.sqrt(share * c.var_run), np.inf)
    return out
