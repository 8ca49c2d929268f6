"""Sequential cards (issue 27 point 5): error rates kept over all looks, power kept, calls saved.

The world is benchmarks/calibration.py's (its `simulate()` and its lines), and every look is judged by the
verdict's own code on the cells so far: `crossed` + `decision` composed as calibration.py composes them
(truncation bounds, guards, Holm), then `stats.sequential.look_decision` at the look's boundary. A grid of R
repetitions is simulated whole; look k reads its first r_k repetitions (the runner's blocks).

Tables:
- A/A: every line of calibration.py's A/A list, the default schedule (every block from the second; futility
  off, which can only add false results — a non-binding futility stop removes runs, never adds a result): the
  share of runs with a result (win or loss) at any look, the fixed design's rate on the same runs, and the
  calls spent (share of the fixed design's).
- Designs: the gap at which the fixed design has 80% power (bisected on common random numbers), then at that
  gap the fixed and the sequential power and the calls spent, and under no effect (futility on, the card's
  effect that matters = the world's own mean gap at the planned gap: the nominal gap is added on the probability
  scale and clipped at 1, so the true mean gap is smaller) the calls spent and the result rate.
- Futility: why the futility test stops more runs than its level at some designs. At the planned gap, with the
  effect that matters = the world's mean gap (the futility test's own boundary), each look's futility p: its
  marginal rate at the look's level, the share first crossing (efficacy ignored), the same with each look's
  threshold at its empirical quantile (marginals exactly nominal: what is left is the joint law), the normal
  model's first crossing (400,000 paths, correlation √(r_j/r_k)), and the correlation of consecutive looks'
  futility z against √(r_j/r_k).
- Audit (audit24b, 2026-12-08): A/A over all looks in designs the A/A table had not tried (`AUDIT_LINES`: R = 4, 6,
  7, 8, looks after various blocks, F from 7 to 100, both spendings, futility on and off, one-arm and per-arm
  shocks, a deterministic arm), each line on its own generator, the fixed design on the same runs.
- Probe: a sequential probe's gate (pass/fail cells, gate.alpha 0.05) at a true score equal to min_score, where a
  pass and a fail are both false (α/2 a side), and away from it, by the exact bound and by Wilson's (before
  2026-12-08) on the same runs: the share decided pass, fail and the cells called.

    python benchmarks/sequential.py --sims 4000 --seed 1
    python benchmarks/sequential.py --sims 4000 --seed 1 --tables audit
    python benchmarks/sequential.py --sims 20000 --seed 4 --tables probe
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy import special

from benchcard.card.schedule import current_rules
from benchcard.stats.crossed import batch_signflip, crossed
from benchcard.stats.decision import LOSS, WIN, Evidence, decide, effect_evidence, guard_evidence, overall, p_tost
from benchcard.stats.sequential import (
    FUTILITY_BETAS,
    MIN_REPETITIONS_TO_DECIDE,
    Schedule,
    boundaries,
    futility_p,
    gate_bounds,
    look_decision,
    stopped,
)
from calibration import AA_LINES, ALPHA, EQ_MARGIN, GUARD_MARGIN, Line, simulate, wilson_text  # beside this script

Array = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Data = tuple[Array, list[Array], list[npt.NDArray[np.bool_]], list[tuple[Array, list[Array]]]]


def draw(line: Line, sims: int, rng: np.random.Generator) -> Data:
    """A line's runs: the baseline, its variants, their truncated cells, and its guards' A/A metrics."""
    base, variants, truncated = simulate(line, sims, rng)
    guards = []
    for _ in range(line.guards):
        g_line = Line(name="guard", fixtures=line.fixtures, repetitions=line.repetitions, variants=line.variants)
        g_base, g_vars, _ = simulate(g_line, sims, rng)
        guards.append((g_base, g_vars))
    return base, variants, truncated, guards


Bools = npt.NDArray[np.bool_]


def evidence_at(data: Data, r: int, seed: int, effect: float) -> tuple[list[list[Evidence]], list[Array],
                                                                       list[Bools], list[Array]]:
    """Every variant's clauses judged on the first r repetitions (calibration.rule_on's composition), with the
    first clause's futility p against `effect` (on the bound that favours the variant: a cut cell at best)."""
    base, variants, truncated, guards = data
    b = base[:, :, :r]
    evidence: list[list[Evidence]] = []
    tost: list[Array] = []
    measurable: list[Bools] = []
    futile: list[Array] = []
    for v, var in enumerate(variants):
        cut, x = truncated[v][:, :, :r], var[:, :, :r]
        low = crossed(b, np.where(cut, 0.0, x))
        high = crossed(b, np.where(cut, 1.0, x))
        flip_low = batch_signflip(low.d, low.n_fixtures, seed=seed)
        flip_high = flip_low if not cut.any() else batch_signflip(high.d, high.n_fixtures, seed=seed)
        hold = effect_evidence(low, flip_low, True)
        loss = effect_evidence(high, flip_high, True)
        judged = [Evidence(p_hold=hold.p_hold, p_loss=loss.p_loss, trivial=hold.trivial)]
        for g_base, g_vars in guards:
            judged.append(guard_evidence(crossed(g_base[:, :, :r], g_vars[v][:, :, :r]), GUARD_MARGIN, "not_rises"))
        evidence.append(judged)
        tost.append(np.maximum(p_tost(low, EQ_MARGIN), p_tost(high, EQ_MARGIN)))
        measurable.append(low.spread | high.spread)
        futile.append(futility_p(high, effect))
    return evidence, tost, measurable, futile


