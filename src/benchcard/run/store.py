"""A run folder written: the manifest, the sealed plan, and the append-and-flush rows of outputs (reading it is
records.runreader's).

Layout (docs/architecture.md, "The run folder"): `manifest.json`, `sealed/assignment.jsonl`,
`sealed/requests.jsonl`, `outputs.jsonl`, `scores.jsonl`. Everything here is written so that a run killed at
any instant (SIGKILL included) can be continued:

- the sealed files and the manifest are written to a temporary name, synced and renamed, manifest last, so a
  folder with a manifest always has a complete plan, and a folder without one has made no call (a planning that
  fails removes it again: `discard_unplanned`);
- each finished cell is one `outputs.jsonl` line written with a single `write` and flushed at once, so the
  kernel holds it even if the process dies the next instant; only the final line can be torn, and
  `repair_outputs` removes a torn tail (or completes a whole row that only lacks its newline);
- one process at a time appends to a run (an advisory lock on `outputs.jsonl`).

No row written here names a variant, a model or a repetition outside `sealed/`, which scoring never reads.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import IO, Any

import msgspec

from benchcard._util.files import AtomicFile, discard, refused_write, write_atomic
from benchcard._util.safeio import json_loads, present
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.rows import (
    RUN_ID,
    AssignmentRow,
    CountedPass,
    JudgeStretch,
    Look,
    Manifest,
    OutputRow,
    RequestRow,
    decode_manifest,
    dumps_line,
    encode_manifest,
    new_run_id,
)
from benchcard.records.runreader import RunReader, whole_row

try:  # POSIX; elsewhere a run simply is not locked against a second writer
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


def _after_newest(version_dir: Path, started: datetime) -> datetime:
    """The time a new run's id is stamped with: its start, or one second after the newest run id already in the
    version's folder when the start is not later (a clock set back, or two runs in one second), since a card's
    runs are ordered by id and its name stands for the newest: the run just made must be it."""
    try:
        ids = [p.name for p in version_dir.iterdir() if RUN_ID.fullmatch(p.name)]
    except OSError:
        return started
    if not ids:
        return started
    newest = datetime.strptime(max(ids)[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    if started.astimezone(UTC).replace(microsecond=0) > newest:
        return started
    try:
        return newest + timedelta(seconds=1)
    except OverflowError:  # a folder named for the year 9999
        return started


def _no_folder(project: Project, card_id: str, folder: Path, exc: OSError) -> str:
    """A new run's folder the system refused (results/ not writable, a full disk): said of the folder that refused
    it, which `ls -ld` shows, not of the run's own folder, which is not there."""
    refused = Path(str(exc.filename)).parent if exc.filename else folder.parent
    why, fix = refused_write(exc)
    return (f"{project.relative(refused)}: a new run's folder could not be made in it ({why}); nothing was called. "
            f"{fix}, then: benchcard run {card_id}")


