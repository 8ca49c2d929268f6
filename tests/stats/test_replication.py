"""The replication rule and probe drift (`stats/replication.py`): what each finding's line says, the interval
against scipy, and the rule's digest fixed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from benchcard.stats.replication import (
    CHANGED,
    DEFAULT_RULE,
    INCONCLUSIVE,
    NO_CHANGE,
    NOT_REPLICATED,
    REPLICATED,
    ReplicationRule,
    RunGap,
    newcombe,
    prediction_interval,
    probe_drift,
    replication_finding,
    wilson_bounds,
)

ORIGINAL = RunGap("win", 0.15, 0.0009, 6.0, metric="score", date="2026-12-01", rig="m · local")


def test_a_win_again_inside_the_interval_is_replicated() -> None:
    got = replication_finding(ORIGINAL, RunGap("win", 0.12, 0.0011, 5.0))
    assert got.finding == REPLICATED and got.direction is None
    assert got.text.startswith("replicated: win again; gap +0.120 against +0.150 in the original, inside the 95% "
                               "prediction interval for a rerun [")
    assert got.rule_digest == DEFAULT_RULE.digest()


def test_the_interval_is_satterthwaites_t_over_both_run_terms() -> None:
    new = RunGap("win", 0.12, 0.0011, 5.0)
    pi = prediction_interval(ORIGINAL, new)
    assert pi is not None
    v = 0.0009 + 0.0011
    df = v**2 / (0.0009**2 / 6 + 0.0011**2 / 5)
    half = sps.t.ppf(0.975, df) * math.sqrt(v)
    assert pi.df == pytest.approx(df) and pi.se == pytest.approx(math.sqrt(v))
    assert (pi.low, pi.high) == pytest.approx((0.15 - half, 0.15 + half))


def test_a_gap_outside_the_interval_is_not_replicated_and_says_which_way() -> None:
    got = replication_finding(ORIGINAL, RunGap("inconclusive", 0.01, 0.001, 6.0))
    assert got.finding == NOT_REPLICATED and got.direction == "fell"
    assert "the gap fell from +0.150 to +0.010, outside the 95% prediction interval" in got.text
    up = replication_finding(ORIGINAL, RunGap("win", 0.40, 0.001, 6.0))
    assert up.finding == NOT_REPLICATED and up.direction == "rose"


def test_a_flipped_finding_is_not_replicated() -> None:
    got = replication_finding(ORIGINAL, RunGap("loss", -0.15, None, None))
    assert got.finding == NOT_REPLICATED and got.direction == "fell"
    assert "the finding flipped, win → loss" in got.text


def test_inside_the_interval_with_another_finding_is_inconclusive() -> None:
    got = replication_finding(ORIGINAL, RunGap("inconclusive", 0.11, 0.003, 6.0))
    assert got.finding == INCONCLUSIVE and got.direction is None
    assert "but the new run's own finding is inconclusive (the original's: win)" in got.text


@pytest.mark.parametrize("new", [RunGap("incomplete", 0.15, 0.001, 6.0), RunGap("win", 0.15, math.inf, 6.0),
                                 RunGap("win", 0.15, None, None)])
def test_an_incomplete_run_or_an_unmeasured_spread_is_inconclusive(new: RunGap) -> None:
    got = replication_finding(ORIGINAL, new)
    assert got.finding == INCONCLUSIVE
    assert ("nothing to compare" in got.text) or ("no prediction interval" in got.text)


def test_the_rule_is_fixed_by_its_digest() -> None:
    assert DEFAULT_RULE.digest() == ReplicationRule().digest()
    assert ReplicationRule(level=0.9).digest() != DEFAULT_RULE.digest()
    assert DEFAULT_RULE.digest().startswith("sha256:") and len(DEFAULT_RULE.digest()) == 71
    with pytest.raises(ValueError, match="level"):
        ReplicationRule(level=1.0)


def test_a_probe_that_fell_says_changed_with_both_dates() -> None:
    got = probe_drift({"p": [1.0] * 10}, {"p": [1.0] * 3 + [0.0] * 7},
                      original_date="2026-08-10", new_date="2026-12-04")
    assert got.finding == CHANGED and got.direction == "fell"
    assert got.text.startswith("changed: score fell from 1.00 (2026-08-10) to 0.30 (2026-12-04) (95% CI of the "
                               "change [")
    assert got.ci_high < 0 and got.p is None
    assert "[−0.892, −0.289]" in got.text  # a true minus sign, as the verdict writes figures


def test_a_small_move_is_no_change_shown() -> None:
    got = probe_drift({"p": [1.0] * 10}, {"p": [1.0] * 9 + [None]})
    assert got.finding == NO_CHANGE and got.direction is None
    assert got.text.startswith("no change shown: score 1.00, then 1.00")
    assert "10 against 9 repetitions of one prompt" in got.text


def test_one_repetition_each_can_show_no_change() -> None:
    assert probe_drift({"p": [1.0]}, {"p": [0.0]}).finding == NO_CHANGE


def test_several_fixtures_are_paired() -> None:
    rng = np.random.default_rng(1)
    o = {f"f{i:02d}": list(rng.binomial(1, 0.9, 3).astype(float)) for i in range(12)}
    n = {f"f{i:02d}": list(rng.binomial(1, 0.6, 3).astype(float)) for i in range(12)}
    got = probe_drift(o, n)
    means_o = [np.mean(o[f]) for f in sorted(o)]
    means_n = [np.mean(n[f]) for f in sorted(n)]
    ref = sps.ttest_rel(means_n, means_o)
    assert got.p == pytest.approx(ref.pvalue)
    assert got.change == pytest.approx(np.mean(means_n) - np.mean(means_o))
    assert got.finding == CHANGED and "paired over 12 fixtures" in got.text


def test_newcombe_matches_his_worked_example() -> None:
    # Newcombe (1998), Table II, example (a): 56/70 against 48/80: difference 0.2, method 10 [0.0524, 0.3339]
    lo, hi = newcombe(np.array([48 / 80]), np.array([80]), np.array([56 / 70]), np.array([70]), 0.05)
    assert (float(lo[0]), float(hi[0])) == pytest.approx((0.0524, 0.3339), abs=5e-4)


def test_no_fixture_in_both_runs_is_an_error() -> None:
    with pytest.raises(ValueError, match="no fixture is scored in both runs"):
        probe_drift({"a": [1.0]}, {"b": [1.0]})


def test_the_vectorised_rule_the_benchmark_measures_is_the_rule_given() -> None:
    from benchcard.stats.replication import prediction_bounds, replication_codes

    rng = np.random.default_rng(7)
    names = {0: REPLICATED, 1: NOT_REPLICATED, 2: INCONCLUSIVE}
    findings = ["win", "loss", "no-effect", "inconclusive"]
    for _ in range(300):
        o = RunGap(str(rng.choice(findings)), float(rng.normal(0.1, 0.1)), float(rng.uniform(1e-4, 3e-3)),
                   float(rng.uniform(1, 18)))
        n = RunGap(str(rng.choice(findings)), float(rng.normal(0.1, 0.1)), float(rng.uniform(1e-4, 3e-3)),
                   float(rng.uniform(1, 18)))
        assert o.gap is not None and o.run_var is not None and o.df is not None
        assert n.run_var is not None and n.df is not None
        low, high, _, _ = prediction_bounds(np.array([o.gap]), np.array([o.run_var]), np.array([o.df]),
                                            np.array([n.run_var]), np.array([n.df]), 0.95)
        same, flipped = o.finding == n.finding, {o.finding, n.finding} == {"win", "loss"}
        code = replication_codes(np.array([same]), np.array([flipped]), np.array([n.gap]), low, high)[0]
        assert names[int(code)] == replication_finding(o, n).finding


def test_every_fixture_falling_alike_gives_no_interval_and_the_sign_flip_decides() -> None:
    o = {f"f{i:02d}": [1.0, 1.0] for i in range(8)}
    n = {f"f{i:02d}": [0.5, 0.5] for i in range(8)}
    got = probe_drift(o, n)
    assert got.finding == CHANGED and got.p == pytest.approx(2 / 2**8)
    assert "no interval: every fixture moved alike" in got.text


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.2])
def test_a_wilson_bound_at_a_mean_of_0_or_1_is_that_mean_exactly(alpha: float) -> None:
    # centre ± half is 1 − 1e-16 (or 1e-17) at some n in floating point: a perfect probe read as short of 1
    n = np.arange(1, 200, dtype=np.float64)
    assert (wilson_bounds(np.ones_like(n), n, alpha)[1] == 1.0).all()
    assert (wilson_bounds(np.zeros_like(n), n, alpha)[0] == 0.0).all()
