"""The statistics a card's clauses need from one run, computed on worker threads (numpy releases the GIL)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field

import numpy as np

from benchcard.card.model import Card
from benchcard.scoring.scorers import metric_range
from benchcard.stats import paired as stats
from benchcard.stats.crossed import Crossed, crossed
from benchcard.stats.resample import Resamples
from benchcard.stats.signflip import signflip
from benchcard.verdict.columns import FAILED, MISSING, OK, TRUNCATED, FloatArray
from benchcard.verdict.runfolder import RunData

BOOTSTRAP_RESAMPLES = 10_000
SIGNFLIP_DRAWS = 100_000


@dataclass
class Gap:
    """Figures of one metric, one variant against the baseline.

    `obs` is the gap with truncated cells left out (what the pages show); `low` and `high` bound them: in
    `low` the variant's truncated cells take the metric's lowest value and the baseline's its highest, in
    `high` the reverse. A clause is judged on the bound that is worst for what it claims (docs/verdict.md),
    so a variant cut off exactly when it is wrong cannot look better. Without truncation all three are one.
    A metric with no highest value (a count: a cut-off answer could hold any number of invented values) has no
    such bound: `open_low` counts the baseline's truncated cells that leave `low` unbounded below, `open_high`
    the variant's that leave `high` unbounded above, and a claim judged on an open bound cannot be shown. A metric
    of no known range (`known_range`: another tool's, beyond [0, 1], none declared) leaves both open by every
    truncated cell of either arm.
    """

    metric: str
    fixture: str | None
    variant: str
    base: FloatArray
    var: FloatArray
    obs: Crossed | None = None
    low: Crossed | None = None
    high: Crossed | None = None
    flips: dict[int, float] = field(default_factory=dict)  # id(Crossed) → its exact or drawn sign-flip p
    flip_draws: dict[int, int | None] = field(default_factory=dict)  # id(Crossed) → patterns drawn (None: exact)
    truncated: int = 0
    open_low: int = 0
    open_high: int = 0
    base_low: FloatArray | None = field(default=None, repr=False)
    var_low: FloatArray | None = field(default=None, repr=False)
    base_high: FloatArray | None = field(default=None, repr=False)
    var_high: FloatArray | None = field(default=None, repr=False)
    nf: stats.NoiseFloor | None = None
    boot: tuple[float, float] | None = None
    span: tuple[float, float] | None = None  # the metric's declared lowest and highest value (compare --range)
    error: str | None = None

    def p_flip(self, c: Crossed) -> FloatArray:
        return np.array([self.flips[id(c)]])

    def known_range(self) -> tuple[float | None, float | None]:
        """The metric's lowest and highest value, each None where it is not known: the declared span (`compare
        --range`); else the scorer's (`metric_range`: a count has no highest) when every value of both arms lies
        inside it; else neither, since another tool's metric beyond [0, 1] (a 0–10 rating, a signed difference)
        is no score of [0, 1], and bounding it there would be a false clamp."""
        if self.span is not None:
            return self.span
        lo, hi = metric_range(self.metric)
        values = np.concatenate([self.base.ravel(), self.var.ravel()])
        values = values[np.isfinite(values)]
        if values.size and (float(values.min()) < lo or (hi is not None and float(values.max()) > hi)):
            return None, None
        return lo, hi

    def sides(self, test: str) -> tuple[Side, Side]:
        """The bound a `test` clause's claim is judged on and the one its loss is judged on (the worst case for
        each), with the truncated cells that leave either unbounded."""
        low, high = Side(self.low, self.open_low, "baseline"), Side(self.high, self.open_high, self.variant)
        return (low, high) if test in ("rises", "not_falls") else (high, low)


@dataclass(frozen=True)
class Side:
    """One truncation bound of a gap (`Gap.low` or `Gap.high`) and the truncated cells of `arm` that leave it
    unbounded (`open`, 0 when it is a real bound)."""

    crossed: Crossed | None
    open: int
    arm: str


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


def ab_stats(card: Card, data: RunData, seed: int, n_resamples: int, pool: Executor, *,
             unmeasured_run_var: float = math.inf, spans: Mapping[str, tuple[float, float]] | None = None) -> Pending:
    """Start every statistic the clauses need (calibrated gap, its bounds, sign-flip, bootstrap) on `pool`.

    The baseline's noise floors are computed here, at once; the sign-flips and the bootstrap's chunks go to
    the pool, whose threads run them side by side (numpy releases the GIL; scipy.special's functions are
    ufuncs, safe from any thread). A worker process was tried for large runs (its own GIL) and measured
    slower: starting it and loading numpy there took the CPU that reading the run needed (docs/verdict.md).
    """
    win = card.win
    assert win is not None and card.baseline is not None
    baseline, alpha = card.baseline, win.alpha
    others = [v for v in data.variants if v != baseline]
    gap_keys = list(dict.fromkeys((c.metric, c.fixture) for c in win.clauses if c.test != "holds"))
    gaps: dict[tuple[str, tuple[str, str | None]], Gap] = {}
    floors: dict[tuple[str, str | None], stats.NoiseFloor | None] = {}
    truncated = (data.status == TRUNCATED).astype(np.float64)
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
            g = Gap(metric, fixture, variant, base,
                    data.grid(values, variant, fixtures) if values is not None else np.full((1, 1), np.nan),
                    nf=floors[(metric, fixture)], span=(spans or {}).get(metric))
            if values is None:
                g.error = _no_values(data, metric)
            else:
                _bound_truncated(g, values, data.grid(truncated, baseline, fixtures) == 1.0,
                                 data.grid(truncated, variant, fixtures) == 1.0)
            gaps[(variant, (metric, fixture))] = g
    usable = [g for g in gaps.values() if g.error is None]
    diffs, resampled = [], []
    for g in usable:
        try:
            diffs.append(stats.fixture_differences(g.base, g.var))
        except ValueError:
            continue
        resampled.append(g)
    jobs = [pool.submit(_gap_job, g, seed, alpha, unmeasured_run_var) for g in usable]
    boot = Resamples(diffs, n_resamples, seed, pool)
    return Pending(Figures(gaps, floors, gap_keys, seed, n_resamples), jobs, boot, resampled, alpha)


def _no_values(data: RunData, metric: str) -> str:
    """Why a metric has no value in any cell: the scorer gave none, or no cell was scored at all (every one cut
    off, failed or without an output), which is not the scorer's doing and is said so."""
    if data.count(OK):
        return f"the scorer gave no {metric!r} for any cell"
    kinds = ((TRUNCATED, "cut off at max_tokens"), (FAILED, "failed in transport"), (MISSING, "without an output"))
    parts = [f"{n} {words}" for status, words in kinds if (n := data.count(status))]
    return f"no cell was scored ({', '.join(parts)})"


def _bound_truncated(g: Gap, values: FloatArray, t_base: np.ndarray, t_var: np.ndarray) -> None:
    """A gap with truncated cells gets its worst and best cases too: each truncated cell at the metric's bound
    that hurts the variant (low) or helps it (high). A metric with no highest value is filled at the largest
    value seen, which bounds nothing: the sides that needs are marked open, and no claim is judged on them."""
    g.truncated = int(t_base.sum() + t_var.sum())
    if g.truncated:
        lo, hi = g.known_range()
        n_base, n_var = int(t_base.sum()), int(t_var.sum())
        # no highest value: the largest seen is no bound on what a cut-off answer held; no lowest likewise
        g.open_low = (n_base if hi is None else 0) + (n_var if lo is None else 0)
        g.open_high = (n_var if hi is None else 0) + (n_base if lo is None else 0)
        seen = np.isfinite(values).any()
        top = hi if hi is not None else float(np.nanmax(values)) if seen else 0.0
        bottom = lo if lo is not None else float(np.nanmin(values)) if seen else 0.0
        g.base_low, g.var_low = np.where(t_base, top, g.base), np.where(t_var, bottom, g.var)
        g.base_high, g.var_high = np.where(t_base, bottom, g.base), np.where(t_var, top, g.var)


def _gap_job(g: Gap, seed: int, alpha: float, unmeasured_run_var: float) -> None:
    """On the pool: the calibrated gap (and its bounds, with truncated cells), and each one's sign-flip p."""
    try:
        g.obs = crossed(g.base, g.var, unmeasured_run_var=unmeasured_run_var)
        if not g.obs.n_fixtures[0]:
            raise ValueError("no fixture is scored in both baseline and variant")
        g.low = g.high = g.obs
        if g.truncated:
            assert g.base_low is not None and g.var_low is not None
            assert g.base_high is not None and g.var_high is not None
            g.low = crossed(g.base_low, g.var_low, unmeasured_run_var=unmeasured_run_var)
            g.high = crossed(g.base_high, g.var_high, unmeasured_run_var=unmeasured_run_var)
    except ValueError as exc:
        g.error = str(exc)
        g.obs = g.low = g.high = None
        return
    for c in {id(c): c for c in (g.obs, g.low, g.high)}.values():
        # unpaired fixtures are 0 in d, which changes no sign-flip p
        # drawn until its p is surely above α (or to the end): the decision is the full draws' (signflip.py)
        flip = signflip(c.d[0], n_draws=SIGNFLIP_DRAWS, seed=seed, stop_above=alpha)
        g.flips[id(c)], g.flip_draws[id(c)] = flip.p, flip.draws

