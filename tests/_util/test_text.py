"""Text shown to people: a lone surrogate becomes U+FFFD, and a CSV cell a spreadsheet would run is text."""

from __future__ import annotations

import pytest

from benchcard._util.text import displayable, plain_text, spreadsheet_text


def test_lone_surrogates_become_the_replacement_character_and_the_rest_is_kept() -> None:
    shown = displayable("red \ud83d and \udc00 done, 😀 é")
    assert shown == "red \ufffd and \ufffd done, 😀 é"
    shown.encode("utf-8")  # what could not be written as UTF-8 before now can
    assert displayable("plain") == "plain"


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"])
def test_a_cell_a_spreadsheet_would_run_gets_an_apostrophe_and_reads_back_as_written(cell: str) -> None:
    assert spreadsheet_text(cell) == "'" + cell
    assert plain_text(spreadsheet_text(cell)) == cell


@pytest.mark.parametrize("cell", ["", "red", "1.5", "'quoted", "a=b", " =1"])
def test_other_cells_are_left_as_they_are_both_ways(cell: str) -> None:
    assert spreadsheet_text(cell) == cell
    assert plain_text(cell) == cell
