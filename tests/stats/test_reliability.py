"""Krippendorff's alpha (stats/reliability.py): the published worked example, the undefined cases, and the
nominal and interval levels telling near misses from far ones."""

from __future__ import annotations

import pytest

from benchcard.stats.reliability import krippendorff_alpha


def test_krippendorff_alpha_reproduces_the_published_worked_example() -> None:
    """Krippendorff (2011), 4 coders × 12 units with missing values: nominal 0.743, interval 0.849."""
    nan = float("nan")
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
              [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    units = [list(u) for u in zip(*coders, strict=True)]
    assert round(krippendorff_alpha(units, "nominal") or 0, 3) == 0.743
    assert round(krippendorff_alpha(units, "interval") or 0, 3) == 0.849
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no disagreement to expect: undefined, not 1
    assert krippendorff_alpha([[1], [0]]) is None  # no unit judged twice


def test_perfect_agreement_is_one_and_units_judged_once_are_left_out() -> None:
    assert krippendorff_alpha([[1, 1, 1], [0, 0], [3, 3]], "nominal") == pytest.approx(1.0)
    # a unit with one value (and NaN for the others) cannot be paired: it changes nothing
    nan = float("nan")
    assert krippendorff_alpha([[1, 1, 1], [0, 0], [3, 3], [0, nan, nan]]) == pytest.approx(1.0)


def test_interval_alpha_counts_a_near_miss_less_than_a_far_one() -> None:
    near = [[0, 0], [1, 1], [2, 2], [3, 3], [2, 3]]
    far = [[0, 0], [1, 1], [2, 2], [3, 3], [0, 3]]
    assert krippendorff_alpha(near, "nominal") == pytest.approx(krippendorff_alpha(far, "nominal"))
    assert krippendorff_alpha(near, "interval") > krippendorff_alpha(far, "interval")  # type: ignore[operator]


def test_two_coders_who_always_disagree_on_a_binary_grade_score_below_zero() -> None:
    """Two coders, each unit graded 0 by one and 1 by the other: systematic disagreement, alpha < 0
    (by hand: D_o = 1, D_e = (2·4·4) / (8·7) = 4/7, so alpha = 1 − 7/4 = −0.75)."""
    units = [[0, 1], [1, 0], [0, 1], [1, 0]]
    assert krippendorff_alpha(units, "nominal") == pytest.approx(-0.75)
