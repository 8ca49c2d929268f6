"""Per-sample scores from logs other tools wrote: inspect_ai eval logs and lm-evaluation-harness samples files.

inspect_ai logs (`.eval` or `.json`) are read only through inspect_ai's own `read_eval_log`, its stable
surface for outside tools (an optional extra: `pip install 'benchcard[inspect]'`); nothing here parses its
format. lm-eval's `--log_samples` output is one JSON object per document (`samples_<task>_<date>.jsonl`; older
versions wrote a JSON list), whose keys are lm-eval's documented sample fields: `doc_id`, `filter`, `metrics`
(the names of the per-sample metrics) and one key per metric.

Each sample becomes one cell keyed by (sample id, epoch), with a status in benchcard's vocabulary: `ok`,
`truncated` (an inspect_ai sample halted by a limit: reported apart, never scored as a wrong answer) or
`failed` (an inspect_ai sample that ended in an error).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchcard.errors import CompareError

Key = tuple[str, int]  # (sample id, epoch)


@dataclass(frozen=True)
class Sample:
    """One scored sample of a log: its status and its numeric metrics (empty unless ok)."""

    status: str
    metrics: Mapping[str, float]


@dataclass(frozen=True)
class Samples:
    """A log's samples by (id, epoch), with what the log says about itself."""

    path: Path
    tool: str  # inspect_ai | lm-eval
    model: str
    task: str
    samples: Mapping[Key, Sample]
    metrics: tuple[str, ...]  # every metric name seen, in first-seen order
    skipped: Mapping[str, int] = field(default_factory=dict)  # non-numeric metric values left out, by metric


def read_samples(path: Path) -> Samples:
    """The samples of one log, its kind told by its content (an inspect_ai `.eval` is a zip archive)."""
    if not path.is_file():
        raise CompareError(f"{path}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PK") or path.suffix == ".eval":
        return _inspect(path)
    text = head.lstrip()
    if text.startswith(b"{") and (b'"eval"' in head or b'"version"' in head) and b'"doc_id"' not in head:
        return _inspect(path)
    return _lm_eval(path)


# --------------------------------------------------------------------------------------------- inspect_ai


def _inspect(path: Path) -> Samples:
    """The log's header and its sample summaries (id, epoch, scores, error, limit), both through inspect_ai's
    reader. Summaries, not whole samples: reading 10,000 whole samples took inspect_ai 40–50 s where their
    summaries took 3 s (docs/compare.md); a summary has no `stop_reason`, so a sample is `truncated` here only
    when inspect_ai recorded a limit that halted it."""
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise CompareError(f"{path}: an inspect_ai log; reading it needs inspect_ai's own reader: pip install "
                           "'benchcard[inspect]'") from None
    try:
        header = read_eval_log(str(path), header_only=True)
        summaries = read_eval_log_sample_summaries(str(path))
    except Exception as exc:  # inspect_ai raises many kinds; the user needs the file and the reason
        raise CompareError(f"{path}: inspect_ai could not read it: {type(exc).__name__}: {exc}"[:300]) from None
    if not summaries:
        raise CompareError(f"{path}: the inspect_ai log has no samples (status {header.status}); compare needs "
                           "per-sample scores")
    to_float = value_to_float()
    samples: dict[Key, Sample] = {}
    names: dict[str, None] = {}
    skipped: dict[str, int] = {}
    for s in summaries:
        key = (str(s.id), int(s.epoch))
        if key in samples:
            raise CompareError(f"{path}: sample {key[0]} epoch {key[1]} appears twice")
        if s.error is not None or not s.scores:
            samples[key] = Sample("failed", {})
            continue
        if s.limit is not None:
            samples[key] = Sample("truncated", {})
            continue
        metrics: dict[str, float] = {}
        for scorer, score in s.scores.items():
            value = score.value
            items = value.items() if isinstance(value, Mapping) else [(None, value)]
            for sub, v in items:
                name = scorer if sub is None else f"{scorer}.{sub}"
                number = _number(v, to_float)
                if number is None:
                    skipped[name] = skipped.get(name, 0) + 1
                    continue
                metrics[name] = number
                names.setdefault(name)
        samples[key] = Sample("ok", metrics)
    return Samples(path=path, tool="inspect_ai", model=str(header.eval.model), task=str(header.eval.task),
                   samples=samples, metrics=tuple(names), skipped=skipped)


def _number(value: Any, to_float: Any) -> float | None:
    """A score value as a number: bools and numbers as they are, inspect_ai's letters (C, I, P, N) and yes/no
    words through its own `value_to_float`; anything else (a list, free text) is not a number."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        known = value.strip().lower() in {"c", "i", "p", "n", "yes", "no", "true", "false"}
        try:
            float(value)
        except ValueError:
            if not known:
                return None
        number = float(to_float(value))
        return number if math.isfinite(number) else None
    return None


# ------------------------------------------------------------------------------------------------ lm-eval


def _lm_eval(path: Path) -> Samples:
    rows = list(_lm_rows(path))
    if not rows:
        raise CompareError(f"{path}: no samples; expected lm-eval's --log_samples output (one JSON object per "
                           "document) or an inspect_ai log")
    samples: dict[Key, dict[str, float]] = {}
    names: dict[str, None] = {}
    skipped: dict[str, int] = {}
    for n, row in rows:
        if "doc_id" not in row or not isinstance(row.get("metrics"), list):
            raise CompareError(f"{path}:{n}: expected an lm-eval sample with doc_id and metrics")
        filt = str(row.get("filter") or "none")
        key = (str(row["doc_id"]), 0)  # lm-eval has no epochs; repeats are reduced inside the metric
        metrics = samples.setdefault(key, {})
        for metric in row["metrics"]:
            name = str(metric) if filt == "none" else f"{metric},{filt}"
            value = row.get(str(metric))
            if isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
                if name in metrics:
                    raise CompareError(f"{path}:{n}: doc_id {key[0]} has {name} twice")
                metrics[name] = float(value)
                names.setdefault(name)
            else:
                skipped[name] = skipped.get(name, 0) + 1  # e.g. corpus-level metrics kept as (ref, pred) pairs
    task = str(rows[0][1].get("task_name") or _task_from_name(path))
    return Samples(path=path, tool="lm-eval", model=str(rows[0][1].get("model_name") or path.parent.name),
                   task=task, samples={k: Sample("ok", m) for k, m in samples.items()}, metrics=tuple(names),
                   skipped=skipped)


def _lm_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(f"{path}: unreadable: {exc}") from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CompareError(f"{path}: not JSON: {exc}") from None
        for i, row in enumerate(data, 1):
            if not isinstance(row, dict):
                raise CompareError(f"{path}: item {i}: expected an lm-eval sample object")
            yield i, row
        return
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)  # lm-eval's own sample rows: a foreign format with no struct of ours
        except ValueError as exc:
            raise CompareError(f"{path}:{n}: not a JSON object: {exc}") from None
        if not isinstance(row, dict):
            raise CompareError(f"{path}:{n}: expected an lm-eval sample object")
        yield n, row


def _task_from_name(path: Path) -> str:
    """`samples_<task>_<date>.jsonl` → task."""
    stem = path.stem
    if stem.startswith("samples_"):
        stem = stem[len("samples_"):]
        head, _, tail = stem.rpartition("_")
        return head if head and tail[:1].isdigit() else stem
    return stem
