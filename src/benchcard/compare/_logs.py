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
import time
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchcard._util.version import pip_install
from benchcard.compare import _guard as guard
from benchcard.errors import CompareError

Key = tuple[str, int]  # (sample id, epoch)
#: Where an `.eval` archive keeps its sample summaries: consolidated when the eval finished, else one journal
#: file per batch (the only members `_check_eval_archive` reads itself, to count their (id, epoch) rows).
SUMMARIES = "summaries.json"
JOURNAL_SUMMARIES = "_journal/summaries/"


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
    id_kinds: Mapping[str, str] = field(default_factory=dict)  # sample id → integer | text (ids pair by kind)
    facets: tuple[tuple[str, str], ...] = ()
    """What the log says about how it was made, as (key, words) in a fixed order: `model`, `task`, each task
    argument (`task.K`: "K=V"), model argument (`model.K`), generation setting (`config.K`), and `created`;
    the two sides of a comparison are named after the facets that tell them apart (pairing.labels_of)."""
    identity: Mapping[str, str] = field(default_factory=dict)
    """What the log says a sample is, by sample id, where it says it (`identity_of`): lm-eval's `doc_hash` (the
    document's digest; a prompt variant leaves it alone), inspect_ai's target. Two logs pair only samples whose
    identities agree (pairing.same_samples)."""
    identity_of: str = ""  # doc_hash | target
    task_said: bool = True  # False when the task is only read from the file's name (lm-eval rows that omit it)


def read_samples(path: Path) -> Samples:
    """The samples of one log, its kind told by its content (an inspect_ai `.eval` is a zip archive)."""
    if not path.is_file():
        raise CompareError(f"{path}: {_not_a_file(path)}")
    guard.sized(path)
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PK") or path.suffix == ".eval":
        return _inspect(path)
    text = head.lstrip()
    if text.startswith(b"{") and (b'"eval"' in head or b'"version"' in head) and b'"doc_id"' not in head:
        return _inspect(path)
    return _lm_eval(path)


def _not_a_file(path: Path) -> str:
    """What stands at `path` instead of a log: a FIFO read would block, a loop of links loops."""
    if path.is_symlink() and not path.exists():
        return "a symbolic link that leads to no file (a loop of links, or its target is gone); a log is a file"
    if path.is_dir():
        return "a folder; compare reads two log files"
    return "not a regular file (a FIFO, a socket or a device); a log is a file" if path.exists() else "no such file"


# --------------------------------------------------------------------------------------------- inspect_ai


def _inspect(path: Path) -> Samples:
    """The log's header and its sample summaries (id, epoch, scores, error, limit), both through inspect_ai's
    reader. Summaries, not whole samples: reading 10,000 whole samples took inspect_ai 40–50 s where their
    summaries took 3 s (docs/compare.md); a summary has no `stop_reason`, so a sample is `truncated` here only
    when inspect_ai recorded a limit that halted it."""
    header, summaries, to_float = _read_inspect(path)
    samples: dict[Key, Sample] = {}
    names: dict[str, None] = {}
    skipped: dict[str, int] = {}
    seen = guard.Seen(path)
    identity: dict[str, str] = {}
    for s in summaries:
        key = seen.add(s.id, int(s.epoch), str(path))
        identity.setdefault(key[0], json.dumps(s.target, ensure_ascii=False))
        if s.error is not None or not s.scores:
            samples[key] = Sample("failed", {})
        elif s.limit is not None:
            samples[key] = Sample("truncated", {})
        else:
            samples[key] = Sample("ok", _inspect_metrics(s.scores, to_float, f"{path}: sample {key[0]} epoch "
                                                         f"{key[1]}", names, skipped))
    return Samples(path=path, tool="inspect_ai", model=str(header.eval.model), task=str(header.eval.task),
                   samples=samples, metrics=tuple(names), skipped=skipped, id_kinds=seen.kinds,
                   facets=_inspect_facets(header.eval), identity=identity, identity_of="target")


