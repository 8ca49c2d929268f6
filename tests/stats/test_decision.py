"""The calibrated rule through `benchcard verdict`: run-level noise counted once, few fixtures, zero spread,
min_effect and floor effects (decision.py, crossed.py). Run folders are written by hand as in test_verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchcard.project import Project
from benchcard.stats.decision import holm

from ..helpers_verdict import (
    AB_CARD,
    BASE10,
    FIXTURES10,
    SHOCKED10,
    STEADY10_BASE,
    STEADY10_VAR,
    ab_metrics,
    cli_run,
    make_project,
    make_run,
    the_card,
)


def _verdict(project: Project, metrics: dict[str, dict[str, Any]], *args: str) -> dict[str, Any]:
    run_dir = make_run(project, the_card(project), metrics)
    result = cli_run(project, "verdict", run_dir.name, *args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    return data


def test_a_run_shock_of_one_arm_is_counted_once_and_is_a_non_result(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    data = _verdict(project, ab_metrics(BASE10, SHOCKED10, shape=(10, 3)))
    rises = data["clauses"][0]
    assert data["finding"] == "inconclusive" and rises["holds"] is False
    assert rises["gap"] - 2.27 * rises["se_fixture"] > 0  # the paired interval alone would call it real
    assert rises["run_var"] > 0 and rises["ci"][0] < 0 and rises["gap"] < rises["noise_floor"]
    assert "the interval is not wholly above 0" in rises["why"]


@pytest.mark.parametrize("n_fixtures", [3, 5])
def test_few_fixtures_cannot_win_even_when_every_fixture_moves_alike(tmp_path: Path, n_fixtures: int) -> None:
    fixtures = [f"ex-{i:02d}" for i in range(1, 7)]  # the card's holds clause names ex-06
    base = np.full((6, 3), 0.0)
    var = base.copy()
    var[:n_fixtures] = 1.0  # a deterministic model: every repetition alike; the first F fixtures move by 1
    keep = list(range(n_fixtures))
    base[n_fixtures:] = var[n_fixtures:] = np.nan  # only F fixtures scored in both arms
    status = {(v, fixtures[f], r): "failed" for v in ("baseline", "A") for f in range(n_fixtures, 6)
              for r in range(3)}
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 99")
    project = make_project(tmp_path / "q", text, fixtures=fixtures)
    run_dir = make_run(project, the_card(project), ab_metrics(base, var), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    data = json.loads((run_dir / "verdict.json").read_text())
    rises = data["clauses"][0]
    assert result.exit_code == 0 and data["finding"] != "win" and not rises["holds"]
    assert rises["n_fixtures"] == len(keep) and rises["ci"] is None  # no spread: no interval, no certainty
    assert rises["p"] == rises["p_signflip"] == pytest.approx(2 / 2 ** n_fixtures)
    assert f"({n_fixtures} fixtures can never reach α 0.05)" in rises["why"]


def test_zero_spread_with_enough_fixtures_is_decided_by_the_sign_flip(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    base = np.repeat(np.linspace(0, 0.75, 10)[:, None], 3, 1)
    data = _verdict(project, ab_metrics(base, base + 0.25, shape=(10, 3)))
    rises = data["clauses"][0]
    assert data["finding"] == "win"
    assert rises["ci"] is None and rises["p"] == pytest.approx(2 / 1024)  # never p = 0
    assert rises["ci_bootstrap"] is None  # resampling equal differences gives [0.25, 0.25]: not certainty either
    assert "no spread at all" in rises["why"]


def test_a_significant_gap_below_min_effect_is_significant_but_trivial(tmp_path: Path) -> None:
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  min_effect: 0.2")
    project = make_project(tmp_path / "p", text, fixtures=FIXTURES10)
    data = _verdict(project, ab_metrics(STEADY10_BASE, STEADY10_VAR, shape=(10, 3)))
    rises = data["clauses"][0]
    assert data["finding"] == "inconclusive" and data["outcome"] == "non-result"
    assert rises["p"] < 0.05 and rises["gap"] < 0.2
    assert "significant but smaller than min_effect 0.2: significant but trivial" in rises["why"]


def test_a_floor_effect_is_not_no_effect(tmp_path: Path) -> None:
    zeros = np.zeros((6, 3))
    data = _verdict(make_project(tmp_path / "p"), ab_metrics(zeros, zeros))
    assert data["finding"] == "inconclusive"
    assert "no change can be measured here" in data["why"]


def test_holm_steps_down() -> None:
    p = np.array([0.01, 0.04, 0.03])
    assert holm(p, 0.05).tolist() == [True, False, False]  # 0.01 ≤ .05/3; then 0.03 > .05/2 stops
    assert holm(np.array([0.01, 0.02, 0.04]), 0.05).tolist() == [True, True, True]
