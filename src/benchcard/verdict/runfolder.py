"""A run folder read for the verdict: its manifest, plan, outputs and scores joined into arrays.

This is where a run is unblinded: `read_run_data` joins `sealed/assignment.jsonl` (which cell had which variant)
with the cells of `outputs.jsonl` and `scores.jsonl` (columns from `columns.py`), and refuses files that
disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchcard._util.safeio import present
from benchcard.errors import VerdictError
from benchcard.records.rows import VERDICT as VERDICT_FILE
from benchcard.records.rows import Manifest, Metric
from benchcard.records.runreader import read_manifest
from benchcard.verdict.columns import (
    FAILED,
    MISSING,
    OK,
    STATUSES,
    TRUNCATED,
    FloatArray,
    Grid,
    IntArray,
    Outputs,
    Scores,
    first_repetitions,
    read_assignment,
    read_outputs,
    read_scores,
)

__all__ = ["FAILED", "MISSING", "OK", "STATUSES", "TRUNCATED", "VERDICT_FILE", "RunData", "finish_outputs",
           "read_run_data"]



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
    `metric_rows[i]` is cell i's metrics as scores.jsonl holds them (for table.csv), or None when unscored.
    """

    run_dir: Path
    manifest: Manifest
    status: IntArray
    score: FloatArray
    metrics: Mapping[str, FloatArray]
    rules: Mapping[str, FloatArray]
    cost: FloatArray
    latency_ms: FloatArray
    tokens: dict[str, FloatArray] | None
    metric_rows: list[dict[str, Metric] | None]
    metric_order: tuple[str, ...] | None = None  # when every row of metric_rows has these keys in this order
    unscored: int = 0  # cells with an output but no row in scores.jsonl (counted as missing)
    # of those, the outputs the scorer read but could not score (scores.jsonl's `unscored`): cell → why
    unscored_why: dict[str, str] = field(default_factory=dict)
    pending_outputs: bytes | None = field(default=None, repr=False)  # see read_run_data(defer_outputs=True)
    # scores.jsonl's cells and their plan positions: outputs.jsonl in the same order reuses them
    scored_cells: tuple[list[str], IntArray] | None = field(default=None, repr=False)
    allow_incomplete: bool = False
    cost_upper_bound: int = 0  # cells whose cost is an upper bound (cached input priced in full: outputs.jsonl)

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


def read_run_data(run_dir: Path, *, manifest: Manifest | None = None, baseline: str | None = None,
                  allow_incomplete: bool = False, defer_outputs: bool = False,
                  sealed_plan: Callable[[], Grid | None] | None = None, upto: int | None = None) -> RunData:
    """Join a run's files into arrays (this unblinds: it reads `sealed/assignment.jsonl`).

    Refuses a run whose files disagree (a cell not in the plan, a status that differs between outputs and
    scores, a fixture that differs from the plan's, a duplicate). Cells without an output or a score are an
    error unless `allow_incomplete`, which counts them as missing. `defer_outputs=True` leaves the outputs of a
    fully scored run to `finish_outputs`, so the statistics can start first. `sealed_plan`, when it gives a
    plan (the re-derived one, when its digest is the sealed file's: `give`), spares decoding the file; it is
    asked after the scores are read, so that it can be computed meanwhile. `upto`: only the cells of the first
    `upto` repetitions are the run (a sequential run, at the look it stopped at or is taking).
    """
    manifest = manifest if manifest is not None else read_manifest(run_dir)
    files = _read_files(run_dir, manifest, baseline or manifest.baseline, sealed_plan, upto)
    plan, scores = files.plan, files.scores
    n = len(plan.cells)
    cells = plan.cells
    planned = set(cells)
    if len(planned) != n:
        raise VerdictError(f"{run_dir / 'sealed' / 'assignment.jsonl'}: a cell id appears twice")

    # scores → cells
    s_idx, s_in_order = _indices(cells, scores.cells, files.scores_path)
    status = np.full(n, MISSING, np.int64)
    status[s_idx] = scores.status
    scored = np.zeros(n, bool)
    scored[s_idx] = True
    score = np.full(n, np.nan)
    score[s_idx] = scores.score
    unscored_ok = (status == OK) & np.isnan(score)
    if unscored_ok.any():
        raise VerdictError(f"{files.scores_path}: cell {cells[int(np.flatnonzero(unscored_ok)[0])]} is ok but has "
                           "no score")
    data = RunData(
        run_dir=run_dir, manifest=manifest, cells=cells, variants=plan.variants, fixtures=plan.fixtures,
        repetitions=plan.repetitions, variant=plan.variant, fixture=plan.fixture, repetition=plan.repetition,
        status=status, score=score, metrics={}, rules={}, cost=np.full(n, np.nan), latency_ms=np.full(n, np.nan),
        tokens=None, metric_rows=[], allow_incomplete=allow_incomplete, scored_cells=(scores.cells, s_idx),
        unscored_why={c: why for c, why in scores.unscored.items() if c in planned},
    )
    if defer_outputs and scored.all():
        data.pending_outputs = files.outputs  # every cell has a status from its score; outputs are checked later
    else:
        _join_outputs(data, read_outputs(files.outputs, files.outputs_path, latest=bool(manifest.retries)),
                      files.outputs_path, scored)
    unscored = (data.status != MISSING) & ~scored
    if not allow_incomplete:
        _refuse_incomplete(data, unscored)
    data.status = np.where(unscored, MISSING, data.status)
    data.unscored = int(unscored.sum())
    _take_scores(data, scores, s_idx, s_in_order, score)
    return data