def sequential(data: Data, plan: Schedule, seed: int, effect: float) -> tuple[Ints, Ints, Ints]:
    """Each run's stopping look (index), the run's code there and the first variant's own code there."""
    bounds = boundaries(plan)
    looks, firsts = [], []
    for k, r in enumerate(plan.looks):
        evidence, tost, measurable, futile = evidence_at(data, r, seed, effect)
        look = look_decision(bounds, k + 1, evidence, tost, measurable, futile if plan.futility else None)
        looks.append(look)
        first = look.decision.codes[0]
        firsts.append(np.where(np.isin(look.codes, (WIN, LOSS)) | (k == len(plan.looks) - 1), first, -1))
    at, codes = stopped(looks)
    first_codes = np.take_along_axis(np.stack(firsts), at[None, :], axis=0)[0]
    return at, codes, first_codes.astype(np.int64)


def fixed(data: Data, r: int, seed: int) -> tuple[Ints, Ints]:
    """The fixed design on the same runs: the run's finding and the first variant's."""
    evidence, tost, measurable, _ = evidence_at(data, r, seed, 0.0)
    decision = decide(evidence, tost, measurable, ALPHA)
    return overall(decision.codes), decision.codes[0]


def default_schedule(repetitions: int, spending: str, gamma: float, beta: float, futility: bool, first: int,
                     decide_from: int = MIN_REPETITIONS_TO_DECIDE) -> Schedule:
    """Looks after every block from the `first`-th (the last block always); no α before `decide_from`."""
    looks = tuple(range(min(first, repetitions), repetitions + 1))
    return Schedule(looks, spending, futility, ALPHA, gamma, beta, decide_from)


def options_schedule(args: argparse.Namespace, repetitions: int, futility: bool) -> Schedule:
    """`default_schedule` at the command's options."""
    return default_schedule(repetitions, args.spending, args.gamma, args.beta, futility, args.first, args.decide_from)


def aa_table(args: argparse.Namespace, rng: np.random.Generator) -> None:
    print("\n## A/A: false results over all looks (futility off)\n\n| scenario | looks | sequential: result rate "
          "[95% Wilson] | fixed design, same runs | calls spent (share of fixed) | seconds |\n"
          "|---|---|---|---|---|---|")
    for line in AA_LINES:
        if args.only and args.only not in line.name:
            continue
        started = time.perf_counter()
        plan = options_schedule(args, line.repetitions, False)
        data = draw(line, args.sims, rng)
        at, codes, _ = sequential(data, plan, args.seed, 0.0)
        fixed_codes, _ = fixed(data, line.repetitions, args.seed)
        n = int(np.isin(codes, (WIN, LOSS)).sum())
        nf = int(np.isin(fixed_codes, (WIN, LOSS)).sum())
        calls = float(np.asarray(plan.looks)[at].mean()) / line.repetitions
        print(f"| {line.name} | {','.join(map(str, plan.looks))} | {wilson_text(n, args.sims)} | "
              f"{wilson_text(nf, args.sims)} | {calls:.3f} | {time.perf_counter() - started:.1f} |", flush=True)


