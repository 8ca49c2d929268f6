"""The calibrated t p: valid where Student's p at the reference df is not, and never below it."""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest
from scipy import special

from benchcard.stats import worstcase
from benchcard.stats.crossed import crossed
from benchcard.stats.decision import p_tost, p_two_sided
from benchcard.stats.worstcase import _null_scores, calibrate, critical_t, null_scores, wallace, wallace_inverse


def _normal_world(fixtures: int, reps: int, run_sd: float, sims: int, seed: int, effect_sd: float = 0.1,
                  noise: tuple[float, float] = (0.5, 0.5)) -> tuple[np.ndarray, np.ndarray]:
    """A/A two-way tables of both arms: a fixture's level both share, the variant's own fixture effect
    (mean 0), a run-level shock of each arm in each repetition, and each arm's cell noise."""
    rng = np.random.default_rng(seed)
    level = rng.standard_normal((sims, fixtures, 1))
    base = (level + run_sd * rng.standard_normal((sims, 1, reps))
            + noise[0] * rng.standard_normal((sims, fixtures, reps)))
    var = (level + effect_sd * rng.standard_normal((sims, fixtures, 1)) + run_sd * rng.standard_normal((sims, 1, reps))
           + noise[1] * rng.standard_normal((sims, fixtures, reps)))
    return base, var


