"""`benchcard plan`: calls, tokens and cost before a run; with a pilot run, the smallest detectable gap."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats as sps

from benchcard.cli import cli
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.verdict import power
from benchcard.verdict.planning import plan

from .test_verdict import AB_CARD, BASE_A, PROBE_CARD, VAR_A, ab_metrics, make_project, make_run, the_card


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


def test_plan_from_a_pilot_gives_the_detectable_gap(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"pilot {run_dir.name}:" in out
    assert 'Miller 2024, "Adding Error Bars to Evals" (arXiv 2411.00640), Eq. 9' in out
    base, var = np.array(BASE_A), np.array(VAR_A)
    sd = (var.mean(1) - base.mean(1)).std(ddof=1)
    mde = power.detectable_gap(sd, 6)  # the pilot has this card's 3 repetitions: no rescaling
    assert mde == pytest.approx((sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sd / math.sqrt(6))
    assert f"field_recall rises (A): sd(d) {sd:.3f} in the pilot → {sd:.3f} at 3 repetitions; 6 fixtures → " \
           f"MDE {mde:.3f}" in out
    assert "noise floor ≈ 0.224, so a gap must exceed ≈ 0.224 to rise" in out
    assert "unsupported_values not_rises (A)" in out and "passes 80% of the time only if the true gap" in out
    assert "abstains holds on ex-06 (A): pilot 3 of 3" in out
    data = plan(project, the_card(project), run_dir.name)
    rises = data["pilot"]["clauses"][0]
    assert rises["detectable_gap"] == pytest.approx(mde)
    assert data["pilot"]["observed_cost_per_call"] == pytest.approx(0.002)


def test_pilot_with_fewer_repetitions_is_rescaled(tmp_path: Path) -> None:
    pilot_project = make_project(tmp_path / "p", AB_CARD.replace("repetitions: 3", "repetitions: 2"))
    pilot = make_run(pilot_project, the_card(pilot_project), ab_metrics(
        np.array(BASE_A)[:, :2], np.array(VAR_A)[:, :2], np.zeros((6, 2)), np.ones((6, 2))))
    # the card now asks for 5 repetitions (a new version); plan it from the 2-repetition pilot
    text = AB_CARD.replace("repetitions: 3", "repetitions: 5").replace("version: 1", "version: 2").replace(
        "  - {version: 1, note: First version.}", "  - {version: 2, note: Five repetitions.}\n"
        "  - {version: 1, note: First version.}")
    (pilot_project.root / "cards" / "extract-ab.yaml").write_text(text)
    card = the_card(pilot_project)
    data = plan(pilot_project, card, pilot.name)
    rises = data["pilot"]["clauses"][0]
    vc = power.variance_components(np.array(BASE_A)[:, :2], np.array(VAR_A)[:, :2])
    assert rises["rescaled"] is True
    assert rises["sd_diff"] == pytest.approx(vc.sd_diff_at(5))
    assert rises["detectable_gap"] == pytest.approx(power.detectable_gap(vc.sd_diff_at(5), 6))
    assert "the pilot ran v1; this plan is for v2" in data["pilot"]["notes"]


def test_pilot_of_another_card_is_refused(project: Project, tmp_path: Path) -> None:
    other = make_project(project.root, PROBE_CARD)
    run_dir = make_run(other, the_card(other, "say-negative"), {"score": {"probe": np.ones((1, 5))}},
                       rules={"says-negative": {"probe": np.ones((1, 5))}})
    with pytest.raises(RunError, match="a run of say-negative, not of extract-ab"):
        plan(project, the_card(project), run_dir.name)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "say-negative"])
    assert result.exit_code == 0 and "calls           5  (5 repetitions)" in result.output