def fixed_power(line: Line, gap: float, sims: int, seed: int) -> float:
    data = draw(replace(line, gap=gap), sims, np.random.default_rng(seed))
    return float((fixed(data, line.repetitions, seed)[1] == WIN).mean())


def planned_gap(line: Line, sims: int, seed: int, power: float = 0.80) -> float:
    """The gap at which the fixed design's rule wins in `power` of runs (bisection on one seed's draws)."""
    lo, hi = 0.0, 0.6
    while hi - lo > 0.005:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fixed_power(line, mid, sims, seed) >= power else (mid, hi)
    return hi


def design_table(args: argparse.Namespace, rng: np.random.Generator) -> None:
    print("\n## Designs: at the gap the fixed design wins 80% of the time, and under no effect (futility on)\n\n"
          "| design | looks | planned gap (its mean) | fixed power | sequential power (share of fixed) | "
          "calls at the gap | calls, no effect | result rate, no effect | seconds |\n"
          "|---|---|---|---|---|---|---|---|---|")
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        if args.only and args.only not in design:
            continue
        started = time.perf_counter()
        line = Line(f"{design}", fixtures=f, repetitions=r)
        gap = planned_gap(line, args.plan_sims, args.seed + 1)
        plan = options_schedule(args, r, True)
        data = draw(replace(line, gap=gap), args.sims, rng)
        effect = float(np.mean(data[1][0] - data[0]))  # the world's own mean gap (the nominal gap is clipped at 1)
        at, _, first = sequential(data, plan, args.seed, effect)
        fixed_win = float((fixed(data, r, args.seed)[1] == WIN).mean())
        seq_win = int((first == WIN).sum())
        calls = float(np.asarray(plan.looks)[at].mean()) / r
        null = draw(line, args.sims, rng)
        at0, codes0, _ = sequential(null, plan, args.seed, effect)
        calls0 = float(np.asarray(plan.looks)[at0].mean()) / r
        n0 = int(np.isin(codes0, (WIN, LOSS)).sum())
        print(f"| {f} × {r} | {','.join(map(str, plan.looks))} | {gap:.3f} ({effect:.3f}) | {fixed_win:.4f} | "
              f"{wilson_text(seq_win, args.sims)} ({seq_win / args.sims / fixed_win:.3f}) | {calls:.3f} | "
              f"{calls0:.3f} | {wilson_text(n0, args.sims)} | {time.perf_counter() - started:.1f} |", flush=True)


def futility_table(args: argparse.Namespace, rng: np.random.Generator) -> None:
    print("\n## Futility at its own boundary: each look's futility p at the planned gap, effect = its mean\n\n"
          "| design | look (repetitions) | level | marginal rate (× level) | first crossing so far |\n"
          "|---|---|---|---|---|")
    notes = []
    for design in args.designs.split(","):
        f, r = (int(x) for x in design.split("x"))
        if args.only and args.only not in design:
            continue
        line = Line(f"{design}", fixtures=f, repetitions=r)
        gap = planned_gap(line, args.plan_sims, args.seed + 1)
        plan = options_schedule(args, r, True)
        levels = boundaries(plan).futility or (0.0,)
        data = draw(replace(line, gap=gap), args.sims, rng)
        effect = float(np.mean(data[1][0] - data[0]))
        ps = [evidence_at(data, x, args.seed, effect)[3][0] for x in plan.looks[:-1]]
        going, forced = np.ones(args.sims, dtype=bool), np.ones(args.sims, dtype=bool)
        for k, p in enumerate(ps):
            level = levels[k]
            going &= p > level
            forced &= p > (np.quantile(p, level) if level > 0 else -1.0)
            rate = float((p <= level).mean())
            times = f" ({rate / level:.2f})" if level > 0 else ""
            print(f"| {f} × {r} | {k + 1} ({plan.looks[k]}) | {level:.5f} | {rate:.5f}{times} | "
                  f"{1 - going.mean():.4f} |")
        reps = np.asarray(plan.looks[:-1], dtype=np.float64)
        steps = np.random.default_rng(args.seed).standard_normal((400_000, reps.size))
        paths = np.cumsum(steps * np.sqrt(np.diff(reps, prepend=0)), axis=1) / np.sqrt(reps)
        cut = np.asarray([special.ndtri(x) if x > 0 else -np.inf for x in levels[:-1]])
        zs = [special.ndtri(np.clip(p, 1e-12, 1 - 1e-12)) for p in ps]
        corr = ", ".join(f"{np.corrcoef(zs[k], zs[k + 1])[0, 1]:.3f}/{math.sqrt(reps[k] / reps[k + 1]):.3f}"
                         for k in range(len(zs) - 1))
        normal = float((paths <= cut).any(axis=1).mean())
        notes.append(f"- {f} × {r} (gap {gap:.3f}, mean {effect:.3f}): first crossing {1 - going.mean():.4f}; with "
                     f"marginals forced nominal {1 - forced.mean():.4f}; normal model {normal:.4f}; "
                     f"consecutive looks' correlation (measured/√(r_j/r_k)): {corr}")
    print("\n" + "\n".join(notes))


