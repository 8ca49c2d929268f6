"""The columns a verdict needs from a run's JSONL files, decoded by `records` (msgspec, typed) into arrays.

One reader for every file and dialect: a row that is not JSON, lacks a field or holds the wrong type is named
by file, line and field. `runfolder.read_run` joins these columns into one `RunData`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchcard.errors import VerdictError
from benchcard.records import CELL_STATUSES as STATUSES
from benchcard.records import (
    FAILED,
    MISSING,
    OK,
    STATUS_CODES,
    TRUNCATED,
    AssignmentRow,
    Metric,
    OutputFigures,
    ScoreRow,
    decode_rows,
)
from benchcard.verdict.tablecells import csv_field, table_value

__all__ = ["FAILED", "MISSING", "OK", "STATUSES", "STATUS_CODES", "TRUNCATED", "FloatArray", "Grid", "IntArray",
           "Outputs", "Scores", "read_outputs", "read_plan", "read_scores"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass
class Grid:
    """The planned cells, index i in assignment order: ids, and codes into `variants`, `fixtures` and
    `repetitions`."""

    cells: list[str]
    variants: list[str]
    fixtures: list[str]
    repetitions: list[int]
    variant: IntArray
    fixture: IntArray
    repetition: IntArray


@dataclass
class Scores:
    """`scores.jsonl` as columns; `pairs[i]` is row i's metrics as table text (`table.py`), or None."""

    cells: list[str]
    status: IntArray  # codes into STATUSES
    score: FloatArray
    names: list[str]
    column: Callable[[str], FloatArray]  # a metric over score rows, built when asked for
    rules: dict[str, FloatArray]
    pairs: list[str | None]


@dataclass
class Outputs:
    """`outputs.jsonl` as columns (every row's text is skipped by the decoder)."""

    cells: list[str]
    fixtures: list[str]
    status: IntArray
    cost: FloatArray
    latency_ms: FloatArray
    tokens: dict[str, FloatArray]


def _codes(values: Sequence[str], order: list[str]) -> tuple[IntArray, list[str]]:
    """Per-row codes of a few distinct values, ordered as `order`, then sorted."""
    distinct = set(values)
    ranked = [o for o in order if o in distinct] + sorted(distinct - set(order))
    rank = {name: i for i, name in enumerate(ranked)}
    return np.fromiter(map(rank.__getitem__, values), np.int64, len(values)), ranked


def read_plan(data: bytes, baseline: str | None, path: Path) -> Grid:
    """`sealed/assignment.jsonl` as codes (baseline first among variants); two cells on one grid point are an
    error."""
    rows = decode_rows(data, AssignmentRow, path, VerdictError)
    n = len(rows)
    variant, variant_names = _codes([r.variant for r in rows], [baseline] if baseline else [])
    fixture, fixture_names = _codes([r.fixture for r in rows], [])
    reps = np.fromiter((r.repetition for r in rows), np.int64, n)
    repetitions = sorted(set(reps.tolist()))
    repetition = np.searchsorted(np.asarray(repetitions, dtype=np.int64), reps).astype(np.int64)
    keys = (variant * len(fixture_names) + fixture) * len(repetitions) + repetition
    if n and np.bincount(keys).max() > 1:
        raise VerdictError(f"{path}: two cells share a (variant, fixture, repetition)")
    return Grid(cells=[r.cell for r in rows], variants=variant_names, fixtures=fixture_names,
                repetitions=repetitions, variant=variant, fixture=fixture, repetition=repetition)


# A value `%r` writes differently from table.csv's form (`table_value`): a bool, None, NaN or an infinity.
_ODD = re.compile(r",(?:True|False|None|nan|inf|-inf)(?:\x00|$)")


def _value(value: Metric) -> float:
    """A metric or rule value as a number: true/false count as 1/0; null is NaN."""
    if value is None:
        return math.nan
    return float(value)


def read_scores(data: bytes, path: Path) -> Scores:
    """`scores.jsonl`: status, score, metrics and rule results of every row."""
    rows = decode_rows(data, ScoreRow, path, VerdictError)
    n = len(rows)
    names: dict[str, None] = {}
    rule_names: dict[str, None] = {}
    pairs: list[str | None] = [None] * n
    order: tuple[str, ...] = ()
    template = ""
    for i, row in enumerate(rows):
        metrics = row.metrics
        if row.rules:
            rule_names.update(dict.fromkeys(row.rules))
        if not metrics:
            continue
        keys = tuple(metrics)
        if keys != order:  # a scorer writes the same metrics in the same order on every row: built once
            order = keys
            names.update(dict.fromkeys(keys))
            template = "\x00".join(csv_field(k).replace("%", "%%") + ",%r" for k in keys)
        text = template % tuple(metrics.values())
        if _ODD.search(text):  # true/false, null, NaN or infinity: written as table_value says, one by one
            text = "\x00".join(f"{csv_field(k)},{table_value(v)}" for k, v in metrics.items())
        pairs[i] = text
    score = np.fromiter((math.nan if r.score is None else r.score for r in rows), np.float64, n)
    status = np.fromiter((STATUS_CODES[r.status] for r in rows), np.int64, n)

    def column(name: str) -> FloatArray:
        return np.fromiter((_value(r.metrics.get(name)) for r in rows), np.float64, n)

    rules = {name: np.fromiter((math.nan if r.rules is None or name not in r.rules else float(r.rules[name])
                                for r in rows), np.float64, n) for name in rule_names}
    return Scores([r.cell for r in rows], status, score, list(names), column, rules, pairs)


def read_outputs(data: bytes, path: Path) -> Outputs:
    """`outputs.jsonl`: cell, fixture, status, cost, latency and token usage of every row."""
    rows = decode_rows(data, OutputFigures, path, VerdictError)
    n = len(rows)

    def floats(values: Iterable[float]) -> FloatArray:
        return np.fromiter(values, np.float64, n)

    return Outputs(
        cells=[r.cell for r in rows],
        fixtures=[r.fixture for r in rows],
        status=np.fromiter((STATUS_CODES[r.status] for r in rows), np.int64, n),
        cost=floats(math.nan if r.cost is None else r.cost for r in rows),
        latency_ms=floats(math.nan if r.latency_ms is None else r.latency_ms for r in rows),
        tokens={"input": floats(r.usage.input for r in rows), "output": floats(r.usage.output for r in rows),
                "reasoning": floats(r.usage.reasoning for r in rows)},
    )
