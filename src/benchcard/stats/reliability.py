"""Krippendorff's alpha: how far repeated judgements of the same outputs agree, beyond what chance gives.

alpha = 1 − D_o / D_e, where D_o is the disagreement observed within units (outputs) and D_e the disagreement
expected between any two values of the whole sample. Units with fewer than two values are not pairable and are
left out (missing judgements are allowed). Computed from the coincidence matrix of distinct values, so the cost
grows with the number of distinct grades, not with the square of the judgements.
(Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011; tests check its worked example.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Level = Literal["nominal", "interval"]


def krippendorff_alpha(units: Sequence[Sequence[float]], level: Level = "interval") -> float | None:
    """Alpha over units of values (each unit's values, NaN or absent for missing); None when it is undefined
    (no pairable unit, or every value the same, so there is no disagreement to expect)."""
    rows = [np.asarray([x for x in u if x == x], float) for u in units]  # drop NaN
    rows = [r for r in rows if r.size >= 2]
    if not rows:
        return None
    values = np.unique(np.concatenate(rows))
    if values.size < 2:
        return None
    counts = np.zeros((len(rows), values.size))
    for i, r in enumerate(rows):
        idx = np.searchsorted(values, r)
        np.add.at(counts[i], idx, 1.0)
    m = counts.sum(axis=1)
    weighted = counts / (m - 1)[:, None]
    coincidence = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta = (1.0 - np.eye(values.size) if level == "nominal"  # any two different values disagree fully
             else (values[:, None] - values[None, :]) ** 2)  # interval: by the squared distance
    observed = float((coincidence * delta).sum() / n)
    expected = float((np.outer(n_c, n_c) * delta).sum() / (n * (n - 1)))
    if expected == 0.0:
        return None
    return 1.0 - observed / expected
