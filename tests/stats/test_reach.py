"""The most a design can show (stats/reach.py): the plainest effect's win rate by design, and the smallest change
that makes a dead design reliable."""

from __future__ import annotations

from benchcard.stats.reach import RELIABLE, Change, best_power, reliable, smallest_change


def test_the_plainest_effect_wins_where_the_design_allows_it_and_rises_with_it() -> None:
    assert best_power(12, 5, 1) >= RELIABLE
    assert best_power(12, 10, 5) >= RELIABLE
    assert best_power(12, 3, 1) < best_power(24, 3, 1) < best_power(48, 3, 1)  # no plateau: more fixtures help
    assert best_power(12, 3, 3) < best_power(12, 3, 1)  # Holm's α/V asks more of each variant


def test_what_can_never_win_is_zero() -> None:
    assert best_power(5, 10, 1) == 0.0  # the sign-flip's smallest p, 2/32, is above α
    assert best_power(6, 10, 2) == 0.0  # … and 2/64 above α/2
    assert best_power(12, 1, 1) == 0.0  # one repetition: the run term cannot be measured


def test_the_figure_is_seeded() -> None:
    best_power.cache_clear()
    first = best_power(12, 3, 1)
    best_power.cache_clear()
    assert best_power(12, 3, 1) == first


def test_the_smallest_change_names_each_way_out_that_works() -> None:
    change = smallest_change(12, 3, 3)
    assert change.repetitions is not None and reliable(12, change.repetitions, 3)
    assert not reliable(12, change.repetitions - 1, 3)
    assert change.fixtures is not None and reliable(change.fixtures, 3, 3) and not reliable(change.fixtures - 1, 3, 3)
    assert change.variants is None  # even one variant is not reliable at 12 × 3
    assert change.text(12, 3, 3) == f"use {change.repetitions} repetitions, or {change.fixtures} fixtures"
    assert Change(None, None, 1).text(12, 5, 5) == "use 1 variant beside the baseline"
    assert "no single change" in Change(None, None, None).text(4, 2, 1)