@dataclass(frozen=True)
class AuditLine:
    """An A/A line of its own schedule (audit24b, 2026-12-08: designs the A/A table had not tried): the world, the
    looks, the spending (hsd is γ −6, a card's default) and futility (its effect that matters: the equivalence
    margin, as a card without min_effect)."""

    line: Line
    looks: tuple[int, ...]
    spending: str = "hsd"
    futility: bool = False

    @property
    def plan(self) -> Schedule:
        return Schedule(self.looks, self.spending, self.futility, ALPHA, -6.0 if self.spending == "hsd" else -4.0,
                        FUTILITY_BETAS[self.spending], MIN_REPETITIONS_TO_DECIDE)


def _a(name: str, looks: tuple[int, ...], spending: str = "hsd", futility: bool = False, **world: float) -> AuditLine:
    stream = 500 + len(name) * 7 + sum(map(ord, name)) % 997  # each line its own generator, stable by its name
    return AuditLine(Line(name, repetitions=looks[-1], stream=stream, **world), looks, spending,  # type: ignore[arg-type]
                     futility)


#: audit24b (2026-12-08): R = 4, 6, 7, 8 with looks after various blocks, F odd and small or large, both spendings,
#: futility on and off, one-arm and per-arm shocks, a deterministic arm (docs/statistics.md, "Audit of sequential
#: cards and seal's edge, 2026-12-08").
AUDIT_LINES: list[AuditLine] = [
    _a("F=12, R=4, per-arm shocks sd 1.0", (2, 4), arm_shock=1.0),
    _a("F=7, R=4, per-arm shocks sd 1.0", (2, 4), fixtures=7, arm_shock=1.0),
    _a("F=48, R=4, per-arm shocks sd 0.5, O'Brien–Fleming", (2, 3, 4), "obrien-fleming", fixtures=48, arm_shock=0.5),
    _a("F=9, R=6, per-arm shocks sd 1.0", (2, 3, 4, 5, 6), fixtures=9, arm_shock=1.0),
    _a("F=13, R=6, no shock, O'Brien–Fleming", (3, 6), "obrien-fleming", fixtures=13),
    _a("F=100, R=6, per-arm shocks sd 0.5", (2, 3, 4, 5, 6), fixtures=100, arm_shock=0.5),
    _a("F=13, R=7, per-arm shocks sd 1.0", (3, 5, 7), fixtures=13, arm_shock=1.0),
    _a("F=13, R=7, per-arm shocks sd 1.0, O'Brien–Fleming", (3, 5, 7), "obrien-fleming", fixtures=13, arm_shock=1.0),
    _a("F=24, R=7, no shock", (3, 5, 7), fixtures=24),
    _a("F=24, R=7, no shock, O'Brien–Fleming", (3, 5, 7), "obrien-fleming", fixtures=24),
    _a("F=24, R=7, no shock, futility", (3, 5, 7), futility=True, fixtures=24),
    _a("F=12, R=8, per-arm shocks sd 1.0", tuple(range(2, 9)), arm_shock=1.0),
    _a("F=12, R=8, per-arm shocks sd 1.0, O'Brien–Fleming", tuple(range(2, 9)), "obrien-fleming", arm_shock=1.0),
    _a("F=12, R=8, per-arm shocks sd 1.0, futility", tuple(range(2, 9)), futility=True, arm_shock=1.0),
    _a("F=48, R=8, per-arm shocks sd 0.5", tuple(range(2, 9)), fixtures=48, arm_shock=0.5),
    _a("F=100, R=8, per-arm shocks sd 1.0", tuple(range(2, 9)), fixtures=100, arm_shock=1.0),
    _a("F=9, R=8, no shock", tuple(range(2, 9)), fixtures=9),
    _a("variant shocks sd 1.0, baseline none, F=12, R=8", tuple(range(2, 9)), arm_shock=0.0, variant_shock=1.0),
    _a("variant shocks sd 1.0, baseline none, F=12, R=8, O'Brien–Fleming", tuple(range(2, 9)), "obrien-fleming",
       arm_shock=0.0, variant_shock=1.0),
    _a("baseline shocks sd 1.0, variant none, F=24, R=6", (2, 4, 6), fixtures=24, arm_shock=1.0, variant_shock=0.0),
    _a("variant deterministic, baseline sampled, F=12, R=8", tuple(range(2, 9)), deterministic_variant=True),
    _a("variant deterministic, baseline sampled, F=13, R=7, O'Brien–Fleming", (3, 5, 7), "obrien-fleming",
       fixtures=13, deterministic_variant=True),
    _a("F=9, R=4, deterministic model", (2, 3, 4), fixtures=9, deterministic=True),
    _a("three variants, F=13, R=6, per-arm shocks sd 1.0", (2, 4, 6), fixtures=13, variants=3, arm_shock=1.0),
    _a("1 guard, F=13, R=7", (3, 5, 7), fixtures=13, guards=1),
    _a("score-scale shocks sd 0.2, variant only, binary at ½, F=24, R=4", (2, 4), fixtures=24, difficulty=0.0,
       fixture_sd=0.0, score_shock=0.2),
    _a("score-scale shocks sd 0.2, variant only, binary at ½, F=13, R=6", (2, 3, 4, 5, 6), fixtures=13,
       difficulty=0.0, fixture_sd=0.0, score_shock=0.2),
    _a("score-scale shocks sd 0.2, variant only, binary at ½, F=24, R=8", tuple(range(2, 9)), fixtures=24,
       difficulty=0.0, fixture_sd=0.0, score_shock=0.2),
]


