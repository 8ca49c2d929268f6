"""Calibration and power of the verdict's rule, by simulation through the verdict's own decision code.

Every simulated run is judged by `benchcard.stats.crossed` (the calibrated gap) and
`benchcard.stats.decision` (evidence, Holm, findings) — the functions `benchcard verdict` calls with a
batch of one — with the sign-flip p from `crossed.batch_signflip` (exact up to 12 fixtures, 4,000 seeded
draws above; the verdict itself is exact to 20 and draws 100,000 above). The first runs of every line are
re-checked against `stats.signflip_p`, the verdict's own sign-flip.

World (per cell): score = Binomial(levels, p)/levels with p = sigmoid(a_f + shocks + drift) (+ a true gap on
the probability scale, clipped), fixture difficulty a_f ~ N(0.5, 1) shared by the arms (what pairing
removes). Shocks: shared by both arms in repetition r, or one per arm and repetition (sd on the logit scale).
Drift: every (fixture, repetition) block at a random time t ∈ [0, 1] of the run, offset drift·(t − ½) shared
by the arms of the block (the runner interleaves variants inside a block). Rule: `rises` on the score, plus
`not_rises` guards (independent A/A metrics) where a line says so. "result" = win or loss.

    python benchmarks/calibration.py --sims 2000 --seed 1
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from _grid import cache_off, use_grid  # beside this script
from benchcard.stats import paired as stats
from benchcard.stats.crossed import batch_signflip, crossed
from benchcard.stats.decision import (
    LOSS,
    WIN,
    Evidence,
    decide,
    effect_evidence,
    guard_evidence,
    overall,
    p_tost,
)

Array = npt.NDArray[np.float64]
ALPHA = 0.05
EQ_MARGIN = 0.05
GUARD_MARGIN = 0.001  # the smallest "margin 0" a card may declare (check refuses 0)


@dataclass(frozen=True)
class Line:
    """One scenario: the world, the rule and what the table should say."""

    name: str
    fixtures: int = 12
    repetitions: int = 3
    gap: float = 0.0
    shared_shock: float = 0.0
    arm_shock: float = 0.0
    drift: float = 0.0
    levels: int = 1
    variants: int = 1
    guards: int = 0
    deterministic: bool = False
    truncate_wrong: float = 0.0  # share of the treatment's wrong answers cut off by the token limit
    difficulty: float = 0.5  # mean of the fixtures' logit a_f (sd 1): 0.5 ≈ 60 % right; ±3 near 0 or 1
    variant_shock: float | None = None  # the variants' own per-arm shock sd when unlike the baseline's
    deterministic_variant: bool = False  # the variants answer once per fixture (temperature 0), the baseline samples
    perfect: bool = False  # the first variant is right every time
    strict: bool = False  # each arm's logits shifted so its expected rate over its shocks is sigmoid(a_f)
    fixture_sd: float = 1.0  # sd of the fixtures' logit a_f (0: every fixture alike)
    two_point: float = 0.0  # > 0: in each repetition the first variant is right at this rate or never (below)
    stream: int = 0  # > 0: the line draws from its own generator [seed, stream], not the shared one
    score_shock: float = 0.0  # > 0: the first variant's own shock in each repetition, this sd on the score scale
    shape: str = "normal"  # the score-scale shock's law: normal, uniform or two-point (±sd), all of mean 0
    fail_last: float = 0.0  # > 0: the first variant's last repetition failed (unscored) on this share of fixtures
    extra: dict[str, float] = field(default_factory=dict)


def simulate(line: Line, sims: int, rng: np.random.Generator) -> tuple[Array, list[Array], list[npt.NDArray[np.bool_]]]:
    """Scores of the baseline and each variant, (sims, F, R), and each variant's truncated cells."""
    s, f, r = sims, line.fixtures, line.repetitions
    a = line.difficulty + line.fixture_sd * rng.standard_normal((s, f, 1))
    shared = line.shared_shock * rng.standard_normal((s, 1, r))
    drift = np.zeros((s, f, r))
    if line.drift:
        t = rng.random((s, f, r))
        drift = line.drift * (t - 0.5)

    def arm(gap: float, shock: float, deterministic: bool, score: float = 0.0) -> Array:
        own = shock * rng.standard_normal((s, 1, r))
        level = strict_logit(a, math.hypot(line.shared_shock, shock)) if line.strict else a
        moved = score_shocks(line.shape, score, (s, 1, r), rng) if score else 0.0
        p = np.clip(1 / (1 + np.exp(-(level + shared + own + drift))) + gap + moved, 0, 1)
        if deterministic:  # temperature 0: one answer per fixture, repeated
            p = np.repeat(p[:, :, :1], r, axis=2)
            y = rng.binomial(line.levels, p[:, :, :1]) / line.levels
            return np.repeat(y.astype(np.float64), r, axis=2)
        out: Array = rng.binomial(line.levels, p) / line.levels
        return out

    base = arm(0.0, line.arm_shock, line.deterministic)
    variants, truncated = [], []
    v_shock = line.arm_shock if line.variant_shock is None else line.variant_shock
    for k in range(line.variants):
        v = arm(line.gap if k == 0 else 0.0, v_shock, line.deterministic or line.deterministic_variant,
                line.score_shock if k == 0 else 0.0)
        if line.perfect and k == 0:
            v = np.ones_like(v)
        if line.two_point and k == 0:  # right at rate h with probability q = p/h, else never: mean p
            high = rng.random((s, 1, r)) < 1 / (1 + np.exp(-line.difficulty)) / line.two_point
            v = rng.binomial(line.levels, np.broadcast_to(np.where(high, line.two_point, 0.0), v.shape)) / line.levels
        if line.fail_last and k == 0:  # an outage: failed cells within allow_failed, left out of the means
            v[:, :, -1] = np.where(rng.random((s, f)) < line.fail_last, np.nan, v[:, :, -1])
        cut = (v < 1) & (rng.random(v.shape) < line.truncate_wrong)
        variants.append(np.where(cut, np.nan, v))
        truncated.append(cut)
    return base, variants, truncated