class RunStore(RunReader):
    """One run's folder, `results/<card>/v<N>/<run>/`: the reading (records.runreader) and the writing."""

    #: The manifest's field counting the rows each pass of calls appended to this store's file (`append_replies`).
    COUNTED_ROWS = "replied_rows"
    #: Where a retry before 2026-12-01 moved the failed rows it took out of the file (run/_retry.py).
    MOVED_ROWS: str | None = "attempts.jsonl"

    # -------------------------------------------------------------------------------------------- locating

    @classmethod
    def create(cls, project: Project, card_id: str, version: int, run_id: str | None = None, *,
               started: datetime | None = None) -> RunStore:
        """A new, empty run folder; never reuses one. Its id is `run_id`, else a fresh one stamped `started` (now
        when not given): a folder already there with that id is passed by for another four hex digits."""
        if run_id is None:
            started = _after_newest(project.run_dir(card_id, version, "x").parent, started or datetime.now(UTC))
        for _ in range(16):
            rid = run_id or new_run_id(started)
            folder = project.run_dir(card_id, version, rid)
            try:
                folder.mkdir(parents=True, exist_ok=False)
            except FileExistsError:
                if run_id:
                    raise RunError(f"{project.relative(folder)}: a run with this id already exists") from None
                continue
            except OSError as exc:
                raise RunError(_no_folder(project, card_id, folder, exc)) from None
            return cls(folder)
        raise RunError("could not pick a fresh run id")  # pragma: no cover

    # -------------------------------------------------------------------------------------------- manifest

    def write_manifest(self, manifest: Manifest) -> None:
        """The manifest, written once, after the sealed plan (its presence means the plan is complete)."""
        if self.has_manifest():
            raise RunError(f"{self.manifest_path}: already written; a manifest is never rewritten")
        write_atomic(self.manifest_path, encode_manifest(manifest))

    def add_to_manifest(self, additions: Mapping[str, Any]) -> Manifest:
        """Add fields at the end of a run; a field already there may not change.

        The file is merged as JSON, not through the struct, so fields this version does not know survive.
        """
        data = self._manifest_data()
        decode_manifest(data, self.manifest_path)
        raw: dict[str, Any] = json_loads(data)
        for key, value in msgspec.to_builtins(dict(additions)).items():
            if key in raw and raw[key] != value:
                raise RunError(f"{self.manifest_path}: field '{key}' is already {raw[key]!r}; "
                               "nothing written in a manifest is changed")
            raw[key] = value
        return self._rewrite_manifest(raw)

    def append_replies(self, counts: Mapping[str, int], rows: int, before: int, *, judge: bool = False) -> Manifest:
        """One pass of calls' reply models, appended to the manifest's `replied_models` (the judge's calls':
        `judge_replied_models`) with the rows it counted (`replied_rows`): the `rows` it appended, and those of the
        `before` the file held when it began that no earlier counted pass accounts for. The lists only grow."""
        data = self._manifest_data()
        manifest = decode_manifest(data, self.manifest_path)
        names, spans = ("judge_replied_models", "judge_replied_rows") if judge else ("replied_models", "replied_rows")
        covered = sum(p.rows + p.uncounted for p in getattr(manifest, spans) or [])
        counted = CountedPass(rows=rows, uncounted=max(0, before - covered))
        raw: dict[str, Any] = json_loads(data)
        raw[names] = [*raw.get(names, []), dict(sorted(counts.items()))]
        raw[spans] = [*raw.get(spans, []), msgspec.to_builtins(counted)]
        return self._rewrite_manifest(raw)

    def append_look(self, look: Look) -> Manifest:
        """A sequential run's look, appended to the manifest's `looks` (the list only grows: a look is taken once,
        in order, and never changed)."""
        raw: dict[str, Any] = json_loads(self._manifest_data())
        looks = raw.get("looks", [])
        if len(looks) != look.look - 1:
            raise RunError(f"{self.manifest_path}: look {look.look} follows {len(looks)} recorded looks; looks are "
                           "taken once each, in order")
        raw["looks"] = [*looks, msgspec.to_builtins(look)]
        return self._rewrite_manifest(raw)

    def append_judge_stretch(self, stretch: JudgeStretch) -> Manifest:
        """A sequential judge card's judging plan for a later stretch, appended to `judge_stretches` before its
        first judge call (the list only grows: each stretch is planned once, in order, and never changed)."""
        raw: dict[str, Any] = json_loads(self._manifest_data())
        planned = raw.get("judge_stretches", [])
        if "judge" not in raw:
            raise RunError(f"{self.manifest_path}: the judging of look {stretch.look}'s stretch needs the judging "
                           "plan of the first stretch (the manifest's judge block), which is not recorded")
        if (planned[-1]["look"] if planned else 1) >= stretch.look:
            raise RunError(f"{self.manifest_path}: the judging of look {stretch.look}'s stretch follows a plan "
                           "already recorded for it or later; each stretch is planned once, in order")
        raw["judge_stretches"] = [*planned, msgspec.to_builtins(stretch)]
        return self._rewrite_manifest(raw)

    def reopen_manifest(self, retry: Mapping[str, Any], closing: Iterable[str]) -> None:
        """For `--retry-failed` (retry.py): the closing fields leave, recorded in `retry`, appended to `retries`."""
        raw: dict[str, Any] = json_loads(self._manifest_data())
        for key in closing:
            raw.pop(key, None)
        raw["retries"] = [*raw.get("retries", []), msgspec.to_builtins(dict(retry))]
        self._rewrite_manifest(raw)

    def _rewrite_manifest(self, raw: dict[str, Any]) -> Manifest:
        """The merged manifest, checked against its struct before it replaces the file (atomically)."""
        out = encode_manifest(raw)
        manifest = decode_manifest(out, self.manifest_path)
        write_atomic(self.manifest_path, out)
        return manifest

    # ------------------------------------------------------------------------------------------ sealed plan

    def write_sealed(self, rows: Iterable[tuple[AssignmentRow, RequestRow]]) -> int:
        """Stream the plan into `sealed/assignment.jsonl` and `sealed/requests.jsonl`, in call order.

        Rows are written as they come, so a 100,000-cell plan never holds its request bodies in memory.
        """
        count = 0
        # requests opened first so that it is committed last: a plan with requests has its assignment
        with AtomicFile(self.requests_path) as fr, AtomicFile(self.assignment_path) as fa:
            for assignment, request in rows:
                if assignment.cell != request.cell:
                    raise RunError(f"plan rows out of step: {assignment.cell} vs {request.cell}")
                fa.write(dumps_line(assignment))
                fr.write(dumps_line(request))
                count += 1
        return count

    def discard_unplanned(self) -> bool:
        """Remove this folder when its planning did not finish (no manifest, so no call was made from it and
        nothing is lost), so that no later command meets a half-made run; True when it is gone. Only what planning
        writes is removed: a folder holding anything else is kept."""
        if self.has_manifest():
            return False
        for path in (self.requests_path, self.assignment_path):
            discard(path)
        try:
            self.requests_path.parent.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            return False
        try:
            self.folder.rmdir()
        except OSError:
            return False
        return True

    # ---------------------------------------------------------------------------------------------- outputs

    def repair_outputs(self) -> str | None:
        """Make `outputs.jsonl` end at a line boundary after a kill; only a torn final line is touched.

        A final line that is a whole row lacking only its newline gets the newline (that cell was answered
        and must not be called again); a partial one is cut off (its cell was never recorded). Returns what
        was done, or None when the file was already whole.
        """
        path = self.outputs_path
        if not present(path, str(path), RunError):
            return None
        size = path.stat().st_size
        if size == 0:
            return None
        with open(path, "rb+") as fh:
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return None
            # find the start of the last line, reading backwards in blocks
            pos, start = size, 0
            while pos > 0:
                step = min(1 << 16, pos)
                pos -= step
                fh.seek(pos)
                block = fh.read(step)
                nl = block.rfind(b"\n")
                if nl >= 0:
                    start = pos + nl + 1
                    break
            fh.seek(start)
            tail = fh.read()
            if whole_row(tail):
                fh.seek(size)
                fh.write(b"\n")
                return "completed a final row that lacked its newline"
            fh.truncate(start)
            return f"dropped a torn final line ({len(tail)} bytes)"

    @property
    def shown_outputs(self) -> PurePosixPath:
        """This store's rows file as a line names it: `results/<card>/v<N>/<run>/outputs.jsonl`, '/' on every system."""
        return PurePosixPath(*self.folder.parts[-4:], self.outputs_path.name)

    def refuse_lost_rows(self, held: int) -> None:
        """RunError when the file holds fewer rows than the passes that wrote it counted (`COUNTED_ROWS`): rows were
        removed since, and calling their cells again would replace answers already given (a re-roll) with nothing
        on record; no digest covers the outputs of a run not yet finished."""
        if not self.manifest_path.is_file():  # a store not planned yet: no pass has written
            return
        passes = getattr(self.read_manifest(), self.COUNTED_ROWS) or []
        counted = sum(p.rows + p.uncounted for p in passes)
        moved = self.folder / self.MOVED_ROWS if self.MOVED_ROWS else None
        held += _rows_in(moved) if moved is not None and moved.is_file() else 0
        if held < counted:
            shown, run = self.shown_outputs, self.folder.name
            raise RunError(f"{shown} holds {held} rows, but the passes that wrote it appended {counted} "
                           f"(manifest.json, {self.COUNTED_ROWS}): rows were removed since, and their cells would be "
                           "called again, replacing answers already given. Put the file back as it was, or set the "
                           f"run aside (`benchcard set-aside {run} --why …`) and start a new one")

    def refuse_foreign_rows(self) -> None:
        """RunError when the file holds a row this run cannot have written (`foreign_row`): before any call, since a
        pass would call the rest and close the run over that row, which no verdict reads."""
        problem = self.foreign_row()
        if problem is not None:
            shown, run = self.shown_outputs, self.folder.name
            raise RunError(f"{shown}: {problem}: a row this run did not write. Put the file back as it was, or set "
                           f"the run aside (`benchcard set-aside {run} --why …`) and start a new one")

    def open_outputs(self) -> OutputWriter:
        """The appender for this run: repairs a torn tail, then holds the run's lock until closed."""
        return OutputWriter(self)


