"""A run folder read for the verdict: its manifest, plan, outputs and scores joined into arrays.

This is where a run is unblinded: `read_run` joins `sealed/assignment.jsonl` (which cell had which variant)
with the cells of `outputs.jsonl` and `scores.jsonl`, and refuses files that disagree. The columns come from
`fastcolumns` when the files are plain, else from `runcolumns` (the reference reader).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchcard.errors import RunError, VerdictError
from benchcard.run.store import RunStore
from benchcard.verdict import columns as runcolumns
from benchcard.verdict import fastcolumns
from benchcard.verdict.columns import (
    FAILED,
    MISSING,
    OK,
    STATUS_CODES,
    STATUSES,
    TRUNCATED,
    FloatArray,
    Grid,
    IntArray,
    Outputs,
)

__all__ = ["FAILED", "MISSING", "OK", "STATUSES", "TRUNCATED", "VERDICT_FILE", "RunData", "finish_outputs",
           "read_manifest", "read_run"]

VERDICT_FILE = "verdict.json"
MANIFEST_FIELDS = ("run", "card", "version", "kind", "seal_root")


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run's manifest, read by the run store, with the fields every reader of a finished run relies on."""
    store = RunStore(run_dir)
    if not store.has_manifest():
        raise RunError(f"{run_dir}: not a run folder (no manifest.json)")
    data = store.read_manifest()
    for key in MANIFEST_FIELDS:
        if key not in data:
            raise RunError(f"{store.manifest_path}: field '{key}' is missing")
    return data


class _Columns(Mapping[str, FloatArray]):
    """Metric columns built on first use: a verdict reads a few metrics; the table needs none as numbers."""

    def __init__(self, names: Sequence[str], build: Callable[[str], FloatArray]):
        self._names = list(names)
        self._known = set(self._names)
        self._build = build
        self._cache: dict[str, FloatArray] = {}

    def __getitem__(self, name: str) -> FloatArray:
        if name not in self._known:
            raise KeyError(name)
        col = self._cache.get(name)
        if col is None:
            col = self._cache[name] = self._build(name)
        return col

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class RunData(Grid):
    """A run's cells joined across the manifest, the sealed assignment, outputs and scores, as arrays.

    Index i is one planned cell (assignment order). Codes index `variants`, `fixtures` and `repetitions`.
    Values of a metric are NaN where a cell has no score (truncated, failed, missing) or lacks the metric.
    `pairs[i]` is cell i's metrics as table text (`name,value` joined by NUL), or None when unscored.
    """

    run_dir: Path
    manifest: dict[str, Any]
    status: IntArray
    score: FloatArray
    metrics: Mapping[str, FloatArray]
    rules: Mapping[str, FloatArray]
    cost: FloatArray
    latency_ms: FloatArray
    tokens: dict[str, FloatArray] | None
    pairs: list[str | None]
    unscored: int = 0  # cells with an output but no row in scores.jsonl (counted as missing)
    reader: str = "fast"
    pending_outputs: bytes | None = field(default=None, repr=False)  # see read_run(defer_outputs=True)
    allow_incomplete: bool = False

    def grid(self, values: FloatArray, variant: str, fixtures: Sequence[str] | None = None) -> FloatArray:
        """(fixtures, repetitions) of one variant; NaN where unscored."""
        v = self.variants.index(variant)
        out = np.full((len(self.fixtures), len(self.repetitions)), np.nan)
        mask = self.variant == v
        out[self.fixture[mask], self.repetition[mask]] = values[mask]
        if fixtures is not None:
            out = out[[self.fixtures.index(f) for f in fixtures]]
        return out

    def count(self, status: int, variant: str | None = None) -> int:
        mask = self.status == status
        if variant is not None:
            mask &= self.variant == self.variants.index(variant)
        return int(mask.sum())


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise VerdictError(f"{path}: missing {what}") from None