def _read_inspect(path: Path) -> tuple[Any, list[Any], Any]:
    """The log's header, its sample summaries and inspect_ai's value_to_float, each refusal one line."""
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise CompareError(f"{path}: an inspect_ai log; reading it needs inspect_ai's own reader: "
                           f"{pip_install('inspect')}") from None
    if zipfile.is_zipfile(path):
        _check_eval_archive(path)
    else:
        _check_json_log(path)
    try:
        header = read_eval_log(str(path), header_only=True)
        summaries = read_eval_log_sample_summaries(str(path))
    except Exception as exc:  # inspect_ai raises many kinds; the user needs the file and the reason
        raise CompareError(f"{path}: inspect_ai could not read it: {type(exc).__name__}: {exc}"[:300]) from None
    if not summaries:
        raise CompareError(f"{path}: the inspect_ai log has no samples (status {header.status}); compare needs "
                           "per-sample scores")
    return header, summaries, value_to_float()


#: An inspect_ai `.json` log is read whole by inspect_ai (its summaries are made from the whole samples): about
#: 3.2 times its size in memory (a 57 MB log: 180 MB more than a 171 kB one). Above this it is refused with the
#: way to an `.eval` log, whose sample summaries inspect_ai reads alone.
MAX_JSON_LOG_BYTES = 512 * 1024**2


def _check_json_log(path: Path) -> None:
    size = guard.sized(path)
    if size > MAX_JSON_LOG_BYTES:
        raise CompareError(f"{path}: {size:,} bytes of an inspect_ai .json log, which inspect_ai reads whole (about "
                           f"3 times its size in memory); above {MAX_JSON_LOG_BYTES:,} bytes convert it to .eval, "
                           "whose summaries are read alone: inspect log convert --to eval --stream 10 --output-dir "
                           f"DIR {path}")


def _inspect_metrics(scores: Mapping[str, Any], to_float: Any, where: str, names: dict[str, None],
                     skipped: dict[str, int]) -> dict[str, float]:
    """One sample's scores as numbers, a dict-valued score as `scorer.key`; a value that is no number is counted
    in `skipped`, each metric's name kept in `names` in the order first seen."""
    metrics: dict[str, float] = {}
    for scorer, score in scores.items():
        value = score.value
        items = value.items() if isinstance(value, Mapping) else [(None, value)]
        for sub, v in items:
            name = scorer if sub is None else f"{scorer}.{sub}"
            number = _number(v, to_float, where, name)
            if number is None:
                skipped[name] = skipped.get(name, 0) + 1
                continue
            metrics[name] = number
            names.setdefault(name)
    return metrics


def _check_eval_archive(path: Path) -> None:
    """Before inspect_ai opens an `.eval` archive: the declared sizes of what it reads for compare (every member
    but the whole samples under `samples/`, which summaries spare), and the (id, epoch) of each summary row,
    which inspect_ai's reader would silently keep the last of (its rule for a sample requeued in an older log)."""
    names = guard.zip_members(path, lambda name: not name.startswith("samples/"))
    rows = [n for n in names if n == SUMMARIES or (n.startswith(JOURNAL_SUMMARIES) and n.endswith(".json"))]
    if SUMMARIES in rows:
        rows = [SUMMARIES]
    if len(set(rows)) != len(rows):
        raise CompareError(f"{path}: the archive holds {rows[0]} more than once; which one inspect_ai reads is "
                           "not for a comparison to guess")
    seen = guard.Seen(path)
    with zipfile.ZipFile(path) as archive:  # zstd members: inspect_ai, imported first, teaches zipfile them
        for name in rows:
            data = guard.loads(archive.read(name), f"{path}: {name}")
            for row in data if isinstance(data, list) else []:
                if isinstance(row, dict) and "id" in row and isinstance(row.get("epoch"), int):
                    seen.add(row["id"], row["epoch"], f"{path}: {name}")


def _inspect_facets(spec: Any) -> tuple[tuple[str, str], ...]:
    """The facets of an inspect_ai log's eval spec: model, task, the task arguments as passed, the model
    arguments, the generation settings that were set, and when the eval was created."""
    config = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    return (("model", str(spec.model)), ("task", str(spec.task)),
            *_args("task", spec.task_args_passed or spec.task_args or {}), *_args("model", spec.model_args or {}),
            *_args("config", config), ("created", str(spec.created)[:19].replace("T", " ")))


