"""The seeded tables' bytes, to compare two trees of the code: a change made only to go faster prints the same lines.

For a fixed list of designs: the sha256 of each null table (`worstcase.draw_null_scores`), of each design's
simulated runs judged (`reach.draw_evidence`, batch 0, and batch 1 of one design near 95 %), of the sequential
looks of the plainest effect (`sequential.simulate_looks`), and `plan`'s simulated powers (`simulate.effect_power`,
`simulate.guard_power`, their reprs) for a pass/fail and a continuous pilot. The disk cache is off: every table is
drawn here. Run it under each tree and compare (docs/performance.md quotes the runs):

    PYTHONPATH=<old tree>/src python benchmarks/table_bytes.py > old.txt
    PYTHONPATH=<new tree>/src python benchmarks/table_bytes.py > new.txt
    diff old.txt new.txt
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np
import numpy.typing as npt

from _grid import cache_off  # beside this script
from benchcard.stats import reach, sequential, simulate, worstcase

NULL_DESIGNS = ((1, 1, 2), (3, 3, 2), (4, 4, 3), (10, 10, 3), (40, 38, 5), (200, 200, 10), (10000, 10000, 5))
RUN_DESIGNS = ((3, 2), (4, 3), (6, 3), (8, 2), (10, 5), (12, 3), (16, 4), (20, 2), (25, 3), (40, 5), (60, 3),
               (100, 10), (200, 10))


def sha(*arrays: npt.NDArray[np.generic]) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def plain_runs(fixtures: int, repetitions: int, seed: int) -> npt.NDArray[np.float64]:
    """2,000 seeded baselines right about half the time (fixture rates sigmoid(N(0, 1))), as reach draws them."""
    rng = np.random.default_rng([seed, fixtures, repetitions])
    rate = 1.0 / (1.0 + np.exp(-rng.standard_normal((reach.DRAWS, fixtures, 1))))
    out: npt.NDArray[np.float64] = (rng.random((reach.DRAWS, fixtures, repetitions)) < rate).astype(np.float64)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first four designs of each list only")
    args = parser.parse_args()
    cache_off()
    count = 4 if args.quick else None
    for n, complete, r in NULL_DESIGNS[:count]:
        print("null", (n, complete, r), sha(worstcase.draw_null_scores(n, complete, r)), flush=True)
    for f, r in RUN_DESIGNS[:count]:
        print("evidence", (f, r), sha(*reach.draw_evidence(f, r)), flush=True)
    print("evidence batch 1", (22, 3), sha(*reach.draw_evidence(22, 3, 1)), flush=True)
    for looks in ((2, 4), (1, 2, 3)):
        plan = sequential.schedule(list(looks), looks[-1])
        for f in (8, 30):
            base = plain_runs(f, looks[-1], 20261207)
            at, codes = sequential.simulate_looks(base, np.ones_like(base), plan, effect=0.05)
            print("looks", looks, f, sha(at, codes), flush=True)
    rng = np.random.default_rng(20261207)
    pilots = ((rng.random((6, 3)) < 0.5).astype(float), (rng.random((6, 3)) < 0.7).astype(float),
              rng.standard_normal((6, 3)), rng.standard_normal((6, 3)) + 0.3)
    for base_pilot, var_pilot in (pilots[:2], pilots[2:]):
        model = simulate.model_of(base_pilot, var_pilot)
        for f, r in ((6, 3), (20, 4)):
            z = simulate.draws(model, f, r, seed=11, n=2000)
            powers = [repr(simulate.effect_power(z, gap, 0.05)) for gap in (0.05, 0.2, 0.4)]
            print("power", type(model).__name__, (f, r), powers, repr(simulate.guard_power(z, 0.1, 0.1, 0.05)))


if __name__ == "__main__":
    main()