def audit_table(args: argparse.Namespace) -> None:
    print("\n## Audit (2026-12-08): A/A over all looks in designs the A/A table had not tried\n\n"
          "| scenario | looks | spending | sequential: result rate [95% Wilson] | fixed design, same runs | "
          "calls spent (share of fixed) | seconds |\n|---|---|---|---|---|---|---|")
    for audit in AUDIT_LINES:
        line = audit.line
        if args.only and args.only not in line.name:
            continue
        started = time.perf_counter()
        data = draw(line, args.sims, np.random.default_rng([args.seed, line.stream]))
        at, codes, _ = sequential(data, audit.plan, args.seed, EQ_MARGIN)
        fixed_codes, _ = fixed(data, line.repetitions, args.seed)
        n = int(np.isin(codes, (WIN, LOSS)).sum())
        nf = int(np.isin(fixed_codes, (WIN, LOSS)).sum())
        calls = float(np.asarray(audit.looks)[at].mean()) / line.repetitions
        spend = "hsd γ −6" if audit.spending == "hsd" else audit.spending
        print(f"| {line.name} | {','.join(map(str, audit.looks))} | {spend}{', futility' if audit.futility else ''} "
              f"| {wilson_text(n, args.sims)} | {wilson_text(nf, args.sims)} | {calls:.3f} | "
              f"{time.perf_counter() - started:.1f} |", flush=True)


#: A probe's gate: (min_score, the true mean score, looks, spending). The true score at min_score: a pass is false,
#: a fail too; away from it: what the bound costs in decisions and cells.
PROBE_LOOKS = ((10, 20, 30, 40), (3, 6, 9, 12), tuple(range(5, 55, 5)), (25, 50, 75, 100))
PROBE_LINES: list[tuple[float, float, tuple[int, ...], str]] = [
    (gate, truth, looks, spending) for looks in PROBE_LOOKS for spending in ("hsd", "obrien-fleming")
    for gate, truth in ((0.5, 0.5), (0.8, 0.8), (0.9, 0.9), (0.95, 0.95))
] + [(gate, truth, looks, "hsd") for looks in PROBE_LOOKS
     for gate, truth in ((0.5, 0.7), (0.8, 0.92), (0.9, 0.98), (0.9, 1.0), (0.95, 1.0), (0.8, 0.65), (0.9, 0.75))]


