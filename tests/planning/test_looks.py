"""`benchcard plan` on a sequential card: the calls and cost its looks are expected to spend, under no effect and
at the gap the fixed design wins 80% of the time, beside the fixed design's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchcard.planning._looks import sequential_plan
from benchcard.planning.forecast import plan_report
from benchcard.planning.power import Assumptions
from benchcard.project import Project
from benchcard.stats.sequential import Schedule
from benchcard.stats.simulate import Rates

from ..helpers_verdict import FIXTURES10, SHOCKED10, ab_metrics, make_project, make_run, the_card


@pytest.fixture
def project(tmp_path: Path) -> Project:
    made = make_project(tmp_path / "proj")
    (made.root / "benchcard.yaml").write_text("prices:\n  test/model-1: {input: 3, output: 15}\n")
    return made


def test_a_sequential_plan_gives_the_expected_calls_and_cost_beside_the_fixed_design(project: Project) -> None:
    planned = plan_report(project, "extract-ab", assumed=Assumptions(0.6, fixture_sd=0.15), fixtures=12,
                          repetitions=5, design=Schedule((3, 5)))
    data, lines = planned.to_json(), planned.lines()
    seq = data["sequential"]
    fixed_calls = 2 * 12 * 5  # two arms, the planned 12 fixtures, 5 repetitions
    assert seq["fixed_calls"] == fixed_calls
    assert seq["looks"] == [3, 5] and seq["spending"] == "obrien-fleming" and seq["futility_effect"] == 0.05
    none, at_gap = seq["expected"]
    gap = data["assumed"]["clauses"][0]["needed_gap"]
    assert (none["true_gap"], at_gap["true_gap"]) == (0.0, gap)
    for e in (none, at_gap):
        assert 3 / 5 <= e["share"] <= 1  # a run stops after 3 or 5 of the 5 repetitions
        assert e["calls"] == pytest.approx(e["share"] * fixed_calls)
        assert e["max_cost"] == pytest.approx(e["share"] * seq["fixed_max_cost"])
        assert sum(e["stops"]) == pytest.approx(1.0)
    assert none["results"] <= 0.06 and at_gap["wins"] >= 0.7 * at_gap["fixed_wins"]
    text = "\n".join(lines)
    assert ("sequential: 2 looks, after repetitions 3, 5 of 5; α 0.05 spent obrien-fleming; stops for futility "
            "once a gap of 0.05 is ruled out") in text
    assert f"  fixed design               {fixed_calls} calls, cost ≤ ${seq['fixed_max_cost']:,.4f}" in text
    assert (f"  under no effect            expected {none['calls']:,.0f} calls ({none['share']:.0%} of the fixed "
            f"design's), cost ≤ ${none['max_cost']:,.4f}; a result in {none['results']:.1%} of runs") in text
    assert (f"  at a true gap of {gap:.3f}     expected {at_gap['calls']:,.0f} calls ({at_gap['share']:.0%} of the "
            f"fixed design's)") in text
    assert f"wins {at_gap['wins']:.0%} of runs (the fixed design {at_gap['fixed_wins']:.0%})" in text


def test_without_a_model_a_sequential_plan_says_what_it_needs(project: Project) -> None:
    planned = plan_report(project, "extract-ab", design=Schedule((2, 3), futility=False))
    data, lines = planned.to_json(), planned.lines()
    assert data["sequential"]["expected"] == []
    assert "sequential: 2 looks, after repetitions 2, 3 of 3; α 0.05 spent obrien-fleming; never stops for futility" \
        in lines
    assert ("  note: expected calls need a model of the scores: a pilot run (--from RUN) or declared assumptions "
            "(--baseline-rate …)") in lines
    assert "sequential" not in plan_report(project, "extract-ab").to_json()  # a fixed card's plan is as it was


def test_looks_save_calls_under_no_effect_when_futility_may_stop() -> None:
    model = Rates(rate=0.6, fixture_sd=0.15, run_sd=0.0, effect_sd=0.0)
    with_futility = sequential_plan(Schedule((2, 3, 4, 5)), model, 12, 120, 1.0, None, 0.3, effect=0.3)
    without = sequential_plan(Schedule((2, 3, 4, 5), futility=False), model, 12, 120, 1.0, None, 0.3, effect=0.3)
    assert with_futility.expected[0].share < without.expected[0].share
    assert with_futility.expected[0].stops[-1] < without.expected[0].stops[-1]
    assert without.expected[1].wins <= without.expected[1].fixed_wins + 0.01


def test_a_pilots_model_and_gap_carry_into_the_sequential_figures(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    base, var = SHOCKED10 - 0.1, SHOCKED10
    run_dir = make_run(project, the_card(project), ab_metrics(np.clip(base, 0, 1), var, shape=(10, 3)))
    planned = plan_report(project, "extract-ab", run_dir.name, repetitions=10, design=Schedule((5, 10)))
    data, lines = planned.to_json(), planned.lines()
    gap = data["pilot"]["clauses"][0]["needed_gap"]
    none, at_gap = data["sequential"]["expected"]
    assert (none["true_gap"], at_gap["true_gap"]) == (0.0, gap)
    assert data["sequential"]["fixed_calls"] == 2 * 10 * 10
    assert any(line.startswith(f"  at a true gap of {gap:.3f}") for line in lines)


def test_a_sequential_probes_plan_says_its_looks(tmp_path: Path) -> None:
    """`plan` of a sequential probe said nothing of its looks (only an ab card's were planned): it now gives the
    schedule at gate.alpha beside the fixed design's calls, and says its expected calls are not simulated."""
    from ..helpers_run import bc
    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path, block="sequential: {looks: 4}\ngate: {min_score: 0.5, alpha: 0.1}\n")
    planned = bc(project, "plan", "one-word-sentiment")
    assert planned.exit_code == 0, planned.output
    lines = planned.stdout.splitlines()
    assert "sequential: 4 looks, after repetitions 10, 20, 30, 40 of 40; α 0.1 spent hsd (γ = -6); never stops for " \
           "futility" in lines
    assert "  fixed design               40 calls" in lines
    assert ("  note: a probe's look stops the run once gate min_score 0.5 is passed or failed at the look's level; its "
            "expected calls are not simulated: at most the fixed design's") in lines
    assert not any("pilot run (--from RUN)" in line or "1 fixtures" in line for line in lines)
    seq = json.loads(bc(project, "plan", "one-word-sentiment", "--json").stdout)["sequential"]
    assert (seq["looks"], seq["alpha"], seq["futility"], seq["expected"]) == ([10, 20, 30, 40], 0.1, False, [])
