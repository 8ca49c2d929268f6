"""One cell of `table.csv` as text (verdict/_tablecells.py): CSV quoting only where a field needs it, and metric
values written exactly as JSON holds them."""

from __future__ import annotations

import csv
import io
import math

import pytest

from benchcard.verdict._tablecells import csv_field, table_value


@pytest.mark.parametrize(("text", "field"), [
    ("ex-01", "ex-01"),
    ("", ""),
    ("a b · ü", "a b · ü"),  # spaces and non-ASCII need no quotes
    ("Test, API", '"Test, API"'),
    ('say "hi"', '"say ""hi"""'),
    ("two\nlines", '"two\nlines"'),
    ("cr\r", '"cr\r"'),
])
def test_a_field_is_quoted_only_when_it_holds_a_comma_a_quote_or_a_line_break(text: str, field: str) -> None:
    assert csv_field(text) == field
    # and any CSV reader reads the field back as the text
    assert next(csv.reader(io.StringIO(csv_field(text) + ",end\r\n"))) == [text, "end"]


@pytest.mark.parametrize(("value", "text"), [
    (True, "1"), (False, "0"),  # booleans as 1/0, never "True"
    (2, "2"), (-3, "-3"), (0, "0"),  # integers stay integers
    (0.5, "0.5"), (0.1 + 0.2, "0.30000000000000004"), (-0.0, "-0.0"), (1e16, "1e+16"),  # floats: shortest repr
    (None, ""), (math.nan, ""), (math.inf, ""), (-math.inf, ""),  # no number: an empty value
    ("0.5", ""), ([1], ""),  # not a number at all
])
def test_a_metric_value_is_written_as_json_holds_it(value: object, text: str) -> None:
    assert table_value(value) == text
