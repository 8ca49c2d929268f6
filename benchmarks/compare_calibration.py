"""How often `benchcard compare` finds a result where there is none (A/A), and how often it finds a real gain.

Two logs of the same F samples with E epochs each are drawn from a binomial world like benchmarks/calibration.py's:
each sample has a difficulty on the logit scale (sd 1 around the baseline's level), each (sample, epoch, log)
cell is right with that sample's probability (plus the gap, on the probability scale, in the second log), and
`--quarters` scores cells in quarters (4 draws each) instead of 0/1. Every run is judged by compare's own code
from the paired samples on (`comparison.rule_on`: pairing, the epochs folded per sample, the verdict's statistics
and decision; only reading files is skipped), with the rule `match rises` at α 0.05. A "result" is a win or a
loss; in A/A each is an error.

    python benchmarks/compare_calibration.py --runs 4000            # the table in docs/compare.md
    python benchmarks/compare_calibration.py --runs 200 --only 40x3  # one design, quickly
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from benchcard.card.reader import read_win_rule
from benchcard.compare import Sample, Samples, rule_on
from benchcard.records.verdictfile import VerdictHead
from benchcard.stats.paired import wilson

#: (name, samples, epochs, baseline level, gap, quarter scores)
DESIGNS = [
    ("10x1", 10, 1, 0.5, 0.0, False),
    ("10x3", 10, 3, 0.5, 0.0, False),
    ("40x1", 40, 1, 0.5, 0.0, False),
    ("40x2", 40, 2, 0.5, 0.0, False),
    ("40x3", 40, 3, 0.5, 0.0, False),
    ("40x5 quarters", 40, 5, 0.5, 0.0, True),
    ("40x3 baseline 0.95", 40, 3, 0.95, 0.0, False),
    ("200x3", 200, 3, 0.5, 0.0, False),
    ("40x3 gap 0.15", 40, 3, 0.5, 0.15, False),
    ("40x1 gap 0.15", 40, 1, 0.5, 0.15, False),
    ("10x3 perfect", 10, 3, 0.5, 1.0, False),
]


def draw(rng: np.random.Generator, f: int, e: int, level: float, gap: float, quarters: bool) -> list[Samples]:
    """Two logs' samples: the baseline's, and the variant's with `gap` added to each sample's probability."""
    theta = math.log(level / (1 - level)) + rng.standard_normal(f)
    p = 1 / (1 + np.exp(-theta))
    logs = []
    for name, prob in (("a", p), ("b", np.clip(p + gap, 0.0, 1.0))):
        draws = 4 if quarters else 1
        scores = rng.binomial(draws, np.repeat(prob[:, None], e, axis=1)) / draws
        samples = {(f"s{i}", k + 1): Sample("ok", {"match": float(scores[i, k])}) for i in range(f) for k in range(e)}
        logs.append(Samples(path=Path(f"{name}.eval"), tool="inspect_ai", model=f"model-{name}", task="sim",
                            samples=samples, metrics=("match",)))
    return logs


def rate(design: tuple[str, int, int, float, float, bool], runs: int, seed: int) -> tuple[int, int, float]:
    """Results (wins + losses) and wins over `runs` seeded runs, and the seconds they took."""
    _, f, e, level, gap, quarters = design
    rng = np.random.default_rng([seed, f, e, int(level * 100), int(gap * 100), quarters])
    win = read_win_rule({"all": [{"metric": "match", "test": "rises"}], "alpha": 0.05, "equivalence_margin": 0.05},
                        {}, "sim", {"match"}, {f"s{i}": None for i in range(f)})
    head = VerdictHead(run="sim", card="compare", version=None, kind="compare", rig="a vs b", seal_root=None,
                       evidence="sim")
    results = wins = 0
    started = time.perf_counter()
    for i in range(runs):
        a, b = draw(rng, f, e, level, gap, quarters)
        _, verdict = rule_on(a, b, win, ("model-a", "model-b"), head, seed + i, 200, Path("sim"))
        results += verdict.finding in ("win", "loss")
        wins += verdict.finding == "win"
    return results, wins, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--only", help="one design by name (e.g. 40x3)")
    args = parser.parse_args()
    print("| design (samples × epochs) | gap | runs | results (win or loss) | rate | Wilson 95% upper | wins |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for design in DESIGNS:
        if args.only and design[0] != args.only:
            continue
        results, wins, _ = rate(design, args.runs, args.seed)
        upper = wilson(results, args.runs)[1]
        print(f"| {design[0]} | {design[4]:g} | {args.runs} | {results} | {results / args.runs:.4f} | {upper:.4f} | "
              f"{wins / args.runs:.3f} |", flush=True)


if __name__ == "__main__":
    main()
