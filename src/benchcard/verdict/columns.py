"""The columns a verdict needs from a run's JSONL files, decoded by `records` (msgspec, typed) into arrays.

One reader for every file and dialect: a row that is not JSON, lacks a field or holds the wrong type is named
by file, line and field. `runfolder.read_run_data` joins these columns into one `RunData`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, methodcaller
from pathlib import Path
from typing import TypeVar

import msgspec
import numpy as np
import numpy.typing as npt
from msgspec import UNSET

from benchcard._util.lastrow import last_per_cell
from benchcard.errors import VerdictError
from benchcard.records.rows import CELL_STATUSES as STATUSES
from benchcard.records.rows import (
    FAILED,
    MISSING,
    OK,
    STATUS_CODES,
    TRUNCATED,
    AssignmentRow,
    Metric,
    OutputFigures,
    ScoreLine,
    ScoreRow,
    decode_rows,
)
from benchcard.run.griddraws import GridColumns, cell_names

__all__ = [
    "FAILED",
    "MISSING",
    "OK",
    "STATUSES",
    "STATUS_CODES",
    "TRUNCATED",
    "FloatArray",
    "Grid",
    "IntArray",
    "Outputs",
    "Scores",
    "drawn_grid",
    "first_repetitions",
    "read_assignment",
    "read_outputs",
    "read_scores",
]

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
    """`scores.jsonl` as columns."""

    cells: list[str]
    status: IntArray  # codes into STATUSES
    score: FloatArray
    names: list[str]
    column: Callable[[str], FloatArray]  # a metric over score rows, built when asked for
    rules: dict[str, FloatArray]
    metric_rows: list[dict[str, Metric]]  # row i's metrics as decoded (the table writes them as they are)
    metric_order: tuple[str, ...] | None  # the names in the one order every row with metrics has, if one
    # the rows left out, each an output the scorer read but could not score (`ScoreRow.unscored`): cell → why
    unscored: dict[str, str] = field(default_factory=dict)


@dataclass
class Outputs:
    """`outputs.jsonl` as columns (every row's text is skipped by the decoder)."""

    cells: list[str]
    fixtures: list[str]
    status: IntArray
    cost: FloatArray
    latency_ms: FloatArray
    tokens: dict[str, FloatArray]
    cost_upper_bound: int = 0  # rows whose cost is an upper bound (cached input priced in full)


# Row fields read by C-level `map`: a generator expression costs a Python frame step per row.
_CELL, _FIXTURE, _STATUS, _SCORE = attrgetter("cell"), attrgetter("fixture"), attrgetter("status"), attrgetter("score")
_METRICS, _RULES, _USAGE = attrgetter("metrics"), attrgetter("rules"), attrgetter("usage")
_UNSCORED = attrgetter("unscored")
_COST, _LATENCY, _UPPER = attrgetter("cost"), attrgetter("latency_ms"), attrgetter("cost_upper_bound")
_VARIANT, _REPETITION = attrgetter("variant"), attrgetter("repetition")


def _codes(values: Sequence[str], order: list[str]) -> tuple[IntArray, list[str]]:
    """Per-row codes of a few distinct values, ordered as `order`, then sorted."""
    distinct = set(values)
    ranked = [o for o in order if o in distinct] + sorted(distinct - set(order))
    rank = dict(zip(ranked, range(len(ranked)), strict=True))
    return np.fromiter(map(rank.__getitem__, values), np.int64, len(values)), ranked


def _status_codes(statuses: list[str]) -> IntArray:
    """Status codes of rows; a file of ok rows only (the usual run) is recognised by one count, not a look-up
    per row."""
    n = len(statuses)
    if statuses.count("ok") == n:
        return np.full(n, OK, np.int64)
    return np.fromiter(map(STATUS_CODES.__getitem__, statuses), np.int64, n)


def read_assignment(data: bytes, baseline: str | None, path: Path) -> Grid:
    """`sealed/assignment.jsonl` as codes (baseline first among variants); two cells on one grid point are an
    error."""
    rows = decode_rows(data, AssignmentRow, path, VerdictError)
    n = len(rows)
    variant, variant_names = _codes(list(map(_VARIANT, rows)), [baseline] if baseline else [])
    fixture, fixture_names = _codes(list(map(_FIXTURE, rows)), [])
    reps = np.fromiter(map(_REPETITION, rows), np.int64, n)
    repetitions = sorted(set(reps.tolist()))
    repetition = np.searchsorted(np.asarray(repetitions, dtype=np.int64), reps).astype(np.int64)
    keys = (variant * len(fixture_names) + fixture) * len(repetitions) + repetition
    if n and np.bincount(keys).max() > 1:
        raise VerdictError(f"{path}: two cells share a (variant, fixture, repetition)")
    return Grid(cells=list(map(_CELL, rows)), variants=variant_names, fixtures=fixture_names,
                repetitions=repetitions, variant=variant, fixture=fixture, repetition=repetition)


def first_repetitions(plan: Grid, upto: int) -> Grid:
    """The plan's cells of the first `upto` repetitions only: what a sequential run had called at a look."""
    reps = np.asarray(plan.repetitions, dtype=np.int64)
    keep = reps[plan.repetition] < upto
    cells = [c for c, k in zip(plan.cells, keep.tolist(), strict=True) if k]
    return Grid(cells=cells, variants=plan.variants, fixtures=plan.fixtures,
                repetitions=[r for r in plan.repetitions if r < upto], variant=plan.variant[keep],
                fixture=plan.fixture[keep], repetition=plan.repetition[keep])


def drawn_grid(plan: GridColumns, variant_names: Sequence[str], baseline: str | None) -> Grid:
    """The `read_assignment` of an assignment file whose digest is that of `plan` (the one `run.grid` re-derives
    from the card and the seed): the same codes and names, from the re-derived columns, without decoding the
    file again. Its cells are distinct and no two share a grid point by construction."""
    present = [variant_names[k] for k in np.unique(plan.variant).tolist()]
    variant_rank, variants = _codes(present, [baseline] if baseline else [])
    remap = np.zeros(len(variant_names), dtype=np.int64)
    remap[[variant_names.index(v) for v in present]] = variant_rank
    block_fixtures = [f for f, _ in plan.blocks]
    block_fixture, fixtures = _codes(block_fixtures, [])
    block_reps = np.fromiter((r for _, r in plan.blocks), np.int64, len(plan.blocks))
    repetitions = sorted(set(block_reps.tolist()))
    block_rep = np.searchsorted(np.asarray(repetitions, dtype=np.int64), block_reps).astype(np.int64)
    return Grid(cells=cell_names(plan.ids), variants=variants, fixtures=fixtures, repetitions=repetitions,
                variant=remap[plan.variant], fixture=block_fixture[plan.block], repetition=block_rep[plan.block])


def _floats(values: Iterable[Metric]) -> FloatArray:
    """Numbers as a float column: true/false count as 1/0; null is NaN (numpy's conversion of None)."""
    items = values if isinstance(values, list) else list(values)
    try:  # `float` of each item, at C speed: the same values numpy's conversion gives
        return np.fromiter(items, np.float64, len(items))
    except (TypeError, OverflowError):  # a null among them (numpy's conversion then says what else is wrong)
        return np.array(items, dtype=np.float64)


_SCORE_LINES = msgspec.json.Decoder(ScoreLine)
_METRIC_OBJECTS = msgspec.json.Decoder(list[dict[str, Metric]])


def _distinct_metrics(rows: list[ScoreLine]) -> tuple[list[dict[str, Metric]], IntArray] | None:
    """Each distinct metrics text of the rows decoded once (first seen first) and each row's code into them;
    None when one of them is not a ScoreRow's metrics (the ScoreRow reader then names the line)."""
    texts = list(map(bytes, map(_METRICS, rows)))
    first_of: dict[bytes, int] = {}
    first = np.fromiter(map(first_of.setdefault, texts, range(len(texts))), np.int64, len(texts))
    firsts, codes = np.unique(first, return_inverse=True)  # the first rows' order is the first-seen order
    try:
        distinct = _METRIC_OBJECTS.decode(b"[" + b",".join(texts[i] for i in firsts.tolist()) + b"]")
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return distinct, codes.astype(np.int64)


def _score_lines(data: bytes, path: Path, latest: bool, unscored: dict[str, str]
                 ) -> tuple[list[ScoreRow] | list[ScoreLine], list[dict[str, Metric]], IntArray]:
    """The rows of scores.jsonl, their distinct metrics and each row's code into them: decoded as ScoreLines
    (each distinct metrics text once), or, when that fails, as ScoreRows, which name the bad line. The rows of
    outputs left unscored (`ScoreRow.unscored`) are left out, into `unscored`."""
    try:
        lines: list[ScoreLine] = _SCORE_LINES.decode_lines(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        lines = []
    else:
        if latest:
            lines = last_per_cell(lines, _CELL)
        lines = _scored_only(lines, unscored)
        found = _distinct_metrics(lines)
        if found is not None:
            return lines, found[0], found[1]
    unscored.clear()
    rows = decode_rows(data, ScoreRow, path, VerdictError)
    if latest:
        rows = last_per_cell(rows, _CELL)
    rows = _scored_only(rows, unscored)
    return rows, list(map(_METRICS, rows)), np.arange(len(rows), dtype=np.int64)


Line = TypeVar("Line", ScoreLine, ScoreRow)


def _scored_only(rows: list[Line], unscored: dict[str, str]) -> list[Line]:
    """`rows` without those of outputs the scorer read but could not score (`ScoreRow.unscored`), which go into
    `unscored` (cell → why): the verdict counts them as outputs without a score, as a judge's unreadable answer."""
    whys = list(map(_UNSCORED, rows))
    if whys.count(UNSET) == len(whys):
        return rows
    unscored.update((r.cell, why) for r, why in zip(rows, whys, strict=True) if isinstance(why, str))
    return [r for r, why in zip(rows, whys, strict=True) if not isinstance(why, str)]


def read_scores(data: bytes, path: Path, *, latest: bool = False) -> Scores:
    """`scores.jsonl`: status, score, metrics and rule results of every row (C-level maps, no per-row Python;
    `latest`, a retried run: of each cell's last row, its retried outcome's score, run/_retry.py). A metric's
    column is built from the distinct metric objects, then gathered per row."""
    unscored: dict[str, str] = {}
    rows, distinct, codes = _score_lines(data, path, latest, unscored)
    names: dict[str, None] = {}
    orders = [keys for keys in dict.fromkeys(map(tuple, distinct)) if keys]  # each key order once, first seen first
    for keys in orders:
        names.update(dict.fromkeys(keys))
    rules_of = list(map(_RULES, rows))
    rule_names: dict[str, None] = {}
    for keys in dict.fromkeys(tuple(r) for r in rules_of if r):
        rule_names.update(dict.fromkeys(keys))
    score = _floats(map(_SCORE, rows))
    status = _status_codes(list(map(_STATUS, rows)))

    def column(name: str) -> FloatArray:
        return _floats(map(methodcaller("get", name), distinct))[codes]

    rules = {name: _floats(None if r is None else r.get(name) for r in rules_of) for name in rule_names}
    metric_rows = _objects(distinct)[codes].tolist() if len(distinct) < len(codes) else distinct
    return Scores(list(map(_CELL, rows)), status, score, list(names), column, rules, metric_rows,
                  orders[0] if len(orders) == 1 else None, unscored)


def _objects(items: Sequence[object]) -> npt.NDArray[np.object_]:
    """A 1-d object array of `items` (numpy would read nested sequences as more dimensions)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def read_outputs(data: bytes, path: Path, *, latest: bool = False) -> Outputs:
    """`outputs.jsonl`: cell, fixture, status, cost, latency and token usage of every row (`latest`, a retried
    run: of each cell's last row, its outcome; earlier rows are attempts, run/_retry.py)."""
    rows = decode_rows(data, OutputFigures, path, VerdictError)
    if latest:
        rows = last_per_cell(rows, _CELL)
    n = len(rows)
    usage = list(map(_USAGE, rows))
    return Outputs(
        cells=list(map(_CELL, rows)),
        fixtures=list(map(_FIXTURE, rows)),
        status=_status_codes(list(map(_STATUS, rows))),
        cost=_floats(map(_COST, rows)),
        latency_ms=_floats(map(_LATENCY, rows)),
        tokens={k: np.fromiter(map(attrgetter(k), usage), np.float64, n) for k in ("input", "output", "reasoning")},
        cost_upper_bound=list(map(_UPPER, rows)).count(True),
    )
