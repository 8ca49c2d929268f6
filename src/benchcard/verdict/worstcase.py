"""The calibrated t p: Satterthwaite's p, taken at its worst case over the variance components.

Satterthwaite's degrees of freedom are estimated from the same mean squares as the variance, and with two or
three repetitions the run term's R − 1 degrees of freedom make that estimate wild: when MS_rep comes out small
by chance both the variance and the df favour rejection. Plugged in as is, the rule said "result" in 6–9 % of
A/A runs at F = 24–48 with R = 3, and R = 2 (docs/statistics.md). So the verdict does not read the t p off
Student's t: it asks how often a p at least this small arises when the gap is truly 0, under the two-way
normal model of crossed.py, for every ratio of fixture, run and cell variance on a grid (seeded draws, cached
per design), and reports the largest such rate, never less than the plain p. That is the definition of a
valid p with nuisance parameters (the supremum over them), computed by simulation.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import special

FloatArray = npt.NDArray[np.float64]

#: Fixture term R·ω²/σ²_e and run term F·σ²_run/σ²_e of the null grid (0 = absent, 100 = dominant).
FIXTURE_RATIOS = (0.0, 0.5, 2.0, 10.0, 100.0)
RUN_RATIOS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0, 100.0)
#: Null draws per grid point (half of them the mirror image of the other half, so both tails are alike).
DRAWS = 20_000
SEED = 20261201


def variance_and_df(a: FloatArray, b: FloatArray, c: FloatArray, n: npt.ArrayLike, r: int,
                    err_df: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """se², df and the excess run variance from a = MS_fix/(FR), b = MS_rep/(FR), c = MS_err/(FR).

    One formula for the verdict and for the null draws below, so the calibration is of the statistic used."""
    n_arr = np.asarray(n, dtype=np.float64)
    err = np.asarray(err_df, dtype=np.float64)
    excess = np.maximum(0.0, b - c)
    with np.errstate(invalid="ignore", divide="ignore"):
        # over MS_fix, MS_rep and −MS_err: the excess of a difference of mean squares is as noisy as both
        satt = (a + b - c) ** 2 / (a * a / np.maximum(n_arr - 1, 1) + b * b / (r - 1) + c * c / err)
    df = np.where(excess > 0, satt, np.maximum(n_arr - 1, 1))
    out_df: FloatArray = np.maximum(np.nan_to_num(df, nan=1.0), 1.0)
    return a + excess, out_df, excess


@lru_cache(maxsize=16)
def null_one_sided(n: int, complete: int, r: int) -> FloatArray:
    """Sorted one-sided Satterthwaite p's of null gaps, one row per grid point: (len(grid), DRAWS)."""
    rng = np.random.default_rng([SEED, n, complete, r])
    half = DRAWS // 2
    err = max(complete - 1, 1) * (r - 1)
    z = rng.standard_normal(half)
    z = np.concatenate([z, -z])
    u_fix = np.tile(rng.chisquare(max(n - 1, 1), half) / max(n - 1, 1), 2)
    u_rep = np.tile(rng.chisquare(r - 1, half) / (r - 1), 2)
    u_err = np.tile(rng.chisquare(err, half) / err, 2)
    rows = []
    for fixture in FIXTURE_RATIOS:
        for run in RUN_RATIOS:
            # scaled so that σ²_e/(F·R) = 1: E[a] = 1 + fixture, E[b] = 1 + run, E[c] = 1
            var, df, _ = variance_and_df((1 + fixture) * u_fix, (1 + run) * u_rep, u_err, n, r, err)
            t = z * np.sqrt(1 + fixture + run) / np.sqrt(var)
            rows.append(np.sort(special.stdtr(df, -t)))
    table: FloatArray = np.stack(rows)
    table.setflags(write=False)
    return table


def _groups(n: npt.NDArray[np.int64], complete: npt.NDArray[np.int64]) -> list[tuple[int, int, npt.NDArray[np.bool_]]]:
    keys = np.stack([n, complete], axis=1)
    return [(int(k[0]), int(k[1]), (keys == k).all(axis=1)) for k in np.unique(keys, axis=0)]


def calibrate(p_one: FloatArray, n: npt.NDArray[np.int64], complete: npt.NDArray[np.int64], r: int,
              applies: npt.NDArray[np.bool_]) -> FloatArray:
    """The worst-case rate of a one-sided Satterthwaite p at most `p_one`, row by row (rows where `applies` is
    False — no run term measured — keep their p). Never below the p itself; (hits + 1)/(draws + 1)."""
    out = np.array(p_one, dtype=np.float64, copy=True)
    if r < 2 or not applies.any():
        return out
    for nn, cc, rows in _groups(n, complete):
        rows = rows & applies
        if nn < 2 or cc < 2 or not rows.any():
            continue
        table = null_one_sided(nn, cc, r)
        hits = np.stack([np.searchsorted(row, out[rows], side="right") for row in table]).max(axis=0)
        out[rows] = np.maximum(out[rows], (hits + 1.0) / (table.shape[1] + 1.0))
    return np.minimum(out, 1.0)


def calibrated_level(u: float, n: npt.NDArray[np.int64], complete: npt.NDArray[np.int64], r: int,
                     applies: npt.NDArray[np.bool_]) -> FloatArray:
    """The one-sided Satterthwaite p a gap must reach for its calibrated p to be ≤ u (≤ u itself): an interval
    drawn at it agrees with the test."""
    out = np.full(n.shape, u, dtype=np.float64)
    if r < 2 or not applies.any():
        return out
    for nn, cc, rows in _groups(n, complete):
        rows = rows & applies
        if nn < 2 or cc < 2 or not rows.any():
            continue
        table = null_one_sided(nn, cc, r)
        allowed = int(np.floor(u * (table.shape[1] + 1.0))) - 1  # hits allowed for (hits + 1)/(N + 1) ≤ u
        if allowed < 1:
            out[rows] = 0.0
            continue
        out[rows] = min(u, float(table[:, allowed - 1].min()))
    return out
