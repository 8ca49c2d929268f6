"""The most power any rule can have at issue 23's power lines while keeping the A/A lines: a bound.

A rule whose A/A "result" rate is ≤ α when each arm's repetitions carry their own logit shock (the A/A lines,
sd 0.5 and 1.0) is, in particular, a level-α test of "gap 0" against "gap δ, no shock" at every one of those
null worlds and at any mixture Λ of them. By the Neyman–Pearson lemma its power at the alternative is then at
most that of the likelihood-ratio test of the mixture against the alternative; the smallest such power over
the mixtures tried is the bound printed here.

Model (normal, every variance known to the test): per repetition r, the gap D_r = mean over fixtures of
(variant − baseline) and the arms' sum S_r = mean over fixtures of (variant + baseline) are independent,
D_r ~ N(δ, τ²_D), S_r ~ N(μ_S, τ²_S): a per-arm shock adds the same repetition term to both (Var(c_A − c_B) =
Var(c_A + c_B) for independent arms), so the arms' own spread (S) is a second look at it. μ_S is a nuisance
(the arms' level), so S enters through its spread SS_S only (invariance under shifts of S). The residuals
inside a repetition (fixture × cell) have the same distribution under every hypothesis here (the shocks and
the gap move whole repetitions), so by sufficiency and ancillarity the LR depends on (D̄, SS_D, SS_S) alone:
**in this model the bound covers every rule, whatever it reads of the cells**, not only rules of the D_r. δ and
each world's τ²_D, τ²_S are measured from the calibration benchmark's own world (`calibration.simulate`:
Binomial cells around sigmoid(a_f + shocks), a_f ~ N(0.5, 1), the gap on the probability scale, clipped). The
bound lets the test know every variance exactly, which no real rule does, so a real rule's ceiling is lower.
The column "its LR test on the world's own runs" applies the bound's own test to the binomial world: a check
that the normal model is fair there.

A result is a win or a loss, and a rule that keeps its A/A result rate ≤ α may split α between them as it
likes; a symmetric rule (renaming the arms swaps win and loss) puts α/2 on wins. The bound is given at α/2
(the verdict's split) and at α (a rule that never reports a loss).

    python benchmarks/power_bound.py --sims 40000 --draws 400000 --seed 7
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp, ndtr

from calibration import Line, simulate

Array = npt.NDArray[np.float64]
ALPHA = 0.05
GAP = 0.15
#: (F, R, issue 23's target at gap 0.15)
DESIGNS = [(12, 5, 0.35), (24, 3, 0.30), (48, 3, 0.52), (12, 10, 0.65), (12, 3, None), (24, 10, None)]


def world_gaps(fixtures: int, repetitions: int, gap: float, shock: float, sims: int,
               rng: np.random.Generator) -> tuple[Array, Array]:
    """The per-repetition gaps D_r and arm sums S_r of simulated runs of the calibration's world, (sims, R)."""
    base, variants, _ = simulate(Line("bound", fixtures, repetitions, gap=gap, arm_shock=shock), sims, rng)
    d: Array = (variants[0] - base).mean(axis=1)
    total: Array = (variants[0] + base).mean(axis=1)
    return d, total


def tau2(d: Array) -> float:
    """The within-run variance of the gaps D_r, the τ² of the normal model."""
    return float(d.var(axis=1, ddof=1).mean())


def spread(x: Array) -> Array:
    out: Array = ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return out


def sufficient(d: Array, total: Array) -> tuple[Array, Array, Array]:
    return d.mean(axis=1), spread(d), spread(total)


World = tuple[float, float]
"""(τ²_D, τ²_S) of one world."""


class LikelihoodRatio:
    """log f(data | δ, alt) − log Σ_k w_k f(data | 0, world_k): the Neyman–Pearson statistic of a mixture of null
    worlds against the alternative, on the gaps' mean and sum of squares and the arm sums' sum of squares
    (`sums=False`: the gaps alone, the previous session's bound)."""

    def __init__(self, r: int, delta: float, alt: World, nulls: list[World], weights: tuple[float, ...],
                 sums: bool = True):
        self.r, self.delta, self.alt, self.nulls, self.sums = r, delta, alt, nulls, sums
        self.logw = np.log(np.maximum(np.asarray(weights), 1e-300))

    def log_density(self, m: Array, ss: Array, ss_s: Array, mu: float, world: World) -> Array:
        t2, s2 = world
        out: Array = -self.r / 2 * np.log(t2) - (ss + self.r * (m - mu) ** 2) / (2 * t2)
        if self.sums:  # the spread of the sums: s2·χ²_{R−1}
            out = out - (self.r - 1) / 2 * np.log(s2) - ss_s / (2 * s2)
        return out

    def __call__(self, m: Array, ss: Array, ss_s: Array) -> Array:
        mix = np.stack([w + self.log_density(m, ss, ss_s, 0.0, k) for w, k in zip(self.logw, self.nulls, strict=True)])
        out: Array = self.log_density(m, ss, ss_s, self.delta, self.alt) - logsumexp(mix, axis=0)
        return out


