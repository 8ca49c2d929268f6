"""Where the calibrated p's critical value comes from: which null worlds of the grid set it, and what they cost.

The verdict's two-sided p is ≤ α when the statistic's Wallace score reaches the grid envelope's critical score at
α/2 (stats/worstcase.py). For each design this prints that score, the grid points whose own two-sided null rate is
highest there (the worlds that set it: the envelope's argmax near the tail) with each point's own 95 % quantile, and
then the power at a true gap (calibration.py's binomial world, judged by `crossed` and the calibrated p exactly as a
verdict of one variant is) with the verdict's table and with tables of grids cut at a largest run ratio θ_run, so
the power each band of run-shock sizes costs is seen apart. A cut grid is not valid (it drops null worlds the
verdict keeps); it measures what keeping them costs. docs/statistics.md ("Where the critical value comes from")
quotes its figures.

    python benchmarks/critical_source.py --designs 24x3,48x3,12x5 --sims 20000 --seed 11
"""

from __future__ import annotations

import argparse

import numpy as np
import numpy.typing as npt
from scipy import special

import calibration  # beside this script
from _grid import cache_off
from benchcard.stats import worstcase
from benchcard.stats.crossed import Crossed, crossed

Array = npt.NDArray[np.float64]
ALPHA = 0.05
CUTS = (0.0, 0.5, 1.0, 2.0, 4.0, 10.0, 100.0)
#: One-arm logit shock sds whose θ_run is printed: the bound's least favourable world (0.79), calibration.py's
#: one-arm A/A line (1.0) and the largest per-arm A/A line (1.5).
SHOCKS = (0.5, 0.79, 1.0, 1.5, 2.5)


def point_scores(f: int, r: int, point: tuple[float, float, float, float], draws: tuple[Array, ...]) -> Array:
    """|Wallace score| of one grid point's null draws, sorted (the draws are mirrored: |w| gives both tails)."""
    fixture, run, share, split = point
    z, u_fix, u_var, u_base, u_err = draws
    rep_v, rep_b = (share + split * run) * u_var, ((1 - share) + (1 - split) * run) * u_base
    var, df = worstcase.variance_and_df((1 + fixture) * u_fix, rep_v + rep_b, u_err, np.maximum(rep_v, share * u_err),
                                        np.maximum(rep_b, (1 - share) * u_err), r, f)
    out: Array = np.sort(np.abs(worstcase.wallace(z * np.sqrt((1 + fixture + run) / var), df)))
    return out


def critical(row: Array) -> float:
    """The score from which the envelope's one-sided p, (hits + 1)/(N + 1), is ≤ α/2 (worstcase.critical_t)."""
    allowed = int(np.floor(ALPHA / 2 * (row.size + 1.0))) - 1
    return float(row[row.size - allowed - 1])


