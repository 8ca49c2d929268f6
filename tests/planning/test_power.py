"""The power half of `benchcard plan` (planning/power.py): declared assumptions checked option by option, the
design's size, Holm's level across variants, designs that can never win, and one clause's figures."""

from __future__ import annotations

import math

import msgspec
import pytest

from benchcard.errors import PlanError
from benchcard.planning import power as powerplan
from benchcard.planning.power import Assumptions
from benchcard.planning.result import ClausePlan, NormalModel, RatesModel
from benchcard.stats import simulate

CLAUSE = ClausePlan(metric="field_recall", test="rises", fixture=None, margin=None, variant="A")


def test_no_assumptions_is_none_and_given_ones_fill_the_defaults() -> None:
    assert powerplan.assumptions() is None
    got = powerplan.assumptions(baseline_rate=0.6, run_sd=0.1)
    assert got == Assumptions(0.6, 0.0, 0.1, 0.0, 1)
    assert got.model() == simulate.Rates(rate=0.6, fixture_sd=0.0, run_sd=0.1, effect_sd=0.0, levels=1)


@pytest.mark.parametrize(("kw", "message"), [
    ({"fixture_sd": 0.1}, "--fixture-sd describes the score of a plan without a pilot: give --baseline-rate too"),
    ({"baseline_rate": 0.0}, "--baseline-rate: expected the baseline's mean score strictly between 0 and 1, got 0"),
    ({"baseline_rate": 0.5, "effect_sd": math.nan}, "--effect-sd: expected a standard deviation of a rate, from 0 "
                                                    "to 0.5, got nan"),
    ({"baseline_rate": 0.5, "run_sd": 0.6}, "--run-sd: expected a standard deviation of a rate, from 0 to 0.5"),
    ({"baseline_rate": 0.1, "fixture_sd": 0.31}, "--fixture-sd: rates with mean 0.1 spread at most 0.300 (every "
                                                 "fixture always right or always wrong), got 0.31"),
    ({"baseline_rate": 0.5, "levels": 11}, "--levels: expected scores in steps of 1/K with K from 1 (pass/fail) to "
                                           "10, got 11"),
])
def test_an_assumption_out_of_range_is_one_line_naming_the_option(kw: dict[str, float], message: str) -> None:
    with pytest.raises(PlanError) as err:
        powerplan.assumptions(**kw)  # type: ignore[arg-type]
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_the_design_is_the_cards_unless_another_size_is_given() -> None:
    assert powerplan.simulated_size(None, None, 6, 3) == (6, 3)
    assert powerplan.simulated_size(16, 5, 6, 3) == (16, 5)
    with pytest.raises(PlanError, match="--fixtures: expected at least 2 fixtures"):
        powerplan.simulated_size(1, None, 6, 3)
    with pytest.raises(PlanError, match="--repetitions: expected at least 1 repetition, got 0"):
        powerplan.simulated_size(None, 0, 6, 3)


def test_a_design_past_the_bound_is_simulated_on_its_cut_and_the_note_says_so() -> None:
    """The fixtures' half of the cut `plan --from` uses (test_forecast.py asks the repetitions' through the CLI, as
    simulating 200 fixtures there costs tens of CPU-seconds)."""
    assert powerplan.bounded((200, 10)) == ((200, 10), None)
    for size, cut in [((20_000, 3), (200, 3)), ((201, 2), (200, 2)), ((6, 11), (6, 10)), ((500, 500), (200, 10))]:
        sim, note = powerplan.bounded(size)
        assert sim == cut
        assert note == (f"simulated on a cut of the design, {cut[0]:,} fixtures × {cut[1]:,} repetitions of its "
                        f"{size[0]:,} × {size[1]:,}: more of either only narrows the gap it can detect, so the "
                        "figures are what the whole design reaches at the least")


def test_several_variants_are_planned_at_holms_first_step_and_say_so() -> None:
    notes: list[str] = []
    assert powerplan.holm_level(0.05, 1, notes) == 0.05 and notes == []
    assert powerplan.holm_level(0.05, 3, notes) == pytest.approx(0.05 / 3)
    assert notes == ["3 variants: each is planned at α/3 = 0.01667, Holm's first step across variants (the "
                     "verdict's correction when one variant works and the others do not)"]


