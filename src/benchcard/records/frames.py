"""A run and the ledger as pandas DataFrames, and `benchcard export`: benchcard's results for other tools.

`read_run` gives one row per cell, with the output's text as recorded (but for a lone surrogate, which a reply may
escape and outputs.jsonl keeps as its JSON escape: pandas' strings, and the files `export` writes, are UTF-8, which
cannot hold one, so it is U+FFFD there, as in a blind sheet; `_util/text.displayable`). It unblinds (adds `variant` and
`repetition` from `sealed/assignment.jsonl`) only for a run that has a verdict: before that, the variant of a
cell is exactly what the blind design keeps from everyone, so an unjudged run comes back without them and
without the request side's figures (`WITHHELD`: input tokens, cost, latency and attempts follow the length of the
prompt, which differs by variant), and `frame.attrs["blinded"]` says which. pandas is imported on first use, so
that `import benchcard` stays as fast as the command line needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from benchcard._util.files import discard, fresh_tmp, move_into_place, synced_file
from benchcard._util.lastrow import last_per_cell
from benchcard._util.text import displayable, spreadsheet_text
from benchcard._util.version import pip_install
from benchcard.errors import RunError
from benchcard.project import Project, ProjectLike, given_name
from benchcard.records import ledger
from benchcard.records.cardruns import find_run
from benchcard.records.rows import VERDICT as VERDICT_FILE
from benchcard.records.rows import AssignmentRow, Manifest, OutputRow, ScoreRow, read_rows
from benchcard.records.runreader import RunReader, manifest_present, read_manifest
from benchcard.records.verdictfile import decode_verdict

if TYPE_CHECKING:
    import pandas as pd

# The columns every frame of a run has, in order; the metric columns follow `score`, then the call's figures.
CELL_COLUMNS = ("run", "cell", "variant", "fixture", "repetition", "status", "score")
# The prompt cache's: of input_tokens, those read from the cache and those written to it (Anthropic; of those, to
# its 1-hour cache), 0 when the reply said none (`Usage`): what makes a cost an upper bound or a cache's saving.
CACHE_COLUMNS = ("cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens")
CALL_COLUMNS = ("input_tokens", *CACHE_COLUMNS, "output_tokens", "reasoning_tokens", "cost", "latency_ms",
                "attempts", "finish_reason", "text", "model", "provider")
RUN_COLUMNS = ("scratch",)  # True on every row of a trial (a scratch run, or a run given a scratch verdict)
# Left out until the verdict: the assignment itself, and every figure of the request's side, which follows the
# prompt (its variant) rather than the answer: its tokens, the cost they make, the time a longer prompt takes, the
# retries a longer request's timeouts take. What remains is the answer's side, which the blind scorer sees too.
BLINDED = ("variant", "repetition")
REQUEST_SIDE = ("input_tokens", *CACHE_COLUMNS, "cost", "latency_ms", "attempts")
WITHHELD = BLINDED + REQUEST_SIDE
FORMATS = ("csv", "parquet")
Row = TypeVar("Row", OutputRow, ScoreRow)


def read_run(run: str | os.PathLike[str], project: ProjectLike | None = None) -> pd.DataFrame:
    """One row per cell of a run (its folder, or a run id or card id in `project`, default: the nearest).

    Columns: run, cell, variant, fixture, repetition, status (ok | truncated | failed | missing), score, one
    column per metric the scorer wrote (NaN where the cell was not scored), input tokens and of them those read
    from and written to the prompt cache (`CACHE_COLUMNS`), output/reasoning tokens, cost, latency_ms, attempts,
    finish_reason, text (the output as recorded), model, provider. Without a verdict the run is still blind: the
    `WITHHELD` columns are left out (named in `attrs["withheld"]`) and `attrs["blinded"]` is True.
    """
    run_dir = _run_dir(run, project)
    manifest = read_manifest(run_dir)
    blinded = not (run_dir / VERDICT_FILE).is_file()
    rows = _output_rows(run_dir, manifest, blinded)
    metric_names = _add_scores(rows, run_dir, bool(manifest.retries), blinded)
    model = manifest.rig.model if manifest.rig else None
    provider = manifest.rig.provider if manifest.rig else None
    scratch = _is_scratch(run_dir, manifest, blinded)
    for row in rows.values():
        row.update(run=run_dir.name, model=model, provider=provider, scratch=scratch)
        row.setdefault("status", "missing")
    withheld = WITHHELD if blinded else ()
    columns = [c for c in (*CELL_COLUMNS, *metric_names.values(), *CALL_COLUMNS, *RUN_COLUMNS) if c not in withheld]
    frame = _typed_frame(list(rows.values()), columns, list(metric_names.values()), blinded)
    frame.attrs.update(blinded=blinded, scratch=scratch, withheld=list(withheld), run=run_dir.name, card=manifest.card,
                       version=manifest.version, metrics=list(metric_names.values()),
                       finished=manifest.finished_at is not None, planned=manifest.cells)
    return frame


def _output_rows(run_dir: Path, manifest: Manifest, blinded: bool) -> dict[str, dict[str, Any]]:
    """A row per cell: every planned cell once unblinded (missing until it has an output), with each output's
    figures (its last row, in a retried run)."""
    rows: dict[str, dict[str, Any]] = {}
    called = manifest.looks[-1].repetitions if manifest.looks else None  # a sequential run: up to its last look
    if not blinded:
        for a in read_rows(run_dir / "sealed" / "assignment.jsonl", AssignmentRow):
            if called is not None and a.repetition >= called:
                continue
            rows[a.cell] = {"cell": a.cell, "variant": a.variant, "fixture": a.fixture, "repetition": a.repetition,
                            "status": "missing"}
    outputs = list(RunReader(run_dir).iter_outputs())  # a torn last line (killed, or still writing) skipped
    for o in _latest(outputs, bool(manifest.retries)):
        row = _row(rows, o.cell, o.fixture, run_dir / "outputs.jsonl", blinded)
        row.update(status=o.status, input_tokens=o.usage.input, cached_input_tokens=o.usage.cached_tokens,
                   cache_write_tokens=o.usage.written_tokens, cache_write_1h_tokens=o.usage.written_1h_tokens,
                   output_tokens=o.usage.output,
                   reasoning_tokens=o.usage.reasoning, cost=o.cost, latency_ms=o.latency_ms, attempts=o.attempts,
                   finish_reason=None if o.finish_reason is None else displayable(o.finish_reason),
                   text=displayable(o.text))
    return rows


def _add_scores(rows: dict[str, dict[str, Any]], run_dir: Path, retried: bool, blinded: bool) -> dict[str, str]:
    """Each cell's score and metrics (a rule's pass as `rule.<id>`) into its row; the metric columns' names, a
    metric named like a fixed column prefixed `metric.`."""
    metric_names: dict[str, str] = {}
    for s in _latest(read_rows(run_dir / "scores.jsonl", ScoreRow), retried):
        row = _row(rows, s.cell, s.fixture, run_dir / "scores.jsonl", blinded)
        row["score"] = s.score
        row.setdefault("status", s.status)
        metrics: dict[str, Any] = dict(s.metrics)
        for rule, passed in (s.rules or {}).items():
            metrics.setdefault(f"rule.{rule}", float(passed))
        for name, value in metrics.items():
            if name == "score":
                continue  # the scorer's headline metric is the score column already
            column = metric_names.setdefault(name, name if name not in CELL_COLUMNS + CALL_COLUMNS
                                             else f"metric.{name}")
            row[column] = value
    return metric_names


def _typed_frame(rows: list[dict[str, Any]], columns: list[str], metrics: list[str], blinded: bool) -> pd.DataFrame:
    """The rows as a DataFrame: figures as float64, counts as nullable Int64, sorted by fixture, variant and
    repetition once unblinded."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns)
    for column in ("score", "cost", "latency_ms", *metrics):
        if column in columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    for column in ("input_tokens", *CACHE_COLUMNS, "output_tokens", "reasoning_tokens", "attempts", "repetition"):
        if column in columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    if not blinded:
        frame = frame.sort_values(["fixture", "variant", "repetition"], kind="stable", ignore_index=True)
    return frame


