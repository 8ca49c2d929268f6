"""`benchcard plan`: what a run of a card will take, and what it can hope to detect.

Before a run: the number of calls, input tokens (estimated as characters / 4 of every request's messages),
the output-token ceiling (max_tokens × calls) and the cost those imply under the `prices:` table of
`benchcard.yaml` (USD per million tokens), or "no price configured". The counting is `run/grid.estimate`'s, the
grid module the runner uses, so the plan and the run agree on what a cell is.

With a pilot run (`--from RUN`): for every gap clause, the smallest true gap at which the verdict's own rule
holds in 80% of simulated runs of this card's fixtures and repetitions, drawn from a model fitted to the pilot
(simulate.py), with the range the pilot's own uncertainty allows; for a guard, the true gap below which it
holds 80% of the time. Without one, the same for the first clause from declared assumptions (`--baseline-rate`
…, power.py), said to rest on them. A design that can never win is said so, and a pilot or any run of
this version with cells cut off at the card's max_tokens is named (as `check` names it). With neither, the best
power the planned design can reach at all (stats/reach.py) is said, as `check` says it of the card's own. A card
whose sealed version no longer matches its seal is planned as edited, and said so in `check`'s words.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard.card.check import sealed_state
from benchcard.card.design import cannot_win, plain_min_effect, plain_rule, truncation_warnings
from benchcard.card.load import load_named
from benchcard.card.model import Card, Clause
from benchcard.card.schedule import card_design
from benchcard.card.seal import sequential_rules
from benchcard.errors import BenchcardError, PlanError, RunError
from benchcard.planning import power as powerplan
from benchcard.planning._looks import sequential_plan
from benchcard.planning._report import PlanReport
from benchcard.planning.power import POWER, Assumptions
from benchcard.planning.result import AssumedPlan, ClausePlan, PilotPlan, Plan, SequentialPlan, strict_plan
from benchcard.project import Price, Project
from benchcard.records.cardruns import find_run
from benchcard.records.rows import FAILED, MISSING, Manifest
from benchcard.records.runreader import read_manifest, set_aside_of
from benchcard.run import grid
from benchcard.run.judging import judge_estimate
from benchcard.stats import paired as stats
from benchcard.stats import simulate
from benchcard.stats.sequential import Schedule
from benchcard.stats.simulate import Model
from benchcard.verdict.runfolder import RunData, read_run_data

METHOD = (f"{simulate.DRAWS:,} simulated runs of this size judged by the verdict's own rule, from a model of "
          "the pilot's scores")
ASSUMED_METHOD = (f"{simulate.DRAWS:,} simulated runs of this size judged by the verdict's own rule, from the "
                  "declared assumptions")


def plan(project: Project, card: Card, pilot: str | Path | None = None, assumed: Assumptions | None = None,
         fixtures: int | None = None, repetitions: int | None = None, design: Schedule | None = None) -> Plan:
    """The plan of one run of `card` (see the module docstring). `fixtures` and `repetitions` size the simulated
    run (default: the card's design); `design`, a sequential card's looks (default: the card's own)."""
    if pilot is not None and assumed is not None:
        raise PlanError("--from and --baseline-rate exclude each other: a plan rests on a pilot's scores or on "
                        "declared assumptions, not both")
    size = powerplan.simulated_size(fixtures, repetitions, len(card.fixture_ids()), card.repetitions)
    sim, cut = powerplan.bounded(size)  # a large design's figures from its cut, never every fixture drawn
    prices = project.config().prices
    est = grid.estimate(card, card.rig.model, prices)
    price = prices.get(card.rig.model)
    cost = (price, est.max_cost,
            None if price is None else est.input_tokens * price.input / 1_000_000)
    if card.rig.provider == "local":  # the embedded model runs on this machine: it costs nothing per call
        cost = (Price(0.0, 0.0), 0.0, 0.0)
    from_pilot, first = _pilot(project, card, pilot, sim) if pilot is not None else (None, None)
    from_assumed = None
    if pilot is None and assumed is not None:
        from_assumed, first = _assumed(card, assumed, sim)
    for simulation in (from_pilot, from_assumed):
        if simulation is not None and cut is not None:
            simulation.notes.insert(0, cut)
    used = f"run {from_pilot.run} " if from_pilot else None  # the pilot's own note says it already
    result = Plan(
        card=card.id, version=card.version, kind=card.kind, rig=card.rig.line(), model=card.rig.model,
        variants=len(card.variant_names()), fixtures=len(card.fixture_ids()), repetitions=card.repetitions,
        calls=est.calls, input_tokens=est.input_tokens,
        input_tokens_method="characters / 4 of every request's messages",
        max_output_tokens=est.max_output_tokens, max_tokens=int(card.params["max_tokens"]),
        price=cost[0], max_cost=cost[1], input_cost=cost[2],
        pilot=from_pilot,
        assumed=from_assumed,
        judge=judge_estimate(project, card, prices),
        warnings=[w for w in truncation_warnings(card, project) if used is None or used not in w],
        seal_broken=_seal_broken(card, project),  # a draft is planned all the same: said, not refused
    )
    rules = sequential_rules(card, project)  # a sealed card's looks are judged by the rule its seal records
    plain = pilot is None and assumed is None and fixtures is None and repetitions is None
    dead = cannot_win(card, rules) if plain else None
    if dead:  # a pilot's or assumptions' plan says it in its notes, for the size it simulates
        accepted = " (the card accepts it: win.accept_cannot_win)" if card.win and card.win.accept_cannot_win else ""
        result = msgspec.structs.replace(result, warnings=[*result.warnings,
                                                           f"the most this design can show: {dead}{accepted}"])
    if pilot is None and assumed is None and card.is_ab and card.win is not None and not dead:
        # no pilot's or assumptions' notes to carry it: the best power of the design planned, said all the same
        n_variants = len([v for v in card.variant_names() if v != card.baseline])
        result = msgspec.structs.replace(result, reach=powerplan.reach_note(
            size[0], size[1], n_variants, card.win.alpha, plain_min_effect(card), plain_rule(card)))
    if design is None and card.sequential is not None:  # the card's own sealed looks (a probe's at gate.alpha)
        alpha = card.win.alpha if card.win is not None else card.gate_alpha
        design = card_design(card.sequential, alpha, card.sequential.futility and card.is_ab, rules)
    if design is not None:
        expected = from_pilot.expected_cost if from_pilot is not None else None
        scale = size[0] * size[1] / (len(card.fixture_ids()) * card.repetitions)  # the simulated size's grid
        result = msgspec.structs.replace(result, sequential=_sequential(
            card, design, sim, first, round(est.calls * scale), None if cost[1] is None else cost[1] * scale,
            None if isinstance(expected, UnsetType) or expected is None else expected * scale))
    return strict_plan(result)


def _seal_broken(card: Card, project: Project) -> str | UnsetType:
    """The problem `check` names when the card's sealed version no longer matches its seal, or its seal file does
    not read (which `check` and `run` refuse in the same words); unset for a card sealed as it is, or not sealed.
    `PlanReport.told` says it on stderr."""
    try:
        _, broken = sealed_state(card, project)
    except BenchcardError as exc:
        return str(exc)
    return broken[0] if broken else UNSET


def _sequential(card: Card, design: Schedule, size: tuple[int, int], first: tuple[Model, float] | None,
                calls: int, max_cost: float | None, expected_cost: float | None) -> SequentialPlan:
    """A sequential card's expected calls and cost, from the first clause's model and 80% gap (`first`: None
    when the plan has neither a pilot nor assumptions, or the first clause is not a gap to detect)."""
    win = card.win
    notes: list[str] = []
    variants = len([v for v in card.variant_names() if v != card.baseline])
    level = powerplan.holm_level(win.alpha if win else design.alpha, variants, [])
    schedule = replace(design, alpha=level)
    if size[1] != design.repetitions and card.is_ab:
        notes.append(f"the looks are sealed for {design.repetitions} repetitions, so their figures are for "
                     f"{size[0]} fixtures × {design.repetitions} repetitions")
    effect = float((win.min_effect or win.equivalence_margin or 0.0) if win else 0.0)
    model, gap = first if first is not None else (None, None)
    if first is not None and size[1] != design.repetitions:
        model, gap = None, None
        notes.append("expected calls are simulated only at the card's own repetitions")
    out = sequential_plan(schedule, model, size[0], calls, max_cost, expected_cost, gap, effect,
                          win.min_effect if win else 0.0, float(win.equivalence_margin or 0.0) if win else 0.0)
    if not card.is_ab:  # a probe has no gap to simulate: its looks, and what they may cost at most
        notes.append(f"a probe's look stops the run once gate min_score {card.gate:g} is passed or failed at the "
                     "look's level; its expected calls are not simulated: at most the fixed design's")
        return msgspec.structs.replace(out, notes=notes)
    return msgspec.structs.replace(out, notes=notes + out.notes)


def _assumed(card: Card, assumed: Assumptions, size: tuple[int, int]) -> tuple[AssumedPlan, tuple[Model, float] | None]:
    """The first clause planned from declared assumptions: the same simulation as a pilot's, no range; with the
    model and the 80% gap of a `rises`/`falls` first clause (what a sequential card's expected calls rest on)."""
    info = AssumedPlan(power=POWER, method=ASSUMED_METHOD, model=powerplan.describe(assumed.model()),
                       fixtures=size[0], repetitions=size[1], clauses=[], notes=[])
    if not card.is_ab or card.win is None or card.baseline is None:
        info.notes.append("a probe compares nothing; there is no gap to detect")
        return info, None
    first = card.win.clauses[0]
    variants = [v for v in card.variant_names() if v != card.baseline]
    entry = ClausePlan(metric=first.metric, test=first.test, fixture=first.fixture, margin=first.margin,
                       variant=", ".join(variants), fixtures=size[0], repetitions=size[1],
                       simulated_runs=simulate.DRAWS)
    level = powerplan.holm_level(card.win.alpha, len(variants), info.notes)
    info.notes.append(powerplan.reach_note(size[0], size[1], len(variants), card.win.alpha, plain_min_effect(card),
                                            plain_rule(card)))
    model = powerplan.mirrored(assumed.model(), first.test)
    found: tuple[Model, float] | None = None
    if first.test in ("rises", "falls"):
        entry = powerplan.effect_entry(entry, model, size[0], size[1], level, card.win.min_effect, ranged=False)
        found = (model, _gap(entry)) if not first.fixture else None
    elif first.test in ("not_rises", "not_falls"):
        entry = powerplan.guard_entry(entry, model, size[0], size[1], float(first.margin or 0.0), level,
                                      first.test)
    else:
        entry = msgspec.structs.replace(entry, note="a `holds` clause has no gap to plan")
    info.clauses.append(entry)
    if len(card.win.clauses) > 1:
        info.notes.append(f"only the first clause ({first.metric} {first.test}) is planned: the assumptions "
                          "describe one score; the other clauses need a pilot (--from RUN)")
    return info, found


def _gap(entry: ClausePlan) -> float:
    gap = entry.needed_gap
    return float(gap) if isinstance(gap, int | float) else math.inf


def _pilot(project: Project, card: Card, pilot: str | Path,
           size: tuple[int, int]) -> tuple[PilotPlan, tuple[Model, float] | None]:
    run_dir = find_run(project, pilot)
    aside = set_aside_of(run_dir)
    if aside is not None:  # set aside is never used again: its scores are what its owner disowned
        raise PlanError(f"{run_dir.name}: this run was {aside.label}; a run set aside is never used again, as a "
                        "pilot neither: plan from another run")
    manifest = read_manifest(run_dir)
    if manifest.card != card.id:
        raise RunError(f"{run_dir.name}: a run of {manifest.card}, not of {card.id}; a pilot must be a run "
                       "of the card being planned")
    data = read_run_data(run_dir, manifest=manifest, baseline=card.baseline, allow_incomplete=True,
                         upto=manifest.looks[-1].repetitions if manifest.looks else None)  # a sequential run: as called
    notes = []
    if manifest.version != card.version:
        notes.append(f"the pilot ran v{manifest.version}; this plan is for v{card.version}")
    clauses: list[ClausePlan] = []
    per_call, expected, out_per_call = _pilot_costs(card, data, manifest, notes)
    notes.extend(_unanswered(data))
    info = PilotPlan(run=run_dir.name, version=manifest.version, power=POWER, method=METHOD,
                     assumption=powerplan.PILOT_ASSUMPTION, clauses=clauses,
                     notes=notes, observed_cost_per_call=per_call, expected_cost=expected,
                     observed_output_tokens_per_call=out_per_call)
    if not card.is_ab or card.win is None or card.baseline is None:
        notes.append("a probe compares nothing; there is no gap to detect")
        return info, None
    found: tuple[Model, float] | None = None
    alpha = card.win.alpha
    others = [v for v in card.variant_names() if v != card.baseline and v in data.variants]
    n_variants = len([v for v in card.variant_names() if v != card.baseline])
    level = powerplan.holm_level(alpha, n_variants, notes)
    notes.append(powerplan.reach_note(size[0], size[1], n_variants, alpha, plain_min_effect(card), plain_rule(card)))
    for clause in card.win.clauses:
        for variant in others:
            entry = ClausePlan(metric=clause.metric, test=clause.test, fixture=clause.fixture, margin=clause.margin,
                               variant=variant)
            values = data.metrics.get(clause.metric)
            if values is None:
                clauses.append(msgspec.structs.replace(entry, note=f"the pilot has no {clause.metric!r} scores"))
            elif clause.test == "holds":
                clauses.append(_holds_plan(entry, card, clause, data, values, variant))
            else:
                clauses.append(_gap_plan(entry, card, clause, data, values, variant, size, level))
                if found is None and clause is card.win.clauses[0]:
                    found = _first_model(card, clause, data, values, variant, clauses[-1])
    return info, found


def _first_model(card: Card, clause: Clause, data: RunData, values: Any, variant: str,
                 entry: ClausePlan) -> tuple[Model, float] | None:
    """The first clause's model and 80% gap, what a sequential card's expected calls rest on: a `rises`/`falls`
    clause over every fixture whose model was fitted (None otherwise)."""
    if clause.fixture or clause.test not in ("rises", "falls") or isinstance(entry.model, UnsetType):
        return None
    assert card.baseline is not None
    model = simulate.model_of(data.grid(values, card.baseline), data.grid(values, variant))
    return powerplan.mirrored(model, clause.test), _gap(entry)


def _unanswered(data: RunData) -> list[str]:
    """Notes for the pilot's failed cells and its cells never recorded: the plan rests on the others alone, which
    a pilot failing often makes optimistic."""
    total, failed, missing = len(data.cells), int((data.status == FAILED).sum()), int((data.status == MISSING).sum())
    notes = [f"{failed} of {total} pilot cell(s) failed in transport: the plan rests on the others; in a verdict "
             "failed cells count against allow_failed"] if failed else []
    if missing:
        notes.append(f"{missing} of {total} pilot cell(s) have no outcome (the pilot is unfinished): the plan rests "
                     "on the others")
    return notes


def _pilot_costs(card: Card, data: RunData, manifest: Manifest, notes: list[str]) -> tuple[
        float | UnsetType, float | UnsetType, float | UnsetType]:
    """The cost per call actually observed (to set beside the ceiling), the run's expected cost at that price, and
    the output tokens per call; a note when the pilot had cells cut off at max_tokens."""
    import numpy as np

    answered = data.status != 3
    truncated = int((data.status == 1).sum())
    if truncated:
        notes.append(f"{truncated} of {len(data.cells)} pilot cell(s) were cut off at max_tokens "
                     f"{manifest.params.get('max_tokens', '?')}: they count against allow_failed and are "
                     "bounded at the worst case by the verdict — raise max_tokens before sealing")
    per_call: float | UnsetType = UNSET
    expected: float | UnsetType = UNSET
    out_per_call: float | UnsetType = UNSET
    if answered.any() and not np.isnan(data.cost[answered]).all():
        per_call = float(np.nanmean(data.cost[answered]))
        expected = per_call * len(card.variant_names()) * len(card.fixture_ids()) * card.repetitions
    out_tokens = data.tokens["output"][answered] if data.tokens else np.empty(0)
    if out_tokens.size and not np.isnan(out_tokens).all():
        out_per_call = float(np.nanmean(out_tokens))
    return per_call, expected, out_per_call


def _holds_plan(entry: ClausePlan, card: Card, clause: Clause, data: RunData, values: Any,
                variant: str) -> ClausePlan:
    """A `holds` clause: how often the pilot's variant held on the fixture, and the chance every repetition does."""
    import numpy as np

    assert clause.fixture is not None and card.win is not None
    row = data.grid(values, variant, [clause.fixture])[0] if clause.fixture in data.fixtures else None
    scored = row[~np.isnan(row)] if row is not None else np.array([])
    k = int((np.abs(scored - clause.equals) <= 1e-9).sum())
    rate = k / scored.size if scored.size else None
    low = stats.wilson(k, int(scored.size), card.win.alpha)[0] if scored.size else None
    return msgspec.structs.replace(entry, k=k, n=int(scored.size), rate=rate,
                                   chance_all_hold=None if rate is None else rate ** card.repetitions,
                                   chance_all_hold_low=None if low is None else low ** card.repetitions)


def _gap_plan(entry: ClausePlan, card: Card, clause: Clause, data: RunData, values: Any, variant: str,
              size: tuple[int, int], level: float) -> ClausePlan:
    """A gap clause: the pilot's crossed model of baseline and variant, simulated at the planned size."""
    assert card.win is not None and card.baseline is not None
    fixtures = [clause.fixture] if clause.fixture else None
    base = data.grid(values, card.baseline, fixtures)
    var = data.grid(values, variant, fixtures)
    n_fixtures = 1 if clause.fixture else size[0]
    entry = msgspec.structs.replace(entry, fixtures=n_fixtures, repetitions=size[1], simulated_runs=simulate.DRAWS)
    try:
        model = simulate.model_of(base, var)
    except ValueError as exc:
        return msgspec.structs.replace(entry, note=str(exc))
    entry = msgspec.structs.replace(entry, model=powerplan.describe(model), pilot_df=model.df)
    model = powerplan.mirrored(model, clause.test)
    if clause.test in ("rises", "falls"):
        min_effect = card.win.min_effect if clause is card.win.clauses[0] else 0.0
        return powerplan.effect_entry(entry, model, n_fixtures, size[1], level, min_effect)
    return powerplan.guard_entry(entry, model, n_fixtures, size[1], float(clause.margin or 0.0), level, clause.test)


def plan_report(project: Project, card: str, pilot: str | Path | None = None, assumed: Assumptions | None = None,
                fixtures: int | None = None, repetitions: int | None = None,
                design: Schedule | None = None) -> PlanReport:
    """`benchcard plan CARD`'s core: the card `card` (an id or a path) loaded and planned, as the command line
    reports it (`--json` the plan's fields, else its lines)."""
    return PlanReport(plan(project, load_named(project, card), pilot, assumed, fixtures, repetitions, design))
