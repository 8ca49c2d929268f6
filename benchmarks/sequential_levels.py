"""Issue 27.5 at 12 × 10: what the product's own look statistic allows, whatever boundaries it is given.

A sequential rule of the product's kind reads, at look k, the first clause's calibrated win p, loss p and futility
p (the verdict's own code: benchmarks/sequential.py's `evidence_at`) and compares them with the look's levels. So
the p's are computed once per run and look — at the planned gap and under no effect, the worlds of sequential.py's
designs table — and any rule "win (lose) at look k when the win (loss) p ≤ a_k, stop for futility when the
futility p ≤ b_k" is judged on the same runs at no further cost. `judge` reproduces `sequential.sequential` run
for run on the product's default (checked on every call of `designs`).

Tables:
- where: where the default's calls go at the planned gap (stops per look, wins and futility stops);
- reach: each look's power alone at level α (the share of runs whose win p ≤ α after r repetitions), and at
  Pocock's nominal level, against the normal law's Φ(θ√(r/R) − z) with θ set by the last look (what an early look
  would win if its statistic carried all the information the repetitions so far hold); and `least_calls`;
- grid: spending families × futility levels (the futility spent by its own family) × the first repetition α is
  spent at: power share, calls at the gap and under no effect, results under no effect, and the same levels on a
  z statistic of the same final power (`normal_world`), then the fewest calls of the rules meeting both close
  targets (power share ≥ 0.95, calls under no effect ≤ 0.85);
- --student: grid and free read the win and loss p off Student's t at each look's reference df (crossed.py's se
  and df, not calibrated): not a valid rule (the calibration exists because that p is not), a what-if that says
  how much of the early looks' loss is the calibration's;
- free: efficacy and futility levels fitted one by one (`search`, any boundaries whose null crossing is α/2 a side
  in the normal law of the looks, `null_crossing`) to the fewest calls at the gap under both close targets, judged
  on fresh runs (seed + 100); the same search on the z statistic.

    python benchmarks/sequential_levels.py --sims 4000 --seed 1 --designs 12x10
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from benchcard.stats.crossed import crossed
from benchcard.stats.decision import INCONCLUSIVE, LOSS, WIN
from benchcard.stats.paired import t_sf
from benchcard.stats.sequential import CONTINUE, FUTILITY, FUTILITY_BETAS, Schedule, boundaries
from calibration import ALPHA, Line, wilson_text  # beside this script
from sequential import Data, draw, evidence_at, fixed, planned_gap, sequential  # beside this script

Array = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Looks:
    """Per look (rows) and run (columns): the first clause's win p, loss p and futility p; `reps` the looks'
    repetitions."""

    reps: tuple[int, ...]
    win: Array
    loss: Array
    futile: Array
    student: Array | None = None
    """The win p read off Student's t at the look's reference df (crossed.py's se and df), not calibrated."""
    student_loss: Array | None = None

    def uncalibrated(self) -> Looks:
        """The same looks with the win and loss p read off Student's t (not a valid rule: a what-if)."""
        if self.student is None or self.student_loss is None:
            raise ValueError("no Student's t p's kept")
        return replace(self, win=self.student, loss=self.student_loss)


def looks_of(data: Data, reps: Sequence[int], seed: int, effect: float) -> Looks:
    """The p's of every look (one variant, no guards: the designs' world)."""
    win, loss, futile, student, student_loss = [], [], [], [], []
    for r in reps:
        evidence, _, _, fut = evidence_at(data, r, seed, effect)
        ev = evidence[0][0]
        win.append(ev.p_hold)
        loss.append(ev.p_loss if ev.p_loss is not None else np.ones_like(ev.p_hold))
        futile.append(fut[0])
        c = crossed(data[0][:, :, :r], data[1][0][:, :, :r])
        with np.errstate(invalid="ignore", divide="ignore"):
            student.append(np.where(c.gap > 0, 2 * t_sf(c.gap / c.se, c.df), 1.0))
            student_loss.append(np.where(c.gap < 0, 2 * t_sf(-c.gap / c.se, c.df), 1.0))
    return Looks(tuple(reps), np.stack(win), np.stack(loss), np.stack(futile), np.stack(student),
                 np.stack(student_loss))


def judge(ps: Looks, nominal: Sequence[float], futility: Sequence[float] | None) -> tuple[Ints, Ints]:
    """Each run's stopping look (index) and code under levels `nominal` (win and loss) and `futility` (one-sided,
    the last look's unused): `look_decision` and `stopped` on one variant."""
    k_last = len(nominal) - 1
    s = ps.win.shape[1]
    at = np.full(s, k_last, dtype=np.int64)
    code = np.full(s, CONTINUE, dtype=np.int64)
    going = np.ones(s, dtype=bool)
    for k, a in enumerate(nominal):
        win = going & (ps.win[k] <= a)
        loss = going & ~win & (ps.loss[k] <= a)
        code[win], code[loss] = WIN, LOSS
        done = win | loss
        if k == k_last:
            rest = going & ~done
            code[rest] = INCONCLUSIVE
            done |= rest
        elif futility is not None:
            fut = going & ~done & (ps.futile[k] <= futility[k])
            code[fut] = FUTILITY
            done |= fut
        at[done & going] = k
        going &= ~done
    return at, code


def levels(reps: Sequence[int], spending: str, gamma: float, beta: float | None, decide_from: int,
           fut_spending: str | None = None, fut_gamma: float | None = None) -> tuple[list[float], list[float] | None]:
    """The looks' nominal two-sided levels and futility levels (None: futility off) of Lan–DeMets boundaries,
    the futility spent by `fut_spending` (default: the efficacy's family)."""
    plan = Schedule(tuple(reps), spending, beta is not None, ALPHA, gamma, beta or 0.045, decide_from)
    nominal = list(boundaries(plan).nominal)
    if beta is None:
        return nominal, None
    fplan = replace(plan, spending=fut_spending or spending, gamma=gamma if fut_gamma is None else fut_gamma)
    fut = boundaries(fplan).futility
    return nominal, list(fut) if fut is not None else None


@dataclass(frozen=True)
class World:
    """A design's runs at the planned gap and under no effect, with the fixed design's power on the first."""

    name: str
    reps: tuple[int, ...]
    repetitions: int
    gap: float
    effect: float
    fixed_power: float
    at_gap: Looks
    null: Looks


def world(f: int, r: int, sims: int, plan_sims: int, seed: int, rng: np.random.Generator) -> World:
    """sequential.py's designs world: the gap the fixed design wins 80% of the time at, and no effect."""
    line = Line(f"{f}x{r}", fixtures=f, repetitions=r)
    gap = planned_gap(line, plan_sims, seed + 1)
    reps = tuple(range(min(2, r), r + 1))
    data = draw(replace(line, gap=gap), sims, rng)
    effect = float(np.mean(data[1][0] - data[0]))
    fixed_power = float((fixed(data, r, seed)[1] == WIN).mean())
    null = draw(line, sims, rng)
    out = World(f"{f} × {r}", reps, r, gap, effect, fixed_power, looks_of(data, reps, seed, effect),
                looks_of(null, reps, seed, effect))
    _check(out, data, seed)
    return out


def _check(w: World, data: Data, seed: int) -> None:
    """`judge` must reproduce the product's own sequential rule (its default schedule) run for run."""
    plan = Schedule(w.reps, "hsd", True, ALPHA, -6.0, FUTILITY_BETAS["hsd"], 3)
    at, _, first = sequential(data, plan, seed, w.effect)
    nominal, fut = levels(w.reps, "hsd", -6.0, FUTILITY_BETAS["hsd"], 3)
    at2, code2 = judge(w.at_gap, nominal, fut)
    if not (np.array_equal(at, at2) and np.array_equal(first == WIN, code2 == WIN)):
        raise SystemExit(f"{w.name}: judge disagrees with sequential.sequential on the default schedule")


def normal_world(w: World, paths: int, seed: int) -> World:
    """The same design's looks as a z statistic with known variance (Brownian motion at the looks' fractions
    r/R), its drift θ set so that its last look wins as often as the product's fixed design: what the
    boundaries would give a statistic that lost nothing at the early looks."""
    rng = np.random.default_rng(seed)
    t = np.asarray(w.reps, dtype=np.float64) / w.repetitions
    theta = float(special.ndtri(w.fixed_power) + special.ndtri(1 - ALPHA / 2))

    def looks(drift: float) -> Looks:
        steps = rng.standard_normal((t.size, paths)) * np.sqrt(np.diff(t, prepend=0.0))[:, None]
        z = (np.cumsum(steps, axis=0) + drift * t[:, None]) / np.sqrt(t)[:, None]
        return Looks(w.reps, 2 * special.ndtr(-z), 2 * special.ndtr(z),
                     special.ndtr(z - theta * np.sqrt(t)[:, None]))

    return replace(w, name=f"{w.name}, normal", fixed_power=float(special.ndtr(theta - special.ndtri(1 - ALPHA / 2))),
                   at_gap=looks(theta), null=looks(0.0))


def figures(w: World, nominal: Sequence[float], fut: Sequence[float] | None) -> tuple[float, float, float, int]:
    """Power share of the fixed design's, calls at the gap and under no effect (shares), results under no effect."""
    reps = np.asarray(w.reps, dtype=np.float64)
    at, code = judge(w.at_gap, nominal, fut)
    at0, code0 = judge(w.null, nominal, fut)
    power = float((code == WIN).mean())
    return (power / w.fixed_power, float(reps[at].mean()) / w.repetitions, float(reps[at0].mean()) / w.repetitions,
            int(np.isin(code0, (WIN, LOSS)).sum()))


def where_table(w: World, sims: int) -> None:
    nominal, fut = levels(w.reps, "hsd", -6.0, FUTILITY_BETAS["hsd"], 3)
    at, code = judge(w.at_gap, nominal, fut)
    print(f"\n## {w.name}: where the default's calls go at the planned gap {w.gap:.3f} (mean {w.effect:.3f}), "
          f"Hwang–Shih–DeCani γ −6, futility {FUTILITY_BETAS['hsd']}\n\n| look (repetitions) | nominal level | "
          "futility level | stops | of which wins | of which futility |\n|---|---|---|---|---|---|")
    for k, r in enumerate(w.reps):
        here = at == k
        fl = f"{fut[k]:.5f}" if fut is not None else "–"
        print(f"| {k + 1} ({r}) | {nominal[k]:.5f} | {fl} | {here.mean():.4f} | {(here & (code == WIN)).mean():.4f} | "
              f"{(here & (code == FUTILITY)).mean():.4f} |")
    print(f"\nPower {(code == WIN).mean():.4f} (fixed {w.fixed_power:.4f}), calls "
          f"{np.asarray(w.reps)[at].mean() / w.repetitions:.3f}; {sims:,} runs.")


def least_calls(w: World, share: float = 0.95) -> float:
    """The fewest calls at the gap (share of the fixed design's) of any rule that wins at a look only where that
    look's own win p is ≤ α and wins in `share` of the fixed design's runs: the runs it wins are those whose p first
    reaches α earliest, each stopped there, and every other run stops at the first look. Any Lan–DeMets boundaries
    (any spending function) are of this kind: a look's nominal level is the null chance of its marginal crossing,
    at most the α/2 a side spent over all looks, so at most α two-sided."""
    reps = np.asarray(w.reps, dtype=np.float64)
    hit = w.at_gap.win <= ALPHA
    first = np.where(hit.any(axis=0), reps[np.argmax(hit, axis=0)], np.inf)
    s = first.size
    wins = math.ceil(share * w.fixed_power * s)
    earliest = np.sort(first)[:wins]
    return float((earliest.sum() + (s - wins) * reps[0]) / (s * w.repetitions))


def _results(ps: Looks, k: int, level: float) -> tuple[float, float]:
    """The share of runs whose look k alone has a result (win or loss) at `level`: by the calibrated p and by
    Student's t."""
    calibrated = float(((ps.win[k] <= level) | (ps.loss[k] <= level)).mean())
    if ps.student is None or ps.student_loss is None:
        return calibrated, math.nan
    return calibrated, float(((ps.student[k] <= level) | (ps.student_loss[k] <= level)).mean())


def reach_table(w: World, paths: int, seed: int) -> None:
    last = float((w.at_gap.win[-1] <= ALPHA).mean())
    z = special.ndtri(1 - ALPHA / 2)
    theta = float(special.ndtri(last)) + z
    pocock, _ = levels(w.reps, "pocock", 0.0, None, 2)
    print(f"\n## {w.name}: each look's power alone at level {ALPHA} (win p ≤ {ALPHA} after r repetitions), and at "
          "Pocock's nominal level\n\n| repetitions | measured | normal law, θ from the last look | measured / normal | "
          "Pocock's level | measured | normal law | measured / normal | Student's t p there: measured / normal | "
          "no effect, results at 0.05: calibrated / Student's t | the same at Pocock's level |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")
    for k, r in enumerate(w.reps):
        got = float((w.at_gap.win[k] <= ALPHA).mean())
        law = float(special.ndtr(theta * math.sqrt(r / w.repetitions) - z))
        a = pocock[k]
        got_a = float((w.at_gap.win[k] <= a).mean())
        law_a = float(special.ndtr(theta * math.sqrt(r / w.repetitions) - special.ndtri(1 - a / 2)))
        student = float((w.at_gap.student[k] <= a).mean()) if w.at_gap.student is not None else math.nan
        null = [_results(w.null, k, level) for level in (ALPHA, a)]
        print(f"| {r} | {got:.4f} | {law:.4f} | {got / law:.3f} | {a:.5f} | {got_a:.4f} | {law_a:.4f} | "
              f"{got_a / law_a:.3f} | {student:.4f} / {student / law_a:.3f} | {null[0][0]:.4f} / {null[0][1]:.4f} | "
              f"{null[1][0]:.4f} / {null[1][1]:.4f} |")
    z = normal_world(w, paths, seed)
    print(f"\nThe fewest calls at the gap of any rule that wins at a look only where the look's own p ≤ {ALPHA} and "
          f"keeps 0.95 of the fixed power (`least_calls`): {least_calls(w):.3f} on this statistic, "
          f"{least_calls(z):.3f} on a z statistic of the same final power.")


SPENDS: tuple[tuple[str, float], ...] = (("obrien-fleming", 0.0), ("hsd", -8.0), ("hsd", -6.0), ("hsd", -4.0),
                                         ("hsd", -3.0), ("hsd", -2.0), ("hsd", -1.0), ("hsd", 1.0), ("pocock", 0.0))
BETAS: tuple[float | None, ...] = (None, 0.045, 0.07, 0.10, 0.15, 0.20)


def _name(spending: str, gamma: float) -> str:
    return f"γ {gamma:g}" if spending == "hsd" else spending


def grid_table(w: World, args: argparse.Namespace) -> None:
    print(f"\n## {w.name}: spending × futility (its own family) × α from: power share, calls at the gap, calls and "
          "results under no effect\n\n| spending | futility spent by | futility level | α from | power share | "
          "calls at the gap | calls, no effect | results, no effect | z statistic: power share / calls at the gap / "
          "no effect |\n|---|---|---|---|---|---|---|---|---|")
    z = normal_world(w, args.paths, args.seed)
    best: list[tuple[float, str]] = []
    combos = itertools.product(SPENDS, (None, *SPENDS) if args.cross else (None,), BETAS, args.decide_from)
    for (sp, g), fsp, beta, d in combos:
        if (beta is None and fsp is not None) or fsp == (sp, g):
            continue
        nominal, fut = levels(w.reps, sp, g, beta, d, fsp[0] if fsp else None, fsp[1] if fsp else None)
        share, calls, calls0, n0 = figures(w, nominal, fut)
        zshare, zcalls, zcalls0, _ = figures(z, nominal, fut)
        fname = "–" if beta is None else (_name(*fsp) if fsp else "the same")
        row = (f"| {_name(sp, g)} | {fname} | {beta if beta is not None else 'off'} | {d} | {share:.3f} | "
               f"{calls:.3f} | {calls0:.3f} | {wilson_text(n0, w.null.win.shape[1])} | {zshare:.3f} / "
               f"{zcalls:.3f} / {zcalls0:.3f} |")
        if share >= 0.95 and calls0 <= 0.85:
            best.append((calls, row))
        if not args.quiet:
            print(row)
    print(f"\nThe fewest calls at the gap with power share ≥ 0.95 and calls under no effect ≤ 0.85 ({len(best)} "
          "rules):\n")
    for _, row in sorted(best)[:8]:
        print(row)


def null_crossing(t: Sequence[float], c: Sequence[float], points: int = 601, sds: float = 9.0) -> float:
    """P(Z_k ≥ c_k at some look) for the canonical joint normal of looks at fractions t (Z_k = S(t_k)/√t_k, S a
    Brownian motion): the density of S on the continuation region carried look to look on a grid (the same
    integration as stats.sequential's boundaries, written out here so that free boundaries can be judged)."""
    total, before = 0.0, 0.0
    nodes: Array | None = None
    weights: Array | None = None
    for tk, ck in zip(t, c, strict=True):
        sd = math.sqrt(tk - before)
        top = min(ck, sds) * math.sqrt(tk)
        if nodes is None or weights is None:
            total += float(special.ndtr(-top / sd)) if math.isfinite(ck) else 0.0
            grid = np.linspace(-sds * math.sqrt(tk), top, points)
            density = np.exp(-0.5 * (grid / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
        else:
            if math.isfinite(ck):
                total += float(weights @ special.ndtr((nodes - top) / sd))
            grid = np.linspace(-sds * math.sqrt(tk), top, points)
            diff = (grid[:, None] - nodes[None, :]) / sd
            density = (np.exp(-0.5 * diff * diff) / (sd * math.sqrt(2 * math.pi))) @ weights
        trap = np.full(points, grid[1] - grid[0])
        trap[[0, -1]] /= 2
        nodes, weights, before = grid, density * trap, tk
    return total


def free_levels(w: World, z: Sequence[float], fut_z: Sequence[float], decide_from: int) -> tuple[list[float],
                                                                                             list[float]] | None:
    """Nominal levels from efficacy z boundaries at the looks from `decide_from` but the last (inf before), the last
    solved so that a null path crosses some boundary with exactly α/2 (None when the earlier ones spend more);
    futility levels from one-sided z's (non-binding: any are valid)."""
    t = [r / w.repetitions for r in w.reps]
    early = [math.inf if r < decide_from else float(x) for r, x in zip(w.reps[:-1], z, strict=True)]
    if null_crossing(t[:-1], early) >= ALPHA / 2:
        return None
    last = optimize.brentq(lambda x: null_crossing(t, [*early, x]) - ALPHA / 2, 0.5, 12.0, xtol=1e-8)
    nominal = [2 * float(special.ndtr(-x)) if math.isfinite(x) else 0.0 for x in (*early, last)]
    return nominal, [float(special.ndtr(-x)) for x in fut_z] + [0.0]


def search(w: World, start: tuple[list[float], list[float]], decide_from: int, rounds: int) -> tuple[list[float],
                                                                                                     list[float]]:
    """Coordinate search over free efficacy and futility z's: the fewest calls at the gap with power share ≥ 0.95
    and calls under no effect ≤ 0.85 on `w`'s runs (a rule fitted to them: judge it on fresh runs)."""

    def cost(z: list[float], fz: list[float]) -> float:
        lv = free_levels(w, z, fz, decide_from)
        if lv is None:
            return math.inf
        share, calls, calls0, _ = figures(w, *lv)
        return calls if share >= 0.95 and calls0 <= 0.85 else 1.0 + (0.95 - min(share, 0.95)) + max(0.0, calls0 - 0.85)

    z, fz = list(start[0]), list(start[1])
    best = cost(z, fz)
    for step in (0.4, 0.2, 0.1, 0.05)[:rounds]:
        moved = True
        while moved:
            moved = False
            coords = [(z, i) for i in range(len(z)) if w.reps[i] >= decide_from] + [(fz, i) for i in range(len(fz))]
            for vec, i in coords:
                for sign in (-1.0, 1.0):
                    old = vec[i]
                    vec[i] = old + sign * step
                    got = cost(z, fz)
                    if got < best - 1e-9:
                        best, moved = got, True
                        break
                    vec[i] = old
    return z, fz


def free_table(w: World, args: argparse.Namespace, fresh: World | None) -> None:
    """Free boundaries fitted to this statistic (and to the z statistic's paths), judged on fresh runs."""
    print(f"\n## {w.name}: free boundaries, fitted by coordinate search (power share ≥ 0.95, calls under no effect "
          "≤ 0.85), from Hwang–Shih–DeCani γ −4, futility 0.045\n\n| statistic | judged on | power share | calls at "
          "the gap | calls, no effect | results, no effect | nominal levels | futility levels |\n"
          "|---|---|---|---|---|---|---|---|")
    start_nom, start_fut = levels(w.reps, "hsd", -4.0, 0.045, args.decide_from[-1])
    to_z = [float(special.ndtri(1 - a / 2)) if a > 0 else 8.0 for a in start_nom[:-1]]
    fut_z = [float(special.ndtri(1 - b)) if b > 0 else 8.0 for b in (start_fut or [])[:-1]]
    normal = normal_world(w, args.paths, args.seed)
    runs: tuple[tuple[str, World, list[World]], ...] = (("product", w, [w] if fresh is None else [w, fresh]),
                                                         ("z", normal, [normal]))
    for label, fit_on, judged in runs:
        z, fz = search(fit_on, (to_z, fut_z), args.decide_from[-1], args.rounds)
        lv = free_levels(fit_on, z, fz, args.decide_from[-1])
        if lv is None:
            continue
        for on in judged:
            share, calls, calls0, n0 = figures(on, *lv)
            print(f"| {label} | {'fitted runs' if on is fit_on else 'fresh runs'} | {share:.3f} | {calls:.3f} | "
                  f"{calls0:.3f} | {wilson_text(n0, on.null.win.shape[1])} | {', '.join(f'{a:.4f}' for a in lv[0])} | "
                  f"{', '.join(f'{b:.4f}' for b in lv[1][:-1])} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=2000, help="simulated runs at the gap and under no effect")
    parser.add_argument("--plan-sims", type=int, default=2000, help="runs per step of the planned gap's bisection")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--designs", default="12x10")
    parser.add_argument("--tables", default="where,reach,grid,free", help="where, reach, grid, free (comma-separated)")
    parser.add_argument("--decide-from", type=lambda s: tuple(int(x) for x in s.split(",")), default=(3,),
                        help="the repetitions α is first spent at, tried (comma-separated)")
    parser.add_argument("--cross", action="store_true", help="also futility spent by another family than α")
    parser.add_argument("--paths", type=int, default=100_000, help="normal paths for the z statistic's column")
    parser.add_argument("--rounds", type=int, default=3, help="free: step sizes of the coordinate search")
    parser.add_argument("--student", action="store_true",
                        help="grid and free on Student's t p at each look's reference df, not calibrated (a what-if)")
    parser.add_argument("--quiet", action="store_true", help="grid: print only the best rules")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"# The product's look statistic under other boundaries: {args.sims:,} runs a world, seed {args.seed}")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        w = world(f, r, args.sims, args.plan_sims, args.seed, rng)
        print(f"\n{w.name}: planned gap {w.gap:.3f} (mean {w.effect:.3f}), fixed power {w.fixed_power:.4f}; the "
              "judge reproduces sequential.sequential on the default schedule")
        if "where" in args.tables:
            where_table(w, args.sims)
        if "reach" in args.tables:
            reach_table(w, args.paths, args.seed)
        if args.student:  # from here on, the what-if statistic: Student's t at the reference df
            w = replace(w, name=f"{w.name}, Student's t", at_gap=w.at_gap.uncalibrated(), null=w.null.uncalibrated())
        if "grid" in args.tables:
            grid_table(w, args)
        if "free" in args.tables:
            fresh = world(f, r, args.sims, args.plan_sims, args.seed + 100, np.random.default_rng(args.seed + 100))
            if args.student:
                fresh = replace(fresh, at_gap=fresh.at_gap.uncalibrated(), null=fresh.null.uncalibrated())
            free_table(w, args, fresh)
    print(f"\n{time.perf_counter() - started:.1f} s in all.")


if __name__ == "__main__":
    main()