def score_shocks(shape: str, sd: float, size: tuple[int, ...], rng: np.random.Generator) -> Array:
    """Shocks of mean 0 and this sd on the score scale, of one law: the A/A rate depends on the law's tails
    (docs/statistics.md, "Why"), so the laws share their first two moments and differ in the rest."""
    if shape == "normal":
        out: Array = sd * rng.standard_normal(size)
    elif shape == "uniform":
        out = sd * math.sqrt(3) * rng.uniform(-1.0, 1.0, size)
    elif shape == "two-point":
        out = sd * np.where(rng.random(size) < 0.5, -1.0, 1.0)
    else:
        raise ValueError(f"shape {shape!r}: expected normal, uniform or two-point")
    return out


@lru_cache(maxsize=16)
def _strict_table(sd: float) -> tuple[Array, Array]:
    """(a, x) on a grid of logits with E sigmoid(x + sd·z) = sigmoid(a), z ~ N(0, 1): Gauss–Hermite (64 nodes)
    for the mean, bisection for x."""
    a = np.linspace(-12.0, 12.0, 2401)
    z, w = np.polynomial.hermite_e.hermegauss(64)
    w = w / w.sum()
    target = 1 / (1 + np.exp(-a))
    lo, hi = a - 4 * sd - 2, a + 4 * sd + 2
    for _ in range(60):
        mid = (lo + hi) / 2
        below = (w / (1 + np.exp(-(mid[:, None] + sd * z[None, :])))).sum(axis=1) < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return a, (lo + hi) / 2


def strict_logit(a: Array, sd: float) -> Array:
    """The logit whose expected probability under N(0, sd²) logit shocks is sigmoid(a): a strict A/A world
    (a shock on the logit scale otherwise pulls an arm's mean toward ½, a true gap the rule may find)."""
    if sd == 0:
        return a
    grid, x = _strict_table(round(sd, 9))
    out: Array = np.interp(np.clip(a, grid[0], grid[-1]), grid, x)
    return out


