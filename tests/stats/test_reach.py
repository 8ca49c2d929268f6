"""The most a design can show (stats/reach.py): the plainest effect's win rate by design, and the smallest change
that makes a dead design reliable."""

from __future__ import annotations

import numpy as np
import pytest

from benchcard.stats import reach
from benchcard.stats.crossed import batch_signflip, crossed
from benchcard.stats.decision import p_beyond, p_effect
from benchcard.stats.reach import (
    RELIABLE,
    Change,
    _baseline_runs,
    best_power,
    reliable,
    sequential_power,
    smallest_change,
)
from benchcard.stats.sequential import Schedule, boundaries


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
    reach._wins.cache_clear()
    first = best_power(12, 3, 1)
    reach._wins.cache_clear()
    assert best_power(12, 3, 1) == first


def test_the_smallest_change_names_each_way_out_that_works() -> None:
    change = smallest_change(12, 3, 3)
    assert change.repetitions is not None and reliable(12, change.repetitions, 3)
    assert not reliable(12, change.repetitions - 1, 3)
    assert change.fixtures is not None and reliable(change.fixtures, 3, 3) and not reliable(change.fixtures - 1, 3, 3)
    assert change.variants is None  # even one variant is not reliable at 12 × 3
    assert change.together == (14, 5)  # 70 cells, fewer than 6 repetitions' 72
    assert change.text(12, 3, 3) == (f"use {change.repetitions} repetitions, or {change.fixtures} fixtures, or 14 "
                                      "fixtures and 5 repetitions together")
    assert Change(None, None, 1).text(12, 5, 5) == "use 1 variant beside the baseline"
    nothing = Change(None, None, None).text(4, 2, 1)
    assert nothing.startswith("no change within 30 repetitions and 2000 fixtures does (now 4 × 2, 1 variant(s))")
    # designs past 2,000 cells are simulated on a cut (783b123), so the line says its search is bounded by that too
    assert nothing.endswith("a design past 2,000 cells is judged on its largest cut within them, which only loses "
                            "power"), nothing


@pytest.mark.long
def test_when_no_single_change_is_enough_both_together_are_named_and_are_enough() -> None:
    """One repetition and too few fixtures (or two variants at 2 × 2): more of either alone never wins; the pair
    named does, and more of both is named only where it takes fewer calls than any single change."""
    for design in ((2, 1, 1), (4, 1, 3), (2, 2, 2)):
        change = smallest_change(*design)
        assert change.repetitions is None and change.fixtures is None and change.together is not None, design
        fixtures, repetitions = change.together
        assert reliable(fixtures, repetitions, design[2]), design
        assert change.text(*design) == f"use {fixtures} fixtures and {repetitions} repetitions together"
    assert smallest_change(12, 5, 3).together is None  # 6 repetitions or 14 fixtures: fewer calls than any pair


def test_a_min_effect_above_the_plainest_gap_is_answered_by_a_smaller_one() -> None:
    assert best_power(24, 5, 1, 0.05, 0.6) < RELIABLE <= best_power(24, 5, 1, 0.05)
    change = smallest_change(24, 5, 1, 0.05, 0.6)
    assert change.min_effect is not None and reliable(24, 5, 1, 0.05, change.min_effect)
    assert not reliable(24, 5, 1, 0.05, change.min_effect + 0.01)
    assert change.text(24, 5, 1) == f"use a min_effect of at most {change.min_effect:.2f}"


def test_a_sequential_design_with_several_variants_is_judged_by_holm_at_each_looks_nominal_level() -> None:
    """Every variant right every time: the run wins at the first look whose p reaches that look's nominal level
    divided by V (Holm's first step over alike variants), spent at full α — not the looks of a design at α/V."""
    looks, variants = (2, 4, 6), 3
    nominal = boundaries(Schedule(looks=looks, spending="pocock", futility=False)).nominal
    base = _baseline_runs(12, looks[-1])
    won = np.zeros(base.shape[0], dtype=bool)
    for r, level in zip(looks, nominal, strict=True):
        c = crossed(base[:, :, :r], np.ones_like(base[:, :, :r]))
        flips = np.ones_like(c.gap)
        flips[c.zero_se] = batch_signflip(c.d[c.zero_se], c.n_fixtures[c.zero_se])
        won |= p_effect(c, flips, True) <= level / variants
    power = sequential_power(12, Schedule(looks=looks, spending="pocock", futility=False), variants=variants)
    assert power == float(won.mean())
    assert round(power, 3) == 0.895  # 0.900 with the null table before 2026-12-06 (docs/cards.md)


