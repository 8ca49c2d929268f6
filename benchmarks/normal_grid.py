"""A/A runs of the normal model the verdict's worst-case p is calibrated to, at points between its grid's.

The calibrated p (stats/worstcase.py) is the largest null rate over a grid of variance ratios; this draws A/A
runs of the same model off that grid (run ratios 5–100 beside the grid's 10 and 100, fixture ratios and shock
splits between grid points) and judges each through the verdict's own functions (`crossed`, `effect_evidence`,
`decide`), so a peak the grid steps over shows as a result rate above α. docs/statistics.md quotes its figures.

World (per simulated run, σ²_e = 1): cell = fixture effect (shared, sd 1) + the variant's fixture interaction
N(0, θ_fix/R) + each arm's repetition shock (variant N(0, ρ·θ_run/F), baseline N(0, (1 − ρ)·θ_run/F)) + cell
noise (variant N(0, w), baseline N(0, 1 − w)): θ_fix = R·ω²/σ²_e and θ_run = F·σ²_run/σ²_e as in worstcase.py,
w the variant's share of the cell noise, ρ its share of the shock variance. "result" = a win or a loss.
`--model means` draws instead the mean squares of that model as worstcase.py's null draws do (fresh seeds; a
million a line in seconds), for the rate the calibration aims at to a few 10⁻⁴; `--grid-run-ratios` judges with a
calibration grid of other run ratios (its tables drawn here, the disk cache off), to try a denser grid.

    python benchmarks/normal_grid.py --sims 40000 --seed 1 --designs 48x3 --run-ratios 4,5,6,7,10
    python benchmarks/normal_grid.py --model means --sims 1000000 --seed 1 --designs 48x3 --run-ratios 5,7,10
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from _grid import use_grid  # beside this script
from benchcard.stats import paired, worstcase
from benchcard.stats.crossed import crossed
from benchcard.stats.decision import LOSS, WIN, decide, effect_evidence

Array = npt.NDArray[np.float64]
ALPHA = 0.05
CHUNK = 5000


@dataclass(frozen=True)
class Point:
    """One A/A world of the normal model: design and variance ratios (worstcase.py's names)."""

    fixtures: int
    repetitions: int
    fixture_ratio: float
    run_ratio: float
    split: float = 1.0
    share: float = 0.5

    @property
    def key(self) -> tuple[int, ...]:
        """The line's own seed words: a line draws the same runs whatever else is listed."""
        return (self.fixtures, self.repetitions, *(round(1000 * x) for x in (self.fixture_ratio, self.run_ratio,
                                                                             self.split, self.share)))

    @property
    def name(self) -> str:
        return (f"{self.fixtures}x{self.repetitions} θ_fix {self.fixture_ratio:g} θ_run {self.run_ratio:g} "
                f"ρ {self.split:g} w {self.share:g}")


def draw(point: Point, sims: int, rng: np.random.Generator) -> tuple[Array, Array]:
    """Baseline and variant scores, (sims, F, R), of one A/A world."""
    f, r = point.fixtures, point.repetitions
    shock = point.run_ratio / f
    fixture = rng.standard_normal((sims, f, 1))
    inter = np.sqrt(point.fixture_ratio / r) * rng.standard_normal((sims, f, 1))
    base = (fixture + np.sqrt((1 - point.split) * shock) * rng.standard_normal((sims, 1, r))
            + np.sqrt(1 - point.share) * rng.standard_normal((sims, f, r)))
    var = (fixture + inter + np.sqrt(point.split * shock) * rng.standard_normal((sims, 1, r))
           + np.sqrt(point.share) * rng.standard_normal((sims, f, r)))
    return base, var


def results(point: Point, sims: int, rng: np.random.Generator) -> tuple[int, int]:
    """Wins and losses of the variant over `sims` A/A runs, by the verdict's decision code (one `rises` clause).

    The sign-flip p enters only where the standard error is zero, which continuous cells never give (checked);
    its floor 2/2^n comes from the differences themselves (Crossed.flip_floor)."""
    wins = losses = 0
    for start in range(0, sims, CHUNK):
        n = min(CHUNK, sims - start)
        base, var = draw(point, n, rng)
        c = crossed(base, var)
        assert not c.zero_se.any(), "a zero standard error in continuous cells"
        ones = np.ones(n)
        codes = decide([[effect_evidence(c, ones, True)]], [ones], [c.spread], ALPHA).codes[0]
        wins += int((codes == WIN).sum())
        losses += int((codes == LOSS).sum())
    return wins, losses


def mean_square_results(point: Point, sims: int, rng: np.random.Generator) -> tuple[int, int]:
    """Wins and losses when the mean squares are drawn as worstcase.draw_null_scores draws them (each arm's
    repetition mean square on R − 1 df, the fixtures' on F − 1, the cells' on (F − 1)(R − 1), a normal gap) and
    judged by the same variance_and_df and calibrate as a verdict's (two-sided, α split between the sides)."""
    f, r = point.fixtures, point.repetitions
    err = (f - 1) * (r - 1)
    wins = losses = 0
    for start in range(0, sims, CHUNK * 20):
        n = min(CHUNK * 20, sims - start)
        z = rng.standard_normal(n)
        a = (1 + point.fixture_ratio) * rng.chisquare(f - 1, n) / (f - 1)
        u_var, u_base = rng.chisquare(r - 1, (2, n)) / (r - 1)
        c = rng.chisquare(err, n) / err
        lam_v = point.share + point.split * point.run_ratio
        lam_b = (1 - point.share) + (1 - point.split) * point.run_ratio
        rep_v, rep_b = lam_v * u_var, lam_b * u_base
        var, df = worstcase.variance_and_df(a, rep_v + rep_b, c, np.maximum(rep_v, point.share * c),
                                            np.maximum(rep_b, (1 - point.share) * c), r, f)
        t = z * np.sqrt((1 + point.fixture_ratio + point.run_ratio) / var)
        design = np.full(n, f, dtype=np.int64)
        p = 2 * worstcase.calibrate(np.abs(t), df, design, design, r, np.ones(n, dtype=bool))
        wins += int(((p <= ALPHA) & (t > 0)).sum())
        losses += int(((p <= ALPHA) & (t < 0)).sum())
    return wins, losses


def wilson_text(k: int, n: int) -> str:
    lo, hi = paired.wilson(k, n)
    return f"{k / n:.4f} [{lo:.4f}, {hi:.4f}]"


DESIGNS = ((48, 3), (24, 3), (100, 3), (12, 5))
RUN_RATIOS = (5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 70.0, 100.0)


def points(designs: tuple[tuple[int, int], ...], run_ratios: tuple[float, ...], fixture_ratios: tuple[float, ...],
           splits: tuple[float, ...], shares: tuple[float, ...]) -> list[Point]:
    return [Point(f, r, fx, run, split, share)
            for (f, r), fx, run, split, share in itertools.product(designs, fixture_ratios, run_ratios, splits, shares)]


def floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=4000, help="simulated runs per line")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--designs", default=",".join(f"{f}x{r}" for f, r in DESIGNS), help="FxR, comma-separated")
    parser.add_argument("--run-ratios", default=",".join(f"{x:g}" for x in RUN_RATIOS), help="θ_run values")
    parser.add_argument("--fixture-ratios", default="0", help="θ_fix values")
    parser.add_argument("--splits", default="1", help="ρ values: the variant's share of the shock variance")
    parser.add_argument("--shares", default="0.5", help="w values: the variant's share of the cell noise")
    parser.add_argument("--only", default="", help="run only the lines whose name contains this text")
    parser.add_argument("--model", choices=("cells", "means"), default="cells",
                        help="draw cells and judge them as a verdict does, or draw the mean squares (faster)")
    parser.add_argument("--grid-run-ratios", default="", help="judge with a calibration grid of these run ratios "
                        "instead of worstcase.RUN_RATIOS (tables drawn here, the disk cache off)")
    parser.add_argument("--grid-shares", default="", help="… and of these cell-noise shares (worstcase.ARM_SHARES)")
    parser.add_argument("--grid-draws", type=int, default=0, help="… and this many draws a point (worstcase.DRAWS)")
    args = parser.parse_args()
    use_grid(floats(args.grid_run_ratios), floats(args.grid_shares), args.grid_draws)
    judge = results if args.model == "cells" else mean_square_results
    designs = tuple((int(f), int(r)) for f, r in (d.split("x") for d in args.designs.split(",")))
    grid = points(designs, floats(args.run_ratios), floats(args.fixture_ratios), floats(args.splits),
                  floats(args.shares))
    print(f"# A/A in the normal model off the calibration grid ({args.model}): {args.sims:,} runs a line, "
          f"α = {ALPHA}, seed {args.seed}, grid run ratios {worstcase.RUN_RATIOS}, "
          f"shares {worstcase.ARM_SHARES}, {worstcase.DRAWS:,} draws a point\n\n"
          "| world | result rate [95% Wilson] | wins | losses | CPU s |\n|---|---|---|---|---|")
    for point in grid:
        if args.only and args.only not in point.name:
            continue
        started = time.process_time()
        wins, losses = judge(point, args.sims, np.random.default_rng([args.seed, *point.key]))
        print(f"| {point.name} | {wilson_text(wins + losses, args.sims)} | {wins / args.sims:.4f} | "
              f"{losses / args.sims:.4f} | {time.process_time() - started:.1f} |", flush=True)


if __name__ == "__main__":
    main()
