"""The statistics a card's clauses need from one run, computed on worker threads (numpy releases the GIL)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import stats
from .card import Card
from .runcolumns import FloatArray
from .runfolder import RunData

BOOTSTRAP_RESAMPLES = 10_000
SIGNFLIP_DRAWS = 100_000


def bootstrap_many(pairs: Sequence[tuple[FloatArray, FloatArray]], *, seed: int,
                   n_resamples: int = BOOTSTRAP_RESAMPLES, alpha: float = 0.05) -> list[tuple[float, float]]:
    """`stats.cluster_bootstrap` for several (baseline, variant) pairs at once, with identical results.

    The resampled fixture indices depend only on the seed and the number of fixtures, so pairs with the same
    number of paired fixtures share one draw of indices instead of drawing them again per metric.
    """
    diffs = [stats.fixture_differences(b, v) for b, v in pairs]
    out: list[tuple[float, float] | None] = [None] * len(diffs)
    by_size: dict[int, list[int]] = {}
    for i, d in enumerate(diffs):
        by_size.setdefault(int(d.size), []).append(i)
    chunk_elements = stats._CHUNK_ELEMENTS  # the same chunking as stats.cluster_bootstrap, so the same draws
    for n, members in by_size.items():
        rng = np.random.default_rng(seed)
        means = np.empty((len(members), n_resamples))
        per_chunk = max(1, chunk_elements // n)
        for start in range(0, n_resamples, per_chunk):
            m = min(per_chunk, n_resamples - start)
            idx = rng.integers(0, n, size=(m, n))
            for j, i in enumerate(members):
                means[j, start : start + m] = np.take(diffs[i], idx).mean(axis=1)
        for j, i in enumerate(members):
            low, high = np.quantile(means[j], [alpha / 2.0, 1.0 - alpha / 2.0])
            out[i] = (float(low), float(high))
    return [o for o in out if o is not None]


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

    def __init__(self, figures: Figures, jobs: list[Future[None]]):
        self.figures, self.jobs = figures, jobs

    def result(self) -> Figures:
        for job in self.jobs:
            job.result()
        return self.figures


def ab_stats(card: Card, data: RunData, seed: int, n_resamples: int, pool: ThreadPoolExecutor) -> Pending:
    """Start every statistic the clauses need: paired gap, noise floor, bootstrap, TOST, on `pool`."""
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
    first = win.clauses[0]
    margin = float(win.equivalence_margin or 0.0)

    def gap_job(g: Gap) -> None:
        try:
            g.pg = stats.paired_gap(g.base, g.var, alpha, seed=seed, n_draws=SIGNFLIP_DRAWS)
        except ValueError as exc:
            g.error = str(exc)
            return
        if (g.metric, g.fixture) == (first.metric, first.fixture) and margin > 0:
            g.tost_p = stats.tost(g.base, g.var, margin, alpha)

    usable = [g for g in gaps.values() if g.error is None]

    def boot_job() -> None:
        pairs, members = [], []
        for g in usable:
            try:
                stats.fixture_differences(g.base, g.var)
            except ValueError:
                continue
            pairs.append((g.base, g.var))
            members.append(g)
        for g, boot in zip(members, bootstrap_many(pairs, seed=seed, n_resamples=n_resamples, alpha=alpha),
                           strict=True):
            g.boot = boot

    def gaps_job() -> None:  # one after another: scipy's distributions are not promised to be thread-safe
        for g in usable:
            gap_job(g)

    jobs = [pool.submit(boot_job), pool.submit(gaps_job)]
    return Pending(Figures(gaps, floors, gap_keys, seed, n_resamples), jobs)