def read_run(run_dir: Path, *, manifest: dict[str, Any] | None = None, baseline: str | None = None,
             allow_incomplete: bool = False, fast: bool = True, tokens: bool = False,
             defer_outputs: bool = False) -> RunData:
    """Join a run's files into arrays (this unblinds: it reads `sealed/assignment.jsonl`).

    Refuses a run whose files disagree (a cell not in the plan, a status that differs between outputs and
    scores, a duplicate). Cells without an output or a score are an error unless `allow_incomplete`, which
    counts them as missing. `fast=False` forces the reference reader; `tokens=True` also reads token usage
    (reference reader only: it decodes every output). `defer_outputs=True` leaves the outputs of a fully
    scored run to `finish_outputs`, so the statistics can start first.
    """
    manifest = manifest if manifest is not None else read_manifest(run_dir)
    baseline = baseline or manifest.get("baseline")
    a_path = run_dir / "sealed" / "assignment.jsonl"
    s_path = run_dir / "scores.jsonl"
    o_path = run_dir / "outputs.jsonl"
    a_data = _read_bytes(a_path, "sealed assignment (the run's plan)")
    s_data = s_path.read_bytes() if s_path.is_file() else b""
    o_data = o_path.read_bytes() if o_path.is_file() else b""
    reader = "fast"
    plan = fastcolumns.read_plan(a_data, baseline, a_path) if fast else None
    if plan is None:
        plan = runcolumns.read_plan(a_data, baseline, a_path)
        reader = "reference"
    scores = fastcolumns.read_scores(s_data, s_path) if fast else None
    if scores is None:
        scores = runcolumns.read_scores(s_data, s_path)
        reader = "reference"
    n = len(plan.cells)
    cells = plan.cells
    index: dict[str | bytes, int] = {c: i for i, c in enumerate(plan.keys)}
    if len(index) != n:
        raise VerdictError(f"{a_path}: a cell id appears twice")
    if scores.cells and type(scores.cells[0]) is not type(plan.keys[0]):
        index = {c.decode() if isinstance(c, bytes) else c.encode(): i for c, i in index.items()}

    # scores → cells
    s_idx = _indices(index, scores.cells, n, s_path)
    if (scores.status < 0).any():
        j = int(np.flatnonzero(scores.status < 0)[0])
        raise VerdictError(f"{s_path}: status {_show(scores.status_text[j])}; expected ok, truncated or failed")
    score_status = np.full(n, MISSING, np.int64)
    score_status[s_idx] = scores.status
    scored = np.zeros(n, bool)
    scored[s_idx] = True
    score = np.full(n, np.nan)
    score[s_idx] = scores.score
    unscored_ok = (score_status == OK) & np.isnan(score)
    if unscored_ok.any():
        raise VerdictError(f"{s_path}: cell {cells[int(np.flatnonzero(unscored_ok)[0])]} is ok but has no score")

    # outputs → cells: counts only on the fast path (complete runs), cell by cell otherwise
    status = score_status.copy()
    cost = np.full(n, np.nan)
    latency = np.full(n, np.nan)
    token_cols: dict[str, FloatArray] | None = None
    complete = bool(scored.all())
    pending: bytes | None = None
    checked = False
    if fast and not tokens and complete:
        if defer_outputs:
            pending, checked = o_data, True
        else:
            checked = _outputs_agree(o_data, status, cost, latency)
    if not checked:
        slow = runcolumns.read_outputs(o_data, o_path) if o_data else Outputs([], np.empty(0), np.empty(0), [], [], {})
        reader = "reference" if o_data else reader
        assert slow.cells is not None and slow.fixtures is not None
        text_index = {c: i for i, c in enumerate(cells)}
        o_idx = _indices(text_index, slow.cells, n, o_path)
        for j, i in enumerate(o_idx.tolist()):
            if slow.fixtures[j] != plan.fixtures[int(plan.fixture[i])]:
                raise VerdictError(f"{o_path}: cell {cells[i]} names fixture {slow.fixtures[j]!r} but the plan "
                                   f"has {plan.fixtures[int(plan.fixture[i])]!r}")
        unknown = [j for j, s in enumerate(slow.status) if s not in STATUS_CODES]
        if unknown:
            j = unknown[0]
            raise VerdictError(f"{o_path}: cell {slow.cells[j]} has status {slow.status[j]!r}; expected ok, "
                               "truncated or failed")
        status = np.full(n, MISSING, np.int64)
        status[o_idx] = [STATUS_CODES[s] for s in slow.status]
        cost[o_idx] = slow.cost
        latency[o_idx] = slow.latency_ms
        if slow.tokens is not None:
            token_cols = {}
            for k, col in slow.tokens.items():
                full = np.full(n, np.nan)
                full[o_idx] = col
                token_cols[k] = full
        differs = scored & (score_status != status)
        if differs.any():
            i = int(np.flatnonzero(differs)[0])
            raise VerdictError(
                f"{s_path} does not match outputs.jsonl: cell {cells[i]} is {STATUSES[int(score_status[i])]} in "
                f"one and {STATUSES[int(status[i])]} in the other"
            )
    answered = status != MISSING
    unscored = answered & ~scored
    no_output = int((~answered).sum())
    if (no_output or unscored.any()) and not allow_incomplete:
        parts = []
        if no_output:
            parts.append(f"{no_output} of {n} cells have no output")
        if unscored.any():
            parts.append(f"{int(unscored.sum())} cells have an output but no score in scores.jsonl")
        raise VerdictError(
            f"run {run_dir.name} is incomplete: {' and '.join(parts)}; resume it "
            f"(`benchcard run {manifest.get('card', 'CARD')} --resume {run_dir.name}`), or judge it anyway with "
            "--allow-incomplete, "
            "which counts those cells as failed"
        )
    status = np.where(unscored, MISSING, status)
    ok = status == OK
    score = np.where(ok, score, np.nan)

    def to_cells(col: FloatArray) -> FloatArray:
        full = np.full(n, np.nan)
        full[s_idx] = col
        return np.where(ok, full, np.nan)

    metrics = _Columns(scores.names, lambda name: to_cells(scores.column(name)))
    rules = {name: to_cells(col) for name, col in scores.rules.items()}
    pairs: list[str | None] = [None] * n
    for j, i in enumerate(s_idx.tolist()):
        if ok[i]:
            pairs[i] = scores.pairs[j]
    return RunData(
        run_dir=run_dir, manifest=manifest, cells=cells, variants=plan.variants, fixtures=plan.fixtures,
        repetitions=plan.repetitions, variant=plan.variant, fixture=plan.fixture, repetition=plan.repetition,
        status=status, score=score, metrics=metrics, rules=rules, cost=cost, latency_ms=latency,
        tokens=token_cols, pairs=pairs, unscored=int(unscored.sum()), reader=reader, pending_outputs=pending,
        allow_incomplete=allow_incomplete,
    )


