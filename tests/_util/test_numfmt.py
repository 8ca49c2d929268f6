"""One formatter of each kind, as the verdict's text, the pages, `plan` and the judge's figures print them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchcard._util.numfmt import (
    DASH,
    dollars,
    fixed,
    interval,
    level,
    millis,
    money,
    p_equals,
    p_value,
    real,
    written_halfwidth,
)


@pytest.mark.parametrize(("x", "signed", "text"), [
    (0.1234, False, "0.123"), (-0.1236, False, "−0.124"), (0.05, True, "+0.050"), (-0.05, True, "−0.050"),
    (math.inf, False, "∞"), (-math.inf, True, "−∞"), (math.nan, False, "n/a"), (None, False, "n/a"),
    (2, False, "2.000"), (np.float64(-0.5), False, "−0.500"), (np.int64(3), False, "3.000"),
    (True, False, "n/a"), ("0.5", False, "n/a"),
])
def test_figures_are_shown_to_three_places_with_a_true_minus(x: object, signed: bool, text: str) -> None:
    assert fixed(x, signed=signed) == text


def test_a_page_shows_a_dash_and_plan_an_ascii_minus() -> None:
    assert (fixed(0.456, 2, missing=DASH), fixed(None, 2, missing=DASH), fixed(math.nan, missing=DASH)) == (
        "0.46", "—", "—")
    assert fixed(-0.25, minus="-") == "-0.250" and fixed(-math.inf, minus="-") == "-∞"
    assert interval(-0.25, 0.5) == "[−0.250, 0.500]" and interval(None, 1, missing=DASH) == "[—, 1.000]"


def test_p_values_levels_money_and_milliseconds_in_words() -> None:
    assert p_equals(0.01234) == "= 0.0123" and p_equals(0.00001) == "< 0.0001" and p_equals(None) == "= n/a"
    assert (p_value(0.0001), p_value(0.00009999)) == ("0.0001", "< 0.0001")
    assert (p_value(0.0456, 3, missing=DASH), p_value(0.0009, 3), p_value(None, 3, missing=DASH)) == (
        "0.046", "< 0.001", "—")
    assert (level(0.05), level(0.1), level(0.005), level(2 * 0.05)) == ("95%", "90%", "99.5%", "90%")
    assert (money(0), money(0.004), money(1.234), money(None), money(False)) == ("$0", "$0.0040", "$1.23", "—", "—")
    assert (millis(1234.6), millis(None)) == ("1,235 ms", "—")
    assert (dollars(0.01234), dollars(1234.5), dollars(0.000012, 5), dollars(None)) == (
        "$0.0123", "$1,234.5000", "$0.00001", "n/a")  # the terminal's cost: a run's, a judge's, a plan's
    assert real(math.nan) is None and real(False) is None and real(np.float32(0.5)) == 0.5


def test_a_half_width_written_null_reads_infinite_and_an_absent_one_missing() -> None:
    """null in verdict.json is a run term nothing bounds (one repetition): `±∞`, as an interval's open end reads;
    only a figure that is not there at all reads as missing."""
    assert written_halfwidth(None) == "±∞"
    assert written_halfwidth(0.1339) == "±0.134"
    assert written_halfwidth("unset", missing=DASH) == DASH
