"""The statistics a card's clauses need from one run, computed on worker threads (numpy releases the GIL)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass

import numpy as np

from benchcard.card.model import Card
from benchcard.verdict import stats
from benchcard.verdict.columns import FloatArray
from benchcard.verdict.resample import Resamples, bootstrap_intervals
from benchcard.verdict.runfolder import RunData

BOOTSTRAP_RESAMPLES = 10_000
SIGNFLIP_DRAWS = 100_000


def bootstrap_many(pairs: Sequence[tuple[FloatArray, FloatArray]], *, seed: int,
                   n_resamples: int = BOOTSTRAP_RESAMPLES, alpha: float = 0.05) -> list[tuple[float, float]]:
    """`stats.cluster_bootstrap` for several (baseline, variant) pairs at once, with identical results: pairs
    with the same number of paired fixtures share one draw of resampled indices."""
    diffs = [stats.fixture_differences(b, v) for b, v in pairs]
    return bootstrap_intervals(diffs, n_resamples, seed, alpha)


@dataclass
class Gap:
    """Figures of one metric, one variant against the baseline."""

    metric: str
    fixture: str | None
    variant: str
    base: FloatArray
    var: FloatArray
    pg: stats.PairedGap | None = None
    nf: stats.NoiseFloor | None = None
    boot: tuple[float, float] | None = None
    tost_p: float | None = None
    error: str | None = None


@dataclass
class Figures:
    """Every `Gap` by (variant, (metric, fixture)), the baseline's noise floors, and how they were drawn."""

    gaps: dict[tuple[str, tuple[str, str | None]], Gap]
    floors: dict[tuple[str, str | None], stats.NoiseFloor | None]
    gap_keys: list[tuple[str, str | None]]
    seed: int
    n_resamples: int


class Pending:
    """Statistics being computed on a pool; `result()` waits for all of them."""

    def __init__(self, figures: Figures, jobs: list[Future[None]], boot: Resamples, resampled: list[Gap],
                 alpha: float):
        self.figures, self.jobs, self.boot, self.resampled, self.alpha = figures, jobs, boot, resampled, alpha

    def result(self) -> Figures:
        intervals = self.boot.intervals(self.alpha)
        for job in self.jobs:
            job.result()
        for g, interval in zip(self.resampled, intervals, strict=True):
            g.boot = interval
        return self.figures


def ab_stats(card: Card, data: RunData, seed: int, n_resamples: int, pool: Executor) -> Pending:
    """Start every statistic the clauses need (paired gap, noise floor, bootstrap, TOST) on `pool`.

    The noise floors are computed here, at once; the sign-flips and the bootstrap's chunks go to the pool,
    whose threads run them side by side (numpy releases the GIL; scipy.special's functions are ufuncs, safe
    from any thread). A worker process was tried for large runs (its own GIL) and measured slower: starting
    it and loading numpy there took the CPU that reading the run needed (docs/verdict.md, "Speed").
    """
    win = card.win
    assert win is not None and card.baseline is not None
    baseline, alpha = card.baseline, win.alpha
    others = [v for v in data.variants if v != baseline]
    gap_keys = list(dict.fromkeys((c.metric, c.fixture) for c in win.clauses if c.test != "holds"))
    gaps: dict[tuple[str, tuple[str, str | None]], Gap] = {}
    floors: dict[tuple[str, str | None], stats.NoiseFloor | None] = {}
    for metric, fixture in gap_keys:
        values = data.metrics.get(metric)
        if values is None and metric == "score":
            values = data.score
        fixtures = [fixture] if fixture else None
        base = data.grid(values, baseline, fixtures) if values is not None else np.full((1, 1), np.nan)
        try:
            floors[(metric, fixture)] = stats.noise_floor(base, alpha) if values is not None else None
        except ValueError:
            floors[(metric, fixture)] = None
        for variant in others:
            var = data.grid(values, variant, fixtures) if values is not None else np.full((1, 1), np.nan)
            g = Gap(metric, fixture, variant, base, var, nf=floors[(metric, fixture)])
            if values is None:
                g.error = f"the scorer gave no {metric!r} for any cell"
            gaps[(variant, (metric, fixture))] = g
    first = (win.clauses[0].metric, win.clauses[0].fixture)
    margin = float(win.equivalence_margin or 0.0)

    def gap_job(g: Gap) -> None:
        try:
            g.pg = stats.paired_gap(g.base, g.var, alpha, seed=seed, n_draws=SIGNFLIP_DRAWS)
        except ValueError as exc:
            g.error = str(exc)
            return
        if (g.metric, g.fixture) == first and margin > 0:
            g.tost_p = stats.tost(g.base, g.var, margin, alpha)

    usable = [g for g in gaps.values() if g.error is None]
    diffs, resampled = [], []
    for g in usable:
        try:
            diffs.append(stats.fixture_differences(g.base, g.var))
        except ValueError:
            continue
        resampled.append(g)
    jobs = [pool.submit(gap_job, g) for g in usable]
    boot = Resamples(diffs, n_resamples, seed, pool)
    return Pending(Figures(gaps, floors, gap_keys, seed, n_resamples), jobs, boot, resampled, alpha)
