"""Replication and drift by simulation: how often `stats.replication` says *replicated* and *no change shown*
when nothing changed between two runs, and how often it catches a world that did change.

An ab line draws pairs of runs on the same fixtures (one fixture difficulty a_f ~ N(difficulty, 1) on the
logit scale for both runs: a replication re-sends the same sealed requests), each run in calibration.py's
binomial world with its own cells and shocks. Each run is judged by the verdict's own decision code
(calibration.rule_on: crossed + decision, sign-flip, Holm), its first clause's gap, run term and df taken as
verdict.json holds them (`crossed`), and the pair by `replication.prediction_bounds` + `replication_codes`,
the code `replication_finding` runs. "after" changes the second run: the variant's gap, or both arms' accuracy
(on the probability scale, clipped).

A probe line draws a probe's scores twice (one prompt: R repetitions of a rate p; several fixtures: F
fixtures of logit N(difficulty, 1), R repetitions each) and judges the pair by `probe_drift`'s code
(`newcombe` for one prompt, `paired_drift` for several fixtures).

    python benchmarks/replication.py --sims 4000 --seed 1
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchcard.stats import paired as stats
from benchcard.stats.crossed import crossed
from benchcard.stats.decision import FINDINGS, WIN
from benchcard.stats.replication import newcombe, paired_drift, prediction_bounds, replication_codes
from calibration import ALPHA, Line, rule_on

Array = npt.NDArray[np.float64]
LEVEL = 0.95


@dataclass(frozen=True)
class Pair:
    """Two ab runs on the same fixtures; the second with `after_gap` and both arms moved by `after_shift`."""

    name: str
    fixtures: int = 12
    repetitions: int = 5
    gap: float = 0.0
    after_gap: float | None = None  # None: the same gap
    after_shift: float = 0.0  # both arms' accuracy moved by this (probability scale)
    arm_shock: float = 0.0
    shared_shock: float = 0.0
    levels: int = 1
    difficulty: float = 0.5
    perfect: bool = False


def _run(p: Pair, a: Array, gap: float, shift: float, rng: np.random.Generator) -> tuple[Array, Array]:
    s, f, r = a.shape[0], p.fixtures, p.repetitions
    shared = p.shared_shock * rng.standard_normal((s, 1, r))

    def arm(g: float, perfect: bool = False) -> Array:
        own = p.arm_shock * rng.standard_normal((s, 1, r))
        rate = 1.0 if perfect else 1 / (1 + np.exp(-(a + shared + own)))
        prob = np.clip(rate + g + shift, 0, 1)
        out: Array = rng.binomial(p.levels, np.broadcast_to(prob, (s, f, r))) / p.levels
        return out

    # a treatment right every time: its rate is 1 (moved by the gap after a change), the baseline's as ever
    return arm(0.0), arm(gap, p.perfect)


def _judged(p: Pair, base: Array, var: Array, seed: int) -> tuple[npt.NDArray[np.int64], Array, Array, Array]:
    line = Line(p.name, fixtures=p.fixtures, repetitions=p.repetitions)
    codes, _, _ = rule_on(line, base, [var], [np.zeros(var.shape, dtype=bool)], [], seed)
    c = crossed(base, var)
    return codes, c.gap, c.var_run, c.df


def run_pair(p: Pair, sims: int, rng: np.random.Generator, seed: int) -> str:
    started = time.perf_counter()
    a = p.difficulty + rng.standard_normal((sims, p.fixtures, 1))
    if p.perfect:
        a = a - p.difficulty  # a baseline right about half the time, as calibration.py's perfect lines
    after = p.gap if p.after_gap is None else p.after_gap
    f_o, g_o, v_o, df_o = _judged(p, *_run(p, a, p.gap, 0.0, rng), seed)
    f_n, g_n, v_n, df_n = _judged(p, *_run(p, a, after, p.after_shift, rng), seed)
    low, high, _, _ = prediction_bounds(g_o, v_o, df_o, v_n, df_n, LEVEL)
    low, high = np.where(np.isfinite(low), low, np.nan), np.where(np.isfinite(high), high, np.nan)
    flipped = ((f_o == 0) & (f_n == 1)) | ((f_o == 1) & (f_n == 0))
    codes = replication_codes(f_o == f_n, flipped, g_n, low, high)
    won = f_o == WIN
    inside = (g_n >= low) & (g_n <= high)
    measured = np.isfinite(low)

    def rate(mask: npt.NDArray[np.bool_], of: npt.NDArray[np.bool_] | None = None) -> str:
        of = np.ones_like(mask) if of is None else of
        n = int(of.sum())
        if n == 0:
            return "—"
        k = int((mask & of).sum())
        lo, hi = stats.wilson(k, n)
        return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"

    original = ", ".join(f"{FINDINGS[k]} {np.mean(f_o == k):.2f}" for k in range(4) if np.any(f_o == k))
    return (f"| {p.name} | {original} | {rate(codes == 0)} | {rate(codes == 1)} | {rate(codes == 2)} | "
            f"{rate(codes == 0, won)} | {rate(codes == 1, won)} | {rate(inside, measured)} | "
            f"{time.perf_counter() - started:.1f} |")


@dataclass(frozen=True)
class Probe:
    """A probe run twice: one prompt (fixtures 1) at rate `rate`, or F fixtures of logit N(difficulty, 1)."""

    name: str
    fixtures: int = 1
    repetitions: int = 10
    rate: float = 0.9
    fall: float = 0.0  # the second run's rate lower by this (probability scale)
    difficulty: float = 1.5


def run_probe(p: Probe, sims: int, rng: np.random.Generator) -> str:
    started = time.perf_counter()
    if p.fixtures == 1:
        o = rng.binomial(p.repetitions, p.rate, sims) / p.repetitions
        n = rng.binomial(p.repetitions, max(0.0, p.rate - p.fall), sims) / p.repetitions
        reps = np.full(sims, float(p.repetitions))
        lo, hi = newcombe(o, reps, n, reps, ALPHA)
        changed = (lo > 0) | (hi < 0)
    else:
        prob = 1 / (1 + np.exp(-(p.difficulty + rng.standard_normal((sims, p.fixtures, 1)))))
        prob = np.broadcast_to(prob, (sims, p.fixtures, p.repetitions))
        o = rng.binomial(1, prob).mean(axis=2)
        n = rng.binomial(1, np.clip(prob - p.fall, 0, 1)).mean(axis=2)
        changed, _, _, _ = paired_drift(o, n, ALPHA)
    k = int(changed.sum())
    lo_w, hi_w = stats.wilson(k, sims)
    return f"| {p.name} | {k / sims:.3f} [{lo_w:.3f}, {hi_w:.3f}] | {time.perf_counter() - started:.1f} |"


AA_PAIRS = [
    Pair("no effect, F=12, R=3", repetitions=3),
    Pair("no effect, F=12, R=5, per-arm shocks sd 0.5", arm_shock=0.5),
    Pair("no effect, F=24, R=2", fixtures=24, repetitions=2),
    Pair("gap 0.15, F=12, R=5", gap=0.15),
    Pair("gap 0.30, F=12, R=5", gap=0.30),
    Pair("gap 0.15, F=24, R=10", gap=0.15, fixtures=24, repetitions=10),
    Pair("gap 0.15, F=48, R=3, per-arm shocks sd 0.5", gap=0.15, fixtures=48, repetitions=3, arm_shock=0.5),
    Pair("gap 0.15, F=12, R=5, shock shared by both arms sd 0.5", gap=0.15, shared_shock=0.5),
    Pair("gap 0.15, F=24, R=5, scores in quarters", gap=0.15, fixtures=24, levels=4),
    Pair("a treatment right every time, F=12, R=5", perfect=True),
    Pair("a treatment right every time, F=24, R=3", perfect=True, fixtures=24, repetitions=3),
]

CHANGED_PAIRS = [
    Pair("gap 0.30 → 0 (the variant's advantage gone), F=12, R=5", gap=0.30, after_gap=0.0),
    Pair("gap 0.30 → 0.15, F=12, R=5", gap=0.30, after_gap=0.15),
    Pair("gap 0.15 → 0, F=24, R=10", gap=0.15, fixtures=24, repetitions=10, after_gap=0.0),
    Pair("right every time → falls by 0.20 (variant only), F=12, R=5", perfect=True, after_gap=-0.20),
    Pair("gap 0.30, both arms' accuracy falls by 0.10, F=12, R=5", gap=0.30, after_shift=-0.10),
    Pair("gap 0.30, both arms' accuracy falls by 0.20, F=12, R=5", gap=0.30, after_shift=-0.20),
    Pair("gap 0.30, the variant's accuracy falls by 0.10, F=12, R=5", gap=0.30, after_gap=0.20),
    Pair("gap 0.30, the variant's accuracy falls by 0.20, F=12, R=5", gap=0.30, after_gap=0.10),
    Pair("no effect → the variant's accuracy falls by 0.30, F=12, R=3", repetitions=3, after_gap=-0.30),
]

PROBES = [
    Probe("one prompt, R=10, rate 0.9, no change"),
    Probe("one prompt, R=10, rate 0.5, no change", rate=0.5),
    Probe("one prompt, R=20, rate 0.9, no change", repetitions=20),
    Probe("one prompt, R=5, rate 0.9, no change", repetitions=5),
    Probe("one prompt, R=10, rate 0.9 → 0.8", fall=0.10),
    Probe("one prompt, R=10, rate 0.9 → 0.7", fall=0.20),
    Probe("one prompt, R=20, rate 0.9 → 0.8", repetitions=20, fall=0.10),
    Probe("one prompt, R=20, rate 0.9 → 0.7", repetitions=20, fall=0.20),
    Probe("one prompt, R=50, rate 0.9 → 0.8", repetitions=50, fall=0.10),
    Probe("one prompt, R=50, rate 0.9 → 0.7", repetitions=50, fall=0.20),
    Probe("one prompt, R=100, rate 0.9 → 0.8", repetitions=100, fall=0.10),
    Probe("12 fixtures × 3, no change", fixtures=12, repetitions=3),
    Probe("12 fixtures × 3, mean logit 0, no change", fixtures=12, repetitions=3, difficulty=0.0),
    Probe("24 fixtures × 1, no change", fixtures=24, repetitions=1),
    Probe("12 fixtures × 5 (an ab card's baseline arm), no change", fixtures=12, repetitions=5),
    Probe("12 fixtures × 3, each falls by 0.10", fixtures=12, repetitions=3, fall=0.10),
    Probe("12 fixtures × 3, each falls by 0.20", fixtures=12, repetitions=3, fall=0.20),
    Probe("12 fixtures × 5 (an ab card's baseline arm), each falls by 0.10", fixtures=12, repetitions=5, fall=0.10),
    Probe("12 fixtures × 5 (an ab card's baseline arm), each falls by 0.20", fixtures=12, repetitions=5, fall=0.20),
    Probe("24 fixtures × 1, each falls by 0.10", fixtures=24, repetitions=1, fall=0.10),
    Probe("24 fixtures × 1, each falls by 0.20", fixtures=24, repetitions=1, fall=0.20),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=2000, help="simulated pairs of runs per line")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="run only the lines whose name contains this text")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    head = ("| world | the original's findings | replicated | not replicated | inconclusive | replicated, of "
            "original wins | not replicated, of original wins | new gap inside the interval | seconds |\n"
            "|---|---|---|---|---|---|---|---|---|")
    for title, pairs in (("Nothing changed between the runs (A/A)", AA_PAIRS),
                         ("The world changed between the runs", CHANGED_PAIRS)):
        print(f"\n## {title}: {args.sims:,} pairs a line, seed {args.seed}\n\n{head}")
        for pair in pairs:
            if not args.only or args.only in pair.name:
                print(run_pair(pair, args.sims, rng, args.seed), flush=True)
    print(f"\n## Probe drift: {args.sims:,} pairs a line\n\n| world | changed [95% Wilson] | seconds |\n|---|---|---|")
    for probe in PROBES:
        if not args.only or args.only in probe.name:
            print(run_probe(probe, args.sims, rng), flush=True)
    print(f"\n{time.perf_counter() - started:.1f} s in all.")


if __name__ == "__main__":
    main()
