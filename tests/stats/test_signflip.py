"""The sign-flip p above 20 fixtures: windows that draw exactly the full run's patterns, the early stop that
never changes a decision, and the bound that skips draws which could not hit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchcard.stats.resample import signflip_hits
from benchcard.stats.signflip import TIE_RTOL, signflip, signflip_p, stop_hits

from ..helpers_verdict import AB_CARD, ab_metrics, cli_run, make_project, make_run, the_card


def _hits(d: np.ndarray, n_draws: int, seed: int) -> int:
    """The hits of every draw, counted by the one-chunk, table-per-group reader (`signflip_hits`)."""
    threshold = abs(float(d.sum())) - TIE_RTOL * float(np.abs(d).sum())
    return signflip_hits(d, float(d.sum()), threshold, n_draws, seed)


@pytest.mark.parametrize(("fixtures", "n_draws"), [(21, 7), (33, 1001), (250, 30_000), (1001, 100_000)])
def test_windows_draw_the_same_patterns_as_the_full_run(fixtures: int, n_draws: int) -> None:
    # padded last groups, draw counts that are not a multiple of four, one window and several
    d = np.random.default_rng(fixtures).normal(0.0, 0.2, fixtures)
    got = signflip(d, n_draws, seed=5)
    assert got.draws == n_draws
    assert got.p == (1.0 + _hits(d, n_draws, 5)) / (1.0 + n_draws)
    assert signflip_p(d, n_draws, seed=5) == got.p


def test_stop_hits_is_the_first_count_above_the_level() -> None:
    assert stop_hits(100_000, 0.05) == 5000  # (1 + 4999) / 100001 ≤ 0.05 < (1 + 5000) / 100001
    for n, level in [(100_000, 0.05), (999, 0.01), (7, 0.5), (100_000, 0.2)]:
        k = stop_hits(n, level)
        assert (1 + k) / (1 + n) > level >= k / (1 + n)


@pytest.mark.parametrize("seed", range(4))
def test_early_stop_keeps_the_decision_of_the_full_draws(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for shift in (0.0, 0.01, 0.02, 0.03, 0.05):
        d = rng.normal(shift, 0.2, 400)
        full = signflip(d, 20_000, seed=seed)
        early = signflip(d, 20_000, seed=seed, stop_above=0.05)
        assert (early.p <= 0.05) == (full.p <= 0.05)
        assert early.draws is not None
        if early.draws < 20_000:
            assert early.p > 0.05 and full.p > 0.05
        else:
            assert early.p == full.p


def test_no_effect_stops_after_a_few_thousand_draws() -> None:
    d = np.random.default_rng(1).normal(0.0, 0.2, 2000)
    got = signflip(d, 100_000, seed=3, stop_above=0.05)
    assert got.draws is not None and got.draws < 20_000
    assert got.p == pytest.approx(signflip_p(d, 100_000, seed=3), abs=0.02)


def test_a_far_larger_sum_skips_the_draws_and_reports_what_they_give() -> None:
    d = np.random.default_rng(2).normal(0.05, 0.2, 3000)  # Hoeffding: the exact p is below 1e-30
    got = signflip(d, 100_000, seed=1)
    assert got == signflip(d, 100_000, seed=1, stop_above=0.05)
    assert got.draws == 0 and got.p == 1 / 100_001
    assert _hits(d, 100_000, 1) == 0  # what the draws give


def test_verdict_json_names_the_draws_of_a_stopped_sign_flip(tmp_path: Path) -> None:
    fixtures = [f"ex-{i:02d}" for i in range(1, 41)]
    project = make_project(tmp_path / "proj", AB_CARD.replace("ex-06", "ex-40"), fixtures)
    rng = np.random.default_rng(0)
    base = np.round(rng.random((40, 3)) * 4) / 4
    noise = rng.choice([-0.25, 0.0, 0.25], size=(40, 3))
    unsupported = np.ones((40, 3))  # every fixture rises by 1: no pattern but the observed two reach it
    run_dir = make_run(project, the_card(project),
                       ab_metrics(base, np.clip(base + noise, 0, 1), unsupported, shape=(40, 3)))
    result = cli_run(project, "verdict", run_dir.name, "--json")
    assert result.exit_code == 0, result.output
    verdict = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    recall = verdict["metrics"]["field_recall"]
    assert recall["p_signflip"] > 0.05
    assert 0 < recall["p_signflip_draws"] < 100_000
    assert verdict["finding"] != "win"
    # a sign-flip that ran to the end names no draw count: the run's `signflip.draws` says it
    assert verdict["signflip"] == {"draws": 100_000}
    assert verdict["metrics"]["unsupported_values"]["p_signflip"] == pytest.approx(1 / 100_001)
    assert "p_signflip_draws" not in verdict["metrics"]["unsupported_values"]