def probe_runs(gate: float, truth: float, looks: tuple[int, ...], spending: str, bound: str, sims: int,
               rng: np.random.Generator) -> tuple[Ints, Ints]:
    """Each simulated probe run's decision (0 none, 1 pass, 2 fail) and the cells it called: pass/fail cells at
    `truth`, each look's mean bounded as verdict/looks.py bounds it (`gate_bounds` at the look's boundary)."""
    plan = Schedule(looks, spending, False, ALPHA, -6.0 if spending == "hsd" else -4.0, gate_bound=bound)
    z = boundaries(plan).efficacy
    sums = np.cumsum(rng.random((sims, looks[-1])) < truth, axis=1)
    decided = np.zeros(sims, dtype=np.int64)
    at = np.full(sims, looks[-1], dtype=np.int64)
    for r, zk in zip(looks, z, strict=True):
        passing = np.asarray([gate_bounds(k / r, r, zk, bound)[0] >= gate for k in range(r + 1)])
        failing = np.asarray([gate_bounds(k / r, r, zk, bound)[1] < gate for k in range(r + 1)])
        k = sums[:, r - 1]
        going = decided == 0
        now = going & (passing[k] | failing[k])
        decided[now] = np.where(passing[k][now], 1, 2)
        at[now] = r
    return decided, at


def probe_table(args: argparse.Namespace) -> None:
    """A sequential probe's gate (gate.alpha 0.05): the share of runs a look decides pass or fail, by the exact
    bound (since 2026-12-08) and Wilson's (before), on the same runs. At a true score equal to min_score either
    decision is false: each is promised at most α/2 = 0.025."""
    print("\n## A probe's gate: decided pass and fail over all looks, pass/fail cells\n\n"
          "| min_score | true score | looks | spending | exact: pass | exact: fail | exact: cells | "
          "Wilson: pass | Wilson: fail | Wilson: cells |\n|---|---|---|---|---|---|---|---|---|---|")
    for k, (gate, truth, looks, spending) in enumerate(PROBE_LINES):
        name = f"probe {gate:g} {truth:g} {looks} {spending}"
        if args.only and args.only not in name:
            continue
        row = []
        for bound in ("exact", "wilson"):
            decided, at = probe_runs(gate, truth, looks, spending, bound, args.sims,
                                     np.random.default_rng([args.seed, 900 + k]))
            row += [wilson_text(int((decided == 1).sum()), args.sims), wilson_text(int((decided == 2).sum()),
                                                                                  args.sims), f"{at.mean():.1f}"]
        print(f"| {gate:g} | {truth:g} | {','.join(map(str, looks))} | {spending} | {' | '.join(row)} |", flush=True)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=2000, help="simulated runs per line")
    parser.add_argument("--plan-sims", type=int, default=2000, help="runs per step of the planned gap's bisection")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="only the lines (or designs) whose name contains this text")
    spending, gamma = current_rules(True).spending  # what a card that names no spending spends
    parser.add_argument("--spending", default=spending, help="default: what a card naming none spends")
    parser.add_argument("--gamma", type=float, default=gamma or -4.0, help="Hwang–Shih–DeCani's γ (hsd only)")
    parser.add_argument("--beta", type=float, default=None,
                        help="the futility test's total level (default: benchcard's for the spending)")
    parser.add_argument("--first", type=int, default=2, help="the first look, after this many blocks")
    parser.add_argument("--decide-from", type=int, default=MIN_REPETITIONS_TO_DECIDE,
                        help="no α is spent at a look before this many repetitions (but the last)")
    parser.add_argument("--designs", default="12x10,24x5,12x5,48x3,24x3")
    parser.add_argument("--tables", default="aa,designs", help="aa, designs, futility, audit, probe (comma-separated)")
    args = parser.parse_args()
    if args.beta is None:
        args.beta = FUTILITY_BETAS[args.spending]
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"# Sequential cards: {args.sims:,} runs a line, α = {ALPHA}, spending {args.spending}"
          f"{f' γ {args.gamma:g}' if args.spending == 'hsd' else ''}, futility level {args.beta:g}, α from repetition "
          f"{args.decide_from}, seed {args.seed}")
    if "aa" in args.tables:
        aa_table(args, rng)
    if "designs" in args.tables:
        design_table(args, rng)
    if "futility" in args.tables:
        futility_table(args, rng)
    if "audit" in args.tables:
        audit_table(args)
    if "probe" in args.tables:
        probe_table(args)
    print(f"\n{time.perf_counter() - started:.1f} s in all.")


if __name__ == "__main__":
    main()
