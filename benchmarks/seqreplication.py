"""The replication rule of a sequential run (issue 27): how often two runs of the same sealed sequential card
are judged *replicated*, *not replicated* or *inconclusive* when nothing changed between them (A/A).

A pair is two runs on the same fixtures (the fixtures' logit difficulties drawn once for both: a replication
re-sends the same sealed requests), each with its own cells and shocks, in the world of
benchmarks/calibration.py (every A/A line). Each run is decided at its sealed looks by benchmarks/sequential.py's
`sequential` (the verdict's own code at every look, the default schedule: a look after every block from the
second); a stop for futility is a `no-effect`, as the verdict says. The pair is judged as
`verdict/_replication.by_findings` judges it: the same finding is *replicated*, a win against a loss *not
replicated*, anything else *inconclusive*. "replicated" is split by the finding repeated: a win or a loss
repeated under no effect is a false result replicated.

    python benchmarks/seqreplication.py --sims 500 --seed 1
    python benchmarks/seqreplication.py --sims 500 --seed 2 --futility 0.255   # futility on, that effect
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from benchcard.stats.decision import LOSS, WIN
from benchcard.stats.sequential import FUTILITY_BETAS, LOOK_CODES
from calibration import AA_LINES, Line, wilson_text  # beside this script
from sequential import default_schedule, draw, sequential

Ints = npt.NDArray[np.int64]
NO_EFFECT, INCONCLUSIVE, FUTILITY = (LOOK_CODES.index(c) for c in ("no-effect", "inconclusive", "futility"))


class SameFixtures(np.random.Generator):
    """A generator that hands the second run of a pair the fixture draws of the first: every standard normal of
    shape (sims, F, 1) (calibration.simulate's fixture difficulties, the guards' too) is recorded on the first
    run and replayed, in order, on the second; every other draw (shocks, cells) is the generator's own."""

    def __init__(self, seed: int, fixtures: tuple[int, int]) -> None:
        super().__init__(np.random.PCG64(seed))
        self.shape = (fixtures[0], fixtures[1], 1)
        self.recorded: list[Any] = []
        self.replay: list[Any] | None = None

    def standard_normal(self, size: Any = None, *args: Any, **kwargs: Any) -> Any:
        if size is not None and tuple(np.atleast_1d(size)) == self.shape:
            if self.replay is not None:
                return self.replay.pop(0)
            out = super().standard_normal(size, *args, **kwargs)
            self.recorded.append(out)
            return out
        return super().standard_normal(size, *args, **kwargs)


def findings(line: Line, rng: SameFixtures, seed: int, effect: float) -> tuple[Ints, float]:
    """One run per pair: each run's finding code (a futility stop as no-effect) and the share of calls spent."""
    plan = default_schedule(line.repetitions, "obrien-fleming", -4.0, FUTILITY_BETAS["obrien-fleming"], effect > 0, 2,
                            decide_from=3)
    data = draw(line, rng.shape[0], rng)
    at, codes, _ = sequential(data, plan, seed, effect)
    calls = float(np.asarray(plan.looks)[at].mean()) / line.repetitions
    return np.where(codes == FUTILITY, NO_EFFECT, codes).astype(np.int64), calls


def pair_line(line: Line, sims: int, seed: int, rng_seed: int, effect: float) -> str:
    started = time.perf_counter()
    rng = SameFixtures(rng_seed, (sims, line.fixtures))
    first, calls_o = findings(line, rng, seed, effect)
    rng.replay = list(rng.recorded)
    second, calls_n = findings(line, rng, seed, effect)
    assert rng.recorded and not rng.replay, "the second run did not read every fixture draw of the first"
    same = first == second
    flipped = ((first == WIN) & (second == LOSS)) | ((first == LOSS) & (second == WIN))
    false_again = same & np.isin(first, (WIN, LOSS))
    cells = [wilson_text(int(same.sum()), sims), wilson_text(int(flipped.sum()), sims),
             wilson_text(int((~same & ~flipped).sum()), sims), wilson_text(int(false_again.sum()), sims),
             f"{np.mean(same & (first == NO_EFFECT)):.3f}", f"{np.mean(same & (first == INCONCLUSIVE)):.3f}",
             f"{np.mean(np.isin(first, (WIN, LOSS))):.3f}", f"{(calls_o + calls_n) / 2:.3f}"]
    return f"| {line.name} | {' | '.join(cells)} | {time.perf_counter() - started:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=500, help="simulated pairs of runs per line")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="only the lines whose name contains this text")
    parser.add_argument("--futility", type=float, default=0.0,
                        help="the effect that matters for a futility stop (0: futility off)")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"# A sequential run's replication under no effect: {args.sims:,} pairs a line, seed {args.seed}, "
          f"futility {'off' if not args.futility else f'on, effect {args.futility:g}'}\n\n"
          "| scenario | replicated [95% Wilson] | not replicated | inconclusive | a win or loss replicated | "
          "no-effect replicated | inconclusive replicated | original's result rate | calls spent | seconds |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    for i, line in enumerate(AA_LINES):
        if not args.only or args.only in line.name:
            print(pair_line(line, args.sims, args.seed, args.seed * 1000 + i, args.futility), flush=True)
    print(f"\n{time.perf_counter() - started:.1f} s in all.")


if __name__ == "__main__":
    main()