def setters(f: int, r: int, top: int) -> None:
    """The grid points with the highest two-sided null rate at the verdict's critical score."""
    table = worstcase.null_scores(f, f, r)
    score = critical(table[0])
    t_at = float(worstcase.wallace_inverse(score, 2 * (r - 1)))
    print(f"\n## {f} × {r}: critical Wallace score {score:.4f} (t {t_at:.3f} at {2 * (r - 1)} df); "
          f"the steady arm's row {critical(table[1]):.4f}\n\n"
          "| grid point (θ_fix, θ_run, w, ρ) | two-sided null rate at the critical score | the point's own 95 % |w| |"
          "\n|---|---|---|")
    draws = worstcase.null_draws(f, f, r, worstcase.DRAWS // 2)
    rows = []
    for point in worstcase._grid():
        s = point_scores(f, r, point, draws)
        rate = (s.size - np.searchsorted(s, score, side="left")) / s.size
        rows.append((rate, point, float(s[int(0.95 * s.size)])))
    rows.sort(reverse=True)
    for rate, point, own in rows[:top]:
        print(f"| {', '.join(f'{x:g}' for x in point)} | {rate:.4f} | {own:.4f} |")
    owns = np.array([own for _, _, own in rows])
    print(f"\nThe points' own 95 % quantiles: least {owns.min():.3f}, median {np.median(owns):.3f}, "
          f"largest {owns.max():.3f} ({len(rows)} points).")


def alternative(f: int, r: int, gap: float, sims: int, seed: int) -> tuple[Crossed, Array]:
    """calibration.py's world at a true gap (no shock), as crossed sees it, and each run's t."""
    line = calibration.Line("power", fixtures=f, repetitions=r, gap=gap)
    base, variants, _ = calibration.simulate(line, sims, np.random.default_rng([seed, f, r]))
    c = crossed(base, variants[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        t: Array = c.gap / c.se
    return c, t


def power_with(c: Crossed, t: Array, table: Array) -> float:
    """The win rate when the envelope is `table`: the calibrated two-sided p ≤ α on the gap's side, as
    worstcase.calibrate takes it (Student's floor at the reference df, a steady arm read on the table's row 1)."""
    score = worstcase.wallace(t, c.df)
    student = special.stdtr(worstcase.reference_df(c.df, c.n_fixtures), -t)
    fixed = np.zeros(t.shape, dtype=bool) if c.fixed_arm is None else c.fixed_arm
    reach = np.where(fixed, critical(table[1]), critical(table[0]))
    wins = np.isfinite(t) & (t > 0) & (score >= reach) & (student <= ALPHA / 2) & (c.flip_floor <= ALPHA)
    return float(wins.mean())


def cut_power(f: int, r: int, gap: float, sims: int, seed: int) -> None:
    """Power with the verdict's table and with tables of grids cut at a largest run ratio."""
    c, t = alternative(f, r, gap, sims, seed)
    print(f"\nPower at gap {gap:g}, {f} × {r}, {sims:,} runs (seed {seed}): the alternative's reference df median "
          f"{np.median(c.df):.2f} (quartiles {np.quantile(c.df, 0.25):.2f}–{np.quantile(c.df, 0.75):.2f})\n\n"
          "| grid's run ratios | critical score | power |\n|---|---|---|")
    full = worstcase.RUN_RATIOS
    verdict = worstcase.null_scores(f, f, r)
    print(f"| the verdict's ({', '.join(f'{x:g}' for x in full)}) | {critical(verdict[0]):.4f} | "
          f"{power_with(c, t, verdict):.4f} |")
    try:
        for cut in CUTS:
            vars(worstcase)["RUN_RATIOS"] = tuple(x for x in full if x <= cut)
            table = worstcase.draw_null_scores(f, f, r)
            print(f"| ≤ {cut:g} (not valid) | {critical(table[0]):.4f} | {power_with(c, t, table):.4f} |", flush=True)
    finally:
        vars(worstcase)["RUN_RATIOS"] = full


def shock_ratio(f: int, r: int, sd: float, sims: int, seed: int) -> float:
    """θ_run = F·σ²_run/σ²_e of calibration.py's baseline-only logit shocks of this sd (no gap): the shocked arm's
    repetition mean square less its cell mean square, over the gaps' cell mean square (their expectations)."""
    line = calibration.Line("shock", fixtures=f, repetitions=r, arm_shock=sd, variant_shock=0.0)
    base, variants, _ = calibration.simulate(line, sims, np.random.default_rng([seed, f, r]))
    rep, err = mean_squares(base)
    _, gap_err = mean_squares(variants[0] - base)
    return float((rep.mean() - err.mean()) / gap_err.mean())


def mean_squares(x: Array) -> tuple[Array, Array]:
    """MS_repetition and MS_error of each run's complete two-way table (S, F, R)."""
    f, r = x.shape[1], x.shape[2]
    resid = x - x.mean(axis=2, keepdims=True) - x.mean(axis=1, keepdims=True) + x.mean(axis=(1, 2), keepdims=True)
    rep: Array = f * ((x.mean(axis=1) - x.mean(axis=(1, 2))[:, None]) ** 2).sum(axis=1) / (r - 1)
    err: Array = (resid * resid).sum(axis=(1, 2)) / ((f - 1) * (r - 1))
    return rep, err


def main() -> None:
    cache_off()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--designs", default="24x3,48x3,12x5", help="FxR, comma-separated")
    parser.add_argument("--gap", type=float, default=0.15)
    parser.add_argument("--sims", type=int, default=20_000, help="simulated runs at the gap, per design")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--top", type=int, default=12, help="grid points listed per design")
    args = parser.parse_args()
    print(f"# Where the critical value comes from (α = {ALPHA}, {worstcase.DRAWS:,} null draws a point)")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        setters(f, r, args.top)
        cut_power(f, r, args.gap, args.sims, args.seed)
        ratios = ", ".join(f"sd {sd:g}: {shock_ratio(f, r, sd, args.sims, args.seed):.2f}" for sd in SHOCKS)
        print(f"\nθ_run of calibration.py's baseline-only logit shocks at {f} × {r} ({args.sims:,} runs): {ratios}")


if __name__ == "__main__":
    main()