def rule_on(line: Line, base: Array, variants: list[Array], truncated: list[npt.NDArray[np.bool_]],
            guards: list[tuple[Array, list[Array]]], seed: int) -> tuple[npt.NDArray[np.int64], Array,
                                                                        npt.NDArray[np.int64]]:
    """Findings of every simulated run (the run's overall code), the paired t's own decision (first variant)
    and the first variant's own finding, through the verdict's decision code exactly as findings.py composes it."""
    evidence, tost, measurable = [], [], []
    for v, var in enumerate(variants):
        cut = truncated[v]
        low = crossed(base, np.where(cut, 0.0, var))  # worst case for a win: cut cells scored 0
        high = crossed(base, np.where(cut, 1.0, var))  # worst case for a loss: cut cells scored 1
        flip_low = batch_signflip(low.d, low.n_fixtures, seed=seed)
        flip_high = flip_low if not cut.any() else batch_signflip(high.d, high.n_fixtures, seed=seed)
        hold = effect_evidence(low, flip_low, True)
        loss = effect_evidence(high, flip_high, True)
        judged = [Evidence(p_hold=hold.p_hold, p_loss=loss.p_loss, trivial=hold.trivial)]
        for g_base, g_vars in guards:
            c = crossed(g_base, g_vars[v])
            judged.append(guard_evidence(c, GUARD_MARGIN, "not_rises"))
        evidence.append(judged)
        tost.append(np.maximum(p_tost(low, EQ_MARGIN), p_tost(high, EQ_MARGIN)))
        measurable.append(low.spread | high.spread)
    decision = decide(evidence, tost, measurable, ALPHA)
    obs = crossed(base, variants[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = obs.gap / np.sqrt(obs.var_fixture)
        p_t = 2 * stats.t_sf(np.abs(t), np.maximum(obs.n_fixtures - 1, 1).astype(np.float64))
    paired = np.where(np.isfinite(t), p_t, np.where(obs.gap != 0, 0.0, 1.0)) <= ALPHA
    return overall(decision.codes), (paired & (obs.gap > 0)).astype(np.float64), decision.codes[0]


def cross_check(base: Array, var: Array, n: int, seed: int) -> int:
    """The batch sign-flip equals the verdict's own (`stats.signflip_p`) on the first n runs (exact range)."""
    c = crossed(base[:n], var[:n])
    if c.d.shape[1] > 12:
        return 0
    batch = batch_signflip(c.d, c.n_fixtures, seed=seed)
    for i in range(c.d.shape[0]):
        assert abs(stats.signflip_p(c.d[i]) - batch[i]) < 1e-12, f"sign-flip differs in run {i}"
    return int(c.d.shape[0])


def wilson_text(k: int, n: int) -> str:
    lo, hi = stats.wilson(k, n)
    return f"{k / n:.4f} [{lo:.4f}, {hi:.4f}]"


def run_line(line: Line, sims: int, rng: np.random.Generator, seed: int) -> tuple[str, str, str, float, int]:
    started = time.perf_counter()
    rng = np.random.default_rng([seed, line.stream]) if line.stream else rng
    base, variants, truncated = simulate(line, sims, rng)
    guards = []
    for _ in range(line.guards):
        g_line = Line(name="guard", fixtures=line.fixtures, repetitions=line.repetitions, variants=line.variants)
        g_base, g_vars, _ = simulate(g_line, sims, rng)
        guards.append((g_base, g_vars))
    codes, paired, first = rule_on(line, base, variants, truncated, guards, seed)
    checked = cross_check(base, variants[0], 100, seed) if not truncated[0].any() else 0
    result = int(((codes == WIN) | (codes == LOSS)).sum())
    wins = int((first == WIN).sum())  # the first variant's own win (the one with the gap)
    return (wilson_text(result, sims), wilson_text(wins, sims), wilson_text(int(paired.sum()), sims),
            time.perf_counter() - started, checked)


AA_LINES: list[Line] = [
    Line("no shock, F=12, R=3"),
    Line("repetition shock shared by both arms, sd 0.5", shared_shock=0.5),
    Line("per-arm repetition shocks, sd 0.5", arm_shock=0.5),
    Line("per-arm repetition shocks, sd 1.0", arm_shock=1.0),
    Line("per-arm repetition shocks, sd 1.5", arm_shock=1.5),
    Line("F=24, per-arm shocks sd 1.0", fixtures=24, arm_shock=1.0),
    Line("F=48, per-arm shocks sd 0.5", fixtures=48, arm_shock=0.5),
    Line("F=12, R=5, per-arm shocks sd 1.0", repetitions=5, arm_shock=1.0),
    Line("drift in time (2 logits over the run)", drift=2.0),
    Line("1 guard at margin 0.001", guards=1),
    Line("2 guards at margin 0.001", guards=2),
    Line("3 guards at margin 0.001", guards=3),
    Line("three variants, R=10", variants=3, repetitions=10),
    Line("five variants", variants=5),
    Line("F=2, deterministic model", fixtures=2, deterministic=True),
    Line("F=3, deterministic model", fixtures=3, deterministic=True),
    Line("F=5, deterministic model", fixtures=5, deterministic=True),
    Line("R=2", repetitions=2),
    Line("R=2, per-arm shocks sd 0.5", repetitions=2, arm_shock=0.5),
    Line("R=2, per-arm shocks sd 1.5", repetitions=2, arm_shock=1.5),
    Line("scores in {0, .25, …, 1}", levels=4),
    Line("treatment truncates 80% of its wrong answers", truncate_wrong=0.8),
    # issue 23's further lines
    Line("three variants, per-arm shocks sd 1.0", variants=3, arm_shock=1.0),
    Line("five variants, R=5, per-arm shocks sd 0.5", variants=5, repetitions=5, arm_shock=0.5),
    Line("R=2, scores in quarters", repetitions=2, levels=4),
    Line("R=2, three variants, per-arm shocks sd 1.0", repetitions=2, variants=3, arm_shock=1.0),
    Line("baseline near 0 (logit −3), per-arm shocks sd 0.5", difficulty=-3.0, arm_shock=0.5),
    Line("baseline near 1 (logit +3), per-arm shocks sd 0.5", difficulty=3.0, arm_shock=0.5),
    Line("baseline near 1 (logit +3), R=5", difficulty=3.0, repetitions=5),
    Line("F=200, R=3, per-arm shocks sd 0.5", fixtures=200, arm_shock=0.5),
    Line("F=200, R=2, per-arm shocks sd 1.0", fixtures=200, repetitions=2, arm_shock=1.0),
    Line("F=100, R=5, per-arm shocks sd 1.5", fixtures=100, repetitions=5, arm_shock=1.5),
    # the pooled run term's assumptions, checked
    Line("variant deterministic, baseline sampled (same accuracy), R=10", repetitions=10, deterministic_variant=True),
    Line("variant deterministic, baseline sampled, R=5, baseline shocks sd 1.0", repetitions=5,
         deterministic_variant=True, arm_shock=1.0, variant_shock=0.0),
    Line("baseline shocks sd 1.0, variant none, F=24", fixtures=24, arm_shock=1.0, variant_shock=0.0),
    Line("variant shocks sd 1.0, baseline none, F=12, R=10", repetitions=10, arm_shock=0.0, variant_shock=1.0),
    Line("repetition shock shared by both arms, sd 1.0, F=24", fixtures=24, shared_shock=1.0),
]

#: Strict one-arm A/A worlds: shocks in one arm only, that arm's fixture logits shifted so its expected rate over
#: the shocks equals the steady arm's at every fixture (strict_logit), each line on its own generator so the
#: lines above keep their runs. The verdict is calibrated to normal shocks on the score scale; these are
#: logit-normal shocks, whose bounded scale links an arm's spread to its level (docs/statistics.md).
STRICT_LINES: list[Line] = [
    Line(f"strict, {side}-only shocks sd {sd:g}, F={f}, R={r}", fixtures=f, repetitions=r, strict=True,
         arm_shock=sd if side == "baseline" else 0.0, variant_shock=sd if side == "variant" else 0.0,
         stream=100 + i)
    for i, (f, r, side, sd) in enumerate(
        (f, r, side, sd) for f, r in ((24, 3), (12, 5), (48, 3), (12, 3), (12, 10), (100, 3))
        for side in ("baseline", "variant") for sd in (0.5, 1.0, 1.5, 2.5))
]

#: Strict one-arm A/A worlds on the score scale: every fixture at ½ (no logit, so no skew and no bound pulling the
#: mean: a clip at 0 or 1 is symmetric about ½), the first variant's rate moved in each repetition by a shock of sd
#: 0.2 and one law, its expected rate ½ like the steady baseline's. Normal is the calibration's own family; the
#: lighter tails of uniform and two-point shocks are what the logit's bounded scale makes ("Why" in statistics.md).
SCORE_SHOCK_LINES: list[Line] = [
    # audit24 (2026-12-07): designs the table had not tried, each on its own generator
    Line("audit: score-scale shocks, normal, sd 0.2, variant only, F=24, R=4", fixtures=24, repetitions=4,
         difficulty=0.0, fixture_sd=0.0, score_shock=0.2, stream=420),
    Line("audit: score-scale shocks, normal, sd 0.2, variant only, F=13, R=5", fixtures=13, repetitions=5,
         difficulty=0.0, fixture_sd=0.0, score_shock=0.2, stream=421),
    Line("audit: score-scale shocks, normal, sd 0.2, variant only, F=24, R=5", fixtures=24, repetitions=5,
         difficulty=0.0, fixture_sd=0.0, score_shock=0.2, stream=422),
    Line("audit: score-scale shocks, normal, sd 0.2, variant only, F=24, R=3, its last repetition failed on half "
         "the fixtures", fixtures=24, difficulty=0.0, fixture_sd=0.0, score_shock=0.2, fail_last=0.5, stream=423),
    Line("audit: score-scale shocks, normal, sd 0.2, variant only, F=24, R=5, its last repetition failed on half "
         "the fixtures", fixtures=24, repetitions=5, difficulty=0.0, fixture_sd=0.0, score_shock=0.2, fail_last=0.5,
         stream=424),
    Line("audit: F=7, R=3, per-arm shocks sd 1.0", fixtures=7, arm_shock=1.0, stream=425),
    Line("audit: F=13, R=3, per-arm shocks sd 1.0", fixtures=13, arm_shock=1.0, stream=426),
    Line("audit: F=24, R=7, no shock", fixtures=24, repetitions=7, stream=427),
] + [
    Line(f"score-scale shocks, {shape}, sd 0.2, variant only, F={f}, R=3", fixtures=f, difficulty=0.0,
         fixture_sd=0.0, score_shock=0.2, shape=shape, stream=400 + i)
    for i, (shape, f) in enumerate((shape, f) for shape in ("normal", "uniform", "two-point") for f in (24, 48))
]

#: Which side the strict logit worlds' false results fall on: variant-only logit shocks sd 1.5 at 24 × 3, the arms'
#: mean accuracy about 0.6, 0.78 (fixture logits N(0.5, 1), N(1.5, 1): the bounded scale's skew) and ½ (N(0, 1)).
SIDE_LINES: list[Line] = [
    Line(f"side split, strict, variant-only shocks sd 1.5, accuracy {acc}, F=24, R=3", fixtures=24, strict=True,
         arm_shock=0.0, variant_shock=1.5, difficulty=mean, stream=410 + i)
    for i, (acc, mean) in enumerate((("0.6", 0.5), ("0.78", 1.5), ("½", 0.0)))
]

POWER_LINES: list[Line] = [
    Line("gap 0.15, F=12, R=5", gap=0.15, repetitions=5),
    Line("gap 0.15, F=24, R=3", gap=0.15, fixtures=24),
    Line("gap 0.10, F=24, R=5", gap=0.10, fixtures=24, repetitions=5),
    Line("gap 0.26, F=12, R=3", gap=0.26),
    Line("gap 0.15, F=48, R=3", gap=0.15, fixtures=48),
    Line("gap 0.15, F=12, R=10", gap=0.15, repetitions=10),
    Line("gap 0.15, F=24, R=10", gap=0.15, fixtures=24, repetitions=10),
    Line("gap 0.10, F=48, R=5", gap=0.10, fixtures=48, repetitions=5),
    Line("gap 0.15, F=24, R=5, per-arm shocks sd 0.5", gap=0.15, fixtures=24, repetitions=5, arm_shock=0.5),
    Line("gap 0.30, F=12, R=5", gap=0.30, repetitions=5),
    Line("gap 0.15, F=12, R=5, shock shared by both arms sd 0.5", gap=0.15, repetitions=5, shared_shock=0.5),
]

#: A treatment right every time against a baseline right about half the time (fixture logits N(0, 1)), the
#: first of V variants (the others like the baseline), in designs `seal` accepts (stats/reach.py) and some it
#: refuses (marked): issue 23's "no dead designs".
PERFECT_LINES: list[Line] = [
    Line(f"F={f}, R={r}, {v} variant{'s' if v > 1 else ''}", fixtures=f, repetitions=r, variants=v,
         perfect=True, difficulty=0.0)
    for f, r, v in [(12, 5, 1), (12, 5, 3), (12, 10, 5), (24, 3, 1), (24, 5, 5), (48, 3, 2), (48, 5, 5),
                    (200, 2, 1), (100, 3, 5), (12, 3, 1), (12, 3, 3), (12, 3, 5), (50, 2, 3)]
]


#: Issue 23's "no rule is valid over every run-shock distribution": a null world where, in each repetition, the
#: first variant is right at rate h with probability q = p/h and never otherwise (its expected rate p, the
#: baseline's, at every fixture: all fixtures at p = ½), beside its alternative (the variant right at rate h in
#: every repetition). With probability q^R every repetition of the null looks exactly like the alternative, so
#: any rule's win rate in the null is at least q^R × its power at the alternative.
TWO_POINT: list[tuple[Line, Line]] = [
    (Line(f"F={f}, R=3: right every time, or never (q = ½)", fixtures=f, two_point=1.0, difficulty=0.0,
          fixture_sd=0.0, stream=200 + f),
     Line(f"F={f}, R=3: right every time", fixtures=f, perfect=True, difficulty=0.0, fixture_sd=0.0,
          stream=300 + f))
    for f in (12, 24)
] + [
    (Line("F=24, R=3: right at 0.65, or never (q = 0.769)", fixtures=24, two_point=0.65, difficulty=0.0,
          fixture_sd=0.0, stream=224),
     Line("F=24, R=3: right at 0.65 (gap 0.15)", fixtures=24, gap=0.15, difficulty=0.0, fixture_sd=0.0,
          stream=324)),
]


def two_point_row(null: Line, alt: Line, sims: int, seed: int) -> str:
    """The null world's win / loss rates beside q^R × the alternative's win rate, the least any rule can have."""
    rates = []
    for line in (null, alt):
        base, variants, truncated = simulate(line, sims, np.random.default_rng([seed, line.stream]))
        _, _, first = rule_on(line, base, variants, truncated, [], seed)
        rates.append((int((first == WIN).sum()), int((first == LOSS).sum())))
    q = 1 / (1 + math.exp(-null.difficulty)) / null.two_point
    bound = q ** null.repetitions * rates[1][0] / sims
    (win, loss), (alt_win, _) = rates
    return (f"| {null.name} | {wilson_text(win, sims)} | {loss / sims:.4f} | {alt.name}: {alt_win / sims:.4f} | "
            f"{q ** null.repetitions:.3f} × {alt_win / sims:.4f} = {bound:.4f} |")


def side_row(line: Line, sims: int, seed: int) -> str:
    """The first variant's wins and losses apart (the A/A table gives their sum), on the line's own generator."""
    started = time.process_time()
    base, variants, truncated = simulate(line, sims, np.random.default_rng([seed, line.stream]))
    _, _, first = rule_on(line, base, variants, truncated, [], seed)
    win, loss = int((first == WIN).sum()), int((first == LOSS).sum())
    return (f"| {line.name} | {wilson_text(win, sims)} | {wilson_text(loss, sims)} | {wilson_text(win + loss, sims)} "
            f"| {time.process_time() - started:.1f} |")


def plan_line(fixtures: int, repetitions: int, pilots: int, sims: int, rng: np.random.Generator,
              world_sd: float = 0.5, shock: float = 0.0, candidates: tuple[str, ...] = ("product",),
              detail: bool = False, world_gaps: tuple[float, ...] = ()) -> str:
    """`benchcard plan`'s promise: from a pilot of the card's size, the gap it says 80% power needs; then the
    rule's power at that gap in one world of `sims` runs per design, the same runs for every pilot (common random
    numbers; before 2026-12-05, fresh runs per pilot) of the binary world (difficulty N(0, world_sd) on the logit scale;
    0.5 keeps little clipped; `shock`: each arm's own offset in each repetition, N(0, shock) on the logit scale,
    in the pilot and the world alike). Also: how many pilots planned a gap whose power is below 0.75, and the
    mean power of the pilots whose fitted fixture spread came out below the world's own (the ones `plan` used to
    trust). `candidates`: the draws `plan` is given (plan_draws.py; "product": its own), a line each, on the same
    pilots and world; `detail`: each pilot's planned gap and power under each, after the lines; `world_gaps`: the
    world's own power at these gaps, after them (its power curve, whatever a pilot plans)."""
    from benchcard.stats import simulate as sim
    from plan_draws import candidate, using  # beside this script

    spread = float(np.std(1 / (1 + np.exp(-world_sd * rng.standard_normal(200_000)))))

    def rates(a: Array) -> tuple[Array, Array]:  # each arm's chance per cell: fixture, then its own shocks
        shape = (*a.shape[:-1], repetitions)
        if not shock:
            p = np.broadcast_to(1 / (1 + np.exp(-a)), shape)
            return p, p
        shocks = [shock * rng.standard_normal((*shape[:-2], 1, repetitions)) for _ in range(2)]
        p_base, p_var = (np.broadcast_to(1 / (1 + np.exp(-(a + c))), shape) for c in shocks)
        return p_base, p_var

    # one world of `sims` runs per design, every planned gap judged on the same runs (common random numbers: the
    # pilots are compared with each other, not with the noise of fresh worlds), each distinct gap once
    p_base, p_var = rates(world_sd * rng.standard_normal((sims, fixtures, 1)))
    cells = rng.random((2, sims, fixtures, repetitions))
    judged: dict[float, float] = {}

    def world_power(gap: float) -> float:
        if gap not in judged:
            base = (cells[0] < p_base).astype(float)
            var = (cells[1] < np.clip(p_var + gap, 0, 1)).astype(float)
            c = crossed(base, var)
            flips = batch_signflip(c.d, c.n_fixtures)
            judged[gap] = float((effect_evidence(c, flips, True).p_hold <= ALPHA).mean())
        return judged[gap]

    models = []
    for _ in range(pilots):
        # the pilot's own chances under their own names: world_power reads p_base and p_var, the world's
        chance_base, chance_var = rates(world_sd * rng.standard_normal((fixtures, 1)))
        pilot_base = rng.binomial(1, chance_base).astype(float)
        pilot_var = rng.binomial(1, chance_var).astype(float)
        models.append(sim.model_of(pilot_base, pilot_var))  # what `benchcard plan --from PILOT` simulates
    rows, planned = [], []
    for name in candidates:
        with using(candidate(name)):
            gaps = [_planned(model, fixtures, repetitions) for model in models]
        planned.append(gaps)
        label = f"F={fixtures}, R={repetitions}" + (f" · {name}" if candidates != ("product",) else "")
        rows.append(_plan_row(label, models, gaps, world_power, spread, pilots, shock))
    if detail:
        rows.append(_plan_detail(models, candidates, planned, world_power))
    if world_gaps:
        rows.append("\nthe world's power at a gap of " + ", ".join(f"{g:g}: {world_power(g):.3f}" for g in world_gaps))
    return "\n".join(rows)


def _planned(model: object, fixtures: int, repetitions: int) -> float:
    """The gap `plan` names for 80 % power from a pilot's model (inf: none reaches it)."""
    from benchcard.planning import power as powerplan
    from benchcard.planning.result import ClausePlan
    from benchcard.stats import simulate as sim

    assert isinstance(model, sim.Rates | sim.Components)
    clause = ClausePlan(metric="score", test="rises", fixture=None, margin=None, variant="A")
    gap = powerplan.effect_entry(clause, model, fixtures, repetitions, ALPHA, ranged=False).needed_gap
    assert isinstance(gap, int | float)
    return float(gap)


def _plan_row(label: str, models: Sequence[object], planned: list[float], world_power: Callable[[float], float],
              spread: float, pilots: int, shock: float) -> str:
    from benchcard.stats import simulate as sim

    powers, gaps, low, none = [], [], [], 0
    shown = sum(isinstance(m, sim.Rates) and m.run_sd > 0 for m in models)
    for model, gap in zip(models, planned, strict=True):
        if not math.isfinite(gap):  # plan says no gap reaches 80%: checked below against the largest gap
            none += 1
            continue
        powers.append(world_power(gap))
        gaps.append(gap)
        if isinstance(model, sim.Rates) and model.fixture_sd < spread:
            low.append(powers[-1])
    said_none = (f"{none} of {pilots}: none (the rule's power at a true gap of 1: {world_power(1.0):.3f})"
                 if none else "0") + (f"; {shown} of {pilots} showed a run term" if shock else "")
    if not powers:
        return f"| {label} | — | — | — | — | — | {said_none} |"
    below = sum(p < 0.75 for p in powers)
    low_text = f"{np.mean(low):.3f} ({len(low)}; {min(low):.3f}–{max(low):.3f})" if low else "—"
    return (f"| {label} | {np.mean(gaps):.3f} ({min(gaps):.3f}–{max(gaps):.3f}) | "
            f"{np.mean(powers):.3f} | {min(powers):.3f}–{max(powers):.3f} | {below} of {len(powers)} | {low_text} | "
            f"{said_none} |")


def _plan_detail(models: Sequence[object], candidates: tuple[str, ...], planned: list[list[float]],
                 world_power: Callable[[float], float]) -> str:
    """Each pilot: its MS_rep/MS_err, fitted rate and fixture spread, and under each candidate the gap and its
    power (— where no gap reaches 80 %)."""
    from benchcard.stats import simulate as sim

    lines = ["", "| pilot | MS_rep/MS_err | rate | fixture sd | " + " | ".join(candidates) + " |",
             "|---" * (4 + len(candidates)) + "|"]
    for i, model in enumerate(models):
        p = model.pilot if isinstance(model, sim.Rates) else None
        ratio = p.run_ms / p.err_ms if p is not None and p.err_ms > 0 else math.nan
        rate, sd = (model.rate, model.fixture_sd) if isinstance(model, sim.Rates) else (math.nan, math.nan)
        cells = [f"{g[i]:.3f} → {world_power(g[i]):.3f}" if math.isfinite(g[i]) else "—" for g in planned]
        lines.append(f"| {i + 1} | {ratio:.2f} | {rate:.3f} | {sd:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    # Thousands of pilots, each plan's powers drawn once: nothing kept in the table cache (README's "Layout").
    cache_off()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=2000, help="simulated runs per line")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="run only the lines whose name contains this text")
    parser.add_argument("--pilots", type=int, default=10, help="pilots per plan line (0: no plan table)")
    parser.add_argument("--pilot-world-sd", type=float, default=0.5, help="the plan world's fixture difficulty sd "
                        "(logit scale)")
    parser.add_argument("--pilot-shock", type=float, default=0.0, help="the plan world's per-arm, per-repetition "
                        "shock sd (logit scale), in the pilot and the world")
    parser.add_argument("--plan-draws", default="product", help="the draws plan is given, comma-separated, a line "
                        "each on the same pilots (benchmarks/plan_draws.py; product: its own)")
    parser.add_argument("--plan-detail", action="store_true", help="each pilot's planned gap and power, after the "
                        "plan table")
    parser.add_argument("--plan-world-gaps", default="", help="the plan world's own power at these gaps, "
                        "comma-separated, after the plan table")
    parser.add_argument("--designs", default="12x3,12x5,12x10,24x3,24x5,24x10,48x3,48x5,48x10",
                        help="the plan table's designs, FxR, comma-separated")
    parser.add_argument("--grid-run-ratios", default="", help="judge with a calibration grid of these run ratios "
                        "instead of stats.worstcase.RUN_RATIOS (tables drawn here, the disk cache off): the same "
                        "runs as without it, so two tables differ by the grid alone")
    parser.add_argument("--grid-shares", default="", help="… and of these cell-noise shares (worstcase.ARM_SHARES)")
    parser.add_argument("--grid-draws", type=int, default=0, help="… and this many draws a point (worstcase.DRAWS)")
    args = parser.parse_args()
    use_grid(tuple(float(x) for x in args.grid_run_ratios.split(",") if x),
             tuple(float(x) for x in args.grid_shares.split(",") if x), args.grid_draws)
    rng = np.random.default_rng(args.seed)
    total_started = time.perf_counter()
    checked = 0

    def table(title: str, lines: list[Line], head: str, show: Callable[[str, str, str], str]) -> None:
        nonlocal checked
        print(f"\n## {title}\n\n{head}\n|---|---|---|---|")
        for line in lines:
            if args.only and args.only not in line.name:
                continue
            result, wins, paired, seconds, n = run_line(line, args.sims, rng, args.seed)
            checked += n
            print(f"| {line.name} | {show(result, wins, paired)} | {seconds:.2f} |")

    print(f"# Calibration of the rule: {args.sims:,} simulated runs per line, α = {ALPHA}, seed {args.seed}")
    table("A/A: every result is a false one", AA_LINES + STRICT_LINES,
          "| scenario | result rate [95% Wilson] | paired t alone would say \"rises\" | seconds |",
          lambda r, w, p: f"{r} | {p}")
    table("Power: a true gap on the probability scale", POWER_LINES,
          "| scenario | rule's power (win) [95% Wilson] | paired t interval's power | seconds |",
          lambda r, w, p: f"{w} | {p}")

    def accepted(line: Line) -> str:
        from benchcard.stats import reach

        return "yes" if reach.reliable(line.fixtures, line.repetitions, line.variants, ALPHA) else "**refused**"

    if not args.only or any(args.only in line.name for line in PERFECT_LINES):
        print("\n## A treatment right every time against a baseline right about half the time\n\n| design | "
              "seal accepts it | the treatment wins [95% Wilson] | any result | seconds |\n|---|---|---|---|---|")
        for line in PERFECT_LINES:
            if args.only and args.only not in line.name:
                continue
            result, wins, _, seconds, n = run_line(line, args.sims, rng, args.seed)
            checked += n
            print(f"| {line.name} | {accepted(line)} | {wins} | {result} | {seconds:.2f} |", flush=True)
    if not args.only or any(args.only in null.name for null, _ in TWO_POINT):
        print("\n## No rule is valid over every shock distribution: two-point null worlds\n\n| null world | the "
              "variant wins [95% Wilson] | loses | the alternative: its power | the least any rule can have: "
              "q^R × power |\n|---|---|---|---|---|")
        for null, alt in TWO_POINT:
            if not args.only or args.only in null.name:
                print(two_point_row(null, alt, args.sims, args.seed), flush=True)
    sided = [line for line in SCORE_SHOCK_LINES + SIDE_LINES if not args.only or args.only in line.name]
    if sided:
        print("\n## One arm's shocks: the shape of the shock and the side of the false results (A/A, strict)\n\n"
              "| world | the variant wins [95% Wilson] | loses | result rate | CPU s |\n|---|---|---|---|---|")
        for line in sided:
            print(side_row(line, args.sims, args.seed), flush=True)
    if args.pilots:
        print(f"\n## plan: the rule's power at the gap `plan` says 80% power needs ({args.pilots} pilots per line, "
              f"{args.sims:,} runs each, fixture difficulty sd {args.pilot_world_sd:g} on the logit scale, "
              f"per-arm shocks sd {args.pilot_shock:g})\n")
        print("| design | planned gap, mean (range) | power at it, mean | range over pilots | pilots below 0.75 | "
              "pilots with a low fixture spread: mean power (n; range) | pilots that planned no gap |\n"
              "|---|---|---|---|---|---|---|")
        for design in args.designs.split(","):
            f, r = (int(x) for x in design.split("x"))
            print(plan_line(f, r, args.pilots, args.sims, rng, args.pilot_world_sd, args.pilot_shock,
                            tuple(args.plan_draws.split(",")), args.plan_detail,
                            tuple(float(g) for g in args.plan_world_gaps.split(",") if g)), flush=True)
    print(f"\n{checked:,} runs' sign-flip p re-checked against stats.signflip_p; "
          f"{time.perf_counter() - total_started:.1f} s in all.")


if __name__ == "__main__":
    main()
