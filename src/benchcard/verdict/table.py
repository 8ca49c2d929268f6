"""`table.csv`: one row per planned cell and metric, the run's figures in a form any tool reads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from benchcard.records import Metric
from benchcard.verdict.tablecells import csv_field, table_value

if TYPE_CHECKING:
    from benchcard.verdict.runfolder import RunData

TABLE_FILE = "table.csv"
TABLE_COLUMNS = ("fixture", "variant", "repetition", "metric", "value", "rig")

MetricRow = dict[str, Metric] | None


def table_text(data: RunData, rig: str) -> str:
    """`table.csv`: one row per planned cell and metric (fixture, variant, repetition, metric, value, rig).

    Rows are ordered by fixture, variant (baseline first) and repetition; a cell's metrics keep the scorer's
    order. Cells without a score (truncated, failed, missing) have an empty value for every metric: they are
    in the table, unscored, never scored as wrong. Values are written as `tablecells.table_value` says: exactly
    as scores.jsonl holds them. Built as text (pandas' writer is several times slower at 10⁶ rows);
    `pandas.read_csv` reads it back.
    """
    names = list(data.metrics) or ["score"]
    rows: Sequence[MetricRow] = data.metric_rows
    if not data.metrics:  # a scorer that wrote no metrics: its score is the one metric
        rows = [None if math.isnan(s) else {"score": s} for s in data.score.tolist()]
    order = np.lexsort((data.repetition, data.variant, data.fixture))
    fixtures = np.array([csv_field(f) + "," for f in data.fixtures], dtype=object)
    variants = np.array([csv_field(v) + "," for v in data.variants], dtype=object)
    reps = np.array([str(r) + "," for r in data.repetitions], dtype=object)
    prefix = fixtures[data.fixture[order]] + variants[data.variant[order]] + reps[data.repetition[order]]
    suffix = "," + csv_field(rig) + "\n"
    sorted_rows = [rows[i] for i in order.tolist()]
    head = ",".join(TABLE_COLUMNS) + "\n"
    uniform = data.metric_order == tuple(names) or _one_order(sorted_rows, names)
    body = _uniform_body if uniform else _any_body
    return head + body(prefix.tolist(), sorted_rows, names, suffix)


def _uniform_body(prefix: list[str], rows: list[MetricRow], names: list[str], suffix: str) -> str:
    """The table's rows when every scored cell has exactly `names`, in that order (the usual case).

    Built a metric at a time, then a cell's block as `prefix + prefix.join(its k "metric,value,rig" lines)`:
    a few C-level passes instead of Python work per row.
    """
    scored = [r for r in rows if r]
    values = list(chain.from_iterable(map(dict.values, scored)))
    k = len(names)
    has = None if len(scored) == len(rows) else np.fromiter(map(bool, rows), bool, len(rows))
    columns = []
    for j, name in enumerate(names):
        head = csv_field(name) + ","
        lines = _value_lines(values[j::k], head, suffix)
        if has is not None:  # unscored cells: an empty value
            full = np.full(len(rows), head + suffix, dtype=object)
            full[has] = lines
            lines = full.tolist()
        columns.append(lines)
    blocks = map(str.join, prefix, zip(*columns, strict=True))
    return "".join(chain.from_iterable(zip(prefix, blocks, strict=True)))


def _one_order(rows: list[MetricRow], names: list[str]) -> bool:
    """Whether every row with metrics has exactly `names`, in that order."""
    return not set(map(tuple, filter(None, rows))) - {tuple(names)}


def _value_lines(column: list[Metric], head: str, tail: str) -> list[str]:
    """`head + table_value(v) + tail` for each value, formatted once per distinct value: floats (and nulls) by
    their bits, so 0.0 and -0.0 stay apart; integers (and true/false, which write as 1/0) by value."""
    kinds = set(map(type, column))
    if kinds <= {float, type(None)}:
        bits, which = np.unique(np.array(column, dtype=np.float64).view(np.int64), return_inverse=True)
        texts = np.array([head + table_value(v) + tail for v in bits.view(np.float64).tolist()], dtype=object)
        lines: list[str] = texts[which].tolist()  # a null is NaN here: both write as an empty value
        return lines
    if kinds <= {int, bool, type(None)}:
        memo = {v: head + table_value(v) + tail for v in set(column)}
        return list(map(memo.__getitem__, column))
    return [head + table_value(v) + tail for v in column]


def _any_body(prefix: list[str], rows: list[MetricRow], names: list[str], suffix: str) -> str:
    """The table's rows, cell by cell: any metric names, order and values (`table_value` for each)."""
    empty = [f"{csv_field(m)}," for m in names]
    parts: list[str] = []
    for start, row in zip(prefix, rows, strict=True):
        fields = [f"{csv_field(m)},{table_value(v)}" for m, v in row.items()] if row else empty
        parts.extend(start + f + suffix for f in fields)
    return "".join(parts)
