"""The verdict: the one place a run is unblinded, judged by its sealed win rule, and entered in the ledger.

Until here nothing has joined an output to its variant: `outputs.jsonl` and `scores.jsonl` name cells only.
`give_verdict` first refuses anything it cannot stand behind — an unfinished run, outputs changed since the run
finished, a card whose seal no longer matches the run's — then joins the scores with `sealed/assignment.jsonl`,
applies the card's predeclared rule (docs/verdict.md), writes `verdict.json` and `table.csv` into the run folder
and appends one dated, hash-chained row to `results/ledger.jsonl`.

A verdict is given once. A second `give_verdict` on the same run refuses and names the ledger row it already
has; `load_verdict` reads the one that was written.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import ledger, stats
from .card import Card, Clause, WinRule, load_card
from .errors import RunError, SealError, VerdictError
from .hashing import file_digest
from .project import Project

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

BOOTSTRAP_RESAMPLES = 10_000
SIGNFLIP_DRAWS = 100_000
STATUSES = ("ok", "truncated", "failed", "missing")
OK, TRUNCATED, FAILED, MISSING = range(4)
RESULT_FINDINGS = frozenset({"win", "loss", "scored"})
VERDICT_FILE = "verdict.json"
TABLE_FILE = "table.csv"
TABLE_COLUMNS = ("fixture", "variant", "repetition", "metric", "value", "rig")
_EQ_TOL = 1e-9


# ---------------------------------------------------------------------------------------------------------
# The result


@dataclass(frozen=True)
class Verdict:
    """A given verdict: what `verdict.json` holds, and the ledger row it was entered as."""

    run: str
    card: str
    version: int
    kind: str
    finding: str
    outcome: str
    run_dir: Path
    data: Mapping[str, Any] = field(repr=False)
    ledger_row: Mapping[str, Any] | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The verdict as strict JSON data (no NaN, no infinities): exactly `verdict.json`."""
        out: dict[str, Any] = ledger.strict(dict(self.data))
        return out


# ---------------------------------------------------------------------------------------------------------
# Finding a run


def find_run(project: Project, run: str | Path) -> Path:
    """A run folder from its path, its run id (or a unique prefix of one) anywhere under `results/`, or a card
    id — meaning that card's most recent run (of the newest version that has runs)."""
    text = str(run)
    as_path = Path(text)
    for candidate in (as_path, project.root / as_path):
        if (candidate / "manifest.json").is_file():
            return candidate.resolve()
    card_runs = project.results_dir / text
    if text and "/" not in text and card_runs.is_dir() and not (card_runs / "manifest.json").is_file():
        versions = sorted((int(v.name[1:]), v) for v in card_runs.glob("v*") if v.name[1:].isdigit())
        for _, folder in reversed(versions):
            runs = sorted(p.parent for p in folder.glob("*/manifest.json"))
            if runs:
                return runs[-1].resolve()
        raise RunError(f"{text}: the card has no run under {project.relative(card_runs)}/")
    if as_path.is_dir():
        raise RunError(f"{text}: not a run folder (no manifest.json)")
    name = as_path.name
    matches = sorted(p.parent for p in project.results_dir.glob(f"*/v*/{name}*/manifest.json"))
    exact = [m for m in matches if m.name == name]
    if exact:
        matches = exact
    if not matches:
        raise RunError(f"{text}: no such run under {project.relative(project.results_dir)}/ "
                       "(give a run id like 20261130T151200Z-3f9a, a card id, or the run's folder)")
    if len(matches) > 1:
        shown = ", ".join(project.relative(m) for m in matches[:3])
        raise RunError(f"{text}: ambiguous; matches {len(matches)} runs ({shown}{', …' if len(matches) > 3 else ''})")
    return matches[0].resolve()


# ---------------------------------------------------------------------------------------------------------
# Reading a run folder
#
# Two readers give the same result. The reference one decodes every JSON line. The fast one, tried first,
# takes only the fields the verdict needs, as columns, with regular expressions that start with the whole
# literal key (`"status":`), which the engine finds by a fast prefix search: at 100,000 cells, decoding every
# row and every output text costs seconds. Inside a JSON string every quote is escaped, so such a pattern can
# only match a key. Each key must occur exactly once per line and every value must be plain (a string without
# escapes, a JSON number), else the fast reader gives up and the reference reader runs; tests check that both
# give the same data and the same table.


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
class RunData:
    """A run's cells joined across the manifest, the sealed assignment, outputs and scores, as arrays.

    Index i is one planned cell (assignment order). Codes index `variants`, `fixtures` and `repetitions`.
    Values of a metric are NaN where a cell has no score (truncated, failed, missing) or lacks the metric.
    `pairs[i]` is cell i's metrics as table text (`name,value` joined by NUL), or None when unscored.
    """

    run_dir: Path
    manifest: dict[str, Any]
    cells: list[str]
    variants: list[str]
    fixtures: list[str]
    repetitions: list[int]
    variant: IntArray
    fixture: IntArray
    repetition: IntArray
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


def _decode_rows(data: bytes, path: Path) -> list[dict[str, Any]]:
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


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{run_dir}: not a run folder (no manifest.json)") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: expected a JSON object")
    for key in ("run", "card", "version", "kind", "seal_root"):
        if key not in data:
            raise RunError(f"{path}: field '{key}' is missing")
    return data


