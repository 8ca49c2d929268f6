"""The calibrated gap of one clause (stats/crossed.py): the paired gap and its fixture term, the run term pooled
from the gaps and the arms' sums, unpaired fixtures and single repetitions, batches of simulations, and the
batch sign-flip."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from benchcard.stats.crossed import batch_signflip, crossed, half_width, one_sided_flip, run_floor

from ..helpers_verdict import BASE_A, VAR_A


def test_the_run_term_is_the_spread_of_the_repetition_means() -> None:
    """A pure per-repetition shift of the variant, no cell noise: the whole gap variance is the run term, and
    it equals the spread of the repetition gaps over R (the arms' sums spread alike); the baseline never varies,
    so the run term's df are the variant's R − 1 alone."""
    base = np.repeat(np.array([[0.2], [0.4], [0.6], [0.8]]), 4, 1)
    shift = np.array([0.0, 0.1, 0.3, 0.2])
    c = crossed(base, base + shift)
    assert c.var_fixture[0] == pytest.approx(0.0, abs=1e-15)
    assert c.var_run[0] == pytest.approx(shift.var(ddof=1) / 4)
    assert c.se[0] == pytest.approx(np.sqrt(shift.var(ddof=1) / 4))
    assert c.df[0] == pytest.approx(3.0)


def _mean_squares(x: np.ndarray) -> tuple[float, float, float]:
    f, r = x.shape
    rows, cols, grand = x.mean(1), x.mean(0), x.mean()
    resid = x - rows[:, None] - cols[None, :] + grand
    return (r * ((rows - grand) ** 2).sum() / (f - 1), f * ((cols - grand) ** 2).sum() / (r - 1),
            (resid ** 2).sum() / ((f - 1) * (r - 1)))


def test_the_variance_counts_fixtures_runs_and_cells_once_from_gaps_and_sums() -> None:
    """se² = (MS_fix + MS_run − MS_err)/(F·R), MS_run pooling the repetition mean squares of the gaps and of
    the arms' sums, never below 0.6·MS_run/(F·R); the df Satterthwaite's over the run term (R − 1 to 3(R − 1) by
    the balance of the arms' own run-to-run spreads, each arm's MS_rep never below its MS_err) and the fixtures'
    excess MS_fix − MS_err (F − 1 df)."""
    base, var = np.array(BASE_A, dtype=float), np.array(VAR_A, dtype=float)
    f, r = base.shape
    ms_fix, ms_rep, ms_err = _mean_squares(var - base)
    ms_sum = _mean_squares(var + base)[1]
    ms_run = (ms_rep + ms_sum) / 2
    c = crossed(base, var)
    assert c.var_run[0] == pytest.approx(ms_run / (f * r))
    assert c.se[0] ** 2 == pytest.approx(max(0.6 * ms_run, ms_fix + ms_run - ms_err) / (f * r))
    lam_v, lam_b = (max(_mean_squares(x)[1], _mean_squares(x)[2]) for x in (var, base))
    run_df = (r - 1) * (1 + 2 * (4 * lam_v * lam_b / (lam_v + lam_b) ** 2) ** 2)
    excess = max(ms_fix - ms_err, 0.0)
    run = lam_v + lam_b
    assert c.df[0] == pytest.approx((run + excess) ** 2 / (run ** 2 / run_df + excess ** 2 / (f - 1)))
    assert ms_run == pytest.approx(_mean_squares(var)[1] + _mean_squares(base)[1])  # the arms' own spreads


def test_shocks_in_one_arm_only_leave_the_run_term_r_minus_1_df() -> None:
    """The baseline's repetitions shift, the variant's do not: the pooled run term is all the baseline's, so
    it has its R − 1 degrees of freedom (the arms' cell noise alike would have said 2(R − 1))."""
    rng = np.random.default_rng(0)
    level = rng.standard_normal((12, 1))
    base = level + np.array([0.0, 3.0, -3.0, 1.5]) + 0.1 * rng.standard_normal((12, 4))
    var = level + 0.1 * rng.standard_normal((12, 4))
    c = crossed(base, var)
    assert 3.0 <= c.df[0] < 3.05 and not c.fixed_arm[0]  # type: ignore[index]


def test_the_gap_and_its_fixture_term_are_the_paired_means_over_fixtures() -> None:
    base, var = np.array(BASE_A, dtype=float), np.array(VAR_A, dtype=float)
    d = var.mean(axis=1) - base.mean(axis=1)
    c = crossed(base, var)
    assert c.gap[0] == pytest.approx(d.mean()) and c.n_fixtures[0] == 6
    assert c.var_fixture[0] == pytest.approx(d.var(ddof=1) / 6)
    assert np.allclose(c.d[0], d) and c.repetitions == 3 and bool(c.spread[0])


def test_a_fixture_unscored_in_one_arm_is_left_out_of_the_pairs() -> None:
    base, var = np.array(BASE_A, dtype=float), np.array(VAR_A, dtype=float)
    var[2, :] = np.nan  # fixture 3: no variant score at all
    base[4, 1] = np.nan  # fixture 5: one baseline repetition unscored, still paired on the others
    c = crossed(base, var)
    assert c.n_fixtures[0] == 5 and c.d[0, 2] == 0.0  # an unpaired fixture is 0 in d
    assert c.d[0, 4] == pytest.approx(var[4].mean() - np.nanmean(base[4]))
    assert c.complete is not None and c.complete[0] == 4  # the two-way table takes complete fixtures only


def test_an_outage_in_one_arm_weighs_its_run_term_as_the_gap_weighs_its_shocks() -> None:
    """The variant's last repetition failed on fixtures 3 and 4: their means hold repetitions 1 and 2 only, so
    the gap weighs the variant's repetition shocks (5/12, 5/12, 1/6), not a third each, and its run variance is
    R·Σw² = 1.125 times what the complete fixtures' repetition spread says. The run term says so; with every cell
    scored it is that spread, as before."""
    base = np.repeat(np.array([[0.2], [0.4], [0.6], [0.8]]), 3, 1)
    shift = np.array([0.0, 0.3, 0.1])
    var = base + shift
    whole = crossed(base, var)
    assert whole.var_run[0] == pytest.approx(shift.var(ddof=1) / 3)
    var[2:, 2] = np.nan
    c = crossed(base, var)
    weights = np.array([5 / 12, 5 / 12, 1 / 6])
    assert c.gap[0] == pytest.approx(weights @ shift)
    assert c.var_run[0] == pytest.approx(3 * (weights @ weights) * shift.var(ddof=1) / 3)
    assert c.se[0] ** 2 == pytest.approx(c.var_fixture[0] + c.var_run[0])  # no cell noise to take off


def test_an_outage_in_the_shocked_arm_keeps_the_a_a_rate_at_alpha() -> None:
    """A/A in the calibration's own family (normal cells and normal run shocks, the variant's alone), 24 × 3,
    the variant's last repetition failed on about half the fixtures (within allow_failed): "result" in 0.057 of
    20,000 seeded runs while the run term took the repetitions as weighing alike; now about α
    (docs/statistics.md, "Audit, 2026-12-07")."""
    from benchcard.stats.decision import LOSS, WIN, decide, effect_evidence

    rng = np.random.default_rng([5, 24, 3])
    s, f, r = 20_000, 24, 3
    fixture = rng.standard_normal((s, f, 1))
    base = fixture + 0.2 * rng.standard_normal((s, f, r))
    var = fixture + 0.2 * rng.standard_normal((s, 1, r)) + 0.2 * rng.standard_normal((s, f, r))
    var[:, :, -1] = np.where(rng.random((s, f)) < 0.5, np.nan, var[:, :, -1])
    c = crossed(base, var)
    flips = batch_signflip(c.d, c.n_fixtures, seed=1)
    up, down = effect_evidence(c, flips, True), effect_evidence(c, flips, False)
    codes = decide([[up]], [np.ones(s)], [c.spread], 0.05).codes[0]
    rate = float(np.isin(codes, (WIN, LOSS)).mean())
    assert rate <= 0.052, rate
    assert float((down.p_hold <= 0.05).mean()) == pytest.approx(float((codes == LOSS).mean()))


def test_one_repetition_cannot_measure_the_run_term_unless_told_what_to_take() -> None:
    base, var = np.array(BASE_A, dtype=float)[:, :1], np.array(VAR_A, dtype=float)[:, :1]
    c = crossed(base, var)
    assert np.isinf(c.var_run[0]) and np.isinf(c.se[0]) and not c.run_measured[0]  # type: ignore[index]
    assert np.isinf(half_width(c, 0.975)[0]) and np.isinf(run_floor(c, 0.05)[0])
    zero = crossed(base, var, unmeasured_run_var=0.0)
    assert zero.var_run[0] == 0.0 and zero.df[0] == 5.0
    assert half_width(zero, 0.975)[0] == pytest.approx(stats.t.ppf(0.975, 5) * np.sqrt(zero.var_fixture[0]))


def test_a_grid_with_one_value_everywhere_has_no_spread_and_no_standard_error() -> None:
    ones = np.ones((6, 3))
    c = crossed(ones, ones)
    assert not c.spread[0] and bool(c.zero_se[0]) and c.gap[0] == 0.0


def test_simulations_on_the_leading_axis_are_each_what_they_give_alone() -> None:
    rng = np.random.default_rng(4)
    base, var = rng.random((3, 8, 4)), rng.random((3, 8, 4))
    batch = crossed(base, var)
    for s in range(3):
        alone = crossed(base[s], var[s])
        for name in ("gap", "var_fixture", "var_run", "df"):
            assert getattr(batch, name)[s] == pytest.approx(getattr(alone, name)[0]), name


def test_shapes_that_cannot_be_paired_are_refused() -> None:
    with pytest.raises(ValueError, match=r"baseline is shaped \(1, 6, 3\) but variant \(1, 6, 2\)"):
        crossed(np.ones((6, 3)), np.ones((6, 2)))
    with pytest.raises(ValueError, match="expected scores shaped"):
        crossed(np.ones((6, 0)), np.ones((6, 0)))


def test_batch_signflip_enumerates_up_to_twelve_fixtures_and_draws_above() -> None:
    d = np.array([[1.0, 1.0, 1.0, 0.0], [1.0, -1.0, 1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
    p = batch_signflip(d, np.array([3, 4, 0]))
    # all +1 over three paired fixtures: 2 of 8 patterns (all +, all −) reach |3|; a balanced row: every pattern
    assert p.tolist() == [0.25, 1.0, 1.0]
    wide = np.ones((1, 20))
    drawn = batch_signflip(wide, np.array([20]), seed=1, n_draws=999)
    assert drawn[0] == pytest.approx(1 / 1000, abs=2 / 1000)  # add-one: never 0
    assert drawn[0] > 0 and one_sided_flip(np.array([0, 3])).tolist() == [1.0, 0.125]


@pytest.mark.parametrize("seed", range(6))
def test_tables_without_gaps_skip_the_masking_and_give_the_same_bytes(seed: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A simulation's tables have every cell scored: crossed then sums them in place of np.where's masked copies
    (and makes the residuals in one buffer), which must be the very same numbers, bit for bit, as the masked path:
    the seeded tables (reach, simulate, sequential) and every verdict rest on them. Each shortcut against the
    masked code, then the whole of crossed against crossed made to take the masked path everywhere."""
    from benchcard.stats import crossed as module

    rng = np.random.default_rng(seed)
    s, f, r = int(rng.integers(1, 400)), int(rng.integers(2, 30)), int(rng.integers(2, 8))
    base = rng.standard_normal((s, f, r)) if seed % 2 else (rng.random((s, f, r)) < 0.4).astype(float)
    var = base + rng.integers(-2, 3, (s, f, r)) / 3.0
    complete = np.ones((s, f), dtype=bool)
    fc = complete.sum(axis=1)
    for x in (base, var, var - base, var + base):
        fast, masked = module._two_way(x, complete, fc, r, True), module._two_way(x, complete, fc, r, False)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(fast, masked, strict=True))
        assert module._steady(x, complete, True).tobytes() == module._steady(x, complete, False).tobytes()
    assert module._spread(base, var, True).tobytes() == module._spread(base, var, False).tobytes()
    assert module._scored(base, complete[:, :, None], True) is base
    shortcut = crossed(base, var)
    two_way, steady, spread = module._two_way, module._steady, module._spread
    monkeypatch.setattr(module, "_scored", lambda x, keep, whole: np.where(keep, x, 0.0))
    monkeypatch.setattr(module, "_two_way", lambda x, complete, fc, r, every: two_way(x, complete, fc, r, False))
    monkeypatch.setattr(module, "_steady", lambda x, complete, every: steady(x, complete, False))
    monkeypatch.setattr(module, "_spread", lambda base, var, whole: spread(base, var, False))
    masked_path = crossed(base, var)
    for field in ("gap", "var_fixture", "var_run", "df", "d", "spread", "complete", "var_total", "fixed_arm"):
        assert getattr(shortcut, field).tobytes() == getattr(masked_path, field).tobytes(), field