def read_ledger(project: ProjectLike | None = None) -> pd.DataFrame:
    """The ledger, one row per verdict in file order (`at` as UTC timestamps). Nested figures (metrics,
    clauses, latency) stay as Python objects in their column. It reads; `benchcard ledger --verify` checks."""
    import pandas as pd

    if isinstance(project, str | os.PathLike) and Path(project).name == "ledger.jsonl":
        project = Path(project).parent.parent  # the ledger file itself: its project
    # a row edited to hold a lone surrogate is read as U+FFFD, as read_run gives an output: pandas' strings are UTF-8
    frame = pd.DataFrame([{k: displayable(v) if isinstance(v, str) else v for k, v in row.fields().items()}
                          for row in ledger.read(Project.of(project))])
    if "at" in frame:
        frame["at"] = pd.to_datetime(frame["at"], utc=True)
    return frame


@dataclass(frozen=True)
class Export:
    """What `benchcard export` wrote."""

    path: Path
    format: str
    rows: int
    blinded: bool
    scratch: bool = False
    run: str = ""
    finished: bool = True  # the run had closed (`finished_at`) when it was read
    planned: int | None = None  # the cells its plan holds

    def lines(self) -> list[str]:
        """What `benchcard export` prints: a run not finished says so, since a blinded table holds only the cells
        with an output (one exported while the run wrote it was 4 rows of 18, said as 'wrote 4 cells')."""
        blind = (" (blinded: no verdict yet, so no variant or repetition, and none of the request's figures: input "
                 "tokens, cached or not, cost, latency, attempts)" if self.blinded else "")
        trial = " · a scratch run: a trial, never a result (column scratch)" if self.scratch else ""
        of = f" of {self.planned} planned" if self.planned is not None else ""
        open_run = ("" if self.finished else f" · run {self.run} is not finished (still running, or stopped: "
                    f"`benchcard status {self.run}`): a table of the cells{of} that had an output then")
        return [f"wrote {self.rows} cells → {self.path}{blind}{trial}{open_run}"]

    def to_json(self) -> dict[str, Any]:
        """What `benchcard export --json` prints: the file written (the default name included), for a script."""
        return {"path": str(self.path), "format": self.format, "rows": self.rows, "blinded": self.blinded,
                "scratch": self.scratch, "finished": self.finished, "planned": self.planned}


