"""`seal`'s "no dead designs" at its edge (audit24b, 2026-12-08): designs it accepts must give the plainest effect a
win in at least 95% of runs it never drew, designs it refuses should fall short, and the change it names must work.

For each repetition count R and variant count V: the fewest fixtures `seal` accepts (`stats.reach.reliable`, its
own test, searched by `reach.fewest`) and the design one fixture short, which it refuses. Each is drawn again on
fresh seeds (the seeded world of `reach._baseline_runs`, other seeds: a treatment right every time against a
baseline right about half the time) and judged by reach's own composition (`crossed` + `p_effect`, the worst case,
at Holm's first level α/V): its win share with a 95% Wilson interval. For the refused design, the change
`reach.smallest_change` names is drawn the same way.

    python benchmarks/seal_edge.py --sims 20000 --seed 1 --repetitions 4,5,6,7 --variants 1,2,3,5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchcard.stats import reach
from benchcard.stats.crossed import crossed
from calibration import wilson_text  # beside this script


def fresh_share(fixtures: int, repetitions: int, variants: int, sims: int, seed: int, alpha: float = 0.05) -> str:
    """The plainest effect's wins on `sims` runs of seeds reach never draws, judged as reach judges them."""
    wins = 0
    for start in range(0, sims, 2000):
        rng = np.random.default_rng([seed, 7, fixtures, repetitions, start])
        n = min(2000, sims - start)
        rate = 1.0 / (1.0 + np.exp(-rng.standard_normal((n, fixtures, 1))))
        base = (rng.random((n, fixtures, repetitions)) < rate).astype(np.float64)
        _, p = reach._judged(crossed(base, np.ones_like(base)))
        wins += int((p <= alpha / variants).sum())
    return wilson_text(wins, sims)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=20000, help="fresh runs per design")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repetitions", default="4,5,6,7")
    parser.add_argument("--variants", default="1,2,3,5")
    args = parser.parse_args()
    print(f"# seal's edge: {args.sims:,} fresh runs a design, seed {args.seed}\n\n| R | V | design | seal | its own "
          "share (runs) | fresh runs: wins [95% Wilson] | the change it names: fresh wins | seconds |\n"
          "|---|---|---|---|---|---|---|---|")
    for r in map(int, args.repetitions.split(",")):
        for v in map(int, args.variants.split(",")):
            started = time.perf_counter()
            def accepted(f: int, r: int = r, v: int = v) -> bool:
                return reach.reliable(f, r, v)

            edge = reach.fewest(1, 2, reach.MAX_FIXTURES, accepted)
            assert edge is not None
            for f in (edge - 1, edge):
                ok = reach.reliable(f, r, v)
                wins, runs = reach._wins(f, r, v, 0.05, 0.0, None)
                named = ""
                if not ok:
                    change = reach.smallest_change(f, r, v)
                    tries = [(f, change.repetitions)] if change.repetitions else []
                    tries += [(change.fixtures, r)] if change.fixtures else []
                    tries += [change.together] if change.together else []
                    named = "; ".join(f"{a} × {b}: {fresh_share(a, b, v, args.sims, args.seed)}" for a, b in tries)
                print(f"| {r} | {v} | {f} × {r} | {'accepts' if ok else 'refuses'} | {wins / runs:.4f} ({runs:,}) | "
                      f"{fresh_share(f, r, v, args.sims, args.seed)} | {named} | "
                      f"{time.perf_counter() - started:.1f} |", flush=True)


if __name__ == "__main__":
    main()