def _show(value: str | bytes) -> str:
    return repr(value.decode() if isinstance(value, bytes) else value)


def _outputs_agree(data: bytes, status: IntArray, cost: FloatArray, latency: FloatArray) -> bool:
    """Fast check of a fully scored run's outputs: one row per cell, the same status counts as the scores.

    Fills cost and latency (their totals and median need no cell order). False sends the caller to the
    reference reader, which names the cell that differs.
    """
    outputs = fastcolumns.read_outputs(data)
    if outputs is None or len(outputs.status) != status.size:
        return False
    got = {s: outputs.status.count(s) for s in set(outputs.status)}
    want = {name: int((status == code).sum()) for name, code in STATUS_CODES.items()}
    if got != {k: v for k, v in want.items() if v}:
        return False
    cost[:] = outputs.cost
    latency[:] = outputs.latency_ms
    return True


def finish_outputs(data: RunData) -> RunData:
    """Complete a run read with `defer_outputs`: the same data, or a fresh full read if the outputs disagree."""
    if data.pending_outputs is None:
        return data
    if _outputs_agree(data.pending_outputs, data.status, data.cost, data.latency_ms):
        data.pending_outputs = None
        return data
    return read_run(data.run_dir, manifest=data.manifest, baseline=data.variants[0] if data.variants else None,
                    allow_incomplete=data.allow_incomplete)


def _indices(index: Mapping[Any, int], cells: Sequence[str | bytes], n: int, path: Path) -> IntArray:
    """Plan positions of a file's cells; a cell not in the plan or recorded twice is an error."""
    idx = np.fromiter((index.get(c, -1) for c in cells), np.int64, len(cells))
    if (idx < 0).any():
        raise VerdictError(f"{path}: cell {_show(cells[int(np.flatnonzero(idx < 0)[0])])[1:-1]} is not in the "
                           "run's plan")
    if idx.size and np.bincount(idx, minlength=n).max() > 1:
        twice = int(np.flatnonzero(np.bincount(idx, minlength=n) > 1)[0])
        raise VerdictError(f"{path}: cell {_show(next(c for c, i in index.items() if i == twice))[1:-1]} is "
                           "recorded twice")
    return idx
