"""Power by simulating the rule itself (stats/simulate.py): a pilot's variance components and rates, the
seeded draws, the power at a gap, the gap 80% power needs, a guard's limit, and the pilot's uncertainty."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from benchcard.stats import simulate


def test_pilot_components_separate_fixture_run_and_cell_parts() -> None:
    rng = np.random.default_rng(4)
    f, r = 400, 6
    delta = 0.3 * rng.standard_normal((f, 1)) + 0.2 * rng.standard_normal((1, r)) + 0.1 * rng.standard_normal((f, r))
    comp = simulate.components(np.zeros((f, r)), delta)
    assert comp.fixture == pytest.approx(0.09, rel=0.2)
    assert comp.cell == pytest.approx(0.01, rel=0.1)
    assert comp.run == pytest.approx(delta.mean(0).var(ddof=1) - 0.01 / f, rel=0.05)


def test_pilot_rates_measure_the_spread_of_scores_in_steps() -> None:
    """Scores in quarters: the model finds four steps' worth of spread, the fixtures' spread and the rate."""
    rng = np.random.default_rng(5)
    p = np.clip(0.5 + 0.15 * rng.standard_normal((300, 1)), 0, 1)
    base = rng.binomial(4, np.repeat(p, 4, 1)) / 4
    var = rng.binomial(4, np.repeat(p, 4, 1)) / 4
    model = simulate.model_of(base, var)
    assert isinstance(model, simulate.Rates)
    assert (model.levels, model.run_sd, model.effect_sd) == (4, 0.0, 0.0)
    assert model.rate == pytest.approx(0.5, abs=0.02)
    assert model.fixture_sd == pytest.approx(0.15, abs=0.02)
    counts = simulate.model_of(base * 3, var * 3)  # counts beyond 1: the normal model of the gap
    assert isinstance(counts, simulate.Components)


def test_one_repetition_takes_the_whole_spread_as_the_fixture_term() -> None:
    base = np.array([[0.2], [0.4], [0.9], [0.5]])
    var = np.array([[0.3], [0.4], [0.6], [0.9]])
    comp = simulate.components(base, var)
    assert comp.fixture == pytest.approx(float((var - base)[:, 0].var(ddof=1)))
    assert comp == simulate.Components(fixture=comp.fixture, run=0.0, cell=0.0, df=3)
    with pytest.raises(ValueError, match="fewer than two fixtures scored in every repetition of both arms"):
        simulate.components(base[:1], var[:1])
    gappy = np.array([[0.2, np.nan], [0.4, 0.5], [0.9, 0.9]])  # fixture 1 is not complete: left out
    assert simulate.components(gappy, gappy + 0.1).df == 1


def test_scores_outside_zero_to_one_get_the_normal_model_and_pass_fail_the_binary_one() -> None:
    rng = np.random.default_rng(2)
    passes = (rng.random((20, 3)) < 0.6).astype(float)
    model = simulate.model_of(passes, passes[::-1])
    assert isinstance(model, simulate.Rates) and model.levels == 1 and model.df == 19
    assert model.rate == pytest.approx(passes.mean())
    assert simulate.rates(passes * 2, passes) is None
    assert isinstance(simulate.model_of(passes * 2, passes), simulate.Components)
    assert simulate.is_binary([0.0, 1.0, np.nan]) and not simulate.is_binary([0.0, 0.5]) \
        and not simulate.is_binary([])


def test_draws_are_seeded_and_a_gap_moves_only_the_variant() -> None:
    model = simulate.Rates(rate=0.5, fixture_sd=0.1, run_sd=0.0)
    z = simulate.draws(model, 8, 3, seed=7, n=200)
    again = simulate.draws(model, 8, 3, seed=7, n=200)
    assert all(np.array_equal(getattr(z, k), getattr(again, k)) for k in ("a", "u", "c", "e"))
    base0, var0 = simulate.tables(z, 0.0)
    base1, var1 = simulate.tables(z, 1.0)
    assert base0.shape == var0.shape == (200, 8, 3)
    assert np.array_equal(base0, base1) and (var1 == 1.0).all()  # a rate pushed past 1 is clipped: always right
    assert set(np.unique(base0)) <= {0.0, 1.0}  # pass/fail cells
    assert (var1 >= var0).all()  # common random numbers: a larger gap never lowers a cell


def test_the_needed_gap_is_where_the_simulated_power_reaches_eighty_percent() -> None:
    model = simulate.Rates(rate=0.5, fixture_sd=0.15, run_sd=0.0)
    z = simulate.draws(model, 16, 5, seed=1, n=400)
    assert simulate.effect_power(z, 0.0, 0.05) < 0.05  # no gap: the rule rarely wins
    assert simulate.effect_power(z, 0.5, 0.05) > 0.9
    gap = simulate.needed_gap(z, 0.05, tol=0.01)
    assert simulate.effect_power(z, gap, 0.05) >= simulate.POWER
    assert simulate.effect_power(z, gap - 0.01 * 0.5, 0.05) < simulate.POWER  # within tol × the rate's scale
    assert simulate.needed_gap(simulate.draws(model, 16, 1, seed=1, n=100), 0.05) == math.inf  # one repetition
    assert simulate.needed_gap(simulate.draws(model, 12, 2, seed=1, n=400), 0.05) == math.inf  # too small a run


def test_a_guard_holds_below_its_limit_in_eighty_percent_of_runs() -> None:
    z = simulate.draws(simulate.Rates(rate=0.3, fixture_sd=0.1, run_sd=0.0), 16, 3, seed=3, n=400)
    limit = simulate.guard_limit(z, 0.25, 0.05, tol=0.01)
    assert -0.25 < limit < 0.25
    assert simulate.guard_power(z, limit, 0.25, 0.05) >= simulate.POWER
    assert simulate.guard_power(z, limit + 0.01, 0.25, 0.05) < simulate.POWER


def test_the_pilot_range_is_the_chi_square_interval_of_a_standard_deviation() -> None:
    lo, hi = simulate.pilot_range(9)
    assert lo == pytest.approx(math.sqrt(9 / sps.chi2.ppf(0.9, 9)))
    assert hi == pytest.approx(math.sqrt(9 / sps.chi2.ppf(0.1, 9)))
    comp = simulate.Components(fixture=0.04, run=0.01, cell=0.02, df=9)
    low, high = simulate.bounds(comp)
    assert isinstance(low, simulate.Components) and isinstance(high, simulate.Components)
    assert low.fixture == pytest.approx(0.04 * lo ** 2) and high.run == pytest.approx(0.01 * hi ** 2)
    rates = simulate.bounds(simulate.Rates(rate=0.5, fixture_sd=0.1, run_sd=0.02, levels=1, df=9))
    assert [type(m) for m in rates] == [simulate.Rates, simulate.Rates]
    assert rates[0].rate < 0.5 < rates[1].rate  # type: ignore[union-attr]


def test_a_pilots_rate_fixture_spread_and_run_term_are_drawn_from_what_it_leaves_uncertain() -> None:
    """A pilot of 12 fixtures whose means spread no more than sampling gives (fitted fixture sd 0) does not plan
    for a world where fixtures are alike: each simulated run draws its own spread (often well above 0) and its
    own rate around the pilot's. A run term is drawn around its estimate on 2(R − 1) degrees of freedom; a pilot
    of one repetition has none. Declared assumptions are taken as they are."""
    rng = np.random.default_rng(1)
    alike = simulate.Rates(rate=0.5, fixture_sd=0.0, run_sd=0.0, df=11, pilot=simulate.PilotSpread(
        fixtures=12, fixture_ms=0.02, sampling=0.025, rate_ms=0.03))
    rate, sds, run = simulate.drawn(alike, rng, 20_000)
    assert 0.1 < float((sds > 0.1).mean()) < 0.6 and float(sds.max()) <= 0.5
    assert float(rate.mean()) == pytest.approx(0.5, abs=0.005)
    assert float(rate.std()) == pytest.approx(math.sqrt(0.03 / 12), rel=0.15) and set(run.tolist()) == {0.0}
    shown = simulate.Rates(rate=0.5, fixture_sd=0.1, run_sd=0.05, df=11, pilot=simulate.PilotSpread(
        fixtures=12, fixture_ms=0.03, sampling=0.02, rate_ms=0.03, run_ms=0.25 + 12 * 0.05 ** 2, run_df=8,
        err_ms=0.25, err_df=88))
    run = simulate.drawn(shown, rng, 20_000)[2]
    assert 0.04 < float(np.median(run)) < 0.09 and float((run > 0.1).mean()) > 0.05
    declared = simulate.Rates(rate=0.5, fixture_sd=0.15, run_sd=0.02)
    assert [set(x.tolist()) for x in simulate.drawn(declared, rng, 100)] == [{0.5}, {0.15}, {0.02}]


def test_a_run_term_the_pilot_cannot_show_is_still_drawn_as_large_as_it_leaves_possible() -> None:
    """A pilot of 24 × 5 without run shocks shows no run term, yet each simulated run draws one from the pilot's
    2(R − 1) degrees of freedom: none in the share of draws the F test's p gives (the pivotal's mass at 0), more
    in the rest; a pilot with each arm's own shocks draws larger ones. Before 2026-12-05 a term not shown was
    none at all, and pilots of a world with shocks planned gaps the rule won 0.72 of the time (docs/statistics.md)."""
    from scipy import special

    rng = np.random.default_rng(6)
    p = 1 / (1 + np.exp(-rng.standard_normal((24, 1))))
    quiet = [rng.binomial(1, np.repeat(p, 5, 1)).astype(float) for _ in range(2)]
    model = simulate.rates(*quiet)
    assert model is not None and model.pilot is not None and model.pilot.run_df == 8
    spread = model.pilot
    shown = special.fdtrc(spread.run_df, spread.err_df, spread.run_ms / spread.err_ms)
    assert shown > 0.05  # the pilot's F test does not show a run term
    run = simulate.drawn(model, np.random.default_rng(1), 20_000)[2]
    assert float((run == 0).mean()) == pytest.approx(shown, abs=0.015)
    assert float(np.quantile(run, 0.9)) > 0.03
    shocks = 0.3 * rng.standard_normal((2, 1, 5))  # each arm's own offset in each repetition
    shaken = [rng.binomial(1, np.clip(np.repeat(p, 5, 1) + shocks[a], 0, 1)).astype(float) for a in range(2)]
    model = simulate.rates(*shaken)
    assert model is not None and model.pilot is not None
    assert model.pilot.run_df == 8 and 0.1 < model.run_sd < 0.5
    assert float(np.median(simulate.drawn(model, np.random.default_rng(1), 20_000)[2])) > float(np.median(run))


def test_the_signal_of_a_gap_is_weaker_where_both_arms_are_noisier() -> None:
    """`signal`, the cheap stand-in by which plan picks the harder rate: a gap of 0.3 is shown more easily from a
    baseline at 0.65 (the variant near 0.95, steady) than at 0.35 (both arms near ½); a larger gap more easily
    than a smaller one; and models that differ only in their rate are compared on the same draws."""
    spread = simulate.PilotSpread(fixtures=12, fixture_ms=0.03, sampling=0.025, rate_ms=0.04)
    at = {rate: simulate.Rates(rate=rate, fixture_sd=0.08, run_sd=0.0, df=11, pilot=spread) for rate in (0.35, 0.65)}
    low, high = (simulate.signal(at[r], 12, 5, 0.3, seed=1) for r in (0.35, 0.65))
    assert low < high
    assert simulate.signal(at[0.35], 12, 5, 0.2, seed=1) < low
    assert simulate.signal(at[0.35], 12, 5, 0.3, seed=1) == low
