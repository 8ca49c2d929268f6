"""The worst-case null table's own sampling error: pseudo-random draws against a scrambled Sobol' sequence.

The calibrated p (stats/worstcase.py) reads a table of null scores drawn per design; its tail rate at the
verdict's critical score is known only to the table's sampling error, and in the normal model's A/A corner that
error showed as result rates up to 0.054 (docs/statistics.md, "A/A in the normal model between the grid's
points"). For each design this draws a reference envelope of --reference pseudo-random draws (half of them
mirrored, as the table's), then --tables tables of each kind at --draws draws, and reports the reference's
two-sided rate at each table's critical score for α = 0.05 (what a verdict's A/A rate would be at the grid's worst
point): its mean and sd over the tables, the largest, and table 0's (table 0 of `pseudo` is the table the verdict
drew until 2026-12-06, of `sobol` the one it draws now). The reference's own sd is about √(0.05·0.95/(reference/2)).

    python benchmarks/null_table.py --designs 24x5,48x3,12x3,12x10 --tables 12 --draws 32768
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import numpy.typing as npt

from benchcard.stats import worstcase

Array = npt.NDArray[np.float64]
ALPHA = 0.05


def pseudo_draws(n: int, complete: int, r: int, half: int, seed: int) -> tuple[Array, ...]:
    """The five arrays as the verdict drew them until 2026-12-06 (seed worstcase.SEED gives its table exactly)."""
    rng = np.random.default_rng([seed, n, complete, r])
    err = max(complete - 1, 1) * (r - 1)
    z = np.abs(rng.standard_normal(half))
    u_fix = rng.chisquare(max(n - 1, 1), half) / max(n - 1, 1)
    u_var = rng.chisquare(r - 1, half) / (r - 1)
    u_base = rng.chisquare(r - 1, half) / (r - 1)
    u_err = rng.chisquare(err, half) / err
    return z, u_fix, u_var, u_base, u_err


def critical_score(row: Array) -> float:
    """The score beyond which a table's calibrated one-sided p is ≤ α/2 (as worstcase.critical_t reads it)."""
    allowed = int(np.floor(ALPHA / 2 * (row.size + 1.0))) - 1
    return float(row[row.size - allowed - 1])


def two_sided_rate(reference: Array, score: float) -> float:
    """The reference envelope's two-sided rate at a score: the largest null rate over the grid."""
    return 2.0 * float(reference.size - np.searchsorted(reference, score, side="left")) / reference.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--designs", default="24x5,48x3,12x3,12x10", help="FxR, comma-separated")
    parser.add_argument("--tables", type=int, default=12, help="tables of each kind a design (seeds SEED, SEED + 1, …)")
    parser.add_argument("--draws", type=int, default=worstcase.DRAWS, help="draws a table")
    parser.add_argument("--pseudo-draws", type=int, default=20_000, help="draws a pseudo-random table")
    parser.add_argument("--reference", type=int, default=1_000_000, help="draws of the reference envelope")
    parser.add_argument("--seed", type=int, default=1, help="the reference's seed")
    args = parser.parse_args()
    print(f"# The null table's tail-rate error at α = {ALPHA}: the reference's rate at each table's critical score, "
          f"{args.reference:,} reference draws (seed {args.seed}), {args.tables} tables of each kind\n\n"
          "| design | table | rate: mean | sd | largest | table 0 | CPU s a table |\n|---|---|---|---|---|---|---|")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        reference = worstcase.null_envelope(pseudo_draws(f, f, r, args.reference // 2, args.seed), f, f, r)[0]
        kinds = (("pseudo", args.pseudo_draws, pseudo_draws), ("sobol", args.draws, worstcase.null_draws))
        for kind, draws, drawer in kinds:
            rates, seconds = [], []
            for k in range(args.tables):
                started = time.process_time()
                row = worstcase.null_envelope(drawer(f, f, r, draws // 2, worstcase.SEED + k), f, f, r)[0]
                seconds.append(time.process_time() - started)
                rates.append(two_sided_rate(reference, critical_score(row)))
            got = np.array(rates)
            print(f"| {f} × {r} | {kind}, {draws:,} draws | {got.mean():.4f} | {got.std(ddof=1):.4f} | "
                  f"{got.max():.4f} | {got[0]:.4f} | {np.mean(seconds):.2f} |", flush=True)


if __name__ == "__main__":
    main()
