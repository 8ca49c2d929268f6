"""`benchcard plan`: calls, tokens and cost before a run; with a pilot run, the smallest detectable gap."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.verdict import simulate
from benchcard.verdict.planning import plan

from .test_decision import SHOCKED10
from .test_verdict import AB_CARD, FIXTURES10, PROBE_CARD, ab_metrics, make_project, make_run, the_card


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")


def _chars(project: Project) -> int:
    card = the_card(project)
    return sum(len(m["content"]) for v in card.variant_names() for f in card.fixture_ids()
               for m in card.messages(v, card.fixture_text(f)))


def test_plan_without_prices(project: Project) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab"])
    assert result.exit_code == 0, result.output
    tokens = math.ceil(_chars(project) * 3 / 4)
    assert "calls           36  (2 variants × 6 fixtures × 3 repetitions)" in result.output
    assert f"input tokens    ~{tokens:,}  (estimate: characters / 4" in result.output
    assert "output tokens   ≤ 7,200  (max_tokens 200 × 36 calls)" in result.output
    assert "no price configured for test/model-1" in result.output


def test_plan_with_prices_json(project: Project) -> None:
    (project.root / "benchcard.yaml").write_text("prices:\n  test/model-1: {input: 3, output: 15}\n")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    tokens = math.ceil(_chars(project) * 3 / 4)
    assert (data["calls"], data["input_tokens"], data["max_output_tokens"]) == (36, tokens, 7200)
    assert data["max_cost"] == pytest.approx((tokens * 3 + 7200 * 15) / 1e6)
    text = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab"]).output
    assert f"cost            ≤ ${data['max_cost']:,.4f}" in text and "$3 / $15 per million" in text


def test_plan_from_a_pilot_simulates_the_rule_itself(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    base, var = SHOCKED10 - 0.1, SHOCKED10  # a pilot with cell noise and a run shock of the variant's
    run_dir = make_run(project, the_card(project), ab_metrics(np.clip(base, 0, 1), var, shape=(10, 3)))
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"pilot {run_dir.name}:" in out
    assert "2,000 simulated runs of this card's size judged by the verdict's own rule" in out
    data = plan(project, the_card(project), run_dir.name)
    rises = data["pilot"]["clauses"][0]
    lo, hi = rises["needed_gap_range"]
    assert 0 < lo < rises["needed_gap"] < hi
    assert (f"field_recall rises (A): 10 fixtures × 3 repetitions → a true gap of {rises['needed_gap']:.3f} holds "
            f"in 80% of simulated runs (pilot uncertainty: {lo:.3f} to {hi:.3f})") in out
    assert "unsupported_values not_rises (A): the guard (margin 0.25) holds in 80% of simulated runs only if" in out
    assert "abstains holds on ex-06 (A): pilot 3 of 3" in out
    assert data["pilot"]["observed_cost_per_call"] == pytest.approx(0.002)
    # the figure is the rule's: at the needed gap, fresh simulations of the same components win ≈ 80%
    comp = simulate.components(np.clip(base, 0, 1), var)
    fresh = simulate.draws(10, 3, seed=99, n=4000)
    assert simulate.effect_power(comp, fresh, rises["needed_gap"], 0.05) == pytest.approx(0.80, abs=0.03)
    again = plan(project, the_card(project), run_dir.name)  # seeded: the same plan prints the same figures
    assert again["pilot"]["clauses"][0]["needed_gap"] == rises["needed_gap"]


def test_plan_says_when_a_design_can_never_win_and_names_truncation(tmp_path: Path) -> None:
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 5")
    project = make_project(tmp_path / "p", text)  # six fixtures: enough; repetitions below are the problem
    run_dir = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-02", 1): "truncated"})
    one = text.replace("repetitions: 3", "repetitions: 1").replace("version: 1", "version: 2").replace(
        "  - {version: 1, note: First version.}", "  - {version: 2, note: One repetition.}\n"
        "  - {version: 1, note: First version.}")
    (project.root / "cards" / "extract-ab.yaml").write_text(one)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name])
    assert result.exit_code == 0, result.output
    assert "field_recall rises (A): one repetition can never win" in result.output
    assert "note: 1 of 36 pilot cell(s) were cut off at max_tokens 200" in result.output


def test_pilot_components_separate_fixture_run_and_cell_parts() -> None:
    rng = np.random.default_rng(4)
    f, r = 400, 6
    delta = 0.3 * rng.standard_normal((f, 1)) + 0.2 * rng.standard_normal((1, r)) + 0.1 * rng.standard_normal((f, r))
    comp = simulate.components(np.zeros((f, r)), delta)
    assert comp.fixture == pytest.approx(0.09, rel=0.2)
    assert comp.cell == pytest.approx(0.01, rel=0.1)
    assert comp.run == pytest.approx(delta.mean(0).var(ddof=1) - 0.01 / f, rel=0.05)


def test_pilot_of_another_card_is_refused(project: Project, tmp_path: Path) -> None:
    other = make_project(project.root, PROBE_CARD)
    run_dir = make_run(other, the_card(other, "say-negative"), {"score": {"probe": np.ones((1, 5))}},
                       rules={"says-negative": {"probe": np.ones((1, 5))}})
    with pytest.raises(RunError, match="a run of say-negative, not of extract-ab"):
        plan(project, the_card(project), run_dir.name)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "say-negative"])
    assert result.exit_code == 0 and "calls           5  (5 repetitions)" in result.output
