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


# ------------------------------------------------------------------------------ tost, as design.md promises it

_STEADY = np.array([[0.5] * 3, [0.25] * 3, [0.5] * 3, [0.75] * 3, [0.25] * 3, [0.5] * 3])
_MOVED = _STEADY + np.array([[0.0, 0.25, 0.0]] + [[0.0] * 3] * 5)  # one cell of 18 up by a quarter


def test_tost_is_importable_from_the_stage_with_its_companions() -> None:
    """design.md: `from benchcard.stats import paired_gap, noise_floor, tost, wilson`; it failed (they lived in
    stats.paired, and no `tost` took arrays)."""
    from benchcard.stats import noise_floor, paired_gap, tost, wilson
    from benchcard.stats import paired as module

    assert (paired_gap, noise_floor, wilson) == (module.paired_gap, module.noise_floor, module.wilson)
    assert tost(_STEADY, _MOVED, 0.2) < 0.05


def test_tost_without_spread_is_the_sign_flip_by_hand() -> None:
    """Every fixture moved alike: no standard error, so each one-sided test is the sign-flip of the F equal
    differences, 2^−F on the side the gap is beyond and 1 on the other (decision.p_beyond)."""
    from benchcard.stats import tost

    assert tost(_STEADY, _STEADY, 0.05) == 0.5 ** 6  # gap 0: inside ±0.05, beyond both bounds
    assert tost(_STEADY, _STEADY + 0.1, 0.2) == 0.5 ** 6
    assert tost(_STEADY, _STEADY + 0.1, 0.05) == 1.0  # gap 0.1: outside ±0.05
    assert tost(_STEADY[:, :1], _MOVED[:, :1], 0.5) == 1.0  # one repetition: no run term, nothing shown


def test_tost_with_spread_is_students_two_one_sided_tests_raised_to_the_worst_case() -> None:
    """The gap, its standard error and reference df as scipy tests them, each side one-sided, p the larger: the
    calibration to the worst case over the variance components (worstcase.py) only raises that p (0.029 to 0.051
    at ±0.1 here), never lowers it; Student's part alone is scipy's to 1e-12."""
    from scipy import stats as scipy_stats

    from benchcard.stats import tost
    from benchcard.stats.crossed import crossed
    from benchcard.stats.decision import p_beyond
    from benchcard.stats.worstcase import reference_df

    rng = np.random.default_rng(0)
    base = rng.random((12, 3))
    var = base + rng.normal(0, 0.02, (12, 3)) + rng.normal(0, 0.01, (1, 3))
    c = crossed(base, var)
    gap, se, df = float(c.gap[0]), float(c.se[0]), float(reference_df(c.df, c.n_fixtures)[0])
    for margin in (0.02, 0.05, 0.1, 0.15):
        student = max(scipy_stats.t.sf((gap + margin) / se, df), scipy_stats.t.sf((margin - gap) / se, df))
        floor = max(p_beyond(c, -margin, True, worst=False)[0], p_beyond(c, margin, False, worst=False)[0])
        assert abs(floor - student) < 1e-12 and student <= tost(base, var, margin), margin
    assert tost(base, var, 0.15) < 0.05 < tost(base, var, 0.1)


@pytest.mark.parametrize(("margin", "finding"), [(0.2, "no-effect"), (0.05, "inconclusive")])
def test_tost_is_the_verdicts_no_effect_test(tmp_path: Path, margin: float, finding: str) -> None:
    """The same arrays as a run's first clause: the verdict's TOST p is tost's to the last digit, and its finding
    is no-effect exactly when tost < α (inside ±0.2), inconclusive when not (±0.05)."""
    from benchcard.stats import tost

    p = tost(_STEADY, _MOVED, margin)
    assert (p < 0.05) is (finding == "no-effect")
    project = make_project(tmp_path, AB_CARD.replace("equivalence_margin: 0.05", f"equivalence_margin: {margin}"))
    verdict = _verdict(project, ab_metrics(_STEADY, _MOVED))
    assert verdict["finding"] == finding
    assert verdict["comparisons"][0]["equivalence"]["tost_p"] == p


def test_tost_refuses_what_it_cannot_test() -> None:
    from benchcard.stats import tost

    cases: list[tuple[tuple[Any, ...], str]] = [
        ((_STEADY, _MOVED, 0.0), "margin must be above 0, got 0.0"),
        ((_STEADY, _MOVED, 0.1, 1.0), "alpha must lie strictly between 0 and 1, got 1.0"),
        ((_STEADY[None], _MOVED[None], 0.1), "baseline must be shaped (fixtures, repetitions), got 3 dimensions"),
        ((_STEADY, _MOVED[:3], 0.1), "baseline is shaped (6, 3) but variant (3, 3)"),
    ]
    for args, said in cases:
        with pytest.raises(ValueError) as info:
            tost(*args)
        assert str(info.value) == said
