"""A candidate efficacy rule for a sequential card's looks that spends fewer calls at the planned gap (issue 27.5).

Research, not the product's rule. The product's look is the verdict's calibrated t at O'Brien–Fleming's nominal
level; early looks read a run term on 2(r − 1) degrees of freedom far in Student's tail, so runs cross late
(docs/statistics.md, "Which schedule"). The floor under every rule that keeps wins ≤ α/2 at every equal run-shock
size (`sequential_bound.py --tables unknown`) is reached by a rule of the mean gap d̄_r and the run scatter SS_r
against the shock-free run-to-run variance τ² of the repetitions' mean gaps. This script solves that rule for a
design at its planned gap (`Unknown`, the same backward induction and multipliers as the bound) and applies it to
calibration.py's binomial runs, each look by the action at the nearest node of its grid (y = (d̄ − δ)/√(w + τ²/r),
u = log(SS/τ²)): win, stop without a win (futility), or go on. Variants measured:

- `--scatter pooled`: SS_r pools the gaps' and the arms' sums' scatter (2(r − 1) df), the bound's own state;
  `gaps`: the gaps' scatter alone (r − 1 df; `Unknown(per=1)`), whose law does not depend on how the run
  variance splits between the arms.
- `--tau2 design`: τ² the model's, measured at the planned gap (a card would seal it with the rule); `cells`: each
  run's own, from the arms' residual mean squares of their fixtures × repetitions tables ((F − 1)(r − 1) df each).
- `--gate`: a win (a loss) also needs the product's own calibrated two-sided p of the first clause, on the cells
  so far, at most this level in that direction (0: no gate).

A loss is the same rule applied to the mirrored gap (truncated cells scored 1); a run stops at the first look
either side wins, else when both sides have stopped. A win needs the exact sign-flip to reach α (2/2^n ≤ α over
the n fixtures that moved, as the product's); a run whose cells show no noise at all (τ² from the cells 0) never
stops early and reaches no result.

Tables (`--tables`): designs — at the planned gap (sequential.py's bisection, 2,000 runs a step) fresh runs judged
by the fixed rule, the product's sequential rule and every candidate (calls and power as shares of the fixed
design's), then runs under no effect (calls with the candidate's stops without a win, result rate); aa — every
one-variant A/A line of calibration.py whose design (fixtures × repetitions) is one of `--designs`, the candidate
solved for that design: wins + mirrored wins over all looks.

    python benchmarks/sequential_rule.py --sims 4000 --seed 1 --designs 12x10,12x5
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from benchcard.stats.decision import LOSS, WIN
from calibration import AA_LINES, ALPHA, Line, wilson_text  # beside this script
from sequential import Data, default_schedule, draw, evidence_at, fixed, planned_gap, sequential
from sequential_bound import Grids, Model, Unknown, measure_model, unknown_bound

Array = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Rule:
    """The bound's minimising rule of one design: its problem (grids, model, looks), the action per node of each
    look (0 stop, 1 stop with a win, 2 go on) and what the normal model says of it (calls, power, worst null)."""

    problem: Unknown
    actions: tuple[npt.NDArray[np.int8], ...]
    bound: float
    rates: Array


def solve_rule(model: Model, repetitions: int, first: int, power: float, grids: Grids, per: int,
               level: float = ALPHA / 2) -> Rule:
    """The minimising rule at the multipliers that give the bound (wins ≤ `level` at each null world, ≥ power at
    the gap), solved in the normal model."""
    problem = Unknown(model, list(range(first, repetitions + 1)), level, power, grids, per=per)
    value, mu, rates = unknown_bound(problem)
    n = len(model.kappas)
    _, actions = problem.solve(mu[:n], float(mu[n]))
    return Rule(problem, tuple(actions), value, rates)


def _ms_err(x: Array) -> Array:
    """Each run's residual mean square of its fixtures × repetitions table: the cell noise, (F − 1)(r − 1) df."""
    f, r = x.shape[1], x.shape[2]
    res = x - x.mean(axis=2, keepdims=True) - x.mean(axis=1, keepdims=True) + x.mean(axis=(1, 2), keepdims=True)
    out: Array = (res * res).sum(axis=(1, 2)) / ((f - 1) * (r - 1))
    return out


