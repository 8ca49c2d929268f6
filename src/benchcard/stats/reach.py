"""The most a design can show: how often the verdict's rule gives a win to the plainest effect there is.

A treatment right every time against a baseline right about half the time (pass/fail cells; each fixture's
baseline rate sigmoid(a_f), a_f ~ N(0, 1) on the logit scale, so fixtures differ as real ones do and the
effect with them) is about the largest gap a pass/fail score can hold. If the rule does not call that a win in at least
`RELIABLE` of seeded runs of a design (F fixtures, R repetitions, V variants tested at Holm's first level
α/V), no real effect can be relied on to win there: the exact sign-flip's smallest p (2/2^F), Holm's α/V,
or a run term known on too few degrees of freedom stands in the way. `benchcard check` and `seal` say so
before any call, naming the smallest change that can (`smallest_change`), and `plan` prints the figure.

The runs are judged by `crossed` + `decision` as the verdict judges them, seeded, so the same design always
gives the same figure (docs/statistics.md, "No dead designs").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from benchcard.stats.crossed import batch_signflip, crossed
from benchcard.stats.decision import p_effect

#: A design must give the plainest effect a win in at least this share of runs for `seal` to accept it.
RELIABLE = 0.95
#: Simulated runs per design (seeded): the share is known to about ±0.01 at 0.95.
DRAWS = 2000
SEED = 20261204
#: How far `smallest_change` looks: repetitions up to this many, fixtures up to this many.
MAX_REPETITIONS = 30
MAX_FIXTURES = 2000


@lru_cache(maxsize=256)
def best_power(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05) -> float:
    """The share of simulated runs of this design in which a treatment right every time wins against a baseline
    right about half the time, at Holm's first level α/V."""
    if fixtures < 1 or repetitions < 2 or variants < 1:
        return 0.0
    level = alpha / variants
    if 2.0 ** (1 - fixtures) > level:  # the exact sign-flip can never reach it
        return 0.0
    rng = np.random.default_rng([SEED, fixtures, repetitions])
    rate = 1.0 / (1.0 + np.exp(-rng.standard_normal((DRAWS, fixtures, 1))))
    base = (rng.random((DRAWS, fixtures, repetitions)) < rate).astype(np.float64)
    c = crossed(base, np.ones_like(base))
    flips = np.ones_like(c.gap)
    zero = c.zero_se & (c.gap > 0)
    if zero.any():  # every fixture moved alike: the sign-flip p itself decides
        flips[zero] = batch_signflip(c.d[zero], c.n_fixtures[zero])
    return float((p_effect(c, flips, True) <= level).mean())


@dataclass(frozen=True)
class Change:
    """The smallest single change of a design that gives the plainest effect a reliable win (None: none does
    within reach)."""

    repetitions: int | None
    fixtures: int | None
    variants: int | None

    def text(self, fixtures: int, repetitions: int, variants: int) -> str:
        """"use 4 repetitions, or 19 fixtures, or 1 variant" (only the changes that work)."""
        parts = []
        if self.repetitions is not None:
            parts.append(f"{self.repetitions} repetitions")
        if self.fixtures is not None:
            parts.append(f"{self.fixtures} fixtures")
        if self.variants is not None:
            parts.append(f"{self.variants} variant{'s' if self.variants != 1 else ''} beside the baseline")
        if not parts:
            return (f"no single change within {MAX_REPETITIONS} repetitions or {MAX_FIXTURES} fixtures does "
                    f"(now {fixtures} × {repetitions}, {variants} variant(s))")
        return "use " + ", or ".join(parts)


def reliable(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05) -> bool:
    return best_power(fixtures, repetitions, variants, alpha) >= RELIABLE


@lru_cache(maxsize=64)
def smallest_change(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05) -> Change:
    """More repetitions, more fixtures or fewer variants: the smallest of each that makes the design reliable."""
    reps = next((r for r in range(max(repetitions, 1) + 1, MAX_REPETITIONS + 1)
                 if reliable(fixtures, r, variants, alpha)), None)
    fewer = next((v for v in range(variants - 1, 0, -1) if reliable(fixtures, repetitions, v, alpha)), None)
    return Change(repetitions=reps, fixtures=_fewest_fixtures(fixtures, repetitions, variants, alpha),
                  variants=fewer)


def _fewest_fixtures(fixtures: int, repetitions: int, variants: int, alpha: float) -> int | None:
    """The fewest fixtures above `fixtures` that make the design reliable (doubling, then bisection)."""
    if repetitions < 2:
        return None
    lo, hi = fixtures, max(fixtures * 2, 4)
    while not reliable(hi, repetitions, variants, alpha):
        lo, hi = hi, hi * 2
        if hi > MAX_FIXTURES:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reliable(mid, repetitions, variants, alpha) else (mid, hi)
    return hi
