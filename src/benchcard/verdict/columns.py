"""The columns a verdict needs from a run's JSONL files, read by decoding every row with `json`.

This is the reference reader: it reads any valid file, and names the line or row that is not. `fastcolumns`
reads the same columns from plain files much faster and gives way to this reader whenever a file is not
plain; `runfolder.read_run` joins the columns of either reader into one `RunData`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchcard.errors import VerdictError
from benchcard.verdict.tablecells import csv_field, table_value

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

STATUSES = ("ok", "truncated", "failed", "missing")
OK, TRUNCATED, FAILED, MISSING = range(4)
STATUS_CODES = {"ok": OK, "truncated": TRUNCATED, "failed": FAILED}  # a row's status → its code
STATUS_CODE: dict[str | bytes, int] = {key: c for s, c in STATUS_CODES.items() for key in (s, s.encode())}


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
class Plan(Grid):
    """`sealed/assignment.jsonl` as columns: index i is the file's row i."""

    keys: Sequence[str | bytes]  # the cell ids as the scores and outputs readers will give them


@dataclass
class Scores:
    """`scores.jsonl` as columns; `pairs[i]` is row i's metrics as table text (`tablecsv`), or None."""

    cells: Sequence[str | bytes]
    status: IntArray  # codes; -1 for an unknown status
    status_text: Sequence[str | bytes]
    score: FloatArray
    names: list[str]
    column: Callable[[str], FloatArray]  # a metric over score rows
    rules: dict[str, FloatArray]
    pairs: list[str | None]


@dataclass
class Outputs:
    """`outputs.jsonl` as columns; the fast reader leaves out what only the reference reader gives (None)."""

    status: list[str]
    cost: FloatArray
    latency_ms: FloatArray
    cells: list[str] | None = None
    fixtures: list[str] | None = None
    tokens: dict[str, FloatArray] | None = None


def _codes(values: Sequence[str | bytes], order: list[str]) -> tuple[IntArray, list[str]]:
    """Per-row codes of a few distinct values (decoded once each), ordered as `order`, then sorted."""
    distinct = list(dict.fromkeys(values))
    names = [v.decode() if isinstance(v, bytes) else v for v in distinct]
    ranked = [o for o in order if o in names] + sorted(set(names) - set(order))
    rank = {name: i for i, name in enumerate(ranked)}
    lookup = {v: rank[name] for v, name in zip(distinct, names, strict=True)}
    return np.fromiter(map(lookup.__getitem__, values), np.int64, len(values)), ranked


def make_plan(cells: Sequence[str | bytes], variants: Sequence[str | bytes], fixtures: Sequence[str | bytes],
              reps: IntArray, baseline: str | None, path: Path) -> Plan:
    """The plan's columns as codes (baseline first among variants); two cells on one grid point are an error."""
    n = len(cells)
    variant, variant_names = _codes(variants, [baseline] if baseline else [])
    fixture, fixture_names = _codes(fixtures, [])
    repetitions = sorted(set(reps.tolist()))
    repetition = np.searchsorted(np.asarray(repetitions, dtype=np.int64), reps).astype(np.int64)
    keys = (variant * len(fixture_names) + fixture) * len(repetitions) + repetition
    if n and np.bincount(keys).max() > 1:
        raise VerdictError(f"{path}: two cells share a (variant, fixture, repetition)")
    text = [c.decode() if isinstance(c, bytes) else c for c in cells]
    return Plan(cells=text, variants=variant_names, fixtures=fixture_names, repetitions=repetitions,
                variant=variant, fixture=fixture, repetition=repetition, keys=cells)


