"""The current row of each cell. `outputs.jsonl` is append-only: a cell called again by `run --retry-failed` keeps
its earlier rows above its new one, so every reader of a retried run takes the last row of each cell, here."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

Row = TypeVar("Row")


def last_per_cell(rows: Iterable[Row], cell: Callable[[Row], Hashable]) -> list[Row]:
    """The last row of each cell (`cell(row)` names it), in the order those rows stand in the file. The rows are
    held in memory; a file without a repeated cell comes back as it is, after one C-level pass over the ids."""
    rows = rows if isinstance(rows, list) else list(rows)
    last = dict(zip(map(cell, rows), range(len(rows)), strict=True))  # a repeated id keeps its last index
    if len(last) == len(rows):
        return rows
    return [rows[i] for i in sorted(last.values())]


def split_earlier(rows: Iterable[Row], cell: Callable[[Row], Hashable]) -> tuple[list[Row], dict[Hashable, list[Row]]]:
    """`last_per_cell`, and each retried cell's earlier rows (oldest first): what the evidence pages show."""
    earlier: dict[Hashable, list[Row]] = {}
    latest: dict[Hashable, Row] = {}
    for row in rows:
        key = cell(row)
        before = latest.pop(key, None)
        if before is not None:
            earlier.setdefault(key, []).append(before)
        latest[key] = row
    return list(latest.values()), earlier
