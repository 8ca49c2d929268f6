"""The most a design can show: how often the verdict's rule gives a win to the plainest effect there is.

A treatment right every time against a baseline right about half the time (pass/fail cells; each fixture's
baseline rate sigmoid(a_f), a_f ~ N(0, 1) on the logit scale, so fixtures differ as real ones do and the
effect with them) is about the largest gap a pass/fail score can hold. If the rule does not call that a win in at least
`RELIABLE` of seeded runs of a design (F fixtures, R repetitions, V variants tested at Holm's first level
α/V), no real effect can be relied on to win there: the exact sign-flip's smallest p (2/2^F), Holm's α/V,
or a run term known on too few degrees of freedom stands in the way. `benchcard check` and `seal` say so
before any call, naming the smallest change that can (`smallest_change`: more repetitions, more fixtures, fewer
variants, a smaller `min_effect`, or, when no one of them is enough, fixtures and repetitions together), and
`plan` prints the figure. A `min_effect` counts: a gap below it is no win, however significant.

The runs are judged by `crossed` + `decision` as the verdict judges them, seeded, so the same design always
gives the same figure (docs/statistics.md, "No dead designs").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from benchcard.stats import _tablecache
from benchcard.stats.crossed import Crossed, FloatArray, batch_signflip, crossed
from benchcard.stats.decision import p_beyond, p_effect
from benchcard.stats.paired import wilson

if TYPE_CHECKING:
    from benchcard.stats.sequential import Schedule

#: A design must give the plainest effect a win in at least this share of runs for `seal` to accept it.
RELIABLE = 0.95
#: Simulated runs per design (seeded): the share is known to about ±0.01 at 0.95.
DRAWS = 2000
#: More seeded runs for a design whose first DRAWS leave it near RELIABLE (a share in `NEAR`): on 2,000 runs
#: alone, 22 × 3 was accepted at 0.9525 and wins 0.944 of 10,000 fresh ones (docs/cards.md, "No dead designs").
MORE_DRAWS = 6000
NEAR = (0.93, 0.97)
#: A design is reliable when the one-sided lower confidence bound (this level) of its share reaches RELIABLE.
SURE = 0.05
SEED = 20261204
#: How far `smallest_change` looks: repetitions up to this many, fixtures up to this many.
MAX_REPETITIONS = 30
MAX_FIXTURES = 2000
#: `reliable` asks a design cut to at most these first (a reliable cut answers for the larger design).
BOUND_FIXTURES = 200
BOUND_REPETITIONS = 10
#: The most cells (fixtures × repetitions) a simulated run may hold: the cut's, 200 × 10, whose runs peak at about
#: 0.4 GB in 4 s (0.9 GB with MORE_DRAWS). A larger design is simulated on its largest cut within it (`simulated`),
#: which only loses power: drawn whole, a design near the 1,000,000-call cap whose 200 × 10 cut was not reliable
#: took gigabytes (8 GB for its baseline alone) and minutes.
MAX_CELLS = BOUND_FIXTURES * BOUND_REPETITIONS
#: The plainest effect's expected gap: E[1 − sigmoid(a)], a ~ N(0, 1), is 1/2 by symmetry.
PLAIN_GAP = 0.5
#: A single change is named beside the combined one up to this many times its calls.
SINGLE_COST = 3
#: The repetition counts `smallest_change` tries when only more fixtures and repetitions together will do, in the
#: order tried: those that most often give the fewest cells first, so that the others are searched only below them
#: (the pair found is the same in any order).
TOGETHER_REPETITIONS = (5, 10, 3, 20, MAX_REPETITIONS)


def best_power(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05,
               min_effect: float = 0.0, ceiling: float | None = None) -> float:
    """The share of simulated runs of this design in which a treatment right every time wins against a baseline
    right about half the time, at Holm's first level α/V (a gap below `min_effect` is no win). `ceiling`: a guard
    of the rule against the effect's own direction on its metric (`not_rises` beside `rises`), whose margin the
    gap must also be shown below, as the verdict's win needs every clause at that level."""
    wins, runs = _wins(fixtures, repetitions, variants, alpha, min_effect, ceiling)
    return wins / runs


