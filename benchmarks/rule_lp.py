"""A critical score per cell of (ρ_V, ρ_B, ŝ), fitted by a linear programme (issue 23 points 2–3, sixth round).

The rule: today's Wallace score w (crossed.py, worstcase.py: the gap over se at its reference df) wins when
w > c(cell), the cell read from each arm's run-to-run spread over its own cell noise, ρ_arm = MS_rep/MS_err, and
the observed share of the cell noise ŝ = MS_err(V)/(MS_err(V) + MS_err(B)); a loss mirrors it (the arms renamed:
−w > c(ρ_B, ρ_V, 1 − ŝ)). A steady arm keeps today's calibration. The table c is fitted by a linear programme
over the whole null grid (unequal cell-noise shares included): the win rate at every null point ≤ α/2 (its
mirror point holds the loss side), averaged over the statistics' joint normal law — not conditional on ŝ — and
the power at the alternative (the binomial world of calibration.py at the gap, no shock) as large as it can be.
The fitted table is then checked on fresh null draws at every point and as a real rule on calibration.py's
binomial A/A worlds.

    python benchmarks/rule_lp.py --design 24x3 --seed 3 --draws 60000 --check-draws 100000 --alt 40000 \
        --rho 0.35,0.7,1.0,1.4,2,3 --share 0.3,0.4,0.6,0.7

`--strict` also judges the two one-arm lines made strict (each arm's expected rate its fixture's, true gap 0;
the ninth round).

Result (docs/statistics.md, "What was tried", sixth round): the power targets are met and the normal model's
points keep α/2, but the binomial A/A lines with one arm's shocks do not (the cells read ŝ, and a binomial
arm's cell noise moves with its mean, which the normal model's fixed share does not): not put into `stats/`.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from benchcard.stats import paired as stats
from benchcard.stats.crossed import batch_signflip, crossed
from benchcard.stats.decision import LOSS, WIN, decide, effect_evidence, p_tost
from benchcard.stats.worstcase import FIXTURE_RATIOS, variance_and_df, wallace
from calibration import AA_LINES, ALPHA, EQ_MARGIN, Line, simulate

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

RUNS = (0.0, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 30.0, 100.0)
SHARES = (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)
SPLITS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Wallace-score bins of the programme: the rule rejects at one of these.
LOW, HIGH, STEP = 1.5, 5.0, 0.04


def points() -> list[tuple[float, float, float, float]]:
    """(fixture, run, share, split) of every null point, mirrors included (the rule is not symmetric per cell)."""
    out = []
    for fixture in FIXTURE_RATIOS:
        for run in RUNS:
            for share in SHARES:
                for split in SPLITS if run > 0 else (0.5,):
                    out.append((fixture, run, share, split))
    return out


@dataclass(frozen=True)
class Cells:
    """Cell edges: ρ per arm and ŝ."""

    rho: tuple[float, ...]
    share: tuple[float, ...]

    @property
    def count(self) -> int:
        return (len(self.rho) + 1) ** 2 * (len(self.share) + 1)

    def index(self, rho_v: Array, rho_b: Array, s: Array) -> IntArray:
        nr, ns = len(self.rho) + 1, len(self.share) + 1
        iv = np.searchsorted(self.rho, rho_v)
        ib = np.searchsorted(self.rho, rho_b)
        js = np.searchsorted(self.share, s)
        out: IntArray = ((iv * nr + ib) * ns + js).astype(np.int64)
        return out

    def mirror(self, rho_v: Array, rho_b: Array, s: Array) -> IntArray:
        return self.index(rho_b, rho_v, 1.0 - s)


def edges() -> Array:
    return np.arange(LOW, HIGH + STEP / 2, STEP)


def bins(w: Array) -> IntArray:
    """Bin of each score: −1 below LOW (never rejected), else j with edges[j] ≤ w < edges[j + 1] (last: ≥ HIGH)."""
    e = edges()
    out: IntArray = (np.searchsorted(e, w, side="right") - 1).astype(np.int64)
    return out


def null_draws(n: int, r: int, draws: int, seed: int) -> dict[str, Array]:
    """Standard draws shared by every point (common random numbers), scaled per point in null_hist."""
    rng = np.random.default_rng([seed, n, r])
    k = (n - 1) * (r - 1)
    return {"z": np.abs(rng.standard_normal(draws)), "fix": rng.chisquare(n - 1, draws) / (n - 1),
            "rv": rng.chisquare(r - 1, draws) / (r - 1), "rb": rng.chisquare(r - 1, draws) / (r - 1),
            "xv": rng.chisquare(k, draws) / k, "g": rng.standard_normal(draws) / np.sqrt(k),
            "yb": rng.chisquare(k - 1, draws) / k}


def point_stats(d: dict[str, Array], n: int, r: int, fixture: float, run: float, share: float,
                split: float) -> tuple[Array, Array, Array, Array]:
    """|w|, ρ_V, ρ_B, ŝ of the draws at one null point (σ²_e/(F·R) = 1 for the gaps' cell noise)."""
    err_v = share * d["xv"]
    err_b = (1 - share) * (d["g"] ** 2 + d["yb"])
    err = err_v + err_b - 2 * np.sqrt(share * (1 - share) * d["xv"]) * d["g"]
    rep_v = (share + split * run) * d["rv"]
    rep_b = ((1 - share) + (1 - split) * run) * d["rb"]
    a = (1 + fixture) * d["fix"]
    var, df = variance_and_df(a, rep_v + rep_b, err, np.maximum(rep_v, err_v), np.maximum(rep_b, err_b), r, n)
    w = wallace(d["z"] * np.sqrt((1 + fixture + run) / var), df)
    return w, rep_v / err_v, rep_b / err_b, err_v / (err_v + err_b)


def null_hist(n: int, r: int, cells: Cells, draws: int, seed: int) -> tuple[Array, list[tuple[float, ...]]]:
    """(points, cells·bins) win rates: ½·P(|w| in bin, cell) (the z's sign is a coin: one side's share)."""
    d = null_draws(n, r, draws, seed)
    nb = len(edges())
    pts = points()
    out = np.zeros((len(pts), cells.count * nb))
    for i, p in enumerate(pts):
        w, rv, rb, s = point_stats(d, n, r, *p)
        j = bins(w)
        keep = j >= 0
        idx = cells.index(rv[keep], rb[keep], s[keep]) * nb + j[keep]
        out[i] = np.bincount(idx, minlength=cells.count * nb) / (2.0 * draws)
    return out, [tuple(p) for p in pts]


@dataclass(frozen=True)
class Observed:
    """The rule's inputs for simulated runs of one arm pair."""

    w: Array
    rho_v: Array
    rho_b: Array
    share: Array
    fixed: npt.NDArray[np.bool_]


def mean_squares(x: Array) -> tuple[Array, Array]:
    """MS_repetition and MS_error of each run's two-way table (complete runs: the check's worlds have no gaps)."""
    _, f, r = x.shape
    row, col = x.mean(axis=2, keepdims=True), x.mean(axis=1, keepdims=True)
    grand = x.mean(axis=(1, 2), keepdims=True)
    ms_rep: Array = f * ((col - grand) ** 2).sum(axis=(1, 2)) / (r - 1)
    ms_err: Array = ((x - row - col + grand) ** 2).sum(axis=(1, 2)) / ((f - 1) * (r - 1))
    return ms_rep, ms_err


def observe(base: Array, var: Array) -> Observed:
    """The rule's inputs of each run, read as the verdict reads them (crossed.py for w and the steady arm)."""
    c = crossed(base, var)
    rep_v, err_v = mean_squares(var)
    rep_b, err_b = mean_squares(base)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = wallace(c.gap / c.se, c.df)
        out = Observed(w=np.nan_to_num(w, nan=0.0), rho_v=rep_v / err_v, rho_b=rep_b / err_b,
                       share=err_v / (err_v + err_b), fixed=np.asarray(c.fixed_arm, dtype=bool))
    return out


def alt_hist(obs: Observed, cells: Cells) -> Array:
    nb = len(edges())
    j = bins(obs.w)
    keep = (j >= 0) & ~obs.fixed
    idx = cells.index(obs.rho_v[keep], obs.rho_b[keep], obs.share[keep]) * nb + j[keep]
    out: Array = np.bincount(idx, minlength=cells.count * nb) / obs.w.size
    return out


def solve(null: Array, alt: Array, cells: Cells, level: float | Array, integral: bool = True) -> Array:
    """x[cell, bin] ∈ [0, 1], non-decreasing in the bin: the programme's rejection probabilities (level: one for
    every null row, or one a row)."""
    nb = len(edges())
    nv = cells.count * nb
    rows, cols, vals = [], [], []
    m = 0
    for k in range(cells.count):
        for j in range(nb - 1):
            rows += [m, m]
            cols += [k * nb + j, k * nb + j + 1]
            vals += [1.0, -1.0]
            m += 1
    mono = sparse.csr_matrix((vals, (rows, cols)), shape=(m, nv))
    if integral:  # one critical score per cell: the mixed-integer programme
        res = milp(-alt, constraints=[LinearConstraint(sparse.csr_matrix(null), -np.inf, level),
                                      LinearConstraint(mono, -np.inf, 0.0)],
                   integrality=np.ones(nv), bounds=Bounds(0, 1),
                   options={"time_limit": 300, "mip_rel_gap": 0.003})
        assert res.x is not None, res.message
    else:
        a_ub = sparse.vstack([sparse.csr_matrix(null), mono]).tocsr()
        b_ub = np.concatenate([np.full(null.shape[0], level), np.zeros(m)])
        res = linprog(-alt, A_ub=a_ub, b_ub=b_ub, bounds=(0, 1), method="highs")
        assert res.status == 0, res.message
    x: Array = np.round(res.x, 9).reshape(cells.count, nb)
    return x


def table_of(x: Array) -> Array:
    """Per cell the smallest score rejected for sure (x = 1; inf where never): rounding down keeps the level."""
    e = edges()
    out = np.full(x.shape[0], np.inf)
    for k in range(x.shape[0]):
        sure = np.nonzero(x[k] >= 1 - 1e-7)[0]
        if sure.size:
            out[k] = e[sure[0]]
    return out


def null_rates(table: Array, n: int, r: int, cells: Cells, draws: int, seed: int) -> Array:
    """The table's win rate at every null point on fresh draws."""
    d = null_draws(n, r, draws, seed)
    out = []
    for p in points():
        w, rv, rb, s = point_stats(d, n, r, *p)
        out.append(float((w > table[cells.index(rv, rb, s)]).mean() / 2.0))
    return np.array(out)


def rule_p(obs: Observed, table: Array, cells: Cells, today_p: Array) -> tuple[BoolArray, BoolArray]:
    """(win, loss) booleans of the table's rule on simulated runs; a steady arm keeps today's two-sided p."""
    win = np.where(obs.fixed, (today_p <= ALPHA) & (obs.w > 0), obs.w > table[cells.index(obs.rho_v, obs.rho_b,
                                                                                       obs.share)])
    loss = np.where(obs.fixed, (today_p <= ALPHA) & (obs.w < 0), -obs.w > table[cells.mirror(obs.rho_v, obs.rho_b,
                                                                                         obs.share)])
    return np.asarray(win, dtype=bool), np.asarray(loss, dtype=bool)


def judge(line: Line, sims: int, seed: int, table: Array, cells: Cells) -> tuple[int, int, int, int]:
    """(result, first variant's win) of the table's rule and of today's rule on the same runs of a line
    (one variant, no guards, no truncation: the lines the table is for)."""
    rng = np.random.default_rng(seed)
    base, variants, _ = simulate(line, sims, rng)
    results, wins, today_results, today_wins = (np.zeros(sims, dtype=bool) for _ in range(4))
    codes = []
    for v, var in enumerate(variants):
        c = crossed(base, var)
        flip = batch_signflip(c.d, c.n_fixtures, seed=seed)
        ev = effect_evidence(c, flip, True)
        codes.append(ev)
        obs = observe(base, var)
        today_two = np.minimum(ev.p_hold, ev.p_loss if ev.p_loss is not None else 1.0)
        win, loss = rule_p(obs, table, cells, today_two)
        ok = c.flip_floor <= ALPHA
        win, loss = win & ok, loss & ok
        results |= win | loss
        if v == 0:
            wins = win
    if len(variants) == 1:
        dec = decide([[codes[0]]], [p_tost(crossed(base, variants[0]), EQ_MARGIN)],
                     [np.ones(sims, dtype=bool)], ALPHA)
        today_results = (dec.codes[0] == WIN) | (dec.codes[0] == LOSS)
        today_wins = dec.codes[0] == WIN
    return int(results.sum()), int(wins.sum()), int(today_results.sum()), int(today_wins.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", default="24x3")
    parser.add_argument("--gap", type=float, default=0.15)
    parser.add_argument("--draws", type=int, default=20_000, help="null draws a point for the fit")
    parser.add_argument("--check-draws", type=int, default=40_000, help="fresh null draws a point for the check")
    parser.add_argument("--alt", type=int, default=20_000, help="alternative runs for the fit")
    parser.add_argument("--sims", type=int, default=4000, help="runs a line for the binomial check")
    parser.add_argument("--level", type=float, default=0.0235, help="the programme's win rate a point (≤ α/2)")
    parser.add_argument("--rho", default="0.5,1,2")
    parser.add_argument("--share", default="0.35,0.65")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--aa", default="", help="A/A lines to check: names containing any of these, '|'-separated")
    parser.add_argument("--strict", action="store_true", help="also the one-arm lines made strict (true gap 0)")
    args = parser.parse_args()
    f, r = (int(x) for x in args.design.split("x"))
    cells = Cells(tuple(float(x) for x in args.rho.split(",")), tuple(float(x) for x in args.share.split(",") if x))
    t0 = time.process_time()
    null, pts = null_hist(f, r, cells, args.draws, args.seed)
    rng = np.random.default_rng([args.seed, 99])
    base, variants, _ = simulate(Line("alt", fixtures=f, repetitions=r, gap=args.gap), args.alt, rng)
    obs = observe(base, variants[0])
    alt = alt_hist(obs, cells)
    t1 = time.process_time()
    x = solve(null, alt, cells, args.level)
    t2 = time.process_time()
    table = table_of(x)
    lp_power = float(alt @ x.ravel())
    fit_win = float((~obs.fixed & (obs.w > table[cells.index(obs.rho_v, obs.rho_b, obs.share)])).mean())
    print(f"the rounded table on the fit runs: {fit_win:.4f}")
    print(f"design {f}x{r}: {len(pts)} null points x {args.draws} draws, {cells.count} cells; "
          f"draws {t1 - t0:.1f} CPU-s, LP {t2 - t1:.1f} CPU-s; LP power {lp_power:.4f} (fit runs, non-steady)")
    rates = null_rates(table, f, r, cells, args.check_draws, args.seed + 1000)
    worst = int(np.argmax(rates))
    for i in np.argsort(rates)[::-1][:6]:
        print(f"  {rates[i]:.4f} at {pts[i]}")
    print(f"fresh null draws: the table's largest win rate {rates[worst]:.4f} at {pts[worst]}; "
          f"points over 0.025: {int((rates > 0.025).sum())}")
    nr, ns = len(cells.rho) + 1, len(cells.share) + 1
    for js in range(ns):
        print(f"share bin {js}:")
        for iv in range(nr):
            print("  " + " ".join(f"{table[(iv * nr + ib) * ns + js]:5.2f}" for ib in range(nr)))
    lines = [Line(f"power gap {args.gap} {f}x{r}", fixtures=f, repetitions=r, gap=args.gap)]
    if args.aa:
        keys = args.aa.split("|")
        lines += [line for line in AA_LINES if any(k in line.name for k in keys)]
    lines += [Line(f"A/A no shock {f}x{r}", fixtures=f, repetitions=r),
              Line(f"A/A baseline shocks 1.0 {f}x{r}", fixtures=f, repetitions=r, arm_shock=1.0, variant_shock=0.0),
              Line(f"A/A variant shocks 0.8 {f}x{r}", fixtures=f, repetitions=r, arm_shock=0.0, variant_shock=0.8)]
    if args.strict:  # the same one-arm shocks with each arm's expected rate at its fixture's (true gap 0)
        lines += [Line(f"A/A strict baseline shocks 1.0 {f}x{r}", fixtures=f, repetitions=r, arm_shock=1.0,
                       variant_shock=0.0, strict=True),
                  Line(f"A/A strict variant shocks 0.8 {f}x{r}", fixtures=f, repetitions=r, arm_shock=0.0,
                       variant_shock=0.8, strict=True)]
    for i, line in enumerate(lines):
        res, win, tres, twin = judge(line, args.sims, 1 + i, table, cells)
        n = args.sims
        print(f"| {line.name} | table: result {wilson(res, n)}, win {win / n:.4f} | today: result {tres / n:.4f}, "
              f"win {twin / n:.4f} |", flush=True)


def wilson(k: int, n: int) -> str:
    lo, hi = stats.wilson(k, n)
    return f"{k / n:.4f} [{lo:.4f}, {hi:.4f}]"


if __name__ == "__main__":
    main()