def lr_bound(repetitions: int, delta: float, alt_world: World, null_worlds: list[World], level: float,
             mixtures: list[tuple[float, ...]], draws: int, rng: np.random.Generator,
             sums: bool = True) -> tuple[float, LikelihoodRatio, float]:
    """Smallest Neyman–Pearson power over the mixtures of null worlds, with its statistic and critical value.

    (mean, sum of squares) of the R gaps and the sums' sum of squares are sufficient in the normal model, so
    they are drawn directly."""
    r = repetitions

    def draw(mu: float, world: World) -> tuple[Array, Array, Array]:
        t2, s2 = world
        return (mu + math.sqrt(t2 / r) * rng.standard_normal(draws), t2 * rng.chisquare(r - 1, draws),
                s2 * rng.chisquare(r - 1, draws))

    alt = draw(delta, alt_world)
    nulls = [draw(0.0, world) for world in null_worlds]
    best: tuple[float, LikelihoodRatio, float] | None = None
    for weights in mixtures:
        llr = LikelihoodRatio(r, delta, alt_world, null_worlds, weights, sums)
        # The mixture's null sample: component k's first w_k·draws draws.
        null = np.concatenate([llr(*nulls[k])[: round(w * draws)] for k, w in enumerate(weights)])
        critical = float(np.quantile(null, 1 - level))
        power = float((llr(*alt) > critical).mean())
        if best is None or power < best[0]:
            best = (power, llr, critical)
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=40_000, help="simulated runs per world for δ and the variances")
    parser.add_argument("--draws", type=int, default=400_000, help="normal-model draws per hypothesis")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    two: list[tuple[float, ...]] = [(1 - a, a) for a in np.linspace(0, 1, 21)]
    grid = np.linspace(0, 1, 6)
    three: list[tuple[float, ...]] = [(a, b, round(1 - a - b, 10)) for a in grid for b in grid if a + b <= 1]
    three += [(*w, 0.0) for w in two]  # mixtures of the first two worlds are mixtures of the three
    print("| F × R | δ (measured) | τ²_D / τ²_S: no shock, gap δ, sd 0.5, sd 1.0 | known-variance z | bound, gaps "
          "only (α/2) | **bound with the arm sums (α/2)** | its LR test on the world's own runs: A/A sd 0.5 / power | "
          "bound with sums, sd 0.5 and 1.0 (α/2) | bound with sums, α one-sided | issue's target | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for fixtures, reps, target in DESIGNS:
        start = time.perf_counter()
        d_alt = world_gaps(fixtures, reps, GAP, 0.0, args.sims, rng)
        d_null = {sd: world_gaps(fixtures, reps, 0.0, sd, args.sims, rng) for sd in (0.0, 0.5, 1.0)}
        delta = float(d_alt[0].mean())
        alt: World = (tau2(d_alt[0]), tau2(d_alt[1]))
        worlds = {sd: (tau2(d), tau2(s)) for sd, (d, s) in d_null.items()}
        z = float(ndtr(delta / math.sqrt(alt[0] / reps) - 1.959964))
        half = ALPHA / 2
        pair = [worlds[0.0], worlds[0.5]]
        gaps_only = lr_bound(reps, delta, alt, pair, half, two, args.draws, rng, sums=False)[0]
        b5, llr, critical = lr_bound(reps, delta, alt, pair, half, two, args.draws, rng)
        b10 = lr_bound(reps, delta, alt, [*pair, worlds[1.0]], half, three, args.draws, rng)[0]
        one = lr_bound(reps, delta, alt, pair, ALPHA, two, args.draws, rng)[0]
        # The bound's own test on the binomial world's runs: is the normal model a fair one?
        aa = float((llr(*sufficient(*d_null[0.5])) > critical).mean())
        power = float((llr(*sufficient(*d_alt)) > critical).mean())
        taus = " · ".join(f"{t:.4f}/{u:.4f}" for t, u in (worlds[0.0], alt, worlds[0.5], worlds[1.0]))
        goal = f"≥ {target:.2f}" if target else "–"
        print(f"| {fixtures} × {reps} | {delta:.4f} | {taus} | {z:.3f} | {gaps_only:.3f} | **{b5:.3f}** | "
              f"{aa:.3f} / {power:.3f} | {b10:.3f} | {one:.3f} | {goal} | {time.perf_counter() - start:.0f} |",
              flush=True)


if __name__ == "__main__":
    main()
