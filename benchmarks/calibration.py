"""Calibration of the verdict's decision rules by simulation: how often does nothing look like something?

Simulates A/A experiments shaped like BENCH-01 (12 fixtures × 5 repetitions per arm, both arms drawn from
the same distribution) and applies the `rises` test and a complete win rule like BENCH-01's:

    rises on field_recall  AND  not_rises on unsupported_values (margin 0.25)  AND  holds on excerpt-07

then reports how often the rule gives a *result* (win or loss) when there is nothing to find (must be
≤ alpha), and how often it detects true recall gaps. Per cell the model is:

    recall       = Binomial(5 fields, sigmoid(a_f + shock_arm,run + noise)) / 5
    unsupported  = Poisson(exp(b_f + shock'_arm,run + noise'))
    abstains     = Bernoulli(p_abstain) on excerpt-07

with a_f, b_f the fixture's difficulty (shared by both arms: that is what pairing removes), shocks shared by
every fixture of one run of one arm (what only the noise floor sees), and cell noise.

The statistics are computed for all simulations at once with numpy; the first simulations are recomputed
with benchcard.verdict.stats.paired_gap and noise_floor and must agree, so the figures calibrate the real code.

    python benchmarks/calibration.py --sims 4000 --seed 1
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from benchcard.verdict import stats

Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

FIELDS = 5  # parties, effective date, termination rights, two obligations
ABSTAIN_FIXTURE = 6  # excerpt-07


@dataclass(frozen=True)
class World:
    """The simulated population: difficulty spreads, shock and noise sizes (logit / log scale)."""

    fixtures: int = 12
    repetitions: int = 5
    recall_logit: float = 1.0  # ≈ 73% recall on an average fixture
    recall_difficulty_sd: float = 1.0
    recall_noise_sd: float = 0.5
    unsupported_log_rate: float = math.log(0.4)
    unsupported_difficulty_sd: float = 0.7
    unsupported_noise_sd: float = 0.3
    shock_sd: float = 0.2
    p_abstain: float = 0.95


@dataclass(frozen=True)
class Grid:
    """Scores for all simulations: arrays shaped (sims, fixtures, repetitions)."""

    recall_b: Array
    recall_v: Array
    unsup_b: Array
    unsup_v: Array
    abstain_v: Mask


def simulate(world: World, sims: int, true_gap: float, rng: np.random.Generator) -> Grid:
    """Draw `sims` experiments; the variant's recall probability is the baseline's plus true_gap (clipped)."""
    f, r = world.fixtures, world.repetitions
    a = world.recall_logit + world.recall_difficulty_sd * rng.standard_normal((sims, f, 1))
    b = world.unsupported_log_rate + world.unsupported_difficulty_sd * rng.standard_normal((sims, f, 1))

    def arm(gap: float) -> tuple[Array, Array]:
        shock = world.shock_sd * rng.standard_normal((sims, 1, r))
        shock_u = world.shock_sd * rng.standard_normal((sims, 1, r))
        logit = a + shock + world.recall_noise_sd * rng.standard_normal((sims, f, r))
        p = np.clip(1.0 / (1.0 + np.exp(-logit)) + gap, 0.0, 1.0)
        recall = rng.binomial(FIELDS, p) / FIELDS
        rate = np.exp(b + shock_u + world.unsupported_noise_sd * rng.standard_normal((sims, f, r)))
        unsup = rng.poisson(rate).astype(np.float64)
        return recall.astype(np.float64), unsup

    recall_b, unsup_b = arm(0.0)
    recall_v, unsup_v = arm(true_gap)
    abstain_v = rng.random((sims, r)) < world.p_abstain
    return Grid(recall_b, recall_v, unsup_b, unsup_v, abstain_v)


@dataclass(frozen=True)
class Batch:
    """Vectorised paired_gap / noise_floor over the simulations (same formulas as benchcard.verdict.stats)."""

    gap: Array
    ci_low: Array
    ci_high: Array
    p_value: Array
    upper: Array
    lower: Array
    nf: Array


def batch_stats(base: Array, var: Array, alpha: float) -> Batch:
    d = var.mean(axis=2) - base.mean(axis=2)
    f = d.shape[1]
    gap = d.mean(axis=1)
    se = d.std(axis=1, ddof=1) / math.sqrt(f)
    constant = np.ptp(d, axis=1) <= 1e-12 * np.maximum(1.0, np.abs(d).max(axis=1))
    se = np.where(constant, 0.0, se)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(constant, np.where(gap == 0, 0.0, np.sign(gap) * np.inf), gap / se)
    p = np.where(constant, np.where(gap == 0, 1.0, 0.0), 2.0 * sps.t.sf(np.abs(t), f - 1))
    half = sps.t.ppf(1 - alpha / 2, f - 1) * se
    one = sps.t.ppf(1 - alpha, f - 1) * se
    run_means = base.mean(axis=1)  # (sims, R)
    r = run_means.shape[1]
    nf = sps.t.ppf(1 - alpha / 2, r - 1) * run_means.std(axis=1, ddof=1) * math.sqrt(2 / r)
    return Batch(gap, gap - half, gap + half, p, gap + one, gap - one, nf)


@dataclass(frozen=True)
class Decisions:
    t_sig: Mask  # plain paired t-test on recall, two-sided p < alpha
    ci_pos: Mask  # recall CI lower bound > 0
    above_nf: Mask  # recall gap > noise floor
    rises: Mask
    falls: Mask  # mirror of rises: CI upper < 0 and gap < −NF
    ci_neg: Mask  # recall CI wholly below 0
    not_rises: Mask  # unsupported: one-sided upper bound < margin
    guard_broken: Mask  # unsupported: one-sided lower bound > margin (not_rises rejected)
    guard_rises: Mask  # unsupported: one-sided lower bound > 0
    holds: Mask
    win: Mask
    loss_ci: Mask  # loss read literally: first clause's CI wholly below 0, or guard broken
    loss_falls: Mask  # loss with the noise floor: first clause falls, or guard broken
    gap: Array


def decide(grid: Grid, alpha: float, margin: float) -> Decisions:
    rec = batch_stats(grid.recall_b, grid.recall_v, alpha)
    uns = batch_stats(grid.unsup_b, grid.unsup_v, alpha)
    rises = (rec.ci_low > 0) & (rec.gap > rec.nf)
    falls = (rec.ci_high < 0) & (rec.gap < -rec.nf)
    not_rises = uns.upper < margin
    guard_broken = uns.lower > margin
    holds: Mask = np.asarray(grid.abstain_v.all(axis=1), dtype=np.bool_)
    win = rises & not_rises & holds
    return Decisions(
        t_sig=rec.p_value < alpha,
        ci_pos=rec.ci_low > 0,
        above_nf=rec.gap > rec.nf,
        rises=rises,
        falls=falls,
        ci_neg=rec.ci_high < 0,
        not_rises=not_rises,
        guard_broken=guard_broken,
        guard_rises=uns.lower > 0,
        holds=holds,
        win=win,
        loss_ci=(rec.ci_high < 0) | guard_broken,
        loss_falls=falls | guard_broken,
        gap=rec.gap,
    )


def cross_check(grid: Grid, alpha: float, margin: float, n: int) -> int:
    """Recompute the first n simulations with benchcard.verdict.stats; every decision must agree."""
    batch = decide(grid, alpha, margin)
    n = min(n, batch.win.size)
    for i in range(n):
        g = stats.paired_gap(grid.recall_b[i], grid.recall_v[i], alpha)
        nf = stats.noise_floor(grid.recall_b[i], alpha)
        u = stats.paired_gap(grid.unsup_b[i], grid.unsup_v[i], alpha)
        rises = g.ci_low > 0 and g.gap > nf.value
        not_rises = u.upper_one_sided < margin
        holds = bool(grid.abstain_v[i].all())
        win = rises and not_rises and holds
        assert rises == bool(batch.rises[i]), f"rises differs in simulation {i}"
        assert not_rises == bool(batch.not_rises[i]), f"not_rises differs in simulation {i}"
        assert win == bool(batch.win[i]), f"win differs in simulation {i}"
        assert (g.p_value < alpha) == bool(batch.t_sig[i]), f"t test differs in simulation {i}"
    return n


def row(*cells: str) -> str:
    """One markdown table row."""
    return "| " + " | ".join(cells) + " |"


def rate(mask: Mask) -> str:
    m = float(mask.mean())
    half = 1.96 * math.sqrt(max(m * (1 - m), 1e-12) / mask.size)
    return f"{m:.4f} ± {half:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sims", type=int, default=4000, help="simulated experiments per scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--margin", type=float, default=0.25, help="not_rises margin on unsupported_values")
    parser.add_argument(
        "--shocks", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.4], help="run-shock sd (logit) for A/A"
    )
    parser.add_argument("--shock", type=float, default=0.2, help="run-shock sd for the detection table")
    parser.add_argument("--gaps", type=float, nargs="+", default=[0.02, 0.05, 0.10, 0.20])
    parser.add_argument("--check", type=int, default=300, help="simulations re-run through benchcard.verdict.stats")
    args = parser.parse_args()
    if args.sims < 2:
        parser.error("--sims must be at least 2")

    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    checked = 0
    print(f"# Calibration: {args.sims} simulated experiments per row, 12 fixtures × 5 repetitions, ")
    print(f"alpha {args.alpha}, not_rises margin {args.margin}, seed {args.seed}\n")

    print("## A/A: both arms from the same distribution (every result is a false one)\n")
    print(
        "| run-shock sd | t-test p<α | rises | win | loss (CI only) | loss (falls) "
        "| **result** (win or loss-falls) | result (win or loss-CI) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    components: dict[float, Decisions] = {}
    for shock in args.shocks:
        world = World(shock_sd=shock)
        grid = simulate(world, args.sims, 0.0, rng)
        checked += cross_check(grid, args.alpha, args.margin, args.check)
        dec = decide(grid, args.alpha, args.margin)
        components[shock] = dec
        cells = [rate(dec.t_sig), rate(dec.rises), rate(dec.win), rate(dec.loss_ci), rate(dec.loss_falls)]
        cells += [f"**{rate(dec.win | dec.loss_falls)}**", rate(dec.win | dec.loss_ci)]
        print(row(f"{shock:g}", *cells))

    print("\n## A/A: the clauses one by one\n")
    print(
        "| run-shock sd | recall CI>0 | recall gap>NF | recall CI<0 | falls | unsupported not_rises "
        "| guard broken (lower>margin) | guard rises (lower>0) | excerpt-07 holds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for shock, dec in components.items():
        masks = [dec.ci_pos, dec.above_nf, dec.ci_neg, dec.falls, dec.not_rises, dec.guard_broken]
        masks += [dec.guard_rises, dec.holds]
        print(row(f"{shock:g}", *(rate(m) for m in masks)))

    print(f"\n## Detection: variant recall probability + true gap (run-shock sd {args.shock:g})\n")
    print("| true gap | mean observed gap | t-test p<α | rises | win |")
    print("|---|---|---|---|---|")
    for gap in args.gaps:
        grid = simulate(World(shock_sd=args.shock), args.sims, gap, rng)
        dec = decide(grid, args.alpha, args.margin)
        print(
            row(f"{gap:g}", f"{float(dec.gap.mean()):.4f}", rate(dec.t_sig), rate(dec.rises), rate(dec.win))
        )

    elapsed = time.perf_counter() - started
    total = args.sims * (len(args.shocks) + len(args.gaps))
    print(
        f"\n{total} simulated experiments in {elapsed:.2f} s; "
        f"{checked} re-run through benchcard.verdict.stats with identical decisions. ± is a 95% binomial half-width."
    )


if __name__ == "__main__":
    main()