@dataclass(frozen=True)
class _Files:
    """A run folder's plan and scores, decoded, and its outputs as bytes (decoded when they are joined)."""

    plan: Grid
    scores: Scores
    outputs: bytes
    scores_path: Path
    outputs_path: Path


def _read_files(run_dir: Path, manifest: Manifest, baseline: str | None,
                sealed_plan: Callable[[], Grid | None] | None, upto: int | None) -> _Files:
    """The plan (the one `sealed_plan` gives, else the sealed file's, cut at `upto` repetitions), the scores and
    the outputs' bytes; `sealed_plan` is asked after the scores are read, so that it can be computed meanwhile."""
    a_path = run_dir / "sealed" / "assignment.jsonl"
    s_path = run_dir / "scores.jsonl"
    o_path = run_dir / "outputs.jsonl"

    def from_file() -> Grid:
        return read_assignment(_read_bytes(a_path, "sealed assignment (the run's plan)"), baseline, a_path)

    plan = from_file() if sealed_plan is None else None
    scores = read_scores(s_path.read_bytes() if present(s_path, str(s_path), VerdictError) else b"", s_path,
                         latest=bool(manifest.retries))
    if plan is None:
        assert sealed_plan is not None
        plan = sealed_plan() or from_file()
    o_data = o_path.read_bytes() if present(o_path, str(o_path), VerdictError) else b""
    if upto is not None:
        plan = first_repetitions(plan, upto)
    return _Files(plan, scores, o_data, s_path, o_path)


def _refuse_incomplete(data: RunData, unscored: npt.NDArray[np.bool_]) -> None:
    """A cell without an output, or with an output but no score, stops the verdict unless --allow-incomplete."""
    n = len(data.cells)
    no_output = int((data.status == MISSING).sum())
    if not (no_output or unscored.any()):
        return
    # the run is finished (an unfinished one is refused before), so a resume would call nothing
    judged = data.manifest.judge is not None
    parts = []
    if no_output:
        parts.append(f"{no_output} of {n} cells have no output")
    if unscored.any() and judged:
        parts.append(f"{int(unscored.sum())} cells have an output but no score: none of their judgements "
                     "is readable (failed, cut off or off-form: judge-outputs.jsonl), and a finished judging "
                     "is not repeated by --resume")
    elif unscored.any():
        parts.append(f"{int(unscored.sum())} cells have an output but no score in scores.jsonl"
                     + unscored_said(data.unscored_why))
    raise VerdictError(
        f"run {data.run_dir.name} is incomplete: {' and '.join(parts)}; judge it anyway with --allow-incomplete, "
        "which counts those cells as failed, or start a new run"
        + (" (a new card version if the judge's prompt or answer form is at fault)" if judged else "")
    )


def unscored_said(whys: Mapping[str, str]) -> str:
    """Why the scorer left outputs unscored (`RunData.unscored_why`), counted by why, after a count of cells:
    " (rule 'r' ran past its 2 s limit (catastrophic backtracking) on 2 of them: scores.jsonl)", or ""."""
    if not whys:
        return ""
    counted = Counter(whys.values())
    return " (" + "; ".join(f"{why} on {n} of them" for why, n in counted.most_common()) + ": scores.jsonl)"


def _take_scores(data: RunData, scores: Scores, s_idx: IntArray, s_in_order: bool, score: FloatArray) -> None:
    """The score, metric and rule columns of the cells that are ok (NaN elsewhere), and each cell's metric row."""
    n = len(data.cells)
    ok = data.status == OK
    data.score = np.where(ok, score, np.nan)

    def to_cells(col: FloatArray) -> FloatArray:
        full = np.full(n, np.nan)
        full[s_idx] = col
        return np.where(ok, full, np.nan)

    data.metrics = _Columns(scores.names, lambda name: to_cells(scores.column(name)))
    data.rules = {name: to_cells(col) for name, col in scores.rules.items()}
    if s_in_order and ok.all():
        data.metric_rows = list(scores.metric_rows)
    else:
        rows = np.full(n, None, dtype=object)
        rows[s_idx] = _objects(scores.metric_rows)
        rows[~ok] = None
        data.metric_rows = rows.tolist()
    data.metric_order = scores.metric_order


