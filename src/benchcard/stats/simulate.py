"""Power by simulation of the rule itself: `benchcard plan`'s figures come from the verdict's own decision.

Thousands of runs of the planned size are drawn and judged by `crossed` + `decision` exactly as a verdict
would (sign-flip included), seeded, with common random numbers across gaps so that the power curve is monotone
and the same plan always prints the same figures. Two models of a run (docs/statistics.md, "plan"):

- `Rates`, for scores in [0, 1] (pass/fail, or Binomial(k, ·)/k with the pilot's spread): each fixture has a
  success rate drawn around the baseline's (`fixture_sd`), each cell is Binomial(k, rate)/k, the variant's rate
  is the baseline's plus the gap (clipped to [0, 1]), plus a per-fixture spread of the effect and a per-arm,
  per-repetition offset. Binary scores tie and stop at their bounds; a normal model of them misjudged the
  rule's power (0.82–0.92 at the gap it named for 80%); this one is calibrated (docs/statistics.md).
- `Components`, for scores outside [0, 1] (counts): Δ_fr = δ + a_f + c_r + e_fr with the pilot's two-way
  variance components.

`model_of` picks the model for a pilot; `planning/power.Assumptions` builds a `Rates` from declared ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from benchcard.stats import _tablecache
from benchcard.stats.crossed import FloatArray, batch_signflip, crossed
from benchcard.stats.decision import p_beyond, p_effect, p_two_sided

DRAWS = 2000
POWER = 0.80
PRETEST = 0.05
"""A pilot's effect spread enters a `Rates` model only when its F test is below this (its run term is always
drawn from what the pilot leaves uncertain: `drawn`)."""
MAX_LEVELS = 10
SIGNAL_POINTS = 32
"""Fixtures per simulated run in `signal`: quantiles of their Beta, evenly spaced."""
"""The finest `Rates` cell: Binomial(10, p)/10 (a score steadier than that is simulated as that steady)."""
@dataclass(frozen=True)
class Components:
    """Variances of one clause's paired table, per cell of Δ (fixture, run and residual parts)."""

    fixture: float
    run: float
    cell: float
    df: int
    """Degrees of freedom behind the estimate (pilot fixtures − 1), for the range."""

    @property
    def total(self) -> float:
        return self.fixture + self.run + self.cell


@dataclass(frozen=True)
class PilotSpread:
    """A pilot's mean squares behind a `Rates` model, each with its degrees of freedom: each simulated run draws
    its own baseline rate, fixture spread and run term from them (`drawn`), so that a plan carries what the pilot
    leaves uncertain instead of taking its estimates as the truth (docs/statistics.md, "plan keeps its word")."""

    fixtures: int
    fixture_ms: float
    """The variance of the fixtures' means over both arms' cells, on fixtures − 1 degrees of freedom."""
    sampling: float
    """The part of `fixture_ms` that sampling alone gives (Binomial(k·2R) of each fixture's own mean)."""
    rate_ms: float
    """The variance of the baseline's fixture means: its mean score's uncertainty times the fixtures."""
    run_ms: float = 0.0
    """The arms' per-repetition mean square (each arm's MS_repetition pooled): cell noise + fixtures × run term."""
    run_df: int = 0
    """2(R − 1): both arms' repetitions, as the verdict reads the run term; 0 for a pilot of one repetition
    (no run term can be told apart)."""
    err_ms: float = 0.0
    """The arms' residual mean square (pooled), on 2(F − 1)(R − 1) degrees of freedom."""
    err_df: int = 0


@dataclass(frozen=True)
class Rates:
    """A run of scores in [0, 1], each cell Binomial(levels, its rate)/levels, on the scale of a success rate."""

    rate: float
    """The baseline's mean score (for pass/fail, its success rate)."""
    fixture_sd: float
    """Spread of the fixtures' own rates around `rate` (shared by both arms: what pairing removes)."""
    run_sd: float
    """Spread of an offset of each arm's rate in each repetition (a run shock, independent between arms)."""
    effect_sd: float = 0.0
    """Spread of the effect from fixture to fixture (the variant helps some fixtures more than others)."""
    levels: int = 1
    df: int = 0
    """Degrees of freedom behind a pilot's estimate (fixtures − 1); 0 for declared assumptions."""
    pilot: PilotSpread | None = None
    """What a pilot leaves uncertain (None: declared assumptions, taken as they are)."""


Model = Components | Rates


