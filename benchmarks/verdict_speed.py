"""Time the statistics of one verdict over 100,000 scored cells (budget: 3 s on a 2-core machine).

One metric, both arms: paired_gap (t interval and the sign-flip p, 100,000 seeded draws above 20 fixtures),
noise_floor, tost, wilson and a 10,000-resample cluster_bootstrap. Data generation and imports are outside
the timed region; each shape is timed --repeat times and the median and worst are reported.

    python benchmarks/verdict_speed.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
import numpy.typing as npt

from benchcard import stats

BUDGET_S = 3.0
FloatArray = npt.NDArray[np.float64]


def one_verdict(base: FloatArray, var: FloatArray, seed: int, resamples: int) -> dict[str, float]:
    """Every statistic a verdict reports for one metric; returns seconds per step."""
    steps: dict[str, float] = {}
    t0 = time.perf_counter()
    gap = stats.paired_gap(base, var, 0.05, seed=seed)
    t1 = time.perf_counter()
    nf = stats.noise_floor(base, 0.05)
    stats.tost(base, var, 0.05, 0.05)
    stats.wilson(int((var[0] > 0.5).sum()), var.shape[1])
    t2 = time.perf_counter()
    low, high = stats.cluster_bootstrap(base, var, resamples, seed=seed)
    t3 = time.perf_counter()
    assert low <= gap.gap <= high or abs(gap.gap) < 1e-9, "bootstrap interval does not bracket the gap"
    assert nf.value > 0
    steps["paired_gap"] = t1 - t0
    steps["noise_floor+tost+wilson"] = t2 - t1
    steps["cluster_bootstrap"] = t3 - t2
    steps["total"] = t3 - t0
    return steps


def row(*cells: str) -> str:
    """One markdown table row."""
    return "| " + " | ".join(cells) + " |"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument(
        "--shapes",
        nargs="+",
        default=["10000x5", "1000x50"],
        help="fixtures x repetitions per arm (two arms): 10000x5 and 1000x50 are 100,000 cells each",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    print(f"# Verdict statistics speed (budget {BUDGET_S:g} s)\n")
    versions = f"numpy {np.__version__}, python {platform.python_version()}"
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, {versions}")
    print(f"bootstrap resamples {args.resamples:,}, sign-flip draws 100,000, repeats {args.repeat}\n")
    head = ["fixtures × reps × arms", "cells", "paired_gap (s)", "nf+tost+wilson (s)", "bootstrap (s)"]
    head += ["total median (s)", "total worst (s)", "within budget"]
    print(row(*head))
    print("|---|---|---|---|---|---|---|---|")
    ok = True
    for shape in args.shapes:
        f_str, r_str = shape.lower().split("x")
        f, r = int(f_str), int(r_str)
        rng = np.random.default_rng(args.seed)
        difficulty = rng.random((f, 1))
        base = np.clip(difficulty + rng.normal(0, 0.15, (f, r)), 0, 1).round(2)
        var = np.clip(difficulty + 0.01 + rng.normal(0, 0.15, (f, r)), 0, 1).round(2)
        runs = [one_verdict(base, var, args.seed + i, args.resamples) for i in range(args.repeat)]
        med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
        worst = max(run["total"] for run in runs)
        within = worst <= BUDGET_S
        ok &= within
        cells = [f"{f:,} × {r} × 2", f"{2 * f * r:,}", f"{med['paired_gap']:.3f}"]
        cells += [f"{med['noise_floor+tost+wilson']:.3f}", f"{med['cluster_bootstrap']:.3f}"]
        cells += [f"{med['total']:.3f}", f"{worst:.3f}", "yes" if within else "NO"]
        print(row(*cells))
    if not ok:
        raise SystemExit("over budget")


if __name__ == "__main__":
    main()