def test_a_large_design_is_judged_reliable_from_its_cut_without_drawing_every_fixture(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A data file of 20,000 fixtures × 5 repetitions: `check` drew 2,000 runs of all of them (13.8 GB); a cut to
    BOUND_FIXTURES × BOUND_REPETITIONS that is reliable answers for it, since fewer of either only loses power."""
    from benchcard.stats import _tablecache

    drawn: list[tuple[int, int]] = []
    real = reach._baseline_runs

    def spy(fixtures: int, repetitions: int, batch: int = 0) -> np.ndarray:
        drawn.append((fixtures, repetitions))
        return real(fixtures, repetitions, batch)

    monkeypatch.setattr(reach, "_baseline_runs", spy)
    monkeypatch.setenv(_tablecache.ENV, "")  # the cache off: every table is drawn here, and seen
    reach._evidence.cache_clear()
    reach._crossed.cache_clear()
    reach._wins.cache_clear()
    try:
        assert reliable(20_000, 5, 1) and reliable(5_000, 40, 2, 0.05, 0.0, 0.9)
        assert drawn and max(f for f, _ in drawn) <= reach.BOUND_FIXTURES
        assert max(r for _, r in drawn) <= reach.BOUND_REPETITIONS
    finally:
        reach._evidence.cache_clear()
        reach._crossed.cache_clear()
        reach._wins.cache_clear()


def test_the_cut_never_says_reliable_where_the_whole_design_is_not() -> None:
    """The bound is sound where both can be drawn: a reliable cut's whole design is reliable too, and a design whose
    cut is not reliable is drawn whole (a min_effect beyond the plainest gap stays dead at any size)."""
    assert reliable(200, 10, 3) and best_power(240, 12, 3) >= best_power(200, 10, 3)
    assert not reliable(400, 12, 1, 0.05, 0.6)


def test_a_design_near_the_call_cap_is_never_simulated_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """100,000 fixtures × 5 repetitions (1,000,000 calls with the baseline) with a min_effect its 200 × 5 cut cannot
    reach reliably: `check`, `seal` and `plan` fell back to drawing 2,000 runs of the whole design (8 GB for the
    baseline alone, then the statistics, for minutes). Every simulated run now holds at most the cut's cells, the
    design is judged on its largest cut within them and says so; a sequential design likewise."""
    from benchcard.stats import _tablecache
    from benchcard.stats.reach import sequential_reliable, share_text

    drawn: list[tuple[int, int]] = []
    real = reach._baseline_runs

    def spy(fixtures: int, repetitions: int, batch: int = 0) -> np.ndarray:
        drawn.append((fixtures, repetitions))
        assert fixtures * repetitions <= 200 * 10, f"{fixtures} × {repetitions} drawn whole"  # before it is drawn
        return real(fixtures, repetitions, batch)

    monkeypatch.setattr(reach, "_baseline_runs", spy)
    monkeypatch.setenv(_tablecache.ENV, "")  # the cache off: every table is drawn here, and seen
    for cache in (reach._evidence, reach._crossed, reach._wins, reach._sequential_wins, reach.smallest_change):
        cache.cache_clear()
    try:
        assert not reliable(100_000, 5, 1, 0.05, 0.49)
        assert share_text(100_000, 5, 1, 0.05, 0.49) == (
            "wins 76% of simulated runs of its cut to 400 × 5 (the whole design is too large to simulate; more "
            "fixtures or repetitions only add power)")
        assert smallest_change(100_000, 5, 1, 0.05, 0.49).min_effect == 0.47
        assert reliable(100_000, 5, 1, 0.05, 0.45)  # a reliable cut still answers for the whole design
        plan = Schedule(looks=(3, 6, 9), spending="obrien-fleming", futility=False)
        assert not sequential_reliable(10_000, plan, variants=1, min_effect=0.49)
        assert drawn and max(f * r for f, r in drawn) <= 200 * 10
    finally:
        for cache in (reach._evidence, reach._crossed, reach._wins, reach._sequential_wins, reach.smallest_change):
            cache.cache_clear()


def _cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """No table kept on disk or in this process: every design asked is drawn here (or ruled out without drawing)."""
    from benchcard.stats import _tablecache, worstcase

    monkeypatch.setenv(_tablecache.ENV, "")
    for cached in (reach._wins, reach._evidence, reach._crossed, reach._surely_short, reach.smallest_change,
                   worstcase._null_scores):
        cached.cache_clear()


def test_the_p_without_its_worst_case_is_a_floor_so_a_design_it_leaves_short_is_short(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A design search rules out a design without its null table when even the verdict's p without the worst case
    (Student's, which the worst case only raises) leaves it short: exact, never a design the whole p accepts."""
    _cold(monkeypatch)
    for cells in ((12, 2), (24, 3), (16, 5)):
        c = reach._crossed(*cells)
        p, floor = reach._judged(c)[1], reach._judged(c, worst=False)[1]
        assert (floor <= p).all() and ((floor < p).any() or cells == (12, 2)), cells  # raised at 3 repetitions up
        assert (p_beyond(c, 0.6, False, worst=False) <= p_beyond(c, 0.6, False)).all(), cells
    short = 0
    for design in ((12, 3, 5), (48, 3, 5), (15, 5, 5), (7, 5, 1), (8, 5, 1), (6, 10, 1), (12, 6, 5), (96, 2, 5)):
        if reach._surely_short(*design, 0.05, 0.0, None):
            short += 1
            assert not reach._surely(*reach._wins(*design, 0.05, 0.0, None)), design
    assert short >= 4


def test_a_dead_cards_search_for_the_smallest_change_draws_few_designs_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` of a card at 12 fixtures × 2 repetitions with 5 variants drew 26 designs' null tables in its search
    for the smallest change (32 s on the shared machine, 127 s at load 10). The designs the p without its worst case
    leaves short are ruled out without one, and the pairs of more fixtures and repetitions are searched only below
    the best pair found: the same answer from 8."""
    from benchcard.stats import worstcase

    _cold(monkeypatch)
    drawn: list[tuple[int, int, int]] = []
    real = worstcase.draw_null_scores

    def spy(n: int, complete: int, r: int) -> np.ndarray:
        drawn.append((n, complete, r))
        return real(n, complete, r)

    monkeypatch.setattr(worstcase, "draw_null_scores", spy)
    try:
        assert smallest_change(12, 2, 5).text(12, 2, 5) == "use 7 repetitions"
        assert len(drawn) <= 8, drawn
    finally:
        _cold(monkeypatch)