def _join_outputs(data: RunData, outputs: Outputs, path: Path, scored: npt.NDArray[np.bool_]) -> None:
    """Fill status, cost, latency and tokens from outputs.jsonl; a cell whose fixture or status differs from the
    plan's or the scores' is an error naming it."""
    n = len(data.cells)
    if data.scored_cells is not None and outputs.cells == data.scored_cells[0]:
        o_idx = data.scored_cells[1]  # the scores' rows, in the same order: their positions, already checked
    else:
        o_idx, _ = _indices(data.cells, outputs.cells, path)
    if outputs.fixtures == _names(data.fixtures, data.fixture[o_idx]):
        wrong = np.zeros(len(o_idx), bool)  # every row names its planned fixture (one list comparison)
    else:
        fixture_code = {f: k for k, f in enumerate(data.fixtures)}
        got = np.fromiter(map(fixture_code.get, outputs.fixtures, repeat(-1, len(outputs.fixtures))), np.int64,
                          len(outputs.fixtures))
        wrong = got != data.fixture[o_idx]
    if wrong.any():
        j = int(np.flatnonzero(wrong)[0])
        i = int(o_idx[j])
        raise VerdictError(f"{path}: cell {data.cells[i]} names fixture {outputs.fixtures[j]!r} but the plan "
                           f"has {data.fixtures[int(data.fixture[i])]!r}")
    status = np.full(n, MISSING, np.int64)
    status[o_idx] = outputs.status
    differs = scored & (data.status != status)
    if differs.any():
        i = int(np.flatnonzero(differs)[0])
        raise VerdictError(
            f"{path.parent / 'scores.jsonl'} does not match outputs.jsonl: cell {data.cells[i]} is "
            f"{STATUSES[int(data.status[i])]} in one and {STATUSES[int(status[i])]} in the other"
        )
    data.status = np.where(scored, data.status, status)
    data.cost[o_idx] = outputs.cost
    data.cost_upper_bound = outputs.cost_upper_bound
    data.latency_ms[o_idx] = outputs.latency_ms
    tokens = {}
    for k, col in outputs.tokens.items():
        full = np.full(n, np.nan)
        full[o_idx] = col
        tokens[k] = full
    data.tokens = tokens


def finish_outputs(data: RunData) -> RunData:
    """Complete a run read with `defer_outputs`: its outputs joined and checked against its scores."""
    if data.pending_outputs is None:
        return data
    pending, data.pending_outputs = data.pending_outputs, None
    missing = data.status == MISSING  # --allow-incomplete: cells without a score stay missing
    path = data.run_dir / "outputs.jsonl"
    _join_outputs(data, read_outputs(pending, path, latest=bool(data.manifest.retries)), path, ~missing)
    return data


def _objects(items: Sequence[object]) -> npt.NDArray[np.object_]:
    """A 1-d object array of `items` (numpy would read nested sequences as more dimensions)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _names(names: Sequence[str], codes: IntArray) -> list[str]:
    """Each code's name, as a list (one gather of an object array, not a Python step per item)."""
    table = np.empty(len(names), dtype=object)
    table[:] = names
    out: list[str] = table[codes].tolist()
    return out


def _indices(plan: list[str], cells: list[str], path: Path) -> tuple[IntArray, bool]:
    """Plan positions of a file's cells, and whether they are the plan's own order; a cell not in the plan or
    recorded twice is an error. A file holding the plan's cells in its order (as a run without concurrency
    writes them) is recognised by one list comparison, without a look-up per cell, so that callers can skip
    their own per-cell gathers too. (`plan` holds no cell twice: `read_run_data` checks that first.)"""
    n = len(plan)
    if cells == plan:
        return np.arange(n, dtype=np.int64), True
    index = dict(zip(plan, range(n), strict=True))
    idx = np.fromiter(map(index.get, cells, repeat(-1, len(cells))), np.int64, len(cells))
    if (idx < 0).any():
        raise VerdictError(f"{path}: cell {cells[int(np.flatnonzero(idx < 0)[0])]} is not in the run's plan")
    if idx.size and np.bincount(idx, minlength=n).max() > 1:
        twice = int(np.flatnonzero(np.bincount(idx, minlength=n) > 1)[0])
        raise VerdictError(f"{path}: cell {next(c for c, i in index.items() if i == twice)} is recorded twice")
    return idx, False
