"""A run folder: the manifest, the sealed plan, and the append-and-flush rows of outputs.

Layout (docs/architecture.md, "The run folder"): `manifest.json`, `sealed/assignment.jsonl`,
`sealed/requests.jsonl`, `outputs.jsonl`, `scores.jsonl`. Everything here is written so that a run killed at
any instant (SIGKILL included) can be continued:

- the sealed files and the manifest are written to a temporary name, synced and renamed, manifest last, so a
  folder with a manifest always has a complete plan, and a folder without one has made no call;
- each finished cell is one `outputs.jsonl` line written with a single `write` and flushed at once, so the
  kernel holds it even if the process dies the next instant; only the final line can be torn, and
  `repair_outputs` removes a torn tail (or completes a whole row that only lacks its newline);
- one process at a time appends to a run (an advisory lock on `outputs.jsonl`).

No row written here names a variant, a model or a repetition outside `sealed/`, which scoring never reads.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from operator import attrgetter
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import msgspec

from benchcard._util.files import AtomicFile, write_atomic
from benchcard._util.lastrow import last_per_cell
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.rows import (
    ASSIGNMENT,
    MANIFEST,
    OUTPUTS,
    REQUESTS,
    RUN_ID,
    SCORES,
    SEALED,
    STATUSES,
    AssignmentRow,
    Look,
    Manifest,
    OutputRow,
    RequestRow,
    decode_manifest,
    decode_row,
    dumps_line,
    encode_manifest,
    new_run_id,
)

try:  # POSIX; elsewhere a run simply is not locked against a second writer
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

class RunStore:
    """One run's folder, `results/<card>/v<N>/<run>/`."""

    def __init__(self, folder: Path):
        self.folder = folder

    # -------------------------------------------------------------------------------------------- locating

    @classmethod
    def create(cls, project: Project, card_id: str, version: int, run_id: str | None = None) -> RunStore:
        """A new, empty run folder; never reuses one."""
        for _ in range(16):
            rid = run_id or new_run_id()
            folder = project.run_dir(card_id, version, rid)
            try:
                folder.mkdir(parents=True, exist_ok=False)
            except FileExistsError:
                if run_id:
                    raise RunError(f"{project.relative(folder)}: a run with this id already exists") from None
                continue
            return cls(folder)
        raise RunError("could not pick a fresh run id")  # pragma: no cover

    @classmethod
    def find(cls, project: Project, card_id: str, version: int, name: str) -> RunStore:
        """A run named by id (under the card's version) or by its folder's path."""
        by_id = project.run_dir(card_id, version, name)
        if RUN_ID.fullmatch(name) and by_id.is_dir():
            return cls(by_id)
        as_path = Path(name)
        for folder in (as_path if as_path.is_absolute() else Path.cwd() / as_path, project.root / name):
            if folder.is_dir() and (RUN_ID.fullmatch(folder.name) or (folder / MANIFEST).is_file()):
                return cls(project.run_inside(folder, name))
        runs = project.results_dir / card_id / f"v{version}"
        raise RunError(f"{name}: no such run of {card_id} v{version} (looked in {project.relative(runs)})")

    @property
    def run_id(self) -> str:
        return self.folder.name

    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST

    @property
    def outputs_path(self) -> Path:
        return self.folder / OUTPUTS

    @property
    def scores_path(self) -> Path:
        return self.folder / SCORES

    @property
    def assignment_path(self) -> Path:
        return self.folder / SEALED / ASSIGNMENT

    @property
    def requests_path(self) -> Path:
        return self.folder / SEALED / REQUESTS

    # -------------------------------------------------------------------------------------------- manifest

    def has_manifest(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> Manifest:
        """The manifest, typed (records.Manifest); a missing or mistyped field is a one-line RunError."""
        return decode_manifest(self._manifest_data(), self.manifest_path)

    def manifest_as_written(self) -> dict[str, Any]:
        """The manifest's fields exactly as the file holds them (unknown ones too): what its digests cover."""
        data: dict[str, Any] = json.loads(self._manifest_data())
        return data

    def _manifest_data(self) -> bytes:
        try:
            return self.manifest_path.read_bytes()
        except FileNotFoundError:
            raise RunError(f"{self.folder}: no {MANIFEST}; the run was never fully planned") from None
        except OSError as exc:
            raise RunError(f"{self.manifest_path}: unreadable manifest: {exc}") from None

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
        raw: dict[str, Any] = json.loads(data)
        for key, value in msgspec.to_builtins(dict(additions)).items():
            if key in raw and raw[key] != value:
                raise RunError(f"{self.manifest_path}: field '{key}' is already {raw[key]!r}; "
                               "nothing written in a manifest is changed")
            raw[key] = value
        out = encode_manifest(raw)
        manifest = decode_manifest(out, self.manifest_path)
        write_atomic(self.manifest_path, out)
        return manifest

    def append_look(self, look: Look) -> Manifest:
        """A sequential run's look, appended to the manifest's `looks` (the list only grows: a look is taken once,
        in order, and never changed)."""
        raw: dict[str, Any] = json.loads(self._manifest_data())
        looks = raw.get("looks", [])
        if len(looks) != look.look - 1:
            raise RunError(f"{self.manifest_path}: look {look.look} follows {len(looks)} recorded looks; looks are "
                           "taken once each, in order")
        raw["looks"] = [*looks, msgspec.to_builtins(look)]
        out = encode_manifest(raw)
        manifest = decode_manifest(out, self.manifest_path)
        write_atomic(self.manifest_path, out)
        return manifest

    def reopen_manifest(self, retry: Mapping[str, Any], closing: Iterable[str]) -> None:
        """For `--retry-failed` (retry.py): the closing fields leave, recorded in `retry`, appended to `retries`."""
        raw: dict[str, Any] = json.loads(self._manifest_data())
        for key in closing:
            raw.pop(key, None)
        raw["retries"] = [*raw.get("retries", []), msgspec.to_builtins(dict(retry))]
        out = encode_manifest(raw)
        decode_manifest(out, self.manifest_path)
        write_atomic(self.manifest_path, out)

    # ------------------------------------------------------------------------------------------ sealed plan

    def write_plan(self, rows: Iterable[tuple[AssignmentRow, RequestRow]]) -> int:
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

    def iter_plan(self, skip: Container[str] = ()) -> Iterator[tuple[AssignmentRow, RequestRow]]:
        """The planned cells in call order, assignment and request side by side, read lazily.

        Cells in `skip` (those a resumed run already has) are passed over without parsing their lines, so a
        resume reaches its first call fast however many cells are done.
        """
        for path in (self.assignment_path, self.requests_path):
            if not path.is_file():
                raise RunError(f"{path}: missing; the run's plan is incomplete")
        with open(self.assignment_path, "rb") as fa, open(self.requests_path, "rb") as fr:
            line_no = 0
            while True:
                a_line, r_line = fa.readline(), fr.readline()
                line_no += 1
                if not a_line and not r_line:
                    return
                if not a_line.endswith(b"\n") or not r_line.endswith(b"\n"):
                    raise RunError(f"{self.folder / SEALED}: assignment and requests differ in length "
                                   f"(line {line_no})")
                cell = _leading_cell(a_line)
                if cell is not None and cell in skip and _leading_cell(r_line) == cell:
                    continue
                assignment = decode_row(a_line, AssignmentRow, self.folder / SEALED, line_no)
                request = decode_row(r_line, RequestRow, self.folder / SEALED, line_no)
                if assignment.cell != request.cell:
                    raise RunError(f"{self.folder / SEALED}: line {line_no}: assignment names cell "
                                   f"{assignment.cell}, requests name {request.cell}")
                yield assignment, request

    # ---------------------------------------------------------------------------------------------- outputs

    def repair_outputs(self) -> str | None:
        """Make `outputs.jsonl` end at a line boundary after a kill; only a torn final line is touched.

        A final line that is a whole row lacking only its newline gets the newline (that cell was answered
        and must not be called again); a partial one is cut off (its cell was never recorded). Returns what
        was done, or None when the file was already whole.
        """
        path = self.outputs_path
        if not path.is_file():
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
            if _whole_row(tail):
                fh.seek(size)
                fh.write(b"\n")
                return "completed a final row that lacked its newline"
            fh.truncate(start)
            return f"dropped a torn final line ({len(tail)} bytes)"

    def iter_outputs(self) -> Iterator[OutputRow]:
        """Every recorded row; a torn final line (a kill mid-write) is skipped, any other bad line is an error."""
        if not self.outputs_path.is_file():
            return
        with open(self.outputs_path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith(b"\n") and not _whole_row(line):
                    return
                yield decode_row(line, OutputRow, self.outputs_path, n)

    def done_cells(self) -> set[str]:
        """The cells that already have a recorded outcome (ok, truncated or failed).

        Rows written here start with their cell id, which is read without parsing the whole row; any other
        line is parsed (and a damaged one is an error, as in `iter_outputs`).
        """
        done: set[str] = set()
        if not self.outputs_path.is_file():
            return done
        with open(self.outputs_path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    if _whole_row(line):
                        done.add(json.loads(line)["cell"])
                    break
                cell = _leading_cell(line)
                if cell is None or not line.endswith(b"}\n"):
                    try:
                        cell = json.loads(line)["cell"]
                    except (ValueError, KeyError, TypeError):
                        raise RunError(f"{self.outputs_path}: line {n} is not a row of outputs") from None
                done.add(str(cell))
        return done

    def counts(self) -> dict[str, int]:
        """Recorded cells by status (ok, truncated, failed), for `benchcard status`: a cell's last row counts."""
        counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
        rows: Iterable[OutputRow] = self.iter_outputs()
        if self.has_manifest() and self.read_manifest().retries:
            rows = last_per_cell(rows, attrgetter("cell"))
        for row in rows:
            counts[row.status] += 1
        return counts

    def open_outputs(self) -> OutputWriter:
        """The appender for this run: repairs a torn tail, then holds the run's lock until closed."""
        return OutputWriter(self)


_CELL_PREFIX = b'{"cell":"'
_CELL_END = len(_CELL_PREFIX) + 11  # `c` + 10 hex digits


def _leading_cell(line: bytes) -> str | None:
    """The cell id of a line written by `dumps_line` (cell first), without parsing the rest."""
    if line.startswith(_CELL_PREFIX) and line[_CELL_END:_CELL_END + 2] == b'",':
        return line[len(_CELL_PREFIX):_CELL_END].decode("ascii", "replace")
    return None


def _whole_row(data: bytes) -> bool:
    try:
        row = json.loads(data)
    except ValueError:
        return False
    return isinstance(row, dict) and "cell" in row and "status" in row


class OutputWriter:
    """Appends finished cells to `outputs.jsonl`: one `write` of the whole line, then flush, per cell."""

    def __init__(self, store: RunStore):
        self.store = store
        self._fh: IO[bytes] | None = None
        self.written = 0
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

    def append(self, row: OutputRow) -> None:
        if self._fh is None:
            raise RunError("outputs writer is closed")
        self._fh.write(dumps_line(row))
        self._fh.flush()
        self.written += 1
        if self.on_append is not None:
            self.on_append(row)

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                os.fsync(fh.fileno())
            fh.close()  # closing releases the lock