def share_text(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05, min_effect: float = 0.0,
               ceiling: float | None = None) -> str:
    """"wins 72% of simulated runs"; where a refused design's share would read as RELIABLE or more in whole
    percent (it is not, or not with confidence 1 − SURE), the figures that say why: "wins 95.2% of 8,000
    simulated runs, at least 94.7% with 95% confidence"; a design past MAX_CELLS says which cut was simulated."""
    cut = simulated(fixtures, repetitions)
    noun = "simulated runs" if cut == (fixtures, repetitions) else (
        f"simulated runs of its cut to {cut[0]:,} × {cut[1]:,} (the whole design is too large to simulate; more "
        "fixtures or repetitions only add power)")
    return _share_words(*_wins(fixtures, repetitions, variants, alpha, min_effect, ceiling), noun)


def simulated(fixtures: int, repetitions: int) -> tuple[int, int]:
    """The design as its runs are simulated: itself within MAX_CELLS, else its largest cut within it, repetitions
    first cut to BOUND_REPETITIONS, then fixtures (a cut only loses power, so what it wins the design wins)."""
    if fixtures * repetitions <= MAX_CELLS:
        return fixtures, repetitions
    kept = min(repetitions, BOUND_REPETITIONS)
    return min(fixtures, MAX_CELLS // kept), kept


def _share_words(wins: int, runs: int, noun: str) -> str:
    """share_text's words for `wins` of `runs` (`noun`: "simulated runs", "simulated sequential runs")."""
    if round(wins / runs, 2) < RELIABLE or _surely(wins, runs):
        return f"wins {wins / runs:.0%} of {noun}"
    low = wilson(wins, runs, 2 * SURE)[0]
    return (f"wins {wins / runs:.1%} of {runs:,} {noun}, at least {math.floor(low * 1000) / 10:.1f}% with "
            f"{1 - SURE:.0%} confidence")


@lru_cache(maxsize=256)
def _wins(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float,
          ceiling: float | None) -> tuple[int, int]:
    """Wins of the plainest effect and the runs drawn: DRAWS, and MORE_DRAWS beside them when the share is near
    RELIABLE, where 2,000 runs cannot tell 0.94 from 0.95. A design past MAX_CELLS is simulated on its cut."""
    fixtures, repetitions = simulated(fixtures, repetitions)
    if fixtures < 1 or repetitions < 2 or variants < 1 or 2.0 ** (1 - fixtures) > alpha / variants:
        return 0, DRAWS  # one repetition measures no run term; the exact sign-flip can never reach α/V
    return _drawn(lambda batch: _batch_wins(fixtures, repetitions, variants, alpha, min_effect, ceiling, batch))


def _drawn(batch_wins: Callable[[int], int]) -> tuple[int, int]:
    """Wins and runs of a design whose runs of batch 0 (DRAWS) and 1 (MORE_DRAWS) `batch_wins` judges: batch 1
    only when batch 0's share is in NEAR, for the fixed and the sequential figures alike."""
    wins = batch_wins(0)
    if NEAR[0] <= wins / DRAWS < NEAR[1]:
        return wins + batch_wins(1), DRAWS + MORE_DRAWS
    return wins, DRAWS


def _batch_wins(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float,
                ceiling: float | None, batch: int) -> int:
    level = alpha / variants
    gap, p = _evidence(fixtures, repetitions, batch)
    wins = (p <= level) & ~(gap < min_effect)
    if ceiling is not None:
        wins &= _below(fixtures, repetitions, ceiling, batch) <= level
    return int(wins.sum())


@lru_cache(maxsize=64)
def _below(fixtures: int, repetitions: int, ceiling: float, batch: int = 0) -> FloatArray:
    """The verdict's p that each simulated run's gap lies below `ceiling` (a `not_rises` guard's evidence)."""
    with _tablecache.advisory():
        return p_beyond(_crossed(fixtures, repetitions, batch), ceiling, False)


@lru_cache(maxsize=2)  # a guard's margin is sought on one design at a time
def _crossed(fixtures: int, repetitions: int, batch: int = 0) -> Crossed:
    """The simulated runs' crossed statistics, the treatment right every time against the seeded baseline."""
    base = _baseline_runs(fixtures, repetitions, batch)
    return crossed(base, np.ones_like(base))


@lru_cache(maxsize=256)
def _evidence(fixtures: int, repetitions: int, batch: int = 0) -> tuple[FloatArray, FloatArray]:
    """The simulated runs' gaps and the verdict's p that each rose (neither depends on α, V or min_effect, so
    a search over those draws the design once; seeded, so kept on disk for the next process: stats/_tablecache.py).
    Batch 0 holds DRAWS runs, batch 1 the MORE_DRAWS drawn only near RELIABLE."""
    design = (fixtures, repetitions) if batch == 0 else (fixtures, repetitions, batch)
    both = _tablecache.table("evidence", design, (2, DRAWS if batch == 0 else MORE_DRAWS),
                             lambda: np.stack(draw_evidence(fixtures, repetitions, batch)))
    return both[0], both[1]


def draw_evidence(fixtures: int, repetitions: int, batch: int = 0) -> tuple[FloatArray, FloatArray]:
    """_evidence drawn here: the design's simulated runs judged (its null table included, about 0.3 CPU-s; an
    advisory figure, so that table may come from disk)."""
    with _tablecache.advisory():
        return _judged(_crossed(fixtures, repetitions, batch))


def _judged(c: Crossed, *, worst: bool = True) -> tuple[FloatArray, FloatArray]:
    """Each simulated run's gap and the verdict's p that it rose (with `worst` False, a floor of it)."""
    flips = np.ones_like(c.gap)
    zero = c.zero_se & (c.gap > 0)
    if zero.any():  # every fixture moved alike: the sign-flip p itself decides
        flips[zero] = batch_signflip(c.d[zero], c.n_fixtures[zero])
    return c.gap, p_effect(c, flips, True, worst=worst)



def _baseline_runs(fixtures: int, repetitions: int, batch: int = 0) -> FloatArray:
    """The seeded baseline of the plainest effect: each fixture right with probability sigmoid(a), a ~ N(0, 1),
    in every repetition (the treatment is right every time). One draw per design for the fixed and sequential
    figures alike; batch 1 is MORE_DRAWS runs of their own seed."""
    rng = np.random.default_rng([SEED, fixtures, repetitions] + ([batch] if batch else []))
    draws = DRAWS if batch == 0 else MORE_DRAWS
    rate = 1.0 / (1.0 + np.exp(-rng.standard_normal((draws, fixtures, 1))))
    return (rng.random((draws, fixtures, repetitions)) < rate).astype(np.float64)


@dataclass(frozen=True)
class Change:
    """The smallest change of a design that gives the plainest effect a reliable win: each single change that
    does (None: none within reach), and `together` (fixtures, repetitions) when no single one does."""

    repetitions: int | None
    fixtures: int | None
    variants: int | None
    min_effect: float | None = None
    together: tuple[int, int] | None = None

    def text(self, fixtures: int, repetitions: int, variants: int) -> str:
        """"use 4 repetitions, or 19 fixtures, or 1 variant" (only the changes that work)."""
        parts = []
        if self.repetitions is not None:
            parts.append(f"{self.repetitions} repetitions")
        if self.fixtures is not None:
            parts.append(f"{self.fixtures} fixtures")
        if self.variants is not None:
            parts.append(f"{self.variants} variant{'s' if self.variants != 1 else ''} beside the baseline")
        if self.min_effect is not None:
            parts.append(f"a min_effect of at most {self.min_effect:.2f}")
        if self.together is not None:
            parts.append(f"{self.together[0]} fixtures and {self.together[1]} repetitions together")
        if not parts:
            return (f"no change within {MAX_REPETITIONS} repetitions and {MAX_FIXTURES} fixtures does "
                    f"(now {fixtures} × {repetitions}, {variants} variant(s)), as far as benchcard simulates: a design "
                    f"past {MAX_CELLS:,} cells is judged on its largest cut within them, which only loses power")
        return "use " + ", or ".join(parts)


def reliable(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05, min_effect: float = 0.0,
             ceiling: float | None = None) -> bool:
    """Whether the design gives the plainest effect a win in `RELIABLE` of its simulated runs. A large design is
    first asked cut to `BOUND_FIXTURES` fixtures and `BOUND_REPETITIONS` repetitions: fewer of either only loses
    power, so a reliable cut answers for it without drawing 2,000 runs of every fixture (20,000 fixtures × 5
    repetitions took 188 s and 13.8 GB in `check` before)."""
    cut = (min(fixtures, BOUND_FIXTURES), min(repetitions, BOUND_REPETITIONS))
    if cut != (fixtures, repetitions) and _sure(*cut, variants, alpha, min_effect, ceiling):
        return True
    return _sure(fixtures, repetitions, variants, alpha, min_effect, ceiling)


def _sure(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float,
          ceiling: float | None) -> bool:
    """Whether the share of wins is at least RELIABLE with confidence 1 − SURE (its one-sided Wilson lower bound),
    so that a design accepted wins in at least RELIABLE of real runs, not of these runs only."""
    if _surely_short(fixtures, repetitions, variants, alpha, min_effect, ceiling):
        return False
    return _surely(*_wins(fixtures, repetitions, variants, alpha, min_effect, ceiling))


@lru_cache(maxsize=256)
def _surely_short(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float,
                  ceiling: float | None) -> bool:
    """Whether the design is not reliable, known without its null table, the bulk of a design's cost (a dead
    card's `check` drew about thirty in its search for the smallest change: 32 s, 127 s at load 10). The
    verdict's p is Student's raised to the worst case, so the runs that win on Student's p alone are at least those
    that win: fewer than NEAR's low end of DRAWS, and the runs that win are fewer still, no more are drawn
    (`_drawn`) and their share is not sure (`_surely`). Exact, not an estimate: the answer is `_sure`'s. A design
    whose runs are kept on disk, or that `_wins` answers without drawing, is left to it."""
    fixtures, repetitions = simulated(fixtures, repetitions)
    if fixtures < 1 or repetitions < 2 or variants < 1 or 2.0 ** (1 - fixtures) > alpha / variants:
        return False
    kept = _tablecache.path_of("evidence", (fixtures, repetitions))
    if kept is not None and kept.is_file():
        return False
    c = _crossed(fixtures, repetitions)
    gap, p = _judged(c, worst=False)
    level = alpha / variants
    wins = (p <= level) & ~(gap < min_effect)
    if ceiling is not None:
        wins &= p_beyond(c, ceiling, False, worst=False) <= level
    return int(wins.sum()) < NEAR[0] * DRAWS


def _surely(wins: int, runs: int) -> bool:
    """_sure's rule on `wins` of `runs`, fixed or sequential: the one-sided Wilson lower bound reaches RELIABLE."""
    return wilson(wins, runs, 2 * SURE)[0] >= RELIABLE


@lru_cache(maxsize=64)
def smallest_change(fixtures: int, repetitions: int, variants: int = 1, alpha: float = 0.05,
                    min_effect: float = 0.0) -> Change:
    """More repetitions, more fixtures, fewer variants or a smaller `min_effect`: the smallest of each that makes
    the design reliable; and more fixtures and repetitions together when that takes fewer calls than either
    alone (single changes are sought up to SINGLE_COST times its calls: each design drawn costs about a second)."""
    smaller = _largest_min_effect(fixtures, repetitions, variants, alpha, min_effect)
    if min_effect >= PLAIN_GAP:  # more of anything only brings the gap closer to 0.5: only a smaller min_effect
        return Change(None, None, None, min_effect=smaller)
    fewer = next((v for v in range(variants - 1, 0, -1)
                  if reliable(fixtures, repetitions, v, alpha, min_effect)), None)
    together = _fewest_calls(fixtures, repetitions, variants, alpha, min_effect)
    cap = SINGLE_COST * together[0] * together[1] if together else MAX_FIXTURES * MAX_REPETITIONS
    reps = _fewest_repetitions(fixtures, repetitions, variants, alpha, min_effect, min(MAX_REPETITIONS,
                                                                                      cap // fixtures))
    more = _fewest_fixtures(fixtures, repetitions, variants, alpha, min_effect, min(MAX_FIXTURES, cap // repetitions))
    singles = [n * repetitions for n in (more,) if n] + [fixtures * n for n in (reps,) if n]
    if together and singles and min(singles) <= together[0] * together[1]:
        together = None
    return Change(repetitions=reps, fixtures=more, variants=fewer, min_effect=smaller, together=together)


def _fewest_fixtures(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float,
                     top: int = MAX_FIXTURES) -> int | None:
    """The fewest fixtures above `fixtures`, up to `top`, that make the design reliable (doubling, then
    bisection)."""
    if repetitions < 2 or top <= fixtures:
        return None
    return fewest(fixtures, min(max(fixtures * 2, 4), top), top,
                   lambda f: reliable(f, repetitions, variants, alpha, min_effect))


def _fewest_repetitions(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float,
                        top: int = MAX_REPETITIONS) -> int | None:
    """The fewest repetitions above `repetitions`, up to `top`, that make the design reliable (doubling, then
    bisection)."""
    if top <= repetitions:
        return None
    return fewest(repetitions, min(max(repetitions + 1, 2), top), top,
                   lambda r: reliable(fixtures, r, variants, alpha, min_effect))


def fewest(lo: int, hi: int, top: int, ok: Callable[[int], bool]) -> int | None:
    """The least n in (lo, top] with ok(n), for ok that stays true once true (None when ok(top) is false)."""
    while not ok(hi):
        if hi >= top:
            return None
        lo, hi = hi, min(hi * 2, top)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _largest_min_effect(fixtures: int, repetitions: int, variants: int, alpha: float,
                        min_effect: float) -> float | None:
    """The largest min_effect below the card's, in hundredths, at which the design is reliable (None when the
    card has none, or when even 0 is not enough)."""
    if min_effect <= 0 or not reliable(fixtures, repetitions, variants, alpha):
        return None
    lo, hi = 0, math.ceil(min_effect * 100)  # hundredths: lo reliable, hi not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if reliable(fixtures, repetitions, variants, alpha, mid / 100) else (lo, mid)
    return lo / 100


def _fewest_calls(fixtures: int, repetitions: int, variants: int, alpha: float,
                  min_effect: float) -> tuple[int, int] | None:
    """More fixtures and more repetitions together: of a few repetition counts, the pair with the fewest cells
    that is reliable (each with its fewest fixtures; of equal cells, the fewer repetitions). The counts are tried
    in `TOGETHER_REPETITIONS`' order, each searched only below the cells of the best pair found so far: tried from
    3 up, a card at 2 repetitions searched 3 through eight drawn designs for 106 fixtures (318 cells) before 5 gave
    17 (85)."""
    level = alpha / variants
    # the sign-flip's least p, 2/2^F, reaches the level at some F up to MAX_FIXTURES (or at none: an alpha of 1e-300)
    least = next((f for f in range(2, MAX_FIXTURES + 1) if 2.0 ** (1 - f) <= level), None)
    if least is None:
        return None
    floor = max(fixtures, least)
    best: tuple[int, int] | None = None
    for r in (r for r in TOGETHER_REPETITIONS if r > repetitions):
        top = MAX_FIXTURES
        if best is not None:
            cells = best[0] * best[1]
            top = cells // r if r < best[1] else (cells - 1) // r  # equal cells: only with fewer repetitions
            if top < floor:
                continue
        f = floor if reliable(floor, r, variants, alpha, min_effect) else _fewest_fixtures(
            floor, r, variants, alpha, min_effect, top)
        if f is not None and (best is None or (f * r, r) < (best[0] * best[1], best[1])):
            best = (f, r)
    return best


def sequential_power(fixtures: int, plan: Schedule, effect: float = 0.0, variants: int = 1,
                     min_effect: float = 0.0) -> float:
    """`best_power` for a sequential card: the same seeded runs judged at each look of `plan` (the card's schedule
    with its seal's rule parameters) as the run's looks judge them (`sequential.simulate_looks`: the α spent at
    full α, Holm over the V variants at each look's nominal level). Each look decides at a nominal level below
    α, and a look below the exact sign-flip's floor 2/2^F can never win, so the fixed figure overstates it."""
    wins, runs = _sequential_wins(fixtures, plan, effect, variants, min_effect)
    return wins / runs


def sequential_share_text(fixtures: int, plan: Schedule, effect: float = 0.0, variants: int = 1,
                          min_effect: float = 0.0) -> str:
    """`share_text` for a sequential card: "wins 87% of simulated sequential runs", with the runs and the lower
    bound where the share would read as RELIABLE."""
    return _share_words(*_sequential_wins(fixtures, plan, effect, variants, min_effect), "simulated sequential runs")


@lru_cache(maxsize=128)
def _sequential_wins(fixtures: int, plan: Schedule, effect: float, variants: int,
                     min_effect: float) -> tuple[int, int]:
    """`_wins` for a sequential card: its runs judged at every look, 6,000 more near RELIABLE (`_drawn`). Its looks
    are repetitions, so a design past MAX_CELLS is cut in fixtures only; one that would keep fewer than two is not
    simulated and wins nothing here."""
    from benchcard.stats.sequential import boundaries

    fixtures = min(fixtures, MAX_CELLS // plan.looks[-1])
    nominal = boundaries(plan).nominal
    floor = 2.0 ** (1 - fixtures)
    if fixtures < 1 or variants < 1 or plan.looks[-1] < 2 or all(a / variants < floor for a in nominal):
        return 0, DRAWS
    # no early stop but a win: the last look alone, at its own nominal level, surely winning is enough
    last = _wins(fixtures, plan.looks[-1], variants, nominal[-1], min_effect, None)
    if not plan.futility and _surely(*last):
        return last
    return _drawn(lambda batch: _sequential_batch_wins(fixtures, plan, effect, variants, min_effect, batch))


def _sequential_batch_wins(fixtures: int, plan: Schedule, effect: float, variants: int, min_effect: float,
                           batch: int) -> int:
    """Wins of one batch of the sequential runs, judged at every look as the run's looks judge them."""
    from benchcard.stats.decision import WIN
    from benchcard.stats.sequential import simulate_looks

    base = _baseline_runs(fixtures, plan.looks[-1], batch)
    _, codes = simulate_looks(base, np.ones_like(base), plan, effect=effect or PLAIN_GAP / 10, min_effect=min_effect,
                              variants=variants)
    return int((codes == WIN).sum())


def sequential_reliable(fixtures: int, plan: Schedule, effect: float = 0.0, variants: int = 1,
                        min_effect: float = 0.0) -> bool:
    """`reliable` for a sequential card: a large design is first asked cut to `BOUND_FIXTURES` fixtures (its
    looks, which are repetitions, kept), since fewer fixtures only lose power at every look; either must win in
    RELIABLE of runs with confidence 1 − SURE, as a fixed design must."""
    if fixtures > BOUND_FIXTURES and _surely(*_sequential_wins(BOUND_FIXTURES, plan, effect, variants, min_effect)):
        return True
    return _surely(*_sequential_wins(fixtures, plan, effect, variants, min_effect))


def sequential_change(fixtures: int, plan: Schedule, effect: float, variants: int, min_effect: float) -> str:
    """The smallest changes of a sequential design that make it reliable: O'Brien–Fleming spending, dropping
    the earliest looks, no futility stop, or the fewest more fixtures (up to MAX_FIXTURES // 10); each judged
    with `plan`'s own rule parameters."""
    def ok(f: int = fixtures, at: tuple[int, ...] = plan.looks, sp: str = plan.spending,
           fut: bool = plan.futility) -> bool:
        changed = replace(plan, looks=at, spending=sp, futility=fut)
        return sequential_reliable(f, changed, effect, variants, min_effect)

    parts = []
    if plan.spending != "obrien-fleming" and ok(sp="obrien-fleming"):
        parts.append("obrien-fleming spending" + (" (and no gamma: only hsd takes one)" if plan.spending == "hsd"
                                                  else ""))
    looks = plan.looks
    later = next((looks[k:] for k in range(1, len(looks)) if ok(at=looks[k:])), None)
    if later is not None:
        parts.append(f"looks: {list(later)}" if len(later) > 1 else "no sequential block")
    if plan.futility and ok(fut=False):
        parts.append("futility: false")
    more = fewest(fixtures, fixtures * 2, MAX_FIXTURES // 10, lambda f: ok(f=f))
    if more is not None:
        parts.append(f"{more} fixtures")
    return "use " + ", or ".join(parts) if parts else "no change of spending, looks or fixtures does"
