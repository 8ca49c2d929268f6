"""Krippendorff's alpha, the judge's agreement with itself (its other tests are in tests/scoring/judge/ and
tests/card/test_judgecheck.py)."""

from __future__ import annotations


def test_krippendorff_alpha_reproduces_the_published_worked_example() -> None:
    """Krippendorff (2011), 4 coders × 12 units with missing values: nominal 0.743, interval 0.849."""
    from benchcard.verdict.reliability import krippendorff_alpha

    nan = float("nan")
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
              [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    units = [list(u) for u in zip(*coders, strict=True)]
    assert round(krippendorff_alpha(units, "nominal") or 0, 3) == 0.743
    assert round(krippendorff_alpha(units, "interval") or 0, 3) == 0.849
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no disagreement to expect: undefined, not 1
    assert krippendorff_alpha([[1], [0]]) is None  # no unit judged twice