def apply_rule(rule: Rule, base: Array, variant: Array, scatter: str, known: float | None = None,
               gate: list[Bools] | None = None) -> tuple[npt.NDArray[np.int64], Bools]:
    """The rule on S runs of one variant against the baseline ((S, F, R), no missing cells): each run's stopping
    look (index) and whether it won there. `known`: τ² given, not estimated (the normal model's own rule);
    `gate`: per look, where a win is allowed (elsewhere the run goes on; at the last look it stops without one)."""
    p = rule.problem
    s, f = base.shape[0], base.shape[1]
    at = np.full(s, len(p.reps) - 1, dtype=np.int64)
    won = np.zeros(s, dtype=bool)
    going = np.ones(s, dtype=bool)
    moved = (np.abs((variant - base).mean(axis=2)) > 0).sum(axis=1)
    can_win = np.power(0.5, moved - 1.0) <= ALPHA
    for k, r in enumerate(p.reps):
        b, v = base[:, :, :r], variant[:, :, :r]
        d, sums = (v - b).mean(axis=1), (v + b).mean(axis=1)
        dbar = d.mean(axis=1)
        ss = ((d - dbar[:, None]) ** 2).sum(axis=1)
        if scatter == "pooled":
            ss = ss + ((sums - sums.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        tau2 = (_ms_err(v) + _ms_err(b)) / f if known is None else np.full(s, known)
        noisy = tau2 > 0
        safe = np.where(noisy, tau2, 1.0)
        y = (dbar - p.m.delta) / np.sqrt(p.m.w + safe / r)
        iy = np.clip(np.rint((y - p.y[0]) / (p.y[1] - p.y[0])), 0, p.y.size - 1).astype(np.int64)
        if p.u[k].size:
            with np.errstate(divide="ignore"):
                u = np.log(ss / safe)
            iu = np.clip(np.rint((u - p.u[k][0]) / (p.u[k][1] - p.u[k][0])), 0, p.u[k].size - 1).astype(np.int64)
        else:
            iu = np.zeros(s, dtype=np.int64)
        act = rule.actions[k][iy, iu]
        act = np.where(noisy, act, 2 if k < len(p.reps) - 1 else 0)
        allowed = can_win if gate is None else can_win & gate[k]
        act = np.where((act == 1) & ~allowed, 0 if k == len(p.reps) - 1 else 2, act)
        stop = going & (act != 2)
        at[stop], won[stop] = k, act[stop] == 1
        going &= ~stop
    return at, won


def gates(data: Data, reps: list[int], seed: int, level: float) -> tuple[list[Bools], list[Bools]]:
    """Per look, where the product's own evidence allows a win and a loss: the first clause's calibrated two-sided
    p (the verdict's, on the cells so far) at most `level` in that direction."""
    found = [evidence_at(data, r, seed, 0.0)[0][0][0] for r in reps]
    return [e.p_hold <= level for e in found], [np.asarray(e.p_loss) <= level for e in found]


def judged(rule: Rule, data: Data, scatter: str, known: float | None,
           gate: tuple[list[Bools], list[Bools]] | None = None) -> tuple[npt.NDArray[np.int64], Array]:
    """A run's stopping look and finding (WIN, LOSS or −1) under the rule and its mirror: a truncated cell scored 0
    for a win and 1 for a loss (the product's worst cases); the run stops at the first look either side wins, else
    when both sides have stopped. `gate`: where the product's evidence allows a win and a loss, per look."""
    base, variant, cut = data[0], data[1][0], data[2][0]
    at_w, win = apply_rule(rule, base, np.where(cut, 0.0, variant), scatter, known, gate and gate[0])
    at_l, loss = apply_rule(rule, np.where(cut, 1.0, variant), base, scatter, known, gate and gate[1])
    never = len(rule.problem.reps)
    t_w, t_l = np.where(win, at_w, never), np.where(loss, at_l, never)
    at = np.minimum(np.minimum(t_w, t_l), np.maximum(at_w, at_l))
    code = np.where(win & (t_w == at), WIN, np.where(loss & (t_l == at), LOSS, -1))
    return at, code.astype(np.float64)


def design_model(f: int, r: int, sims: int, seed: int, plan_sims: int) -> tuple[float, Model]:
    """The design's planned gap (the fixed rule wins 80% there) and the normal model measured at it."""
    gap = planned_gap(Line(f"{f}x{r}", fixtures=f, repetitions=r), plan_sims, seed + 1)
    return gap, measure_model(f, r, gap, sims, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=4000, help="runs a line")
    parser.add_argument("--plan-sims", type=int, default=2000, help="runs per step of the planned gap's bisection")
    parser.add_argument("--model-sims", type=int, default=20000, help="runs a world to measure the normal model")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--designs", default="12x10,12x5")
    parser.add_argument("--first", type=int, default=2, help="the first look, after this many blocks")
    parser.add_argument("--power", type=float, default=0.95 * 0.80, help="the rule's power in the normal model")
    parser.add_argument("--level", type=float, default=ALPHA / 2, help="the rule's wins at each null of the model")
    parser.add_argument("--scatter", default="gaps,pooled", help="gaps, pooled (comma-separated)")
    parser.add_argument("--tau2", default="design,cells", help="τ² the rule reads: design (the model's, sealed with "
                        "the rule), cells (each run's own, from the arms' cell-noise mean squares)")
    parser.add_argument("--gate", default="0,0.05", help="levels of the product's calibrated two-sided p a win or loss "
                        "must also reach at its look (0: no gate), comma-separated")
    parser.add_argument("--grid", default="161,81,32,20", help="score, log-scatter, Hermite, Laguerre nodes")
    parser.add_argument("--tables", default="designs,aa")
    args = parser.parse_args()
    grids = Grids(*(int(x) for x in args.grid.split(",")))
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    print(f"# A rule of the mean gap and the run scatter: {args.sims:,} runs a line, seed {args.seed}, in the model "
          f"wins ≤ {args.level:g} at each null and ≥ {args.power:.3f} at the gap, grid {args.grid}")
    rules: dict[tuple[str, str], Rule] = {}
    models: dict[str, tuple[float, Model]] = {}
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        models[design] = design_model(f, r, args.model_sims, args.seed, args.plan_sims)
        for scatter in args.scatter.split(","):
            rules[design, scatter] = solve_rule(models[design][1], r, args.first, args.power, grids,
                                                1 if scatter == "gaps" else 2, args.level)
    taus = args.tau2.split(",")
    levels = [float(x) for x in args.gate.split(",")]
    kept: dict[tuple[int, float], tuple[Data, tuple[list[Bools], list[Bools]]]] = {}

    def gated(data: Data, rule: Rule, level: float) -> tuple[list[Bools], list[Bools]] | None:
        """The product's evidence at every look of `rule`, once per runs drawn and level (0: no gate; the runs are
        kept beside it, so that their id is not reused)."""
        if level <= 0:
            return None
        if (id(data), level) not in kept:
            kept[id(data), level] = data, gates(data, rule.problem.reps, args.seed, level)
        return kept[id(data), level][1]

    def named(scatter: str, gate: float) -> str:
        return f"candidate, {scatter} scatter" + (f", gated at p ≤ {gate:g}" if gate > 0 else "")
    if "designs" in args.tables:
        print("\n## Designs: at the planned gap and under no effect\n\n| design | rule | τ² | planned gap (its mean) | "
              "model: bound / calls / power / worst null | fixed power | power (share of fixed) | calls at the gap "
              "| calls, no effect | result rate, no effect | CPU s |\n|---|---|---|---|---|---|---|---|---|---|---|")
        for design, (gap, model) in models.items():
            f, r = (int(x) for x in design.split("x"))
            t0 = time.process_time()
            line = Line(design, fixtures=f, repetitions=r)
            data = draw(replace(line, gap=gap), args.sims, rng)
            null = draw(line, args.sims, rng)
            fixed_win = float((fixed(data, r, args.seed)[1] == WIN).mean())
            plan = default_schedule(r, "obrien-fleming", -4.0, 0.035, True, args.first)
            at, _, first = sequential(data, plan, args.seed, model.delta)
            at0, codes0, _ = sequential(null, plan, args.seed, model.delta)
            looks = np.asarray(plan.looks)
            rows = [("product (O'Brien–Fleming, futility 0.035)", "–", "–", looks[at].mean() / r,
                     int((first == WIN).sum()), looks[at0].mean() / r, int(np.isin(codes0, (WIN, LOSS)).sum()))]
            for scatter in args.scatter.split(","):
                rule = rules[design, scatter]
                reps = np.asarray(rule.problem.reps)
                said = (f"{rule.bound:.3f} / {rule.rates[0]:.3f} / {rule.rates[1]:.3f} / "
                        f"{rule.rates[2:].max():.4f}")
                for tau, gate in itertools.product(taus, levels):
                    known = model.tau2 if tau == "design" else None
                    at, code = judged(rule, data, scatter, known, gated(data, rule, gate))
                    at0, code0 = judged(rule, null, scatter, known, gated(null, rule, gate))
                    results0 = int(np.isin(code0, (WIN, LOSS)).sum())
                    rows.append((named(scatter, gate), tau, said, reps[at].mean() / r,
                                 int((code == WIN).sum()), reps[at0].mean() / r, results0))
            for name, tau, said, calls, wins, calls0, results0 in rows:
                print(f"| {f} × {r} | {name} | {tau} | {gap:.3f} ({model.delta:.3f}) | {said} | {fixed_win:.4f} | "
                      f"{wilson_text(wins, args.sims)} ({wins / args.sims / fixed_win:.3f}) | {calls:.3f} | "
                      f"{calls0:.3f} | {wilson_text(results0, args.sims)} | {time.process_time() - t0:.0f} |",
                      flush=True)
    if "aa" in args.tables:
        print("\n## A/A: false results over all looks (wins and mirrored wins), the one-variant lines of these designs"
              "\n\n| scenario | rule | τ² | result rate [95% Wilson] | wins | losses | calls (share) |\n"
              "|---|---|---|---|---|---|---|")
        for line in AA_LINES:
            design = f"{line.fixtures}x{line.repetitions}"
            if design not in models or line.variants != 1 or line.guards:
                continue
            data = draw(line, args.sims, rng)
            for scatter in args.scatter.split(","):
                rule = rules[design, scatter]
                reps = np.asarray(rule.problem.reps)
                for tau, gate in itertools.product(taus, levels):
                    known = models[design][1].tau2 if tau == "design" else None
                    at, code = judged(rule, data, scatter, known, gated(data, rule, gate))
                    n_w, n_l = int((code == WIN).sum()), int((code == LOSS).sum())
                    print(f"| {line.name} | {named(scatter, gate)} | {tau} | {wilson_text(n_w + n_l, args.sims)} | "
                          f"{n_w / args.sims:.4f} | {n_l / args.sims:.4f} | {reps[at].mean() / line.repetitions:.3f} |",
                          flush=True)
    print(f"\n{time.process_time() - started:.0f} CPU-s in all.")


if __name__ == "__main__":
    main()
