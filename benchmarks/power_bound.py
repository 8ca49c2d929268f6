"""The most power ANY rule can have at issue 12's power lines while keeping its own A/A lines: a bound.

A rule whose A/A "result" rate is ≤ α when each arm's repetitions carry their own logit shock (the issue's
A/A lines, sd 0.5 and 1.0) is, in particular, a level-α test of "gap 0" against "gap δ, no shock" at every
one of those null worlds and at any mixture Λ of them. By the Neyman–Pearson lemma its power at the
alternative is then at most that of the likelihood-ratio test of the mixture against the alternative; the
smallest such power over the mixtures tried is the bound printed here.

Model: the paired gaps of repetition r, D_r = mean over fixtures of (variant − baseline), are i.i.d.
N(δ, τ²) given the fixtures: per-arm shocks add a repetition term to τ² that no fixture average removes,
and the within-repetition residuals carry no information on δ or on that term. δ and each world's τ² are
measured from the calibration benchmark's own world (`calibration.simulate`: Binomial cells around
sigmoid(a_f + shocks), a_f ~ N(0.5, 1), the gap on the probability scale, clipped). The bound lets the test
know every variance exactly, which no real rule does, so a real rule's ceiling is lower still.

Win and loss are symmetric (swapping the arms' names swaps them), so a rule whose A/A result rate is ≤ α
says "win" in at most α/2 of A/A runs: the bound is computed at α/2 per side (and, for a rule that could
never report a loss, at α one-sided).

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
DESIGNS = [(12, 5, 0.40), (24, 3, 0.50), (12, 3, None), (48, 3, None), (12, 10, None), (24, 10, None)]


def world_gaps(fixtures: int, repetitions: int, gap: float, shock: float, sims: int,
               rng: np.random.Generator) -> Array:
    """The per-repetition gaps D_r of simulated runs of the calibration's world, (sims, R)."""
    base, variants, _ = simulate(Line("bound", fixtures, repetitions, gap=gap, arm_shock=shock), sims, rng)
    d: Array = (variants[0] - base).mean(axis=1)
    return d


def tau2(d: Array) -> float:
    """The within-run variance of the gaps D_r, the τ² of the normal model."""
    return float(d.var(axis=1, ddof=1).mean())


def sufficient(d: Array) -> tuple[Array, Array]:
    return d.mean(axis=1), ((d - d.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)


class LikelihoodRatio:
    """log f(gaps | δ, τ²_alt) − log Σ_k w_k f(gaps | 0, τ²_k): the Neyman–Pearson statistic of a mixture of
    null worlds against the alternative, on the gaps' mean and sum of squares."""

    def __init__(self, r: int, delta: float, tau_alt: float, tau_nulls: list[float], weights: tuple[float, ...]):
        self.r, self.delta, self.tau_alt, self.tau_nulls = r, delta, tau_alt, tau_nulls
        self.logw = np.log(np.maximum(np.asarray(weights), 1e-300))

    def log_density(self, m: Array, ss: Array, mu: float, t2: float) -> Array:
        out: Array = -self.r / 2 * np.log(2 * np.pi * t2) - (ss + self.r * (m - mu) ** 2) / (2 * t2)
        return out

    def __call__(self, m: Array, ss: Array) -> Array:
        mix = np.stack([w + self.log_density(m, ss, 0.0, t2) for w, t2 in zip(self.logw, self.tau_nulls, strict=True)])
        out: Array = self.log_density(m, ss, self.delta, self.tau_alt) - logsumexp(mix, axis=0)
        return out


def lr_bound(repetitions: int, delta: float, tau_alt: float, tau_nulls: list[float], level: float,
             mixtures: list[tuple[float, ...]], draws: int,
             rng: np.random.Generator) -> tuple[float, LikelihoodRatio, float]:
    """Smallest Neyman–Pearson power over the mixtures of null worlds, with its statistic and critical value.

    (mean, sum of squares) of the R gaps are sufficient in the normal model, so they are drawn directly."""
    r = repetitions

    def draw(mu: float, t2: float) -> tuple[Array, Array]:
        return mu + math.sqrt(t2 / r) * rng.standard_normal(draws), t2 * rng.chisquare(r - 1, draws)

    alt = draw(delta, tau_alt)
    nulls = [draw(0.0, t2) for t2 in tau_nulls]
    best: tuple[float, LikelihoodRatio, float] | None = None
    for weights in mixtures:
        llr = LikelihoodRatio(r, delta, tau_alt, tau_nulls, weights)
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
    parser.add_argument("--sims", type=int, default=40_000, help="simulated runs per world for δ and τ²")
    parser.add_argument("--draws", type=int, default=400_000, help="normal-model draws per hypothesis")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    two: list[tuple[float, ...]] = [(1 - a, a) for a in np.linspace(0, 1, 21)]
    three: list[tuple[float, ...]] = [(a, b, round(1 - a - b, 10)) for a in np.linspace(0, 1, 6)
                                      for b in np.linspace(0, 1, 6) if a + b <= 1]
    three += [(*w, 0.0) for w in two]  # mixtures of the first two worlds are mixtures of the three
    print("| F × R | δ (measured) | τ² no shock / gap δ / sd 0.5 / sd 1.0 | known-variance z, no protection | "
          "bound, A/A kept at sd 0.5 (α/2 a side) | its LR test on the world's own runs: A/A sd 0.5 / power | "
          "bound, sd 0.5 and 1.0 (α/2) | bound, one-sided α | issue's target | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fixtures, reps, target in DESIGNS:
        start = time.perf_counter()
        d_alt = world_gaps(fixtures, reps, GAP, 0.0, args.sims, rng)
        d_null = {sd: world_gaps(fixtures, reps, 0.0, sd, args.sims, rng) for sd in (0.0, 0.5, 1.0)}
        delta, tau_alt = float(d_alt.mean()), tau2(d_alt)
        tau0, tau5, tau10 = (tau2(d_null[sd]) for sd in (0.0, 0.5, 1.0))
        z = float(ndtr(delta / math.sqrt(tau_alt / reps) - 1.959964))
        half = ALPHA / 2
        b5, llr, critical = lr_bound(reps, delta, tau_alt, [tau0, tau5], half, two, args.draws, rng)
        b10 = lr_bound(reps, delta, tau_alt, [tau0, tau5, tau10], half, three, args.draws, rng)[0]
        one = lr_bound(reps, delta, tau_alt, [tau0, tau5], ALPHA, two, args.draws, rng)[0]
        # The bound's own test on the binomial world's runs: is the normal model of the gaps a fair one?
        aa = float((llr(*sufficient(d_null[0.5])) > critical).mean())
        power = float((llr(*sufficient(d_alt)) > critical).mean())
        taus = " / ".join(f"{t:.4f}" for t in (tau0, tau_alt, tau5, tau10))
        goal = f"≥ {target:.2f}" if target else "–"
        print(f"| {fixtures} × {reps} | {delta:.4f} | {taus} | {z:.3f} | {b5:.3f} | {aa:.3f} / {power:.3f} | "
              f"{b10:.3f} | {one:.3f} | {goal} | {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
