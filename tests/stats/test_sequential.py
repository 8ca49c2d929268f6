"""A sequential card's boundaries and looks: Lan–DeMets spending computed exactly, the rule at each look's level."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from benchcard.stats.crossed import crossed
from benchcard.stats.decision import LOSS, NO_EFFECT, WIN, Evidence
from benchcard.stats.sequential import (
    CONTINUE,
    FUTILITY,
    LOOK_CODES,
    Schedule,
    boundaries,
    futility_level_shown,
    futility_p,
    look_decision,
    schedule,
    spent,
    stopped,
)


def test_obrien_fleming_spending_gives_the_published_boundaries() -> None:
    """Five equally spaced looks, two-sided α = 0.05 (Lan and DeMets 1983; Jennison and Turnbull, Table 7.6)."""
    b = boundaries(Schedule((3, 6, 9, 12, 15), "obrien-fleming", futility=False))
    assert [round(c, 3) for c in b.efficacy] == [4.877, 3.357, 2.680, 2.290, 2.031]
    assert b.spent[-1] == pytest.approx(0.05)
    assert b.futility is None


def test_pocock_spending_gives_the_published_boundaries() -> None:
    b = boundaries(Schedule((3, 6, 9, 12, 15), "pocock", futility=False))
    assert [round(c, 3) for c in b.efficacy] == [2.438, 2.427, 2.410, 2.397, 2.386]


def test_one_look_is_the_fixed_design() -> None:
    b = boundaries(Schedule((5,), futility=True))
    assert b.nominal == pytest.approx((0.05,))
    assert b.efficacy[0] == pytest.approx(special.ndtri(0.975))
    assert b.futility is None  # no look before the last: nothing to stop for


def test_the_boundaries_spend_exactly_alpha_over_the_joint_normal() -> None:
    """Unequal looks: the chance a null path crosses some boundary is α/2 per side (checked with scipy's
    multivariate normal; the boundaries themselves are integrated, not drawn)."""
    plan = Schedule((3, 5, 10), "hsd", futility=False, gamma=-2.0)
    b = boundaries(plan)
    t = np.array(b.fractions)
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    below = stats.multivariate_normal(mean=np.zeros(3), cov=cov, seed=1).cdf(np.array(b.efficacy))
    assert 1 - below == pytest.approx(0.025, abs=3e-4)
    assert b.spent[0] == pytest.approx(2 * spent("hsd", 0.3, 0.025, -2.0))


def test_futility_levels_spend_the_futility_budget_before_the_last_look() -> None:
    b = boundaries(Schedule((2, 4, 6, 8, 10)))
    assert b.futility is not None and b.futility_z is not None
    assert b.futility[-1] == 0.0 and math.isinf(b.futility_z[-1])
    assert all(a < c for a, c in zip(b.futility[:-1], b.futility[1:-1], strict=False))
    t = np.array(b.fractions[:-1])
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    below = stats.multivariate_normal(mean=np.zeros(4), cov=cov, seed=1).cdf(np.array(b.futility_z[:-1]))
    budget = b.schedule.futility_beta  # the whole budget, over the joint normal of the looks before the last
    assert 1 - below == pytest.approx(budget, abs=5e-4)


def test_recorded_futility_boundaries_say_the_level_they_were_computed_at() -> None:
    plan = Schedule((3, 6, 9))
    z = boundaries(Schedule((3, 6, 9), futility_beta=0.025)).futility_z
    assert z is not None
    assert futility_level_shown(plan, [(0, z[0]), (1, z[1])], [0.035, 0.025], 40.0) == 0.025
    assert futility_level_shown(plan, [(0, z[0] + 0.01)], [0.035, 0.025], 40.0) is None
    assert futility_level_shown(plan, [(5, z[0])], [0.025], 40.0) is None  # a look the schedule does not have


def test_a_card_design_becomes_a_schedule() -> None:
    assert schedule(3, 10).looks == (4, 7, 10)
    assert schedule([2, 5], 10).looks == (2, 5, 10)
    assert schedule([3, 10], 10, spending="pocock").spending == "pocock"
    with pytest.raises(ValueError, match="past the card's 10 repetitions"):
        schedule([4, 12], 10)
    with pytest.raises(ValueError, match="expected 1 to 10"):
        schedule(11, 10)
    with pytest.raises(ValueError, match="spending: expected one of obrien-fleming, pocock, hsd"):
        Schedule((2, 4), "linear")
    with pytest.raises(ValueError, match="increasing"):
        Schedule((4, 2))


def _evidence(p_win: list[float], p_loss: list[float]) -> list[list[Evidence]]:
    return [[Evidence(p_hold=np.array(p_win), p_loss=np.array(p_loss))]]


def test_a_look_decides_at_its_nominal_level_and_otherwise_continues() -> None:
    b = boundaries(Schedule((2, 4, 6), futility=True))
    nominal = b.nominal[1]
    runs = 4
    ev = _evidence([nominal / 2, nominal * 2, 1.0, 1.0], [1.0, 1.0, nominal / 3, 1.0])
    futile = [np.array([0.9, 0.9, 0.9, b.futility[1] / 2])] if b.futility else None
    look = look_decision(b, 2, ev, [np.ones(runs)], [np.ones(runs, dtype=bool)], futile)
    assert [LOOK_CODES[c] for c in look.codes] == ["win", "continue", "loss", "futility"]
    assert look.boundary == pytest.approx(b.efficacy[1])
    assert look.statistic[0] == pytest.approx(special.ndtri(1 - nominal / 4))
    assert look.statistic[2] < -look.boundary  # towards a loss, beyond its boundary
    assert look.futility_boundary == pytest.approx(b.futility_z[1]) if b.futility_z else False


def test_the_last_look_gives_the_fixed_rules_finding() -> None:
    b = boundaries(Schedule((2, 4, 6), futility=True))
    p = b.nominal[-1] * 1.01
    look = look_decision(b, 3, _evidence([p, 0.5], [1.0, 1.0]), [np.array([1.0, 0.001])],
                         [np.ones(2, dtype=bool)], [np.array([0.0, 0.0])])
    assert list(look.codes) == [3, NO_EFFECT]  # just above the last level: inconclusive; TOST shown: no-effect
    assert CONTINUE not in look.codes and FUTILITY not in look.codes
    with pytest.raises(ValueError, match="looks 1 to 3"):
        look_decision(b, 4, _evidence([p], [1.0]), [np.ones(1)], [np.ones(1, dtype=bool)])


def test_a_look_after_two_repetitions_spends_no_alpha() -> None:
    """Its run term has at most two degrees of freedom: the α waits for the next look (futility may stop)."""
    b = boundaries(Schedule((2, 4, 6)))
    assert b.nominal[0] == 0.0 and math.isinf(b.efficacy[0])
    assert b.spent[1] == pytest.approx(2 * spent("obrien-fleming", 4 / 6, 0.025))
    assert b.futility is not None and b.futility[0] > 0
    assert boundaries(Schedule((2,))).nominal == pytest.approx((0.05,))  # a card of two repetitions: its only look


def test_a_run_stops_at_its_first_decided_look() -> None:
    b = boundaries(Schedule((3, 6, 9), futility=False))
    looks = [look_decision(b, k + 1, _evidence(p, [1.0, 1.0, 1.0]), [np.ones(3)], [np.ones(3, dtype=bool)])
             for k, p in enumerate([[1e-9, 0.5, 0.5], [1e-9, 1e-6, 0.5], [1e-9, 1e-6, 0.5]])]
    at, codes = stopped(looks)
    assert list(at) == [0, 1, 2]
    assert list(codes) == [WIN, WIN, 3]


def test_futility_p_rules_out_the_effect_that_matters() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(0.0, 0.1, (12, 6))
    var = base + rng.normal(0.0, 0.02, (12, 6))
    c = crossed(base, var)
    assert float(futility_p(c, 0.2)[0]) < 0.001  # a gap near 0, tightly measured: 0.2 is ruled out
    assert float(futility_p(c, 0.0)[0]) > 0.01
    down = crossed(base, base - 0.3 + rng.normal(0.0, 0.02, (12, 6)))
    assert float(futility_p(down, 0.2, up=False)[0]) > 0.5  # a `falls` clause that fell by 0.3: not futile
    assert LOSS == 1


@pytest.mark.parametrize("gate", [0.5, 0.8, 0.9, 0.95, 0.999])
@pytest.mark.parametrize("z", [1.96, 2.5, 3.2, 4.1])
@pytest.mark.parametrize("bound", ["exact", "wilson"])
def test_the_fewest_cells_to_pass_are_where_a_perfect_mean_first_passes(gate: float, z: float, bound: str) -> None:
    from benchcard.stats.sequential import fewest_cells_to_pass, gate_bounds, passing_mean

    n = fewest_cells_to_pass(gate, z, bound)
    assert n is not None and passing_mean(gate, n, z, bound) is not None
    assert n == 1 or passing_mean(gate, n - 1, z, bound) is None
    assert gate_bounds(1.0, n, z, bound)[0] >= gate > (gate_bounds(1.0, n - 1, z, bound)[0] if n > 1 else -1)
    if bound == "wilson":
        assert n == math.ceil(gate * z * z / (1 - gate) - 1e-9)  # n / (n + z²) ≥ gate
    else:
        assert n == math.ceil(math.log(float(special.ndtr(-z))) / math.log(gate) - 1e-9)  # Φ(−z)^(1/n) ≥ gate


def test_no_count_passes_a_gate_of_1_or_a_look_that_spends_no_alpha() -> None:
    from benchcard.stats.sequential import fewest_cells_to_pass, passing_mean

    assert fewest_cells_to_pass(1.0, 2.0) is None and passing_mean(1.0, 10 ** 6, 2.0) is None
    assert fewest_cells_to_pass(1.0, 2.0, "wilson") is None and passing_mean(1.0, 10 ** 6, 2.0, "wilson") is None
    assert fewest_cells_to_pass(0.8, math.inf) is None and fewest_cells_to_pass(0.0, 3.0) == 1


def _probe_errors(gate: float, looks: tuple[int, ...], spending: str, bound: str) -> tuple[float, float]:
    """The exact chance that a sequential probe whose pass/fail cells are right at rate `gate` is decided pass, and
    fail, at some look (the binomial law carried look to look, each look bounded as verdict/looks.py bounds it)."""
    from benchcard.stats.sequential import gate_bounds

    plan = Schedule(looks, spending, False, 0.05, -6.0 if spending == "hsd" else -4.0, gate_bound=bound)
    law, before, passed, failed = np.ones(1), 0, 0.0, 0.0
    for r, z in zip(looks, boundaries(plan).efficacy, strict=True):
        law, before = np.convolve(law, stats.binom.pmf(np.arange(r - before + 1), r - before, gate)), r
        passes = np.asarray([gate_bounds(k / r, r, z, bound)[0] >= gate for k in range(r + 1)])
        fails = np.asarray([gate_bounds(k / r, r, z, bound)[1] < gate for k in range(r + 1)])
        passed, failed = passed + float(law[passes].sum()), failed + float(law[fails].sum())
        law = np.where(passes | fails, 0.0, law)
    return passed, failed


@pytest.mark.parametrize(("looks", "spending"), [((3, 6, 9, 12), "obrien-fleming"), ((10, 20, 30, 40), "hsd"),
                                                 ((25, 50, 75, 100), "hsd"),
                                                 (tuple(range(5, 55, 5)), "obrien-fleming")])
def test_a_probe_whose_true_score_is_its_gate_passes_or_fails_in_at_most_half_of_alpha(
        looks: tuple[int, ...], spending: str) -> None:
    """At a true score equal to min_score a pass and a fail are both false; each side is promised α/2. Wilson's
    bound (every probe's before 2026-12-08) failed the gate in up to 7.4% of such runs at a gate of 0.95 (11% at
    0.99) and passed it in up to 3.0% at 0.5: its upper bound falls below a score near 1 too often."""
    for gate in (0.5, 0.7, 0.8, 0.9, 0.95, 0.99):
        passed, failed = _probe_errors(gate, looks, spending, "exact")
        assert passed <= 0.025 and failed <= 0.025, (gate, passed, failed)
    assert _probe_errors(0.95, (3, 6, 9, 12), "obrien-fleming", "wilson")[1] > 0.07  # why old runs keep their bound


def test_a_probes_exact_bound_is_clopper_pearsons() -> None:
    from benchcard.stats.sequential import gate_bounds

    z = float(special.ndtri(0.975))
    low, high = gate_bounds(7 / 10, 10, z)
    assert (low, high) == pytest.approx(stats.binomtest(7, 10).proportion_ci(0.95, "exact"), abs=1e-12)
    assert gate_bounds(1.0, 10, z)[0] == pytest.approx(0.025 ** 0.1) and gate_bounds(1.0, 10, z)[1] == 1.0
    assert gate_bounds(0.0, 10, z)[0] == 0.0 and gate_bounds(0.5, 0, z) == (0.0, 1.0)
    assert gate_bounds(0.5, 10, math.inf) == (0.0, 1.0)  # no α spent at the look: nothing is decided
    with pytest.raises(ValueError, match="gate_bound: expected one of exact, wilson"):
        Schedule((2, 4), gate_bound="normal")
