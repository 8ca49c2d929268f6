"""The sign-flip permutation p of paired differences: exact up to 20 fixtures, seeded draws above.

Above 20 fixtures the p is the add-one estimate (1 + hits) / (1 + n_draws) over seeded sign patterns
(`resample.signflip_hits`). Two shortcuts save most of those draws and never change a decision p ≤ α that the
full draws would make (docs/verdict.md, "Speed"):

- `stop_above`: the same patterns are drawn in windows; once more of them reach the observed sum than a p of
  `stop_above` allows, the rest could only add hits, so the draws stop and the p is Besag and Clifford's
  (1991) sequential one, h / L (the h-th hit at the L-th draw), which is then above `stop_above` too;
- a sub-Gaussian bound: the exact p is at most 2·exp(−T² / (2·Σd²)) (Hoeffding); when that bound times the
  draws is below 10⁻¹², the draws would find no pattern as extreme as the observed one with probability at
  least 1 − 10⁻¹², so none is drawn and the p is 1 / (1 + n_draws), the value they give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchcard.stats.resample import signflip_window_hits

#: Sign-flip enumerates all 2^F patterns up to this many fixtures, and draws above it.
EXACT_SIGNFLIP_MAX_FIXTURES = 20
#: Relative tolerance for ties between a permuted and the observed sum (float summation order).
TIE_RTOL = 1e-9
#: The draws are skipped when the chance that any of them reaches the observed sum is below this.
SKIP_BELOW = 1e-12
#: Draws per window of the sequential path: the first window, then doubling.
FIRST_WINDOW = 8192


@dataclass(frozen=True)
class SignFlip:
    """A sign-flip p and how it was found: `draws` is None when exact (all 2^F patterns), else the number of
    patterns drawn (fewer than asked when it stopped early, 0 when the bound made them unnecessary)."""

    p: float
    draws: int | None


def _subset_sums(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """All 2^len(x) subset sums, built by doubling: index bit j set means x[j] is in the subset."""
    sums = np.zeros(1, dtype=np.float64)
    for value in x:
        sums = np.concatenate((sums, sums + value))
    return sums


def stop_hits(n_draws: int, stop_above: float) -> int:
    """The fewest hits whose add-one p over `n_draws` is above `stop_above`."""
    k = max(0, math.floor(stop_above * (1 + n_draws)) - 1)
    while k > 0 and (1 + k) / (1 + n_draws) > stop_above:
        k -= 1
    while (1 + k) / (1 + n_draws) <= stop_above:
        k += 1
    return k


def signflip(d: npt.ArrayLike, n_draws: int = 100_000, seed: int = 0, stop_above: float | None = None) -> SignFlip:
    """Two-sided sign-flip permutation p: the share of sign patterns whose |mean| reaches the observed one.

    Exact (all 2^F patterns) when F ≤ 20; above that, `n_draws` seeded patterns and the add-one estimate
    (1 + hits) / (1 + n_draws), which never reports an impossible p of 0, with the shortcuts of the module
    docstring (`stop_above` None: every draw is made unless the bound makes them needless).
    """
    diffs = np.asarray(d, dtype=np.float64).ravel()
    if diffs.size == 0:
        raise ValueError("signflip_p needs at least one difference")
    if not np.isfinite(diffs).all():
        raise ValueError("signflip_p needs finite differences")
    total = float(diffs.sum())
    observed = abs(total)
    threshold = observed - TIE_RTOL * max(float(np.abs(diffs).sum()), 1e-300)
    if diffs.size <= EXACT_SIGNFLIP_MAX_FIXTURES:
        sums = 2.0 * _subset_sums(diffs) - total
        return SignFlip(float(np.count_nonzero(np.abs(sums) >= threshold)) / float(sums.size), None)
    if n_draws < 1:
        raise ValueError("n_draws must be at least 1")
    squares = float(np.dot(diffs, diffs))
    if threshold > 0.0 and squares > 0.0:
        log_bound = math.log(2.0) - threshold * threshold / (2.0 * squares)
        if log_bound + math.log(n_draws) < math.log(SKIP_BELOW):
            return SignFlip(1.0 / (1.0 + n_draws), 0)
    needed, stop_before = n_draws + 1, 0.0  # no early stop
    if stop_above is not None and 0.0 < stop_above < 1.0:
        needed = stop_hits(n_draws, stop_above)
        stop_before = needed / stop_above  # a stop at draw L reports needed / L: only while that is above it
    hits, draws = signflip_window_hits(diffs, total, threshold, n_draws, seed, needed, stop_before, FIRST_WINDOW)
    if draws < n_draws:
        return SignFlip(hits / draws, draws)
    return SignFlip((1.0 + hits) / (1.0 + n_draws), n_draws)


def signflip_p(d: npt.ArrayLike, n_draws: int = 100_000, seed: int = 0) -> float:
    """`signflip(d, n_draws, seed).p`: every draw made (unless the bound makes them needless)."""
    return signflip(d, n_draws, seed).p