def _mean_squares(delta: FloatArray) -> tuple[float, float, float]:
    """MS_fixture, MS_repetition and MS_error of a complete (F ≥ 2, R ≥ 2) two-way table."""
    f, r = delta.shape
    rows, cols, grand = delta.mean(axis=1), delta.mean(axis=0), float(delta.mean())
    ms_fix = r * float(((rows - grand) ** 2).sum()) / (f - 1)
    ms_rep = f * float(((cols - grand) ** 2).sum()) / (r - 1)
    ms_err = float(((delta - rows[:, None] - cols[None, :] + grand) ** 2).sum()) / ((f - 1) * (r - 1))
    return ms_fix, ms_rep, ms_err


def _complete(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> FloatArray:
    delta = np.asarray(variant, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    delta = delta[np.isfinite(delta).all(axis=1)]
    if delta.shape[0] < 2:
        raise ValueError("the pilot has fewer than two fixtures scored in every repetition of both arms")
    return delta


def components(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> Components:
    """The two-way random-effects components of Δ over the pilot's fixtures scored in every repetition of
    both arms (method of moments, each floored at 0). One repetition: no run or cell term can be told apart,
    so the whole spread of the fixture differences is taken as the fixture term."""
    delta = _complete(baseline, variant)
    f, r = delta.shape
    if r < 2:
        return Components(fixture=float(delta[:, 0].var(ddof=1)), run=0.0, cell=0.0, df=f - 1)
    ms_fix, ms_rep, ms_err = _mean_squares(delta)
    return Components(fixture=max(0.0, (ms_fix - ms_err) / r), run=max(0.0, (ms_rep - ms_err) / f),
                      cell=ms_err, df=f - 1)


def _effect_shown(delta: FloatArray) -> float:
    """The variance of the effect over fixtures (Δ's fixture component), kept only where the pilot shows it (its
    F test at PRETEST; method of moments, floored at 0): a floored estimate of a term that is not there is
    positive half the time, and simulating it made the plan ask for gaps with power 0.85–0.90 on average."""
    from scipy import special

    f, r = delta.shape
    if r < 2:
        return 0.0
    ms_fix, _, ms_err = _mean_squares(delta)
    if ms_err <= 0:
        return max(0.0, float(ms_fix / r))
    shown = bool(special.fdtrc(f - 1, (f - 1) * (r - 1), ms_fix / ms_err) < PRETEST)
    return max(0.0, float((ms_fix - ms_err) / r)) if shown else 0.0


def is_binary(values: npt.ArrayLike) -> bool:
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    return bool(x.size) and bool(np.all((x == 0.0) | (x == 1.0)))


def rates(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> Rates | None:
    """A pilot's scores as a `Rates` model (None when some score lies outside [0, 1]).

    Pass/fail scores are Binomial(1, rate). Other scores in [0, 1] get the `levels` k whose Binomial(k, p)/k
    has their within-fixture spread (`_levels`). The fixtures' spread is the spread of their means less what
    sampling alone gives (method of moments, floored at 0); the run offsets are each arm's run term (both arms'
    per-repetition means against their residual, floored at 0), shown or not; the effect's spread is Δ's fixture
    component where the pilot shows it (`_effect_shown`). `pilot` keeps the mean squares, from which each
    simulated run draws its own rate, fixture spread and run term (`drawn`): a run term the pilot's few
    repetitions cannot show is still drawn, as large as they leave possible."""
    base = np.asarray(baseline, dtype=np.float64)
    var = np.asarray(variant, dtype=np.float64)
    keep = np.isfinite(base).all(axis=1) & np.isfinite(var).all(axis=1)
    base, var = base[keep], var[keep]
    both = np.concatenate([base.ravel(), var.ravel()])
    if both.size and (both.min() < 0 or both.max() > 1):
        return None
    delta = _complete(base, var)  # raises with fewer than two complete fixtures
    levels = _levels(base, var, both)
    spread = _pilot_spread(base, var, levels)
    rate = float(base.mean())
    fixture_var = min(max(0.0, spread.fixture_ms - spread.sampling), rate * (1 - rate))
    run_var = max(0.0, spread.run_ms - spread.err_ms) / spread.fixtures if spread.run_df else 0.0
    effect = _effect_shown(delta)
    return Rates(rate=rate, fixture_sd=math.sqrt(fixture_var), run_sd=math.sqrt(run_var),
                 effect_sd=math.sqrt(effect), levels=levels, df=delta.shape[0] - 1, pilot=spread)


def _levels(base: FloatArray, var: FloatArray, both: FloatArray) -> int:
    """k ≈ mean m_f(1 − m_f) / mean s²_f over fixtures and arms (m_f, s²_f: a fixture's mean and variance over
    its repetitions), rounded, within 1..MAX_LEVELS; 1 for pass/fail scores or one repetition."""
    if is_binary(both) or base.shape[1] < 2:
        return 1
    means = np.concatenate([base.mean(axis=1), var.mean(axis=1)])
    within = float(np.concatenate([base.var(axis=1, ddof=1), var.var(axis=1, ddof=1)]).mean())
    top = float((means * (1 - means)).mean())
    return MAX_LEVELS if within <= top / MAX_LEVELS else max(1, min(MAX_LEVELS, round(top / within)))


def _pilot_spread(base: FloatArray, var: FloatArray, levels: int) -> PilotSpread:
    """The pilot's mean squares (`PilotSpread`): its fixture means over both arms and their sampling part
    (E m(1 − m) = p(1 − p)(1 − 1/n) for a mean of n trials), the baseline's, and each arm's two-way table."""
    f, r = base.shape
    pooled = (base.mean(axis=1) + var.mean(axis=1)) / 2
    trials = 2 * levels * r
    sampling = float((pooled * (1 - pooled)).mean()) / (trials - 1)
    spread = PilotSpread(fixtures=f, fixture_ms=float(pooled.var(ddof=1)), sampling=sampling,
                         rate_ms=float(base.mean(axis=1).var(ddof=1)))
    if r < 2:
        return spread
    squares = [_mean_squares(arm) for arm in (base, var)]
    return replace(spread, run_ms=sum(q[1] for q in squares) / 2, run_df=2 * (r - 1),
                   err_ms=sum(q[2] for q in squares) / 2, err_df=2 * (f - 1) * (r - 1))


def model_of(baseline: npt.ArrayLike, variant: npt.ArrayLike) -> Model:
    """The model `plan` simulates for a pilot: `Rates` for scores in [0, 1], else the normal `Components`."""
    found = rates(baseline, variant)
    return found if found is not None else components(baseline, variant)


@dataclass(frozen=True)
class Draws:
    """The random numbers of S simulated runs of F fixtures × R repetitions, reused at every gap."""

    model: Model
    a: FloatArray
    """(S, F, 1): the fixtures' rates (Rates) or standard fixture effects (Components)."""
    u: FloatArray
    """(S, F, 1): standard normal spread of the effect over fixtures (Rates)."""
    c: FloatArray
    """(S, 2, R): standard run offsets, baseline's then variant's (Components uses the variant's)."""
    e: FloatArray
    """(S, 2, F, R): uniforms of each arm's cells (Rates) or standard normal cell noise (Components)."""
    run_sd: FloatArray | float = 0.0
    """(S, 1, 1): each run's sd of the run offsets (Rates: a pilot's drawn, `drawn`), or one for all."""
    made_of: tuple[object, ...] | None = None
    """What `draws` made them from (model, F, R, seed, S): the same numbers every time, so the figures drawn
    from them are kept on disk by it (stats/_tablecache.py); None: made otherwise, never kept."""


def draws(model: Model, fixtures: int, repetitions: int, seed: int, n: int = DRAWS) -> Draws:
    rng = np.random.default_rng(seed)
    made_of = (model, fixtures, repetitions, seed, n)
    c = rng.standard_normal((n, 2, repetitions))
    u = rng.standard_normal((n, fixtures, 1))
    if isinstance(model, Components):
        return Draws(model, rng.standard_normal((n, fixtures, 1)), u, c,
                     rng.standard_normal((n, 2, fixtures, repetitions)), made_of=made_of)
    if model.pilot is None:
        return Draws(model, _declared_rates(model, rng, (n, fixtures, 1)), u, c,
                     rng.random((n, 2, fixtures, repetitions)), model.run_sd, made_of)
    rate, fixture_sd, run_sd = drawn(model, rng, n)
    return Draws(model, _fixture_rates(rate, fixture_sd, rng, (n, fixtures, 1)), u, c,
                 rng.random((n, 2, fixtures, repetitions)), run_sd.reshape(n, 1, 1), made_of)


def _declared_rates(m: Rates, rng: np.random.Generator, shape: tuple[int, ...]) -> FloatArray:
    """Fixture rates with mean `rate` and sd `fixture_sd`: a Beta, or its limits (all equal; all 0 or 1)."""
    top = m.rate * (1 - m.rate)
    if m.fixture_sd <= 0 or top <= 0:
        return np.full(shape, m.rate)
    if m.fixture_sd ** 2 >= top * (1 - 1e-9):
        return (rng.random(shape) < m.rate).astype(np.float64)
    size = top / m.fixture_sd ** 2 - 1
    out: FloatArray = rng.beta(m.rate * size, (1 - m.rate) * size, shape)
    return out


def drawn(m: Rates, rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The baseline rate, fixture spread and run offset sd of each of n simulated runs. Declared (no pilot): the
    model's own, every time. From a pilot, what it leaves uncertain is drawn from its mean squares, each a scaled
    inverse χ² on its own degrees of freedom (the posterior of a normal variance under the usual flat prior on
    its log): the variance of the fixture means τ² = MS·df/χ²_df, the fixture spread τ² less its sampling part
    (floored at 0, capped at the rate's), the rate the pilot's mean plus N(0, MS_rate·df/χ²_df / F) with the
    same draw; the run term the arms' per-repetition mean square less their residual one, each drawn so, over F
    (floored at 0: a generalised pivotal draw of a variance component)."""
    p = m.pilot
    if p is None or p.fixture_ms <= 0 or p.fixtures < 2:
        return np.full(n, m.rate), np.full(n, m.fixture_sd), np.full(n, m.run_sd)
    df = p.fixtures - 1
    scale = df / rng.chisquare(df, n)
    rate = np.clip(m.rate + np.sqrt(p.rate_ms * scale / p.fixtures) * rng.standard_normal(n), 1e-3, 1 - 1e-3)
    fixture: FloatArray = np.sqrt(np.clip(p.fixture_ms * scale - p.sampling, 0.0, rate * (1 - rate)))
    run = np.full(n, m.run_sd)
    if p.run_df:
        run_var = p.run_ms * p.run_df / rng.chisquare(p.run_df, n)
        if p.err_df and p.err_ms > 0:
            run_var = run_var - p.err_ms * p.err_df / rng.chisquare(p.err_df, n)
        run = np.sqrt(np.maximum(run_var, 0.0) / p.fixtures)
    return rate, fixture, run


def rate_ends(m: Rates, k: float) -> list[Rates]:
    """A pilot's model with its rate moved k standard errors (the baseline's fixture means' spread / √F) down and
    up, each still drawing around its own rate (`drawn`): the candidates of a plan that must hold wherever within
    them the true rate lies (power.hardest_rate). None for declared assumptions, taken as they are."""
    p = m.pilot
    if p is None or p.fixtures < 2 or p.rate_ms <= 0 or k <= 0:
        return []
    step = k * math.sqrt(p.rate_ms / p.fixtures)
    return [replace(m, rate=rate) for rate in (max(1e-3, m.rate - step), min(1 - 1e-3, m.rate + step))]


def signal(m: Rates, fixtures: int, repetitions: int, gap: float, seed: int, n: int = DRAWS // 10) -> float:
    """A cheap, smooth stand-in for the rule's power at a true gap, to compare models of one design (larger:
    easier): the mean gap the cells see (clipped at the bounds) over its per-fixture standard error, over n runs'
    drawn rate, fixture spread and run sd (`drawn`, seeded: models that differ only in their rate share the draws),
    the fixtures of a run taken at SIGNAL_POINTS quantiles of their Beta (no sampling noise): both arms' binomial
    noise over the repetitions, the gap's spread over fixtures (the clipping's and `effect_sd`), the run offsets."""
    from scipy import special

    rate, sd, run = drawn(m, np.random.default_rng(seed), n)
    mean, top = rate[:, None], (rate * (1 - rate))[:, None]
    sd = sd[:, None]
    size = np.clip(top / np.maximum(sd, 1e-12) ** 2 - 1, 1e-9, 1e12)
    u = (np.arange(SIGNAL_POINTS) + 0.5) / SIGNAL_POINTS
    p = special.betaincinv(mean * size, (1 - mean) * size, u[None, :])
    p = np.where(sd <= 1e-9, mean, np.where(sd ** 2 >= top * (1 - 1e-9), (u[None, :] >= 1 - mean) * 1.0, p))
    q = np.clip(p + gap, 0.0, 1.0)
    noise = float(((p * (1 - p) + q * (1 - q)) / (m.levels * repetitions)).mean())
    spread = float((q - p).var(axis=1).mean()) + m.effect_sd ** 2
    total = noise + spread + float((2 * fixtures * run ** 2 / repetitions).mean())
    return float((q - p).mean()) / math.sqrt(total) if total > 0 else math.inf


def _fixture_rates(rate: FloatArray, sd: FloatArray, rng: np.random.Generator, shape: tuple[int, ...]) -> FloatArray:
    """Fixture rates of each simulated run (mean `rate`, sd `sd`, one of each per run): a Beta, or its limits
    (all equal where sd is 0; all 0 or 1 where sd is the rate's largest)."""
    ext = (shape[0],) + (1,) * (len(shape) - 1)
    mean, sd = rate.reshape(ext), sd.reshape(ext)
    top = mean * (1 - mean)
    sizes = np.maximum(top / np.maximum(sd, 1e-12) ** 2 - 1, 1e-9)
    inner = np.clip(mean, 1e-9, 1 - 1e-9)  # a rate of 0 or 1 has no Beta: its fixtures are all that (below)
    drawn_: FloatArray = rng.beta(np.broadcast_to(inner * sizes, shape), np.broadcast_to((1 - inner) * sizes, shape))
    coin = (rng.random(shape) < mean).astype(np.float64)
    out: FloatArray = np.where(sd <= 1e-9, np.broadcast_to(mean, shape),
                               np.where(sd ** 2 >= top * (1 - 1e-9), coin, drawn_))
    return out


def _cells(p: FloatArray, uniform: FloatArray, levels: int) -> FloatArray:
    """Binomial(levels, p)/levels by inversion of one uniform per cell (monotone in p: common random numbers);
    the probabilities by the recurrence P(j+1) = P(j)·(levels−j)/(j+1)·p/(1−p)."""
    if levels == 1:
        out: FloatArray = (uniform < p).astype(np.float64)
        return out
    q = np.clip(p, 0.0, 1.0)
    inner = np.clip(q, 1e-12, 1 - 1e-12)
    ratio = inner / (1 - inner)
    prob = (1 - inner) ** levels
    cdf = prob.copy()
    count = np.zeros_like(q)
    for j in range(levels):
        count += uniform > cdf
        prob = prob * ((levels - j) / (j + 1)) * ratio
        cdf = cdf + prob
    count = np.where(q >= 1.0, levels, np.where(q <= 0.0, 0, count))
    result: FloatArray = count / levels
    return result


def tables(z: Draws, gap: float) -> tuple[FloatArray, FloatArray]:
    """The baseline's and the variant's scores of every simulated run at a true gap, (S, F, R) each."""
    m = z.model
    if isinstance(m, Components):
        delta = (gap + math.sqrt(m.fixture) * z.a + math.sqrt(m.run) * z.c[:, 1:, :]
                 + math.sqrt(m.cell) * z.e[:, 1])
        return np.zeros_like(delta), delta
    p_base = np.clip(z.a + z.run_sd * z.c[:, :1, :], 0.0, 1.0)
    p_var = np.clip(z.a + gap + m.effect_sd * z.u + z.run_sd * z.c[:, 1:, :], 0.0, 1.0)
    return _cells(p_base, z.e[:, 0], m.levels), _cells(p_var, z.e[:, 1], m.levels)


def effect_power(z: Draws, gap: float, alpha: float, min_effect: float = 0.0) -> float:
    """The share of simulated runs in which a `rises` clause holds at a true gap (the verdict's decision); seeded
    draws made by `draws` give the same share every time, so it is kept on disk (`plan`'s bisections and curves
    ask again for the gaps they asked before)."""
    with _tablecache.advisory():  # a plan's figure, not a decision: its tables may come from disk
        if z.made_of is None:
            return _effect_power(z, gap, alpha, min_effect)
        kept = _tablecache.table("power", (*z.made_of, gap, alpha, min_effect), (1,),
                                 lambda: np.array([_effect_power(z, gap, alpha, min_effect)]))
        return float(kept[0])


def _effect_power(z: Draws, gap: float, alpha: float, min_effect: float) -> float:
    c = crossed(*tables(z, gap))
    # The sign-flip (most of the time) only where it can decide: a run whose t p already fails, or whose gap
    # is on the wrong side or below min_effect, fails whatever its sign-flip p. Same decisions, fewer flips.
    ones = np.ones_like(c.gap)
    open_ = (c.gap > 0) & (c.gap >= min_effect) & ((p_two_sided(c, ones) <= alpha) | c.zero_se)
    flip = ones.copy()
    if open_.any():
        flip[open_] = batch_signflip(c.d[open_], c.n_fixtures[open_])
    held = (p_effect(c, flip, True) <= alpha) & (c.gap >= min_effect)
    return float(held.mean())


def guard_power(z: Draws, gap: float, margin: float, alpha: float) -> float:
    """The share of simulated runs in which a `not_rises` guard holds at a true gap."""
    c = crossed(*tables(z, gap))
    return float((p_beyond(c, margin, False) <= alpha).mean())


def _scale(m: Model) -> float:
    if isinstance(m, Components):
        return math.sqrt(m.total) if m.total > 0 else 1.0
    return 0.5


def needed_gap(z: Draws, alpha: float, power: float = POWER, min_effect: float = 0.0, tol: float = 5e-3,
               bracket: tuple[float, float | None] = (0.0, None)) -> float:
    """The smallest true gap at which the rule's simulated power reaches `power` (bisection; inf if none).
    A `Rates` gap moves a rate, so none beyond 1 exists. `bracket`: a gap known to fall short and one known to
    reach it (None: search upwards), e.g. from a power curve already drawn."""
    scale = _scale(z.model)
    lo, known = bracket
    if known is None:
        hi, top = (max(scale, lo), 1e3 * scale) if isinstance(z.model, Components) else (1.0, 1.0)
        while effect_power(z, hi, alpha, min_effect) < power:
            lo, hi = hi, hi * 2
            if hi > top:
                return math.inf
    else:
        hi = known
    return _bisect(lambda gap: effect_power(z, gap, alpha, min_effect) >= power, lo, hi, tol * scale)[1]


def guard_limit(z: Draws, margin: float, alpha: float, power: float = POWER, tol: float = 5e-3) -> float:
    """The largest true gap below which a `not_rises` guard (margin) holds with probability `power`."""
    m = z.model
    scale = _scale(m) if not isinstance(m, Components) or m.total > 0 else max(margin, 1e-9)
    lo, hi = (margin - 50 * scale, margin) if isinstance(m, Components) else (-1.0, margin)
    if guard_power(z, lo, margin, alpha) < power:
        return -math.inf
    return _bisect(lambda gap: guard_power(z, gap, margin, alpha) < power, lo, hi, tol * scale)[0]


def _bisect(passes: Callable[[float], bool], lo: float, hi: float, width: float) -> tuple[float, float]:
    """Narrow [lo, hi] to `width`, keeping `passes` false at lo's side and true at hi's (a monotone power)."""
    while hi - lo > width:
        mid = (lo + hi) / 2
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


def pilot_range(df: int, level: float = 0.80) -> tuple[float, float]:
    """Factors on a standard deviation for the pilot's uncertainty: √(df/χ²) at the (1+level)/2 and
    (1−level)/2 points of χ²_df."""
    from scipy import special

    upper_q, lower_q = (1 + level) / 2, (1 - level) / 2
    chi_hi = float(special.chdtri(df, 1 - upper_q))  # χ² quantile at upper_q
    chi_lo = float(special.chdtri(df, 1 - lower_q))
    return math.sqrt(df / chi_hi), math.sqrt(df / chi_lo)


def bounds(model: Model, level: float = 0.80) -> list[Model]:
    """The pilot's model at the ends of its own uncertainty, for the range of the needed gap. A normal model's
    decision is scale-free, so its ends are every variance times df/χ² at χ²'s two points. A `Rates` model's
    ends are its rate moved by its standard error (its fixtures' spread / √F, at `level`) either way, with the
    effect and run spreads at the upper end of theirs (√(df/χ²) at χ²'s lower point; a pilot's run term is drawn
    from its `pilot` at each end instead, as for the figure): which way of the rate is harder depends on how near
    the gap takes the variant to a bound, so the caller takes the extremes."""
    lo, hi = pilot_range(max(model.df, 1), level)
    if isinstance(model, Components):
        return [replace(model, fixture=model.fixture * f ** 2, run=model.run * f ** 2, cell=model.cell * f ** 2)
                for f in (lo, hi)]
    from scipy import special

    z = float(special.ndtri((1 + level) / 2))
    sd = math.sqrt(model.fixture_sd ** 2 + model.rate * (1 - model.rate) / model.levels)
    step = z * sd / math.sqrt(model.df + 1)
    out: list[Model] = []
    for rate in (max(0.0, model.rate - step), min(1.0, model.rate + step)):
        out.append(replace(model, rate=rate, fixture_sd=min(model.fixture_sd, math.sqrt(rate * (1 - rate))),
                           run_sd=model.run_sd * hi, effect_sd=model.effect_sd * hi))
    return out
