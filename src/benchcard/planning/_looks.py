"""`benchcard plan` for a sequential card: the calls and cost its looks are expected to spend.

A sequential card may stop at a sealed look (stats/sequential.py), so what it costs is a distribution, not a
number. The plan simulates the card's first clause (one variant, at Holm's level as the rest of the plan) from
the same model as its power figures (a pilot's or declared assumptions: stats/simulate.py), judges every
simulated run at every look through the verdict's own look decision, and reports the expected calls and cost
under no effect and at the gap the fixed design wins 80% of the time, next to the fixed design's: the calls of
a run stopped after r of R repetitions are r/R of the grid's.
"""

from __future__ import annotations

import math

import numpy as np
from msgspec import UNSET

from benchcard.planning.result import Expected, Number, SequentialPlan
from benchcard.stats import sequential as seq
from benchcard.stats import simulate
from benchcard.stats.simulate import Model

SEED = 20261204
METHOD = (f"{simulate.DRAWS:,} simulated runs of this size judged at every look by the verdict's own rule, from "
          "the model of the power figures above")


def sequential_plan(schedule: seq.Schedule, model: Model | None, fixtures: int, calls: int, max_cost: Number | None,
                    expected_cost: Number | None, gap: float | None, effect: float, min_effect: float = 0.0,
                    margin: float = 0.0) -> SequentialPlan:
    """The schedule's expected calls and cost under no effect and at `gap` (the fixed design's 80% gap; None or
    inf: none), from `model` (None: no model, so no figures, said so). `effect` is what futility rules out."""
    bounds = seq.boundaries(schedule)
    out = SequentialPlan(looks=list(schedule.looks), spending=schedule.spending, futility=schedule.futility,
                         futility_effect=effect if schedule.futility else None, alpha=schedule.alpha,
                         boundaries=[_finite(c) for c in bounds.efficacy], nominal=list(bounds.nominal),
                         fixed_calls=calls, fixed_max_cost=max_cost, fixed_expected_cost=expected_cost,
                         simulated_runs=simulate.DRAWS, method=METHOD, expected=[], notes=[],
                         gamma=schedule.gamma if schedule.spending == "hsd" else UNSET)
    if model is None:
        out.notes.append("expected calls need a model of the scores: a pilot run (--from RUN) or declared "
                         "assumptions (--baseline-rate …)")
        return out
    if schedule.repetitions < 2:
        out.notes.append("one repetition: a look can never decide")
        return out
    z = simulate.draws(model, fixtures, schedule.repetitions, SEED)
    gaps = [0.0] + ([gap] if gap is not None and math.isfinite(gap) else [])
    if len(gaps) == 1:
        out.notes.append("no true gap wins 80% of the fixed design's runs: expected calls under no effect only")
    for true_gap in gaps:
        out.expected.append(_expected(z, true_gap, schedule, calls, max_cost, expected_cost, effect, min_effect,
                                      margin))
    return out


def _expected(z: simulate.Draws, gap: float, schedule: seq.Schedule, calls: int, max_cost: Number | None,
              expected_cost: Number | None, effect: float, min_effect: float, margin: float) -> Expected:
    base, var = simulate.tables(z, gap)
    at, codes = seq.simulate_looks(base, var, schedule, effect=effect, min_effect=min_effect, margin=margin)
    reps = np.asarray(schedule.looks)[at]
    share = float(reps.mean()) / schedule.repetitions
    stops = np.bincount(at, minlength=len(schedule.looks)) / at.size
    fixed = simulate.effect_power(z, gap, schedule.alpha, min_effect)
    return Expected(true_gap=gap, calls=share * calls, share=share,
                    max_cost=None if max_cost is None else share * max_cost,
                    expected_cost=None if expected_cost is None else share * expected_cost,
                    stops=[float(s) for s in stops], wins=float((codes == 0).mean()),
                    results=float(((codes == 0) | (codes == 1)).mean()), fixed_wins=fixed)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