def _rates(base: np.ndarray, var: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
    c = crossed(base, var)
    plain = 2 * special.stdtr(c.df, -np.abs(c.gap) / c.se)
    calibrated = p_two_sided(c, np.zeros_like(c.gap))  # a sign-flip p of 0: the t p alone decides here
    return float((plain <= 0.05).mean()), float((calibrated <= 0.05).mean()), plain, calibrated


@pytest.mark.parametrize(("fixtures", "reps", "run_sd"), [(24, 3, 0.2), (48, 3, 0.1), (12, 2, 0.2)])
def test_per_arm_run_shocks_keep_the_calibrated_p_at_alpha(fixtures: int, reps: int, run_sd: float) -> None:
    """The designs where the previous rule's plug-in Satterthwaite p said "result" 6–9 % of the time."""
    _, rate, plain, calibrated = _rates(*_normal_world(fixtures, reps, run_sd, 6000, seed=fixtures * 10 + reps))
    assert rate <= 0.05
    assert (calibrated >= plain - 1e-12).all()


def test_a_dominant_fixture_term_is_calibrated_where_students_p_at_the_run_df_is_not() -> None:
    """Six fixtures whose own effects dominate, ten repetitions: Student's p at the reference df (the run
    term's up to 27 and the fixtures' 5, by Satterthwaite) would say "result" 7.6 % of the time; the worst case
    over the grid (its fixture end is Student's t on F − 1 df) does not."""
    plain, rate, _, _ = _rates(*_normal_world(6, 10, 0.0, 6000, seed=4, effect_sd=1.0))
    assert plain > 0.07 and rate <= 0.05


@pytest.mark.parametrize("reps", [5, 10])
def test_a_deterministic_arm_adds_no_degrees_of_freedom(reps: int) -> None:
    """One arm answers alike in every repetition: the arms' sums spread exactly as the gaps do, so pooling them
    is no second estimate; the df falls to R − 1 and the rate stays at α."""
    base, var = _normal_world(12, reps, 0.0, 6000, seed=5, noise=(0.5, 0.0))
    c = crossed(base, var)
    assert np.allclose(c.df, reps - 1)
    assert _rates(base, var)[1] <= 0.05


def test_calibration_leaves_a_large_design_near_nominal() -> None:
    """With ten repetitions the run term has up to 18 degrees of freedom: the worst case costs little. Here the
    world with no run variance is itself the grid's worst point, so the rate is α up to the simulation's error
    (two standard errors of 4,000 runs: 0.007)."""
    rate = _rates(*_normal_world(12, 10, 0.0, 4000, seed=3))[1]
    assert 0.02 <= rate <= 0.05 + 0.007


def test_no_run_term_no_calibration() -> None:
    """One repetition (compare's one-epoch logs: run term taken as 0) keeps Student's p exactly."""
    t = np.array([3.5, 2.1, 0.4])
    n = np.full(3, 12, dtype=np.int64)
    student = special.stdtr(11.0, -t)
    assert calibrate(t, 11.0, n, n, 1, np.ones(3, dtype=bool)).tolist() == student.tolist()
    assert calibrate(t, 11.0, n, n, 3, np.zeros(3, dtype=bool)).tolist() == student.tolist()
    assert critical_t(0.025, 11.0, n, n, 3, np.zeros(3, dtype=bool)).tolist() == [special.stdtrit(11, 0.975)] * 3


def test_the_interval_agrees_with_the_test() -> None:
    """A t just above the critical t is calibrated to ≤ the level; just below, not; and it is never below
    Student's quantile."""
    n = np.full(1, 12, dtype=np.int64)
    on = np.ones(1, dtype=bool)
    crit = float(critical_t(0.025, 8.0, n, n, 5, on)[0])
    assert crit > special.stdtrit(8.0, 0.975)
    assert calibrate(np.array([crit * 1.001]), 8.0, n, n, 5, on)[0] <= 0.025
    assert calibrate(np.array([crit * 0.99]), 8.0, n, n, 5, on)[0] > 0.025


def test_wallace_is_monotone_and_inverted() -> None:
    t = np.linspace(-8, 8, 161)
    for df in (1.0, 2.5, 11.0, 1e4):
        w = wallace(t, df)
        assert (np.diff(w) > 0).all()
        assert np.allclose(wallace_inverse(w[t >= 0], df), t[t >= 0])
        if df > 2:
            assert abs(float(wallace(special.stdtrit(df, 0.975), df)) - 1.96) < 0.05  # about the normal score


def test_the_null_draws_are_seeded_and_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    # drawn here each time, not read from the table the suite's workers share (tests/conftest.py)
    monkeypatch.setattr(worstcase, "draw_null_scores", inspect.unwrap(worstcase.draw_null_scores))
    a = null_scores(12, 12, 3)
    assert a is null_scores(12, 12, 3) and not a.flags.writeable
    _null_scores.cache_clear()
    assert np.array_equal(a, null_scores(12, 12, 3))


def _envelope_by_definition(draws: tuple[np.ndarray, ...], n: int, complete: int, r: int) -> np.ndarray:
    """null_scores the plain way: each grid point's scores of the draws through variance_and_df and wallace,
    sorted; a row is the mirror's half (−z scores −w: wallace is odd), −(the least at each rank over the points)
    reversed, then the largest at each rank."""
    z, u_fix, u_var, u_base, u_err = draws
    top, least = np.full((2, z.size), -np.inf), np.full((2, z.size), np.inf)
    for fixture, run, share, split in worstcase._grid():
        lam_v, lam_b = share + split * run, (1 - share) + (1 - split) * run
        a, rep_v, rep_b = (1 + fixture) * u_fix, lam_v * u_var, lam_b * u_base
        arms = np.maximum(rep_v, share * u_err), np.maximum(rep_b, (1 - share) * u_err)
        for k, steady in enumerate((False, True)[: 2 if lam_v == 0 else 1]):
            var, df = worstcase.variance_and_df(a, rep_v + rep_b, u_err, *arms, r, n, steady)
            with np.errstate(divide="ignore", invalid="ignore"):
                w = np.sort(wallace(z * np.sqrt((1 + fixture + run) / var), df))
            top[k], least[k] = np.maximum(top[k], w), np.minimum(least[k], w)
    return np.stack([np.concatenate([-least[k, ::-1], top[k]]) for k in (0, 1)])


@pytest.mark.parametrize(("n", "complete", "r", "kind"), [
    (1, 1, 2, "sobol"), (5, 4, 3, "sobol"), (24, 24, 5, "sobol"), (200, 180, 2, "sobol"), (6, 5, 10, "sobol"),
    (12, 12, 3, "signed"), (3, 2, 2, "spread")])
def test_the_null_table_is_its_definition_byte_for_byte(n: int, complete: int, r: int, kind: str) -> None:
    """null_envelope's kept buffers and shortcuts (no sign where every z > 0, the NaN guards folded) give the
    very bytes of the plain definition: Sobol' draws as the verdict's, z with zeros and negatives (the sign
    kept), and mean squares spread wide enough (0, subnormal squares, 10⁶) that the variance floor, the paired
    fallback and both ends of the df's clip are reached."""
    half = 2048
    draws = list(worstcase.null_draws(n, complete, r, half))
    if kind == "signed":
        draws[0][::7], draws[0][1::7] = 0.0, -draws[0][1::7]
    if kind == "spread":
        rng = np.random.default_rng(7)
        draws = [np.abs(rng.standard_normal(half)), *(rng.choice([0.0, 1e-162, 1e-12, 0.01, 1.0, 40.0, 1e6], half)
                                                      for _ in range(4))]
    ours = worstcase.null_envelope(tuple(draws), n, complete, r)
    assert ours.tobytes() == _envelope_by_definition(tuple(draws), n, complete, r).tobytes()


def test_case_a_tost_is_calibrated_like_the_test() -> None:
    """docs/statistics.md, Case A: TOST with the calibrated variance at margins 0.05 and 0.30."""
    base = np.array([[.5, .75, .5], [.75, .75, 1], [.25, .5, .5], [1, .75, 1], [.5, .5, .75], [.75, 1, .75]])
    var = np.array([[.75, .75, .75], [1, .75, 1], [.5, .5, .75], [1, 1, 1], [.5, .75, .75], [.75, 1, 1]])
    c = crossed(base, var)
    assert float(p_tost(c, 0.05)[0]) == pytest.approx(0.912448, abs=1e-6)
    assert float(p_tost(c, 0.30)[0]) == pytest.approx(0.012573, abs=1e-6)


def test_the_statistics_load_without_scipy_stats_until_a_table_is_drawn() -> None:
    """`check`, `seal` and `plan` import the statistics in every process; scipy.stats (about 0.5 CPU-s to import,
    for its Sobol' sequence) is loaded only when a null table is drawn, not when it is read from the cache."""
    script = ("import sys\nimport benchcard.card.check, benchcard.card.sealing, benchcard.planning.power\n"
              "print('scipy.stats' in sys.modules)\n"
              "from benchcard.stats.worstcase import null_draws\nnull_draws(3, 3, 2, 4)\n"
              "print('scipy.stats' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