def decode_rows(data: bytes, path: Path) -> list[dict[str, Any]]:
    """All rows of a JSONL file, decoded in one call; a bad line is named by number."""
    text = data.decode("utf-8")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    try:
        rows = json.loads("[" + ",".join(lines) + "]")
    except ValueError:
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                json.loads(line)
            except ValueError:
                raise VerdictError(f"{path}: line {n} is not JSON") from None
        raise VerdictError(f"{path}: not JSON lines") from None
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or "cell" not in row:
            raise VerdictError(f"{path}: row {n} is not an object with a cell")
    out: list[dict[str, Any]] = rows
    return out


def _num(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def _value(value: Any) -> float:
    """A metric or rule value as a number: true/false count as 1/0; anything else not numeric is NaN."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return _num(value)


def read_plan(data: bytes, baseline: str | None, path: Path) -> Plan:
    """`sealed/assignment.jsonl`: cell, variant, fixture and repetition of every row."""
    rows = decode_rows(data, path)
    try:
        reps = np.array([int(a["repetition"]) for a in rows], dtype=np.int64)
        return make_plan([str(a["cell"]) for a in rows], [str(a["variant"]) for a in rows],
                         [str(a["fixture"]) for a in rows], reps, baseline, path)
    except (KeyError, TypeError, ValueError):
        raise VerdictError(f"{path}: a row lacks variant, fixture or an integer repetition") from None


def read_scores(data: bytes, path: Path) -> Scores:
    """`scores.jsonl`: status, score, metrics and rule results of every row."""
    rows = decode_rows(data, path)
    n = len(rows)
    metric_rows: list[tuple[int, Mapping[str, Any]]] = []
    rule_rows: list[tuple[int, Mapping[str, Any]]] = []
    pairs: list[str | None] = [None] * n
    for i, row in enumerate(rows):
        if isinstance(row.get("metrics"), Mapping) and row["metrics"]:
            metric_rows.append((i, row["metrics"]))
            pairs[i] = "\x00".join(f"{csv_field(str(k))},{table_value(v)}" for k, v in row["metrics"].items())
        if isinstance(row.get("rules"), Mapping):
            rule_rows.append((i, row["rules"]))
    score = np.fromiter((_num(r.get("score")) for r in rows), np.float64, n)
    status = [str(r.get("status")) for r in rows]
    codes = np.fromiter((STATUS_CODE.get(s, -1) for s in status), np.int64, n)
    metrics = _columns(metric_rows, n)
    return Scores([str(r["cell"]) for r in rows], codes, status, score, list(metrics), metrics.__getitem__,
                  _columns(rule_rows, n), pairs)


def read_outputs(data: bytes, path: Path) -> Outputs:
    """`outputs.jsonl`: cell, fixture, status, cost, latency and token usage of every row."""
    rows = decode_rows(data, path)
    n = len(rows)
    tokens = {k: np.fromiter((_num((r.get("usage") or {}).get(k)) if isinstance(r.get("usage"), Mapping)
                              else math.nan for r in rows), np.float64, n)
              for k in ("input", "output", "reasoning")}
    return Outputs(
        status=[str(r.get("status")) for r in rows],
        cost=np.fromiter((_num(r.get("cost")) for r in rows), np.float64, n),
        latency_ms=np.fromiter((_num(r.get("latency_ms")) for r in rows), np.float64, n),
        cells=[str(r["cell"]) for r in rows],
        fixtures=[str(r.get("fixture")) for r in rows],
        tokens=tokens,
    )


def _columns(rows: list[tuple[int, Mapping[str, Any]]], n: int) -> dict[str, FloatArray]:
    """name → values over all rows (NaN where absent); booleans count as 1/0."""
    if not rows:
        return {}
    names: dict[str, None] = {}
    for _, values in rows:
        names.update(dict.fromkeys(values))
    idx = np.fromiter((i for i, _ in rows), np.int64, len(rows))
    out: dict[str, FloatArray] = {}
    for name in names:
        col = np.full(n, np.nan)
        col[idx] = np.fromiter((_value(values.get(name)) for _, values in rows), np.float64, len(rows))
        out[str(name)] = col
    return out