class OutputWriter:
    """Appends finished cells to `outputs.jsonl`: one `write` of the whole line, then flush, per cell."""

    def __init__(self, store: RunStore):
        self.store = store
        self._fh: IO[bytes] | None = None
        self.written = 0
        self.before = 0  # the rows the file held when it was opened (a resumed pass's predecessors')
        self.on_append: Callable[[OutputRow], None] | None = None  # told of every row once it is on disk

    def __enter__(self) -> OutputWriter:
        self.open()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def open(self) -> None:
        path = self.store.outputs_path
        fh = open(path, "ab")  # noqa: SIM115 - held open for the whole run, closed in close()
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.close()
                raise RunError(f"{self.store.folder}: another benchcard process is running this run") from None
        self.store.repair_outputs()
        fh.seek(0, os.SEEK_END)
        self._fh = fh
        self.before = _rows_in(path)
        try:
            self.store.refuse_lost_rows(self.before)
            if self.before:
                self.store.refuse_foreign_rows()
        except BaseException:
            self.close()
            raise

    def append(self, row: OutputRow) -> None:
        if self._fh is None:
            raise RunError("outputs writer is closed")
        try:
            self._fh.write(dumps_line(row))
            self._fh.flush()
        except OSError as exc:
            raise RunError(self._full(exc)) from None
        self.written += 1
        if self.on_append is not None:
            self.on_append(row)

    def _full(self, exc: OSError) -> str:
        """A row that could not be written (a full disk, a file-size limit): the file, what the system said, and
        the command that continues, since every row before it is on disk and the torn one is repaired."""
        shown, card, run = self.store.shown_outputs, self.store.folder.parts[-3], self.store.folder.name
        why, fix = refused_write(exc)
        return (f"{shown}: a finished cell could not be written ({why}); every row before it is kept. {fix}, then: "
                f"benchcard run {card} --resume {run}")

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                os.fsync(fh.fileno())
            with contextlib.suppress(OSError):  # the bytes a full disk refused: the torn row a resume repairs
                fh.close()  # closing releases the lock


def _rows_in(path: Path) -> int:
    """The rows a JSONL file holds (whole lines: its torn tail is repaired before this is read)."""
    rows = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            rows += block.count(b"\n")
    return rows
