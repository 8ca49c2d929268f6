"""Power planning's statistics: a pilot's variance components and the gap a design can detect.

The figures `benchcard plan` shows before a card is run; the verdict's own tests are in `stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from benchcard.verdict.stats import _as_grid, _check_alpha, _row_means, fixture_differences, norm_ppf

if TYPE_CHECKING:
    from benchcard.verdict.stats import FloatArray


@dataclass(frozen=True)
class VarianceComponents:
    """Where the spread of the fixture differences comes from, so a plan can trade fixtures for repetitions.

    var(d) ≈ between_var + within_var_baseline/R_b + within_var_variant/R_v: only the last two shrink with
    more repetitions; only more fixtures shrink the whole.
    """

    sd_diff: float
    """sd(d, ddof=1) of the per-fixture mean differences (what the power formula needs)."""
    n_fixtures: int
    repetitions_baseline: int
    repetitions_variant: int
    within_var_baseline: float
    """Mean over fixtures of the variance across repetitions (ddof=1) in the baseline; nan if R_b < 2."""
    within_var_variant: float
    """The same for the variant."""
    between_var: float
    """var(d) minus the repetition noise: the spread of the true per-fixture effects, floored at 0."""

    def sd_diff_at(self, repetitions: int) -> float:
        """sd of the fixture differences expected with `repetitions` runs per arm instead of the pilot's."""
        if repetitions < 1:
            raise ValueError("repetitions must be at least 1")
        if math.isnan(self.within_var_baseline) or math.isnan(self.within_var_variant):
            return self.sd_diff
        within = (self.within_var_baseline + self.within_var_variant) / repetitions
        return math.sqrt(self.between_var + within)

def variance_components(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> VarianceComponents:
    """Split a pilot's var(d) into the spread of true fixture effects and the repetition noise of each arm.

    Tells a plan whether more repetitions would help (within-fixture noise dominates) or only more fixtures
    would (between-fixture spread dominates).
    """
    base = _as_grid(baseline, "baseline")
    var = _as_grid(variant, "variant")
    d = fixture_differences(base, var)
    sd = float(d.std(ddof=1)) if d.size >= 2 else math.inf
    r_b, r_v = int(base.shape[1]), int(var.shape[1])
    w_b = _within_var(base)
    w_v = _within_var(var)
    if math.isinf(sd) or math.isnan(w_b) or math.isnan(w_v):
        between = math.nan
    else:
        between = max(0.0, sd * sd - w_b / r_b - w_v / r_v)
    return VarianceComponents(
        sd_diff=sd,
        n_fixtures=int(d.size),
        repetitions_baseline=r_b,
        repetitions_variant=r_v,
        within_var_baseline=w_b,
        within_var_variant=w_v,
        between_var=between,
    )


def _within_var(arr: FloatArray) -> float:
    """Mean over fixtures of the sample variance across repetitions (rows with < 2 scores left out)."""

    valid = ~np.isnan(arr)
    counts = valid.sum(axis=1)
    keep = counts >= 2
    if not keep.any():
        return math.nan
    means, _ = _row_means(arr[keep])
    dev = np.where(valid[keep], arr[keep] - means[:, None], 0.0)
    return float(((dev * dev).sum(axis=1) / (counts[keep] - 1)).mean())


def detectable_gap(sd_diff: float, n_fixtures: int, alpha: float = 0.05, power: float = 0.80) -> float:
    """Smallest true paired gap a two-sided test at `alpha` detects with probability `power`.

    MDE = (z_{1−α/2} + z_{power}) · sd_diff / √n: the standard paired-difference formula, the form of the
    paired power analysis in Miller 2024, "Adding Error Bars to Evals" (arXiv 2411.00640), written for the
    effect instead of for n. The paper's text was not reachable when this was written, so the equation
    number (Eq. 9) is as cited, not checked. Normal quantiles make it optimistic for a dozen fixtures
    (t_{0.975,11} = 2.20 against z = 1.96); read it as a lower bound.
    """
    _check_alpha(alpha)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power}")
    if n_fixtures < 1:
        raise ValueError("n_fixtures must be at least 1")
    if sd_diff < 0 or math.isnan(sd_diff):
        raise ValueError(f"sd_diff must be a non-negative number, got {sd_diff}")
    z = norm_ppf(1.0 - alpha / 2.0) + norm_ppf(power)
    return z * sd_diff / math.sqrt(n_fixtures)