def _import_pyarrow() -> None:
    """pandas writes Parquet only through pyarrow. One that is installed and does not import (pyarrow 26 under
    numpy 1.x, which its requirements do not say) is told in its own words, not as a traceback from pandas."""
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        if exc.name == "pyarrow":
            raise RunError(f"--format parquet needs pyarrow: {pip_install('parquet')} (or use --format csv)") from None
        raise RunError(f"--format parquet: pyarrow is installed but does not import: {exc} (or use --format csv)") \
            from None


def export_run(project: Project, run: str, fmt: str, out: Path | None = None) -> Export:
    """Write `read_run`'s frame as CSV or Parquet; never over an existing file (results are append-only). A CSV
    text cell that a spreadsheet would run as a formula gets a leading `'`, as in every sheet benchcard writes."""
    if fmt not in FORMATS:
        raise RunError(f"--format {fmt}: expected csv or parquet")
    frame = read_run(run, project)
    scratch = bool(frame.attrs["scratch"])
    closed, planned, run_id = bool(frame.attrs["finished"]), frame.attrs["planned"], str(frame.attrs["run"])
    path = out if out is not None else Path(f"{frame.attrs['card']}-v{frame.attrs['version']}-"
                                            f"{frame.attrs['run']}.{fmt}")
    project.refuse_protected(path, str(path))
    exists = RunError(f"{path}: already exists; export never overwrites (choose another --out)")
    if path.exists() or path.is_symlink():
        raise exists
    if fmt == "parquet":
        _import_pyarrow()
        frame.attrs.clear()  # pyarrow stores attrs as JSON metadata; keep the file to its columns
    # Whole or absent: a file written in place and cut short by a kill was a table with cells missing that every
    # later export refused to replace ("already exists"), and that another tool would read as the whole run.
    tmp = fresh_tmp(path)
    try:
        with synced_file(tmp, path) as fh:
            if fmt == "parquet":
                frame.to_parquet(fh, index=False)
            else:
                _spreadsheet_safe(frame).to_csv(fh, index=False, encoding="utf-8")
        move_into_place(tmp, path, overwrite=False)
    except FileExistsError:  # another export made it meanwhile: never written over
        raise exists from None
    finally:
        discard(tmp)
    return Export(path=path, format=fmt, rows=len(frame), blinded="variant" not in frame.columns, scratch=scratch,
                  run=run_id, finished=closed, planned=planned)


def _is_scratch(run_dir: Path, manifest: Manifest, blinded: bool) -> bool:
    """A trial: the runner marked the run scratch, or its verdict was given with --scratch."""
    if manifest.scratch:
        return True
    if blinded:
        return False
    verdict = decode_verdict((run_dir / VERDICT_FILE).read_bytes(), str(run_dir / VERDICT_FILE), RunError)
    return bool(verdict.scratch)


def _latest(rows: list[Row], retried: bool) -> list[Row]:
    """A retried run's rows: each cell's last one, its outcome (run/_retry.py); any other run's as they are."""
    return last_per_cell(rows, attrgetter("cell")) if retried else rows


def _spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as a spreadsheet may open it: a text cell or header that would run as a formula (a variant or
    fixture named `=...`, a model `@...`) is written as text. Numbers stay numbers: -0.5 is a value."""
    from pandas.api.types import is_numeric_dtype

    safe = frame.rename(columns=spreadsheet_text)
    for column in safe.columns:
        if not is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(lambda v: spreadsheet_text(v) if isinstance(v, str) else v)
    return safe


def _run_dir(run: str | os.PathLike[str], project: ProjectLike | None) -> Path:
    name = given_name(run, "run")
    path = Path(name)
    if manifest_present(path):
        return path.resolve()
    return find_run(Project.of(project), name)


def _row(rows: dict[str, dict[str, Any]], cell: str, fixture: str, path: Path, blinded: bool) -> dict[str, Any]:
    """The frame row of a file's cell: a blinded run makes it; a judged run's plan must already have it."""
    row = rows.get(cell)
    if row is None:
        if not blinded:
            raise RunError(f"{path}: cell {cell} is not in the run's plan")
        row = rows[cell] = {"cell": cell, "fixture": fixture}
    return row
