"""`benchcard plan` in words (planning/_report.py): the cost lines, the model a simulation drew from, and each
clause's figures, in every form planning.py gives them (docs/statistics.md, "plan")."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from benchcard.planning._report import clause_lines, model_line, plan_lines
from benchcard.planning.result import ClausePlan, ModelDescription, Plan

RATES = {"model": "rates", "levels": 1, "baseline_rate": 0.6, "fixture_sd": 0.15, "run_sd": 0.0, "effect_sd": 0.05}


def _model(data: dict[str, Any]) -> ModelDescription:
    model: ModelDescription = msgspec.convert(data, ModelDescription)
    return model


def test_the_model_line_names_the_scores_and_their_spreads() -> None:
    assert model_line(_model(RATES), "as declared") == (
        "simulated as pass/fail scores as declared: baseline rate 0.600, fixture sd 0.150, run sd 0.000, effect sd "
        "0.050")
    # a pilot's 0/0.5/1 scores fitted by the spread of 4 trials: never "steps of 1/4", which the scorer has not
    assert model_line(_model({**RATES, "levels": 4}), "fitted to the pilot").startswith(
        "simulated as scores as spread within a fixture as the pilot's (each cell drawn as the mean of 4 pass/fail "
        "trials) fitted to the pilot: ")
    assert model_line(_model({**RATES, "levels": 4}), "as declared").startswith(
        "simulated as scores in steps of 1/4 as declared: ")
    normal = {"model": "normal", "fixture": 0.0123456, "run": 0.0, "cell": 2.5}
    assert model_line(_model(normal), "fitted to the pilot") == ("simulated as a normal model of the gap fitted to the "
                                                         "pilot: variance components fixture 0.01235, run 0, cell 2.5")


RISES = {"metric": "field_recall", "test": "rises", "variant": "A", "fixtures": 16, "repetitions": 5}


@pytest.mark.parametrize(("clause", "lines"), [
    ({**RISES, "needed_gap": 0.1234, "needed_gap_range": [0.1, 0.2], "model": RATES,
      "power_at": [[0.05, 0.213], [0.1, 0.6]]},
     ["    field_recall rises (A): 16 fixtures × 5 repetitions → a true gap of 0.123 holds in 80% of simulated runs "
      "(pilot uncertainty: 0.100 to 0.200)",
      "      simulated as pass/fail scores SRC: baseline rate 0.600, fixture sd 0.150, run sd 0.000, effect sd 0.050; "
      "the pilot's estimates: each simulated run draws its own rate, fixture sd and run sd around them (assumes:), "
      "so a pilot whose fixtures looked alike plans for more spread",
      "      power at a true gap of 0.05: 0.21, 0.10: 0.60"]),
    ({**RISES, "needed_gap": 0.3, "needed_gap_range": [0.25, None]},
     ["    field_recall rises (A): 16 fixtures × 5 repetitions → a true gap of 0.300 holds in 80% of simulated runs "
      "(pilot uncertainty: 0.250 to no gap at all)"]),
    ({**RISES, "needed_gap": None},  # inf, made null by strict JSON
     ["    field_recall rises (A): 16 fixtures × 5 repetitions → no true gap the scores allow wins in 80% of "
      "simulated runs"]),
    ({**RISES, "fixture": "ex-02", "never": "one repetition can never win"},
     ["    field_recall rises on ex-02 (A): one repetition can never win"]),
    ({**RISES, "note": "only the first clause is planned"}, ["    field_recall rises (A): only the first clause is "
                                                             "planned"]),
    ({**RISES, "test": "not_rises", "metric": "unsupported_values", "margin": 0.25,
      "passes_if_true_gap_below": 0.0712},
     ["    unsupported_values not_rises (A): 16 fixtures × 5 repetitions → the guard (margin 0.25) holds in 80% of "
      "simulated runs only if the true gap is below 0.071"]),
    ({**RISES, "test": "not_falls", "margin": 0.1, "passes_if_true_gap_above": -0.05},
     ["    field_recall not_falls (A): 16 fixtures × 5 repetitions → the guard (margin 0.1) holds in 80% of "
      "simulated runs only if the true gap is above -0.050"]),
    ({**RISES, "needed_gap": math.inf, "needed_gap_range": [math.inf, math.inf]},
     ["    field_recall rises (A): 16 fixtures × 5 repetitions → a true gap of ∞ holds in 80% of simulated runs "
      "(pilot uncertainty: ∞ to ∞)"]),
    ({"metric": "abstains", "test": "holds", "fixture": "ex-06", "variant": "A", "k": 3, "n": 3,
      "chance_all_hold": 0.8, "chance_all_hold_low": 0.4321},
     ["    abstains holds on ex-06 (A): pilot 3 of 3 → all 5 repetitions hold with probability ≈ 0.80 at the "
      "pilot's rate, 0.43 at its Wilson lower bound"]),
])
def test_each_kind_of_clause_in_words(clause: dict[str, Any], lines: list[str]) -> None:
    typed = msgspec.convert({"fixture": None, "margin": None, **clause}, ClausePlan)  # as planning.py gives it
    assert clause_lines(typed, 5, "SRC") == lines


def _plan(**extra: Any) -> Plan:
    p: dict[str, Any] = {"max_cost": None, "input_cost": None,
                         "card": "extract-ab", "version": 2, "kind": "ab", "rig": "m · api", "model": "m",
                         "variants": 2, "fixtures": 6, "repetitions": 3, "calls": 36, "input_tokens": 12345,
                         "input_tokens_method": "characters / 4", "max_output_tokens": 7200, "max_tokens": 200,
                         "price": None}
    plan: Plan = msgspec.convert({**p, **extra}, Plan)
    return plan


def test_the_cost_lines_with_and_without_a_price() -> None:
    lines = plan_lines(_plan())
    assert lines == [
        "extract-ab v2 (ab) · m · api",
        "calls           36  (2 variants × 6 fixtures × 3 repetitions)",
        "input tokens    ~12,345  (estimate: characters / 4)",
        "output tokens   ≤ 7,200  (max_tokens 200 × 36 calls)",
        "cost            no price configured for m (add prices: {m: {input: USD, output: USD}} per million tokens "
        "to benchcard.yaml)",
    ]
    priced = plan_lines(_plan(kind="probe", price={"input": 3, "output": 15}, max_cost=0.1455, input_cost=0.037))
    assert priced[1] == "calls           36  (3 repetitions)"
    assert priced[4] == ("cost            ≤ $0.1455  (input ~$0.0370; at $3 / $15 per million input / output "
                         "tokens, every call using all its max_tokens)")
    assert priced[5] == ("cached input    at the full input price: prices.m gives no cached_input, so a run whose "
                         "replies say they read input from the prompt cache reports its cost as an upper bound (≤)")
    cached = plan_lines(_plan(price={"input": 3, "output": 15, "cached_input": 0.3}, max_cost=0.1, input_cost=0.03))
    assert cached[5] == "cached input    $0.3 per million input tokens read from the prompt cache"
    free = plan_lines(_plan(price={"input": 0, "output": 0}, max_cost=0, input_cost=0))  # the embedded model
    assert not any(line.startswith("cached input") for line in free)


def test_a_plan_from_assumptions_says_what_it_rests_on() -> None:
    assumed = {"model": RATES, "notes": ["2 variants: each is planned at α/2"], "power": 0.8,
               "method": "simulated", "fixtures": 6, "repetitions": 5,
               "clauses": [{**RISES, "fixture": None, "margin": None, "never": "six fixtures can never win"}]}
    lines = plan_lines(_plan(warnings=["cards/x.yaml:3: cut off"], assumed=assumed))
    assert lines[5:] == [
        "warning: cards/x.yaml:3: cut off",
        "assumed, no pilot: these figures rest on the declared assumptions below, not on measured scores; a pilot "
        "run (--from RUN) would measure them",
        "  simulated as pass/fail scores as declared: baseline rate 0.600, fixture sd 0.150, run sd 0.000, effect sd "
        "0.050",
        "  note: 2 variants: each is planned at α/2",
        "  power of the rule itself, 80% (simulated):",
        "    field_recall rises (A): six fixtures can never win",
    ]


def test_a_plan_from_a_pilot_names_it_and_its_cost_per_call() -> None:
    pilot = {"run": "20261130T000001Z-3f9a", "version": 2, "observed_cost_per_call": 0.002, "expected_cost": 0.072,
             "notes": ["1 of 36 pilot cell(s) were cut off"], "power": 0.8, "method": "simulated",
             "assumption": "ASSUMED", "clauses": []}
    lines = plan_lines(_plan(pilot=pilot))
    assert lines[5:] == ["pilot 20261130T000001Z-3f9a:", "  observed $0.00200 per call → about $0.0720 for this run",
                         "  note: 1 of 36 pilot cell(s) were cut off"]
    # with a clause planned, the assumption its figures rest on, before them
    clause = {**RISES, "fixture": None, "margin": None, "needed_gap": 0.3}
    lines = plan_lines(_plan(pilot={**pilot, "clauses": [clause]}))
    assert lines[8:10] == ["  assumes: ASSUMED", "  power of the rule itself, 80% (simulated):"]
