"""A retried run's current row of each cell is its last one, in file order; its earlier rows are kept apart."""

from __future__ import annotations

from benchcard._util.lastrow import last_per_cell, split_earlier

ROWS = [("c1", "failed"), ("c2", "ok"), ("c3", "failed"), ("c1", "failed"), ("c3", "ok"), ("c1", "ok")]


def cell(row: tuple[str, str]) -> str:
    return row[0]


def test_each_cell_keeps_its_last_row_in_the_order_those_rows_stand() -> None:
    assert last_per_cell(ROWS, cell) == [("c2", "ok"), ("c3", "ok"), ("c1", "ok")]


def test_rows_without_a_repeated_cell_come_back_unchanged_from_any_iterable() -> None:
    once = [("c2", "ok"), ("c1", "truncated")]
    assert last_per_cell(once, cell) is once
    assert last_per_cell(iter(once), cell) == once
    assert last_per_cell([], cell) == []


def test_split_earlier_gives_the_last_rows_and_each_retried_cells_earlier_rows_oldest_first() -> None:
    latest, earlier = split_earlier(ROWS, cell)
    assert latest == last_per_cell(ROWS, cell)
    assert earlier == {"c1": [("c1", "failed"), ("c1", "failed")], "c3": [("c3", "failed")]}
    assert split_earlier([("c9", "ok")], cell) == ([("c9", "ok")], {})
