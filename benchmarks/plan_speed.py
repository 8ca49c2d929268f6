"""How long `benchcard plan` takes for its power figures: one gap clause, from a pilot and from assumptions.

A pilot of the design's size with pass/fail scores (fixture difficulty N(0, 0.5) on the logit scale) is fitted
as `plan --from` fits it (`simulate.model_of`) and planned with its range (`powerplan.effect_entry`, as for
each gap clause and variant of a card); a declared model (`--baseline-rate 0.6 --fixture-sd 0.15`) is planned
without one. Each figure is the median of `--repeat` timings in this process, after one warm-up (the verdict's
worst-case table per design is built once and cached, as it is in one `benchcard plan`).

    python benchmarks/plan_speed.py --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from _grid import cache_off  # beside this script
from benchcard.planning import power as powerplan
from benchcard.planning.result import ClausePlan
from benchcard.stats import simulate

DESIGNS = ((12, 3), (12, 5), (24, 5), (48, 3), (48, 10))


def timed(run: Callable[[], float], repeat: int) -> tuple[float, float]:
    """The median time of `run` over `repeat` calls after a warm-up, and what it returned."""
    value = run()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), value


CLAUSE = ClausePlan(metric="score", test="rises", fixture=None, margin=None, variant="A")


def needed(model: simulate.Model, f: int, r: int, ranged: bool) -> float:
    gap = powerplan.effect_entry(CLAUSE, model, f, r, 0.05, ranged=ranged).needed_gap
    assert isinstance(gap, int | float)
    return float(gap)


def main() -> None:
    # Timed as drawn: no seeded table read back from the cache (README's "Layout"), or a repeat would time a file read.
    cache_off()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("| design | from a pilot (with its range), s | from assumptions, s | needed gap (pilot / assumed) |")
    print("|---|---|---|---|")
    for f, r in DESIGNS:
        p = 1 / (1 + np.exp(-0.5 * rng.standard_normal((f, 1))))
        base = rng.binomial(1, np.repeat(p, r, 1)).astype(float)
        var = rng.binomial(1, np.repeat(p, r, 1)).astype(float)
        pilot = simulate.model_of(base, var)
        assumed = powerplan.Assumptions(baseline_rate=0.6, fixture_sd=0.15).model()
        t_pilot, gap_pilot = timed(partial(needed, pilot, f, r, True), args.repeat)
        t_assumed, gap_assumed = timed(partial(needed, assumed, f, r, False), args.repeat)
        print(f"| F={f}, R={r} | {t_pilot:.2f} | {t_assumed:.2f} | {gap_pilot:.3f} / {gap_assumed:.3f} |", flush=True)


if __name__ == "__main__":
    main()