def _args(kind: str, args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`kind.K`, "K=V" for each argument; a value in JSON, cut at 40 characters."""
    out = []
    for k, v in args.items():
        text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
        out.append((f"{kind}.{k}", f"{k}={text if len(text) <= 40 else text[:39] + '…'}"))
    return out


def _number(value: Any, to_float: Any, where: str, name: str) -> float | None:
    """A score value as a number: bools and numbers as they are (within the guard's bounds), inspect_ai's letters
    (C, I, P, N), yes/no words and numerals through its own `value_to_float`; anything else (a list, free text)
    is not a number."""
    if isinstance(value, str):
        known = value.strip().lower() in {"c", "i", "p", "n", "yes", "no", "true", "false"}
        try:
            float(value)
        except ValueError:
            if not known:
                return None
        return guard.metric(float(to_float(value)), where, name)
    return guard.metric(value, where, name)


# ------------------------------------------------------------------------------------------------ lm-eval


class _LmLog:
    """An lm-eval samples file read row by row, keeping of each row only what a comparison uses (its key, its
    numeric metrics, its `doc_hash`) and of the first its task and model: its whole rows (the document, the
    arguments, the responses) held at once took 8.6 times the file in memory (264 MB: 2.26 GB)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.samples: dict[Key, dict[str, float]] = {}
        self.names: dict[str, None] = {}
        self.skipped: dict[str, int] = {}
        self.identity: dict[str, str] = {}
        self.seen = guard.Seen(path)
        self.first: dict[str, Any] | None = None

    def add(self, n: int, row: dict[str, Any]) -> None:
        path = self.path
        if "doc_id" not in row or not isinstance(row.get("metrics"), list):
            raise CompareError(f"{path}:{n}: expected an lm-eval sample with doc_id and metrics")
        if self.first is None:
            self.first = {k: row.get(k) for k in ("task_name", "model_name")}
        filt = str(row.get("filter") or "none")
        if not isinstance(row["doc_id"], int) or isinstance(row["doc_id"], bool):
            raise CompareError(f"{path}:{n}: doc_id {json.dumps(row['doc_id'], default=str)[:60]}: expected an "
                               "integer (lm-eval numbers its documents)")
        # lm-eval has no epochs (repeats are reduced inside the metric); one row per document and filter
        key = self.seen.add(row["doc_id"], 0, f"{path}:{n}", "doc_id", part=filt)
        if isinstance(row.get("doc_hash"), str):
            self.identity.setdefault(key[0], row["doc_hash"])
        metrics = self.samples.setdefault(key, {})
        for metric in row["metrics"]:
            name = str(metric) if filt == "none" else f"{metric},{filt}"
            value = guard.metric(row.get(str(metric)), f"{path}:{n}", name)
            if value is None:
                self.skipped[name] = self.skipped.get(name, 0) + 1  # e.g. corpus metrics kept as (ref, pred) pairs
                continue
            if name in metrics:
                raise CompareError(f"{path}:{n}: doc_id {key[0]} has {name} twice")
            metrics[name] = value
            self.names.setdefault(name)


def _lm_eval(path: Path) -> Samples:
    log = _LmLog(path)
    for n, row in _lm_rows(path):
        log.add(n, row)
    if log.first is None:
        raise CompareError(f"{path}: no samples; expected lm-eval's --log_samples output (one JSON object per "
                           "document) or an inspect_ai log")
    said = log.first["task_name"]
    task = str(said or _task_from_name(path))
    model, facets = _lm_facets(path, task, log.first["model_name"])
    return Samples(path=path, tool="lm-eval", model=model, task=task,
                   samples={k: Sample("ok", m) for k, m in log.samples.items()}, metrics=tuple(log.names),
                   skipped=log.skipped, id_kinds=log.seen.kinds, facets=facets, identity=log.identity,
                   identity_of="doc_hash", task_said=bool(said))


#: An lm-eval samples file written as one JSON list (older versions) is parsed whole; above this it is refused
#: (a list of 256 MiB takes about 2 GB to parse), where one object a line is read a line at a time.
MAX_LIST_BYTES = 256 * 1024**2


def _lm_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """The rows of an lm-eval samples file, streamed: one object a line (split at newlines only: a JSON string
    may hold U+2028, which `str.splitlines` splits at), or an older version's JSON list, parsed whole."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - a generator's file: closed by the with below
    except OSError as exc:
        raise CompareError(f"{path}: unreadable: {exc.strerror or exc}") from None
    with fh:
        if _first_byte(fh) == b"[":
            yield from _lm_list(path, fh)
            return
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CompareError(f"{path}:{n}: unreadable: {exc}") from None
            if not line.strip():
                continue
            row = guard.loads(line, f"{path}:{n}")  # lm-eval's own rows: a foreign format with no struct of ours
            if not isinstance(row, dict):
                raise CompareError(f"{path}:{n}: expected an lm-eval sample object")
            yield n, row


def _first_byte(fh: Any) -> bytes:
    """The file's first byte that is not whitespace (the file left at its start)."""
    while chunk := fh.read(65536):
        rest = chunk.lstrip()
        if rest:
            fh.seek(0)
            return bytes(rest[:1])
    fh.seek(0)
    return b""


def _lm_list(path: Path, fh: Any) -> Iterable[tuple[int, dict[str, Any]]]:
    size = guard.sized(path)
    if size > MAX_LIST_BYTES:
        raise CompareError(f"{path}: {size:,} bytes in one JSON list, which is parsed whole; above "
                           f"{MAX_LIST_BYTES:,} bytes write it one object a line (jq -c '.[]' FILE > FILE.jsonl)")
    try:
        text = fh.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CompareError(f"{path}: unreadable: {exc}") from None
    data = guard.loads(text, str(path))
    del text
    if not isinstance(data, list):
        raise CompareError(f"{path}: expected lm-eval's samples (a JSON list or one object a line)")
    for i, row in enumerate(data, 1):
        if not isinstance(row, dict):
            raise CompareError(f"{path}: item {i}: expected an lm-eval sample object")
        yield i, row


def _lm_facets(path: Path, task: str, named: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The model and facets of an lm-eval samples file, from the results file lm-eval wrote beside it
    (`results_<date>.json`, same date: its `model_name`, `config.model_args` and `n-shot`); without one, the
    folder lm-eval names after the model (`<output_path>/<model>/samples_…`). A `model_name` in the rows
    (`named`) comes first."""
    model = named if isinstance(named, str) and named else path.parent.name
    date = path.stem.rpartition("_")[2]
    results = path.with_name(f"results_{date}.json")
    if not path.stem.startswith("samples_") or not results.is_file():
        return model, (("model", model), ("task", task))
    guard.sized(results, 64 * 1024**2)
    data = guard.loads(results.read_bytes(), str(results))
    if not isinstance(data, dict):
        return model, (("model", model), ("task", task))
    config: dict[str, Any] = data["config"] if isinstance(data.get("config"), dict) else {}
    raw_args = config.get("model_args")
    if isinstance(raw_args, str):
        pairs = [part.partition("=") for part in raw_args.split(",") if "=" in part]
        args: dict[str, Any] = {k.strip(): v.strip() for k, _, v in pairs}
    else:
        args = raw_args if isinstance(raw_args, dict) else {}
    if not (isinstance(named, str) and named):
        found = data.get("model_name") or args.get("pretrained") or args.get("model") or config.get("model")
        model = found if isinstance(found, str) and found else model
    shots: dict[str, Any] = data["n-shot"] if isinstance(data.get("n-shot"), dict) else {}
    few = [("task.num_fewshot", f"num_fewshot={shots[task]}")] if isinstance(shots.get(task), int) else []
    created = data.get("date")
    when = [("created", time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(created)))] \
        if isinstance(created, int | float) and 0 < created < 1e11 else []
    return model, (("model", model), ("task", task), *few, *_args("model", args), *when)


def _task_from_name(path: Path) -> str:
    """`samples_<task>_<date>.jsonl` → task."""
    stem = path.stem
    if stem.startswith("samples_"):
        stem = stem[len("samples_"):]
        head, _, tail = stem.rpartition("_")
        return head if head and tail[:1].isdigit() else stem
    return stem