def _num(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def _value(value: Any) -> float:
    """A metric or rule value as a number: true/false count as 1/0; anything else not numeric is NaN."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return _num(value)


def _text(value: Any) -> str:
    """A metric value as table text: exactly as JSON writes it (so both readers agree); empty if not a number."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return ""


# ------------------------------------------------------------------------------------------- fast reader

_SAFE_NAME = re.compile(rb"[A-Za-z0-9_.-]+")
_STRING = rb' ?"([^"\\]*)"'  # a string without escapes (an escaped one makes the scan miss: reference reader)
_NUMBER = rb" ?(-?[0-9][0-9.eE+-]*|null)"
_INTEGER = rb" ?(-?[0-9]+)"
_PATTERNS: dict[tuple[str, bytes], re.Pattern[bytes]] = {}


def _rows_in(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _scan(data: bytes, key: str, value: bytes, rows: int) -> list[bytes] | None:
    """The value of `key` on every line, or None when any line has none or several."""
    pattern = _PATTERNS.get((key, value))
    if pattern is None:
        pattern = _PATTERNS[(key, value)] = re.compile(b'"' + key.encode() + b'":' + value)
    found: list[bytes] = pattern.findall(data)
    return found if len(found) == rows else None


def _floats(values: list[bytes]) -> FloatArray | None:
    """JSON number texts (or null → NaN) as floats; None if any is not a number."""
    try:
        return np.array(values, dtype=np.float64)
    except ValueError:
        pass
    try:
        return np.array([math.nan if v == b"null" else float(v) for v in values], dtype=np.float64)
    except ValueError:
        return None


@dataclass
class _Plan:
    cells: list[str]
    keys: Sequence[str | bytes]  # the cell ids as the scores and outputs readers will give them
    variants: list[str]
    fixtures: list[str]
    repetitions: list[int]
    variant: IntArray
    fixture: IntArray
    repetition: IntArray


@dataclass
class _Scores:
    cells: Sequence[str | bytes]
    status: IntArray  # codes; -1 for an unknown status
    status_text: Sequence[str | bytes]
    score: FloatArray
    names: list[str]
    column: Callable[[str], FloatArray]  # a metric over score rows
    rules: dict[str, FloatArray]
    pairs: list[str | None]


@dataclass
class _Outputs:
    status: list[str]
    cost: FloatArray
    latency_ms: FloatArray
    cells: list[str] | None = None
    fixtures: list[str] | None = None
    tokens: dict[str, FloatArray] | None = None


_STATUS_CODE: dict[str | bytes, int] = {"ok": OK, "truncated": TRUNCATED, "failed": FAILED,
                                        b"ok": OK, b"truncated": TRUNCATED, b"failed": FAILED}


def _codes(values: Sequence[str | bytes], order: list[str]) -> tuple[IntArray, list[str]]:
    """Per-row codes of a few distinct values (decoded once each), ordered as `order`, then sorted."""
    distinct = list(dict.fromkeys(values))
    names = [v.decode() if isinstance(v, bytes) else v for v in distinct]
    ranked = [o for o in order if o in names] + sorted(set(names) - set(order))
    rank = {name: i for i, name in enumerate(ranked)}
    lookup = {v: rank[name] for v, name in zip(distinct, names, strict=True)}
    return np.fromiter(map(lookup.__getitem__, values), np.int64, len(values)), ranked


def _plan(cells: Sequence[str | bytes], variants: Sequence[str | bytes], fixtures: Sequence[str | bytes],
          reps: IntArray, baseline: str | None, path: Path) -> _Plan:
    n = len(cells)
    variant, variant_names = _codes(variants, [baseline] if baseline else [])
    fixture, fixture_names = _codes(fixtures, [])
    repetitions = sorted(set(reps.tolist()))
    repetition = np.searchsorted(np.asarray(repetitions, dtype=np.int64), reps).astype(np.int64)
    keys = (variant * len(fixture_names) + fixture) * len(repetitions) + repetition
    if n and np.bincount(keys).max() > 1:
        raise VerdictError(f"{path}: two cells share a (variant, fixture, repetition)")
    text = [c.decode() if isinstance(c, bytes) else c for c in cells]
    return _Plan(text, cells, variant_names, fixture_names, repetitions, variant, fixture, repetition)


def _fast_plan(data: bytes, baseline: str | None, path: Path) -> _Plan | None:
    rows = _rows_in(data)
    cells = _scan(data, "cell", _STRING, rows)
    variants = _scan(data, "variant", _STRING, rows)
    fixtures = _scan(data, "fixture", _STRING, rows)
    reps = _scan(data, "repetition", _INTEGER, rows)
    if cells is None or variants is None or fixtures is None or reps is None:
        return None
    return _plan(cells, variants, fixtures, np.array(reps, dtype=np.int64), baseline, path)


def _slow_plan(data: bytes, baseline: str | None, path: Path) -> _Plan:
    rows = _decode_rows(data, path)
    try:
        reps = np.array([int(a["repetition"]) for a in rows], dtype=np.int64)
        return _plan([str(a["cell"]) for a in rows], [str(a["variant"]) for a in rows],
                     [str(a["fixture"]) for a in rows], reps, baseline, path)
    except (KeyError, TypeError, ValueError):
        raise VerdictError(f"{path}: a row lacks variant, fixture or an integer repetition") from None


_METRICS_OBJ = re.compile(rb'"metrics": ?\{([^}]*)\}')


def _fast_scores(data: bytes, path: Path) -> _Scores | None:
    rows = _rows_in(data)
    parts = _METRICS_OBJ.split(data)
    if len(parts) != 2 * rows + 1:
        return None
    objects = parts[1::2]
    remainder = b"".join(parts[0::2])
    if b'"rules":{' in remainder or b'"rules": {' in remainder:
        return None  # rule results (probes): the reference reader reads them
    cells = _scan(remainder, "cell", _STRING, rows)
    status = _scan(remainder, "status", _STRING, rows)
    score_text = _scan(remainder, "score", _NUMBER, rows)
    if cells is None or status is None or score_text is None:
        return None
    score = _floats(score_text)
    if score is None:
        return None
    filled = [i for i, o in enumerate(objects) if o.strip()]
    # One scorer wrote every row: each scored row holds the same metrics, in the same order, as numbers.
    joined = b"\n".join(objects[i] for i in filled)
    if b'": ' in joined or b', "' in joined:
        joined = joined.replace(b'": ', b'":').replace(b', "', b',"')
    names: list[bytes] = []
    if filled:
        first = joined.split(b"\n", 1)[0]
        names = [p.split(b":", 1)[0].strip(b'" ') for p in first.split(b",")]
        if not all(_SAFE_NAME.fullmatch(m) for m in names) or len(set(names)) != len(names):
            return None
    flat_text = joined.replace(b'":', b",")
    flat = flat_text.replace(b"\n", b",").split(b",") if filled else []
    k = len(names)
    if len(flat) != 2 * k * len(filled) or flat[0::2] != [b'"' + m for m in names] * len(filled):
        return None
    values = flat[1::2]
    if b"".join(values).translate(None, b"0123456789.eE+-"):
        return None  # null, true, NaN or anything but a plain number: the reference reader decides
    rows_at = np.asarray(filled, dtype=np.int64)
    n = len(objects)
    position = {m.decode(): j for j, m in enumerate(names)}

    def column(name: str) -> FloatArray:
        col = np.full(n, np.nan)
        try:
            col[rows_at] = np.array(values[position[name] :: k], dtype=np.float64)
        except ValueError:
            raise VerdictError(f"{path}: metric {name!r} holds a value that is not a JSON number") from None
        return col

    pairs: list[str | None] = [None] * n
    if filled:
        for i, text in zip(filled, flat_text.replace(b',"', b"\x00").decode().split("\n"), strict=True):
            pairs[i] = text[1:]
    codes = np.fromiter((_STATUS_CODE.get(s, -1) for s in status), np.int64, rows)
    return _Scores(cells, codes, status, score, list(position), column, {}, pairs)


def _fast_outputs(data: bytes) -> _Outputs | None:
    rows = _rows_in(data)
    status = _scan(data, "status", _STRING, rows)
    cost = _scan(data, "cost", _NUMBER, rows)
    latency = _scan(data, "latency_ms", _NUMBER, rows)
    if status is None or cost is None or latency is None:
        return None
    cost_arr, latency_arr = _floats(cost), _floats(latency)
    if cost_arr is None or latency_arr is None:
        return None
    return _Outputs([s.decode() for s in status], cost_arr, latency_arr)


# -------------------------------------------------------------------------------------- reference reader


def _slow_scores(data: bytes, path: Path) -> _Scores:
    rows = _decode_rows(data, path)
    n = len(rows)
    metric_rows: list[tuple[int, Mapping[str, Any]]] = []
    rule_rows: list[tuple[int, Mapping[str, Any]]] = []
    pairs: list[str | None] = [None] * n
    for i, row in enumerate(rows):
        if isinstance(row.get("metrics"), Mapping) and row["metrics"]:
            metric_rows.append((i, row["metrics"]))
            pairs[i] = "\x00".join(f"{_csv_field(str(k))},{_text(v)}" for k, v in row["metrics"].items())
        if isinstance(row.get("rules"), Mapping):
            rule_rows.append((i, row["rules"]))
    score = np.fromiter((_num(r.get("score")) for r in rows), np.float64, n)
    status = [str(r.get("status")) for r in rows]
    codes = np.fromiter((_STATUS_CODE.get(s, -1) for s in status), np.int64, n)
    metrics = _columns(metric_rows, n)
    return _Scores([str(r["cell"]) for r in rows], codes, status, score, list(metrics), metrics.__getitem__,
                   _columns(rule_rows, n), pairs)


def _slow_outputs(data: bytes, path: Path) -> _Outputs:
    rows = _decode_rows(data, path)
    n = len(rows)
    tokens = {k: np.fromiter((_num((r.get("usage") or {}).get(k)) if isinstance(r.get("usage"), Mapping)
                              else math.nan for r in rows), np.float64, n)
              for k in ("input", "output", "reasoning")}
    return _Outputs(
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


# ------------------------------------------------------------------------------------------------ joining

_CODES = {"ok": OK, "truncated": TRUNCATED, "failed": FAILED}


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
    plan = _fast_plan(a_data, baseline, a_path) if fast else None
    if plan is None:
        plan = _slow_plan(a_data, baseline, a_path)
        reader = "reference"
    scores = _fast_scores(s_data, s_path) if fast else None
    if scores is None:
        scores = _slow_scores(s_data, s_path)
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
        slow = _slow_outputs(o_data, o_path) if o_data else _Outputs([], np.empty(0), np.empty(0), [], [], {})
        reader = "reference" if o_data else reader
        assert slow.cells is not None and slow.fixtures is not None
        text_index = {c: i for i, c in enumerate(cells)}
        o_idx = _indices(text_index, slow.cells, n, o_path)
        for j, i in enumerate(o_idx.tolist()):
            if slow.fixtures[j] != plan.fixtures[int(plan.fixture[i])]:
                raise VerdictError(f"{o_path}: cell {cells[i]} names fixture {slow.fixtures[j]!r} but the plan "
                                   f"has {plan.fixtures[int(plan.fixture[i])]!r}")
        unknown = [j for j, s in enumerate(slow.status) if s not in _CODES]
        if unknown:
            j = unknown[0]
            raise VerdictError(f"{o_path}: cell {slow.cells[j]} has status {slow.status[j]!r}; expected ok, "
                               "truncated or failed")
        status = np.full(n, MISSING, np.int64)
        status[o_idx] = [_CODES[s] for s in slow.status]
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
            f"(`benchcard run --resume {run_dir.name}`), or judge it anyway with --allow-incomplete, "
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
    outputs = _fast_outputs(data)
    if outputs is None or len(outputs.status) != status.size:
        return False
    got = {s: outputs.status.count(s) for s in set(outputs.status)}
    want = {name: int((status == code).sum()) for name, code in _CODES.items()}
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


# ---------------------------------------------------------------------------------------------------------
# Refusals


def _check_run(project: Project, run_dir: Path, manifest: Mapping[str, Any],
               outputs_digest: Future[str] | None = None) -> Card:
    """The refusals, in this order: unfinished, already judged, card changed or gone, seal changed, outputs
    changed. `outputs_digest` may be computed meanwhile on another thread (hashing releases the GIL)."""
    run = run_dir.name
    if not manifest.get("finished_at"):
        raise VerdictError(
            f"run {run} has not finished: its manifest has no finished_at (resume it with "
            f"`benchcard run --resume {run}`)"
        )
    if (run_dir / VERDICT_FILE).exists():
        raise VerdictError(f"run {run} already has a verdict ({project.relative(run_dir / VERDICT_FILE)}); a verdict "
                           f"is given once — `benchcard verdict {run} --show` prints it")
    card_id = str(manifest["card"])
    path = project.card_path(card_id)
    if not path.is_file():
        raise VerdictError(f"run {run}: its card {project.relative(path)} is gone; cannot check its seal")
    card = load_card(path, project)
    if card.version != manifest["version"]:
        raise VerdictError(
            f"run {run} was made with {card_id} v{manifest['version']} but {project.relative(path)} is now "
            f"v{card.version}; a run is judged only by the version that produced it"
        )
    if card.kind != manifest["kind"]:
        raise VerdictError(f"run {run} is a {manifest['kind']} run but {card_id} is now a {card.kind} card")
    from . import seal

    try:
        root = seal.verify(card, project)
    except SealError as exc:
        raise VerdictError(f"seal changed since run {run}: {exc}") from None
    if root != manifest["seal_root"]:
        raise VerdictError(
            f"seal changed since run {run}: {project.relative(project.seal_path(card_id, card.version))} has root "
            f"{root} but the run was made under {manifest['seal_root']}"
        )
    expected = manifest.get("outputs_digest")
    if not expected:
        raise VerdictError(f"run {run}: manifest has no outputs_digest; cannot show its outputs are unchanged")
    outputs = run_dir / "outputs.jsonl"
    if not outputs.is_file():
        raise VerdictError(f"run {run}: outputs.jsonl is missing")
    actual = outputs_digest.result() if outputs_digest is not None else file_digest(outputs)
    if actual != expected:
        raise VerdictError(
            f"run {run}: outputs.jsonl changed after the run finished (manifest {expected}, file now {actual})"
        )
    scores_expected = manifest.get("scores_digest")
    scores_path = run_dir / "scores.jsonl"
    if scores_expected and scores_path.is_file() and file_digest(scores_path) != scores_expected:
        raise VerdictError(f"run {run}: scores.jsonl changed after the run was scored (manifest {scores_expected})")
    return card


# ---------------------------------------------------------------------------------------------------------
# Formatting


def _f(x: float | None, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:+.3f}" if signed else f"{x:.3f}"
    return text.replace("-", "−")


def _p(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return "< 0.0001" if x < 0.0001 else f"{x:.4f}"


def _peq(x: float | None) -> str:
    """`= 0.0123` or `< 0.0001`, to follow a `p`."""
    text = _p(x)
    return text if text.startswith("<") else f"= {text}"


def _ci(lo: float, hi: float) -> str:
    return f"[{_f(lo)}, {_f(hi)}]"


def _pct(alpha: float) -> str:
    return f"{100 * (1 - alpha):g}%"


def clause_text(clause: Clause) -> str:
    words = {"rises": "rises", "falls": "falls", "not_rises": "does not rise", "not_falls": "does not fall"}
    if clause.test == "holds":
        return f"{clause.metric} = {clause.equals:g} on {clause.fixture} in every repetition"
    text = f"{clause.metric} {words[clause.test]}"
    if clause.fixture:
        text += f" on {clause.fixture}"
    if clause.margin is not None:
        text += f" (margin {clause.margin:g})"
    return text


# ---------------------------------------------------------------------------------------------------------
# Statistics of one run


def bootstrap_many(pairs: Sequence[tuple[FloatArray, FloatArray]], *, seed: int,
                   n_resamples: int = BOOTSTRAP_RESAMPLES, alpha: float = 0.05) -> list[tuple[float, float]]:
    """`stats.cluster_bootstrap` for several (baseline, variant) pairs at once, with identical results.

    The resampled fixture indices depend only on the seed and the number of fixtures, so pairs with the same
    number of paired fixtures share one draw of indices instead of drawing them again per metric.
    """
    diffs = [stats.fixture_differences(b, v) for b, v in pairs]
    out: list[tuple[float, float] | None] = [None] * len(diffs)
    by_size: dict[int, list[int]] = {}
    for i, d in enumerate(diffs):
        by_size.setdefault(int(d.size), []).append(i)
    chunk_elements = stats._CHUNK_ELEMENTS  # the same chunking as stats.cluster_bootstrap, so the same draws
    for n, members in by_size.items():
        rng = np.random.default_rng(seed)
        means = np.empty((len(members), n_resamples))
        per_chunk = max(1, chunk_elements // n)
        for start in range(0, n_resamples, per_chunk):
            m = min(per_chunk, n_resamples - start)
            idx = rng.integers(0, n, size=(m, n))
            for j, i in enumerate(members):
                means[j, start : start + m] = np.take(diffs[i], idx).mean(axis=1)
        for j, i in enumerate(members):
            low, high = np.quantile(means[j], [alpha / 2.0, 1.0 - alpha / 2.0])
            out[i] = (float(low), float(high))
    return [o for o in out if o is not None]


@dataclass
class _Gap:
    """Figures of one metric, one variant against the baseline."""

    metric: str
    fixture: str | None
    variant: str
    base: FloatArray
    var: FloatArray
    pg: stats.PairedGap | None = None
    nf: stats.NoiseFloor | None = None
    boot: tuple[float, float] | None = None
    tost_p: float | None = None
    error: str | None = None


def _mean(grid: FloatArray) -> float:
    """Mean over fixtures of each fixture's mean over its scored repetitions."""
    with np.errstate(all="ignore"):
        counts = (~np.isnan(grid)).sum(axis=1)
        rows = np.where(counts > 0, np.nansum(grid, axis=1) / np.maximum(counts, 1), np.nan)
    keep = ~np.isnan(rows)
    return float(rows[keep].mean()) if keep.any() else math.nan


# ---------------------------------------------------------------------------------------------------------
# The win rule


@dataclass
class _ClauseResult:
    clause: Clause
    holds: bool
    mirror: bool = False  # the first clause's effect significantly the wrong way (beyond the noise floor)
    broken: bool = False  # a guard's own hypothesis rejected
    figures: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    cause: str = ""  # why it does not hold, in a few words, for the finding's summary


def _gap_clause(clause: Clause, g: _Gap, alpha: float) -> _ClauseResult:
    if g.pg is None or g.nf is None:
        reason = g.error or "no fixture is scored in both arms"
        return _ClauseResult(clause, False, figures={}, why=f"{clause_text(clause)}: cannot be judged — {reason}.",
                             cause=reason)
    pg, nf = g.pg, g.nf
    figures: dict[str, Any] = {
        "gap": pg.gap, "ci": [pg.ci_low, pg.ci_high], "ci_bootstrap": list(g.boot) if g.boot else None,
        "p": pg.p_value, "p_signflip": pg.p_signflip, "noise_floor": nf.value,
        "lower_one_sided": pg.lower_one_sided, "upper_one_sided": pg.upper_one_sided, "n_fixtures": pg.n_fixtures,
    }
    level = _pct(alpha)
    head = f"{clause_text(clause)} ({g.variant} − baseline)"
    ci = f"gap {_f(pg.gap, True)}, {level} CI {_ci(pg.ci_low, pg.ci_high)}, p {_peq(pg.p_value)}"
    if clause.test in ("rises", "falls"):
        up = clause.test == "rises"
        sign = 1.0 if up else -1.0
        ci_ok = pg.ci_low > 0 if up else pg.ci_high < 0
        nf_ok = sign * pg.gap > nf.value
        mirror = (pg.ci_high < 0 and -pg.gap > nf.value) if up else (pg.ci_low > 0 and pg.gap > nf.value)
        holds = ci_ok and nf_ok
        side = "above" if up else "below"
        nf_text = ("the noise floor cannot be measured from fewer than two repetitions"
                   if math.isinf(nf.value) else f"the baseline's run-to-run noise floor {_f(nf.value)}")
        cause = ""
        if holds:
            why = f"holds — {ci}: the CI lies wholly {side} 0 and the gap is beyond {nf_text}."
        elif mirror:
            cause = "the effect goes significantly the wrong way"
            why = (f"does not hold — {ci}: the effect goes significantly the wrong way, with the CI wholly "
                   f"{'below' if up else 'above'} 0 and the gap beyond {nf_text}.")
        else:
            short, told = [], []  # the summary's wording and the clause sentence's (which already shows the CI)
            if not ci_ok:
                short.append(f"the CI {_ci(pg.ci_low, pg.ci_high)} is not wholly {side} 0")
                told.append(f"the CI is not wholly {side} 0")
            if not nf_ok:
                text = nf_text if math.isinf(nf.value) else f"the gap sits inside {nf_text}"
                short.append(text.replace("the gap", f"the gap {_f(pg.gap, True)}", 1))
                told.append(text)
            cause = " and ".join(short)
            lead = f"the CI lies wholly {side} 0, but " if ci_ok else ""
            why = f"does not hold — {ci}: {lead}{' and '.join(told)}."
        return _ClauseResult(clause, holds, mirror=mirror, figures=figures, why=f"{head}: {why}", cause=cause)
    margin = float(clause.margin or 0.0)
    if clause.test == "not_rises":
        bound, holds, broken = pg.upper_one_sided, pg.upper_one_sided < margin, pg.lower_one_sided > margin
        bound_name, cmp, limit = "upper", "below", _f(margin)
        broken_text = (f"the one-sided lower bound {_f(pg.lower_one_sided)} is above the margin: the guard is "
                       "significantly broken")
    else:
        bound, holds, broken = pg.lower_one_sided, pg.lower_one_sided > -margin, pg.upper_one_sided < -margin
        bound_name, cmp, limit = "lower", "above", _f(-margin)
        broken_text = (f"the one-sided upper bound {_f(pg.upper_one_sided)} is below −margin: the guard is "
                       "significantly broken")
    gap_text = f"gap {_f(pg.gap, True)}, p {_peq(pg.p_value)}"
    cause = "" if holds else (broken_text if broken else f"its one-sided {bound_name} bound {_f(bound)} is not "
                                                          f"{cmp} {limit}")
    if holds:
        why = (f"holds — the one-sided {level} {bound_name} bound of the gap, {_f(bound)}, is {cmp} {limit} "
               f"({gap_text}).")
    elif broken:
        why = f"does not hold — {broken_text} ({gap_text})."
    else:
        why = (f"does not hold — the one-sided {level} {bound_name} bound {_f(bound)} is not {cmp} {limit} "
               f"({gap_text}); the data cannot rule out a change beyond the margin.")
    return _ClauseResult(clause, holds, broken=broken, figures=figures, why=f"{head}: {why}", cause=cause)


def _holds_clause(clause: Clause, data: RunData, variant: str, baseline: str, alpha: float) -> _ClauseResult:
    assert clause.fixture is not None
    values = data.metrics.get(clause.metric)
    planned = int(((data.variant == data.variants.index(variant)) &
                   (data.fixture == data.fixtures.index(clause.fixture))).sum()) if clause.fixture in data.fixtures \
        else 0
    if values is None or clause.fixture not in data.fixtures:
        why = f"no scored value of {clause.metric} on {clause.fixture}"
        return _ClauseResult(clause, False, figures={"k": 0, "n": 0, "planned": planned},
                             why=f"{clause_text(clause)} ({variant}): cannot be judged — {why}.", cause=why)
    row = data.grid(values, variant, [clause.fixture])[0]
    scored = row[~np.isnan(row)]
    k = int((np.abs(scored - clause.equals) <= _EQ_TOL).sum())
    n = int(scored.size)
    lo, hi = stats.wilson(k, n, alpha)
    base_row = data.grid(values, baseline, [clause.fixture])[0]
    base_scored = base_row[~np.isnan(base_row)]
    bk = int((np.abs(base_scored - clause.equals) <= _EQ_TOL).sum())
    holds = n == planned and n > 0 and k == n
    figures = {"k": k, "n": n, "planned": planned, "rate": k / n if n else None, "wilson": [lo, hi],
               "baseline_k": bk, "baseline_n": int(base_scored.size)}
    tail = f"Wilson {_pct(alpha)} {_ci(lo, hi)}; baseline {bk} of {base_scored.size}"
    head = f"{clause_text(clause)} ({variant})"
    cause = ""
    if holds:
        why = f"holds — {k} of {n} repetitions ({tail})."
    elif n < planned and k == n:
        cause = f"only {n} of {planned} repetitions were scored"
        why = (f"does not hold — only {n} of {planned} repetitions were scored (the others were cut off or "
               f"failed in transport, not scored as wrong) and the clause needs every one ({tail}).")
    else:
        cause = f"{k} of {n} repetitions"
        why = f"does not hold — {k} of {n} scored repetitions ({tail})."
    return _ClauseResult(clause, holds, figures=figures, why=f"{head}: {why}", cause=cause)


@dataclass
class _Comparison:
    variant: str
    finding: str
    why: str
    clauses: list[_ClauseResult]
    gaps: dict[tuple[str, str | None], _Gap]
    equivalence: dict[str, Any]


def _judge(win: WinRule, results: list[_ClauseResult], first: _Gap) -> tuple[str, str, dict[str, Any]]:
    """The finding of one variant against the baseline, why, and the equivalence figures (docs/verdict.md)."""
    alpha = win.alpha
    margin = float(win.equivalence_margin or 0.0)
    first_clause = results[0]
    eq: dict[str, Any] = {"margin": margin, "tost_p": first.tost_p, "ci": None, "level": 1 - 2 * alpha}
    if first.pg is not None:
        eq["ci"] = [first.pg.lower_one_sided, first.pg.upper_one_sided]
    guards = results[1:]  # every other clause: not_* guards and holds clauses alike
    if all(r.holds for r in results):
        return "win", "every clause holds.", eq
    broken = [r for r in results if r.broken]
    if first_clause.mirror or broken:
        if first_clause.mirror:
            return "loss", f"the first clause's effect goes significantly the wrong way — {first_clause.why}", eq
        return "loss", f"a guard is significantly broken — {broken[0].why}", eq
    equivalent = first.tost_p is not None and first.tost_p < alpha
    eq_ci = (f"the {100 * (1 - 2 * alpha):g}% CI of the {first_clause.clause.metric} gap "
             f"{_ci(*eq['ci']) if eq['ci'] else 'n/a'}")
    if equivalent and all(g.holds for g in guards):
        return "no-effect", (f"{eq_ci} lies inside ±{margin:g} (TOST p {_peq(first.tost_p)}) and every guard "
                             "holds: the change did nothing worth having."), eq
    reasons = ["; ".join(f"{clause_text(r.clause)} does not hold ({r.cause})" for r in results if not r.holds)]
    if equivalent:
        failed_guards = [clause_text(g.clause) for g in guards if not g.holds]
        reasons.append(f"the effect is within ±{margin:g} (TOST p {_peq(first.tost_p)}) but "
                       f"{', '.join(failed_guards)} does not hold, so it is not shown to be harmless")
    else:
        reasons.append(f"{eq_ci} is not inside ±{margin:g} (TOST p {_peq(first.tost_p)}), so no effect is not "
                       "shown either")
    return "inconclusive", "; ".join(reasons) + "; nothing is significantly the wrong way.", eq


# ---------------------------------------------------------------------------------------------------------
# Giving a verdict


def _rig_line(manifest: Mapping[str, Any]) -> str:
    rig = manifest.get("rig")
    if isinstance(rig, Mapping):
        if rig.get("line"):
            return str(rig["line"])
        parts = [str(rig.get("model") or "?")]
        if rig.get("effort"):
            parts.append(f"effort {rig['effort']}")
        parts.append(str(rig.get("surface") or rig.get("provider") or "?"))
        return " · ".join(parts)
    return str(rig or "")


def _totals(data: RunData) -> tuple[float | None, dict[str, Any]]:
    """Total cost (None when no call reported one) and latency (median and total over calls that report it)."""
    cost_known = ~np.isnan(data.cost)
    cost = float(data.cost[cost_known].sum()) if cost_known.any() else None
    lat = data.latency_ms[~np.isnan(data.latency_ms)]
    latency = {"median_ms": float(np.median(lat)) if lat.size else None,
               "total_ms": float(lat.sum()) if lat.size else None}
    return cost, latency


def _counts(data: RunData) -> dict[str, int]:
    return {"planned": len(data.cells), "scored": data.count(OK), "truncated": data.count(TRUNCATED),
            "failed": data.count(FAILED), "missing": data.count(MISSING)}


def give_verdict(project: Project, run_dir: Path, *, allow_incomplete: bool = False,
                 n_resamples: int = BOOTSTRAP_RESAMPLES, timings: dict[str, float] | None = None) -> Verdict:
    """Unblind a finished run, apply its card's sealed rule, write verdict.json and table.csv, enter it in the
    ledger. VerdictError (one line) when the run cannot be judged; see the module docstring.

    `timings`, if given, receives the seconds spent in each phase (for benchmarks/verdict_speed.py).
    """
    clock = _Clock(timings)
    run_dir = Path(run_dir).resolve()
    manifest = read_manifest(run_dir)
    outputs = run_dir / "outputs.jsonl"
    with ThreadPoolExecutor(max_workers=3) as pool:
        # Numpy statistics, hashing and file writes release the GIL; reading and the table are Python work:
        # they run side by side. If the outputs disagree with the scores, the run is read again in full (the
        # reference reader names the cell) and judged from that reading.
        digest = pool.submit(file_digest, outputs) if manifest.get("finished_at") and outputs.is_file() else None
        card = _check_run(project, run_dir, manifest, digest)
        clock.lap("checks (card, seal, outputs digest)")
        data = read_run(run_dir, manifest=manifest, baseline=card.baseline, allow_incomplete=allow_incomplete,
                        defer_outputs=True)
        _check_plan(card, data)
        clock.lap("read plan and scores")
        seed = stats.seed_from(str(manifest["seal_root"]))
        figures = _ab_stats(card, data, seed, n_resamples, pool) if card.is_ab else None
        done = finish_outputs(data)
        if done is not data:
            data = done
            figures = _ab_stats(card, data, seed, n_resamples, pool) if card.is_ab else None
        table_tmp = run_dir / (TABLE_FILE + ".tmp")
        table_job = pool.submit(_write_file, table_tmp, _table_text(data, _rig_line(manifest)))
        clock.lap("outputs and table (beside the statistics)")
        try:
            body = _ab_body(card, data, figures.result()) if figures is not None else _probe_body(card, data)
            clock.lap("statistics (waiting)")
            from .grading import agreement

            human = agreement(project, data)
            if human is not None:
                body["human"] = human
                body["disagreements"] = human["disagreements"]  # the blind scorer notes, as the site expects
            table_job.result()
            verdict = _commit(project, run_dir, card, data, body, table_tmp)
        finally:
            table_job.result()
            table_tmp.unlink(missing_ok=True)
    clock.lap("grades, ledger, files")
    return verdict


class _Clock:
    def __init__(self, sink: dict[str, float] | None):
        self.sink = sink
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.last
        self.last = now


@dataclass
class _Figures:
    gaps: dict[tuple[str, tuple[str, str | None]], _Gap]
    floors: dict[tuple[str, str | None], stats.NoiseFloor | None]
    gap_keys: list[tuple[str, str | None]]
    seed: int
    n_resamples: int


class _Pending:
    """Statistics being computed on a pool; `result()` waits for all of them."""

    def __init__(self, figures: _Figures, jobs: list[Future[None]]):
        self.figures, self.jobs = figures, jobs

    def result(self) -> _Figures:
        for job in self.jobs:
            job.result()
        return self.figures


def _ab_stats(card: Card, data: RunData, seed: int, n_resamples: int, pool: ThreadPoolExecutor) -> _Pending:
    """Start every statistic the clauses need: paired gap, noise floor, bootstrap, TOST, on `pool`."""
    win = card.win
    assert win is not None and card.baseline is not None
    baseline, alpha = card.baseline, win.alpha
    others = [v for v in data.variants if v != baseline]
    gap_keys = list(dict.fromkeys((c.metric, c.fixture) for c in win.clauses if c.test != "holds"))
    gaps: dict[tuple[str, tuple[str, str | None]], _Gap] = {}
    floors: dict[tuple[str, str | None], stats.NoiseFloor | None] = {}
    for metric, fixture in gap_keys:
        values = data.metrics.get(metric)
        if values is None and metric == "score":
            values = data.score
        fixtures = [fixture] if fixture else None
        base = data.grid(values, baseline, fixtures) if values is not None else np.full((1, 1), np.nan)
        try:
            floors[(metric, fixture)] = stats.noise_floor(base, alpha) if values is not None else None
        except ValueError:
            floors[(metric, fixture)] = None
        for variant in others:
            var = data.grid(values, variant, fixtures) if values is not None else np.full((1, 1), np.nan)
            g = _Gap(metric, fixture, variant, base, var, nf=floors[(metric, fixture)])
            if values is None:
                g.error = f"the scorer gave no {metric!r} for any cell"
            gaps[(variant, (metric, fixture))] = g
    first = win.clauses[0]
    margin = float(win.equivalence_margin or 0.0)

    def gap_job(g: _Gap) -> None:
        try:
            g.pg = stats.paired_gap(g.base, g.var, alpha, seed=seed, n_draws=SIGNFLIP_DRAWS)
        except ValueError as exc:
            g.error = str(exc)
            return
        if (g.metric, g.fixture) == (first.metric, first.fixture) and margin > 0:
            g.tost_p = stats.tost(g.base, g.var, margin, alpha)

    usable = [g for g in gaps.values() if g.error is None]

    def boot_job() -> None:
        pairs, members = [], []
        for g in usable:
            try:
                stats.fixture_differences(g.base, g.var)
            except ValueError:
                continue
            pairs.append((g.base, g.var))
            members.append(g)
        for g, boot in zip(members, bootstrap_many(pairs, seed=seed, n_resamples=n_resamples, alpha=alpha),
                           strict=True):
            g.boot = boot

    def gaps_job() -> None:  # one after another: scipy's distributions are not promised to be thread-safe
        for g in usable:
            gap_job(g)

    jobs = [pool.submit(boot_job), pool.submit(gaps_job)]
    return _Pending(_Figures(gaps, floors, gap_keys, seed, n_resamples), jobs)


def _check_plan(card: Card, data: RunData) -> None:
    expected_variants = set(card.variant_names())
    if set(data.variants) != expected_variants:
        raise VerdictError(f"run {data.run_dir.name}: its plan has variants {sorted(data.variants)} but the card "
                           f"has {sorted(expected_variants)}")
    missing = sorted(set(card.fixture_ids()) - set(data.fixtures))
    if missing:
        raise VerdictError(f"run {data.run_dir.name}: fixture {missing[0]} of the card is not in the run's plan")


def _ab_body(card: Card, data: RunData, figures: _Figures) -> dict[str, Any]:
    win = card.win
    assert win is not None and card.baseline is not None
    baseline = card.baseline
    alpha = win.alpha
    others = [v for v in data.variants if v != baseline]
    counts = _counts(data)
    allowed = win.allow_failed
    lost = counts["failed"] + counts["missing"]
    incomplete = lost > allowed
    gaps, floors, gap_keys = figures.gaps, figures.floors, figures.gap_keys
    first = win.clauses[0]

    # 2. the clauses and the finding, variant by variant
    comparisons: list[_Comparison] = []
    for variant in others:
        results = []
        for clause in win.clauses:
            if clause.test == "holds":
                results.append(_holds_clause(clause, data, variant, baseline, alpha))
            else:
                results.append(_gap_clause(clause, gaps[(variant, (clause.metric, clause.fixture))], alpha))
        first_gap = gaps[(variant, (first.metric, first.fixture))]
        finding, why, eq = _judge(win, results, first_gap)
        comparisons.append(_Comparison(variant, finding, why, results,
                                       {k[1]: g for k, g in gaps.items() if k[0] == variant}, eq))

    # 3. the overall finding
    findings = [c.finding for c in comparisons]
    if incomplete:
        finding = "incomplete"
        what = []
        if counts["failed"]:
            what.append(f"{counts['failed']} cell(s) failed in transport")
        if counts["missing"]:
            what.append(f"{counts['missing']} cell(s) have no output or score")
        summary_why = (f"{' and '.join(what)} and the card allows {allowed}; a grid with more failures than its "
                       "card allows is not judged (the figures below are for information only).")
    else:
        if "win" in findings:
            finding = "win"
        elif "loss" in findings:
            finding = "loss"
        elif findings and all(f == "no-effect" for f in findings):
            finding = "no-effect"
        else:
            finding = "inconclusive"
        if len(comparisons) == 1:
            summary_why = comparisons[0].why
        else:
            summary_why = "; ".join(f"{c.variant}: {c.finding}" for c in comparisons) + (
                f". Each of the {len(comparisons)} variants was tested against {baseline} at α = {alpha:g}; the "
                f"chance that at least one wins by luck is up to {len(comparisons)}·α.")
    outcome = "result" if finding in RESULT_FINDINGS else "non-result"
    truncated_by = {v: data.count(TRUNCATED, v) for v in data.variants}
    failed_by = {v: data.count(FAILED, v) + data.count(MISSING, v) for v in data.variants}
    notes = []
    if counts["truncated"]:
        notes.append(
            f"{counts['truncated']} cell(s) were cut off by the token limit ("
            + ", ".join(f"{v} {n}" for v, n in truncated_by.items())
            + "); they are reported apart, left out of the means and never scored as wrong."
        )
    if lost:
        notes.append(f"{lost} cell(s) failed in transport or are missing ("
                     + ", ".join(f"{v} {n}" for v, n in failed_by.items())
                     + f"); the card allows {allowed}.")

    # 4. figures per metric, per clause
    metrics_out: dict[str, Any] = {}
    for metric, fixture in gap_keys:
        name = metric if fixture is None else f"{metric} on {fixture}"
        entry: dict[str, Any] = {}
        any_g = gaps[(others[0], (metric, fixture))]
        entry["means"] = {baseline: _mean(any_g.base)} | {v: _mean(gaps[(v, (metric, fixture))].var) for v in others}
        nf = floors.get((metric, fixture))
        entry["noise_floor"] = nf.value if nf else None
        entry["baseline_run_means"] = list(nf.run_means) if nf else None
        per_variant = {v: _gap_figures(gaps[(v, (metric, fixture))], alpha) for v in others}
        if len(others) == 1:
            entry.update(per_variant[others[0]])
        else:
            entry["by_variant"] = per_variant
        metrics_out[name] = entry
    clauses_out = []
    for comp in comparisons:
        for r in comp.clauses:
            c = r.clause
            row = {"variant": comp.variant, "metric": c.metric, "test": c.test, "fixture": c.fixture,
                   "margin": c.margin, "text": clause_text(c), "holds": r.holds, **r.figures, "why": r.why}
            if c.test == "holds":
                row["equals"] = c.equals
            if r.broken:
                row["broken"] = True
            clauses_out.append(row)
    level = 1 - alpha
    summary = (f"{card.id} v{card.version}, run {data.run_dir.name}: {finding} ({outcome}). {summary_why}"
               + ("" if not notes else " " + " ".join(notes)))
    return {
        "finding": finding,
        "outcome": outcome,
        "summary": summary,
        "why": summary_why,
        "baseline": baseline,
        "variants": others,
        "alpha": alpha,
        "confidence": level,
        "equivalence_margin": win.equivalence_margin,
        "allow_failed": allowed,
        "cells": len(data.cells),
        "counts": counts,
        "truncated_by_variant": truncated_by,
        "failed_by_variant": failed_by,
        "notes": notes,
        "bootstrap": {"resamples": figures.n_resamples, "seed": figures.seed,
                      "method": "cluster (fixtures), percentile"},
        "signflip": {"draws": SIGNFLIP_DRAWS if data.fixtures and len(data.fixtures) > 20 else "exact"},
        "comparisons": [
            {"variant": c.variant, "finding": c.finding,
             "outcome": "result" if c.finding in RESULT_FINDINGS else "non-result",
             "why": c.why, "equivalence": c.equivalence,
             "clauses": [row for row in clauses_out if row["variant"] == c.variant]}
            for c in comparisons
        ],
        "clauses": clauses_out,
        "metrics": metrics_out,
    }


def _gap_figures(g: _Gap, alpha: float) -> dict[str, Any]:
    if g.pg is None:
        return {"gap": None, "ci": None, "p": None, "error": g.error}
    pg = g.pg
    out = {"gap": pg.gap, "ci": [pg.ci_low, pg.ci_high], "ci_bootstrap": list(g.boot) if g.boot else None,
           "p": pg.p_value, "p_signflip": pg.p_signflip, "se": pg.se, "df": pg.df,
           "lower_one_sided": pg.lower_one_sided, "upper_one_sided": pg.upper_one_sided,
           "n_fixtures": pg.n_fixtures}
    if g.tost_p is not None:
        out["tost_p"] = g.tost_p
    return out


def _probe_body(card: Card, data: RunData) -> dict[str, Any]:
    counts = _counts(data)
    alpha = 0.05
    ok = data.status == OK
    scores = data.score[ok]
    n = int(scores.size)
    passes = int((np.abs(scores - 1.0) <= _EQ_TOL).sum())
    score = float(scores.mean()) if n else None
    lost = counts["failed"] + counts["missing"]
    finding = "incomplete" if lost or n == 0 else "scored"
    outcome = "result" if finding in RESULT_FINDINGS else "non-result"
    rules: dict[str, Any] = {}
    for rule_id, values in data.rules.items():
        v = values[ok]
        v = v[~np.isnan(v)]
        k = int((v > 0.5).sum())
        lo, hi = stats.wilson(k, int(v.size), alpha)
        rules[rule_id] = {"passes": k, "n": int(v.size), "rate": k / v.size if v.size else None, "wilson": [lo, hi]}
    lo, hi = stats.wilson(passes, n, alpha)
    model = ""
    rig = data.manifest.get("rig")
    if isinstance(rig, Mapping):
        model = str(rig.get("model") or "")
    reasons = []
    if counts["truncated"]:
        reasons.append(f"{counts['truncated']} repetition(s) were cut off by the token limit: reported apart, "
                       "not scored as wrong")
    if counts["failed"]:
        reasons.append(f"{counts['failed']} failed in transport")
    if counts["missing"]:
        reasons.append(f"{counts['missing']} have no output or score")
    if finding == "scored":
        why = f"score {_f(score)} over {n} scored repetition(s); {passes} of {n} pass (score 1)."
    elif n == 0:
        why = "no repetition could be scored."
    else:
        why = f"score {_f(score)} over the {n} scored repetition(s), but not every planned call was answered."
    why = why + ("" if not reasons else " " + "; ".join(reasons) + ".")
    rule_lines = [f"rule {rid}: {r['passes']} of {r['n']} pass (Wilson 95% {_ci(*r['wilson'])})"
                  for rid, r in rules.items()]
    return {
        "finding": finding,
        "outcome": outcome,
        "summary": f"{card.id} v{card.version}, run {data.run_dir.name}, {model}: {finding} ({outcome}). {why}",
        "why": why,
        "model": model,
        "score": score,
        "passes": passes,
        "score_ci": [lo, hi],
        "rules": rules,
        "rule_lines": rule_lines,
        "cells": len(data.cells),
        "counts": counts,
        "alpha": alpha,
    }


def _commit(project: Project, run_dir: Path, card: Card, data: RunData, body: dict[str, Any],
            table_tmp: Path) -> Verdict:
    """Enter the verdict in the ledger and write its files, under the ledger's lock, exactly once."""
    manifest = data.manifest
    run = run_dir.name
    cost, latency = _totals(data)
    rig_line = _rig_line(manifest)
    evidence = project.relative(run_dir)
    head = {"run": run, "card": card.id, "version": card.version, "kind": card.kind, "rig": rig_line,
            "seal_root": manifest["seal_root"], "evidence": evidence, "cost": cost, "latency": latency}
    row: dict[str, Any] = {
        "card": card.id, "version": card.version, "kind": card.kind, "rig": rig_line, "run": run,
        "cells": body["cells"], "counts": body["counts"], "outcome": body["outcome"], "finding": body["finding"],
    }
    if card.is_ab:
        row["comparisons"] = [{k: c[k] for k in ("variant", "finding", "outcome")} for c in body["comparisons"]]
        row["metrics"] = {
            name: {k: v for k, v in m.items() if k in ("means", "gap", "ci", "ci_bootstrap", "p", "p_signflip",
                                                         "noise_floor", "by_variant", "tost_p")}
            for name, m in body["metrics"].items()
        }
        for m in row["metrics"].values():
            for figs in (m.get("by_variant") or {}).values():
                for k in ("se", "df", "lower_one_sided", "upper_one_sided", "n_fixtures"):
                    figs.pop(k, None)
        row["clauses"] = [{k: c.get(k) for k in ("variant", "metric", "test", "fixture", "margin", "holds")}
                          for c in body["clauses"]]
    else:
        row.update({k: body[k] for k in ("model", "score", "passes", "score_ci")})
        row["rules"] = {rid: {"passes": r["passes"], "n": r["n"], "rate": r["rate"], "wilson": r["wilson"]}
                        for rid, r in body["rules"].items()}
    if "human" in body:
        h = body["human"]
        row["human"] = {"graded": h["graded"], "agreement": h["agreement"], "kappa": h["kappa"],
                        "disagreements": len(h["disagreements"])}
    row.update({"cost": cost, "latency": latency, "seal_root": manifest["seal_root"],
                "evidence": evidence})
    with ledger.locked(project):
        if (run_dir / VERDICT_FILE).exists():
            raise VerdictError(f"run {run} already has a verdict ({project.relative(run_dir / VERDICT_FILE)})")
        existing = ledger.find_run(project, run)
        if existing is not None:
            raise VerdictError(f"run {run} is already in the ledger (seq {existing.get('seq')}) but has no "
                               f"{VERDICT_FILE}; it is not entered twice")
        entered = ledger.append(project, row)
        verdict_data = ledger.strict({
            **head, **body, "given_at": entered["at"],
            "ledger": {"seq": entered["seq"], "hash": entered["hash"], "at": entered["at"]},
        })
        os.replace(table_tmp, run_dir / TABLE_FILE)
        text = json.dumps(verdict_data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        _write_atomic(run_dir / VERDICT_FILE, text.encode("utf-8"))
    return Verdict(run=run, card=card.id, version=card.version, kind=card.kind, finding=body["finding"],
                   outcome=body["outcome"], run_dir=run_dir, data=verdict_data, ledger_row=entered)


def _write_file(path: Path, text: str) -> None:
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def load_verdict(project: Project, run_dir: Path) -> Verdict:
    """The verdict already given for a run (from its verdict.json)."""
    path = Path(run_dir) / VERDICT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VerdictError(f"run {Path(run_dir).name} has no verdict yet (`benchcard verdict "
                           f"{Path(run_dir).name}` gives it)") from None
    except (OSError, ValueError) as exc:
        raise VerdictError(f"{project.relative(path)}: unreadable: {exc}") from None
    row = ledger.find_run(project, str(data.get("run")))
    return Verdict(run=str(data.get("run")), card=str(data.get("card")), version=int(data.get("version") or 0),
                   kind=str(data.get("kind")), finding=str(data.get("finding")), outcome=str(data.get("outcome")),
                   run_dir=Path(run_dir), data=data, ledger_row=row)


# ---------------------------------------------------------------------------------------------------------
# table.csv


def _csv_field(text: str) -> str:
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _table_text(data: RunData, rig: str) -> str:
    """`table.csv`: one row per planned cell and metric (fixture, variant, repetition, metric, value, rig).

    Rows are ordered by fixture, variant (baseline first) and repetition; a cell's metrics keep the scorer's
    order. Cells without a score (truncated, failed, missing) have an empty value for every metric: they are
    in the table, unscored, never scored as wrong. Values are written exactly as scores.jsonl holds them.
    Built as text (pandas' writer is several times slower at 10⁶ rows); `pandas.read_csv` reads it back.
    """
    names = list(data.metrics) or ["score"]
    empty = "\x00".join(f"{_csv_field(m)}," for m in names)
    suffix = "," + _csv_field(rig) + "\n"
    fixtures = [_csv_field(f) for f in data.fixtures]
    variants = [_csv_field(v) for v in data.variants]
    reps = [str(r) for r in data.repetitions]
    order = np.lexsort((data.repetition, data.variant, data.fixture)).tolist()
    fixture, variant, repetition = data.fixture.tolist(), data.variant.tolist(), data.repetition.tolist()
    pairs = data.pairs
    if not data.metrics:  # a scorer that wrote no metrics: its score is the one metric
        pairs = [None if math.isnan(s) else f"score,{s!r}" for s in data.score.tolist()]
    parts = [",".join(TABLE_COLUMNS) + "\n"]
    for i in order:
        prefix = f"{fixtures[fixture[i]]},{variants[variant[i]]},{reps[repetition[i]]},"
        text = pairs[i]
        if text is None:
            text = empty
        parts.append(prefix + text.replace("\x00", suffix + prefix) + suffix)
    return "".join(parts)