def test_a_design_that_can_never_win_says_why() -> None:
    assert powerplan.never(6, 1, 0.05) == "one repetition can never win: the run-to-run spread cannot be measured"
    assert powerplan.never(5, 3, 0.05) == ("5 fixture(s) can never win: the exact sign-flip p is at least 0.0625 > "
                                           "0.05")
    assert powerplan.never(6, 3, 0.05) is None  # 2/64 ≤ 0.05
    entry = powerplan.effect_entry(CLAUSE, Assumptions(0.5).model(), 5, 3, 0.05)
    assert entry == ClausePlan(metric="field_recall", test="rises", fixture=None, margin=None, variant="A",
                               needed_gap=math.inf, needed_gap_range=[math.inf, math.inf],
                               never=powerplan.never(5, 3, 0.05))
    guard = powerplan.guard_entry(CLAUSE, Assumptions(0.5).model(), 8, 1, 0.1, 0.05, "not_rises")
    assert (guard.passes_if_true_gap_below, guard.never) == (-math.inf, powerplan.never(8, 1, 0.05))
    assert guard.needed_gap is msgspec.UNSET and guard.passes_if_true_gap_above is msgspec.UNSET


def test_a_falls_clause_mirrors_the_rate_and_a_normal_model_is_left_alone() -> None:
    rates = simulate.Rates(rate=0.2, fixture_sd=0.1, run_sd=0.0)
    assert powerplan.mirrored(rates, "falls").rate == pytest.approx(0.8)  # type: ignore[union-attr]
    assert powerplan.mirrored(rates, "not_falls").rate == pytest.approx(0.8)  # type: ignore[union-attr]
    assert powerplan.mirrored(rates, "rises") is rates
    normal = simulate.Components(fixture=0.1, run=0.0, cell=0.2, df=5)
    assert powerplan.mirrored(normal, "falls") is normal
    assert powerplan.describe(normal) == NormalModel(fixture=0.1, run=0.0, cell=0.2)
    assert powerplan.describe(rates) == RatesModel(levels=1, baseline_rate=0.2, fixture_sd=0.1, run_sd=0.0,
                                                   effect_sd=0.0)
    assert msgspec.to_builtins(powerplan.describe(normal)) == {"model": "normal", "fixture": 0.1, "run": 0.0,
                                                               "cell": 0.2}


def test_a_rates_clause_has_its_power_curve_and_the_needed_gap_inside_the_bracket_it_gives() -> None:
    model = Assumptions(0.5, fixture_sd=0.1).model()
    entry = powerplan.effect_entry(CLAUSE, model, 20, 5, 0.05, ranged=False)
    assert not isinstance(entry.power_at, msgspec.UnsetType)
    curve = {g: p for g, p in entry.power_at if g is not None and p is not None}  # a None fails the next line
    assert sorted(curve) == list(powerplan.CURVE)
    assert [curve[g] for g in powerplan.CURVE] == sorted(curve.values())  # power grows with the gap
    gap = entry.needed_gap
    assert isinstance(gap, float)
    short, enough = [g for g, p in curve.items() if p < powerplan.POWER], [g for g, p in curve.items()
                                                                           if p >= powerplan.POWER]
    assert short and enough and max(short) <= gap <= min(enough)
    z = simulate.draws(model, 20, 5, powerplan.SEED)
    assert simulate.effect_power(z, gap, 0.05) >= powerplan.POWER > simulate.effect_power(z, gap - 0.01, 0.05)
    assert entry.needed_gap_range is msgspec.UNSET
    guard = powerplan.guard_entry(CLAUSE, model, 20, 5, 0.2, 0.05, "not_falls")
    above = guard.passes_if_true_gap_above
    assert guard.passes_if_true_gap_below is None and isinstance(above, float) and above > -0.2


def test_a_pilot_whose_baseline_came_out_high_plans_at_the_harder_rate_within_its_error() -> None:
    """A pass/fail pilot of 12 fixtures × 5 whose baseline came out at 0.65 with fixtures alike: the variant's
    noise shrinks as its rate nears 1, so the gap is easier to show at 0.65 than one standard error lower. The
    plan takes the lower rate, and so names a larger gap than its own rate alone would; declared assumptions
    are taken as they are."""
    spread = simulate.PilotSpread(fixtures=12, fixture_ms=0.02, sampling=0.025, rate_ms=0.045)
    high = simulate.Rates(rate=0.65, fixture_sd=0.0, run_sd=0.0, df=11, pilot=spread)
    chosen = powerplan.hardest_rate(high, 12, 5, 0.27)
    assert isinstance(chosen, simulate.Rates)
    assert chosen.rate == pytest.approx(0.65 - math.sqrt(0.045 / 12))
    own = powerplan.effect_entry(CLAUSE, high, 12, 5, 0.05, ranged=False).needed_gap
    plain = simulate.needed_gap(simulate.draws(high, 12, 5, powerplan.SEED), 0.05, tol=powerplan.TOL)
    assert isinstance(own, float) and own > plain + 0.005
    declared = Assumptions(0.65).model()
    assert powerplan.hardest_rate(declared, 12, 5, 0.27) is declared
