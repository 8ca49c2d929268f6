"""The read side of a run folder: its manifest, its sealed plan and its rows of outputs, read without writing.

The verdict and the pages read run folders through this; the run stage's `run.store.RunStore` adds the
(append-only) writing. Layout: docs/architecture.md, "The run folder".
"""

from __future__ import annotations

import contextlib
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Self

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.lastrow import last_per_cell
from benchcard._util.safeio import json_loads, present
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.rows import (
    ASSIGNMENT,
    JUDGE_OUTPUTS,
    JUDGE_REQUESTS,
    MANIFEST,
    OUTPUTS,
    REQUESTS,
    RUN_ID,
    SCORES,
    SEALED,
    SET_ASIDE,
    STATUSES,
    AssignmentRow,
    JudgeRequestRow,
    Manifest,
    OutputRow,
    RequestRow,
    SetAside,
    decode_line,
    decode_manifest,
    decode_row,
    iter_rows,
)


class RunReader:
    """One run's folder, `results/<card>/v<N>/<run>/`, read."""

    def __init__(self, folder: Path):
        self.folder = folder

    # -------------------------------------------------------------------------------------------- locating

    @classmethod
    def find(cls, project: Project, card_id: str, version: int, name: str) -> Self:
        """A run named by id (under the card's version) or by its folder's path."""
        by_id = project.run_dir(card_id, version, name)
        if RUN_ID.fullmatch(name) and by_id.is_dir():
            return cls(by_id)
        as_path = Path(name)
        for folder in (as_path if as_path.is_absolute() else Path.cwd() / as_path, project.root / name):
            if folder.is_dir() and (RUN_ID.fullmatch(folder.name) or manifest_present(folder)):
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
        return manifest_present(self.folder)

    def read_manifest(self) -> Manifest:
        """The manifest, typed (records.Manifest); a missing or mistyped field is a one-line RunError, and so is a
        manifest in a folder not named for its run: a run folder copied under another run id was judged again and
        entered the ledger as a second result of the same calls."""
        manifest = decode_manifest(self._manifest_data(), self.manifest_path)
        if manifest.run != self.folder.name:
            raise RunError(f"{self.folder}: its {MANIFEST} is run {manifest.run}, not {self.folder.name}: a run "
                           "folder copied or renamed by hand is not a run of its own (its calls are run "
                           f"{manifest.run}'s); remove the copy, or keep it outside results/")
        return manifest

    def manifest_as_written(self) -> dict[str, Any]:
        """The manifest's fields exactly as the file holds them (unknown ones too): what its digests cover."""
        data: dict[str, Any] = json_loads(self._manifest_data())
        return data

    def _manifest_data(self) -> bytes:
        if not self.has_manifest():
            raise RunError(f"{self.folder}: no {MANIFEST}; the run was never fully planned")
        try:
            return self.manifest_path.read_bytes()
        except OSError as exc:
            raise RunError(f"{self.manifest_path}: unreadable manifest: {exc.strerror}") from None

    # ------------------------------------------------------------------------------------------ sealed plan

    def iter_sealed(self, skip: Container[str] = ()) -> Iterator[tuple[AssignmentRow, RequestRow]]:
        """The planned cells in call order, assignment and request side by side, read lazily.

        Cells in `skip` (those a resumed run already has) are passed over without parsing their lines, so a
        resume reaches its first call fast however many cells are done.
        """
        for path in (self.assignment_path, self.requests_path):
            if not present(path, str(path), RunError):
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

    def iter_outputs(self) -> Iterator[OutputRow]:
        """Every recorded row; a torn final line (a kill mid-write) is skipped, any other bad line is an error."""
        if not present(self.outputs_path, str(self.outputs_path), RunError):
            return
        with open(self.outputs_path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith(b"\n") and not whole_row(line):
                    return
                yield decode_row(line, OutputRow, self.outputs_path, n)

    def done_cells(self) -> set[str]:
        """The cells that already have a recorded outcome (ok, truncated or failed).

        Rows written here start with their cell id, which is read without parsing the whole row; any other
        line is parsed (and a damaged one is an error, as in `iter_outputs`).
        """
        done: set[str] = set()
        if not present(self.outputs_path, str(self.outputs_path), RunError):
            return done
        with open(self.outputs_path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    if whole_row(line):
                        done.add(json_loads(line)["cell"])
                    break
                cell = _leading_cell(line)
                if cell is None or not line.endswith(b"}\n"):
                    try:
                        cell = json_loads(line)["cell"]
                    except (ValueError, KeyError, TypeError):
                        raise RunError(f"{self.outputs_path}: line {n} is not a row of outputs") from None
                done.add(str(cell))
        return done

    #: The file of the plan whose cells the rows of `outputs_path` give outcomes of.
    PLAN = f"{SEALED}/{ASSIGNMENT}"

    def planned_cells(self) -> set[str]:
        """Every cell the run's plan holds (`sealed/assignment.jsonl`)."""
        return {row.cell for row in iter_rows(self.assignment_path, AssignmentRow)}

    def retry_starts(self) -> list[int]:
        """Where in the rows file each retry began (its `from`; none for a retry made the old way)."""
        return [r.start for r in self.read_manifest().retries or [] if isinstance(r.start, int)]

    def foreign_row(self) -> str | None:
        """What is wrong with the first row of the file that this run cannot have written, or None: a row naming a
        cell the plan does not hold, or a second outcome of a cell that no retry reopened (a retry appends a failed
        cell's new row after its `from`, the file's size when it began). Such a row (a line pasted in from another
        run or a backup, a copy of one) made `12 cells: 13 ok`; a resume called the rest and closed the run over it,
        its digest recorded, and no verdict could read it, naming scores.jsonl."""
        path = self.outputs_path
        if not self.has_manifest() or not present(path, str(path), RunError):
            return None
        planned, starts = self.planned_cells(), self.retry_starts()
        seen: dict[str, tuple[int, int, bool]] = {}  # cell → its last row's line, byte and whether it failed
        for n, (pos, line) in enumerate(_rows_of(path), 1):
            cell, failed = _cell_and_failure(line, path, n)
            if cell not in planned:
                return f"line {n} gives an outcome of cell {cell!r}, which the run's plan ({self.PLAN}) does not hold"
            before = seen.get(cell)
            if before is not None and not (before[2] and any(before[1] < start <= pos for start in starts)):
                return (f"line {n} gives cell {cell} a second outcome (its first is line {before[0]}), which no "
                        "retry of its failed call reopened")
            seen[cell] = (n, pos, failed)
        return None

    def counts(self) -> dict[str, int]:
        """Recorded cells by status (ok, truncated, failed), for `benchcard status`: a cell's last row counts."""
        counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
        rows: Iterable[OutputRow] = self.iter_outputs()
        if self.has_manifest() and self.read_manifest().retries:
            rows = last_per_cell(rows, attrgetter("cell"))
        for row in rows:
            counts[row.status] += 1
        return counts


class JudgeReader(RunReader):
    """A judge card's run folder as the judge's calls left it: `judge-outputs.jsonl` read as outputs are (a torn
    final line skipped), and the judge's plan, `sealed/judge-requests.jsonl` and a sequential card's later
    stretches' (docs/judge.md)."""

    PLAN = f"{SEALED}/{JUDGE_REQUESTS}"

    @property
    def outputs_path(self) -> Path:
        return self.folder / JUDGE_OUTPUTS

    def planned_cells(self) -> set[str]:
        """Every judgement the judging plan holds (each stretch's, in a sequential card)."""
        return {row.cell for row in self.iter_judge_requests()}

    def retry_starts(self) -> list[int]:
        """None: a judgement is never called again once it has an outcome."""
        return []

    @property
    def judge_requests_path(self) -> Path:
        return self.folder / SEALED / JUDGE_REQUESTS

    def sealed_paths(self) -> list[Path]:
        """The judging plan's files in order: the first (the whole run's; a sequential card's first stretch's),
        then each later stretch's as the manifest's `judge_stretches` records them."""
        later = (self.read_manifest().judge_stretches or []) if self.has_manifest() else []
        return [self.judge_requests_path, *(self.folder / s.file for s in later)]

    def iter_judge_requests(self) -> Iterator[JudgeRequestRow]:
        for path in self.sealed_paths():
            if not present(path, str(path), RunError):
                raise RunError(f"{path}: missing; the judging was never planned")
            yield from iter_rows(path, JudgeRequestRow)


def _rows_of(path: Path) -> Iterator[tuple[int, bytes]]:
    """Each line of a rows file with the byte it starts at, up to a torn final line (left to the store's repair)."""
    pos = 0
    with open(path, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                return
            yield pos, line
            pos += len(line)


def _cell_and_failure(line: bytes, path: Path, n: int) -> tuple[str, bool]:
    """A row's cell and whether its outcome is a failure, read without parsing a row written by `dumps_line`
    whose status is not `failed` (the text may hold the words, so a match is parsed)."""
    cell = _leading_cell(line)
    if cell is not None and b'"status":"failed"' not in line:
        return cell, False
    try:
        row = json_loads(line)
        return str(row["cell"]), row.get("status") == "failed"
    except (ValueError, KeyError, TypeError, AttributeError):
        raise RunError(f"{path}: line {n} is not a row of outputs") from None


_CELL_PREFIX = b'{"cell":"'
_CELL_END = len(_CELL_PREFIX) + 11  # `c` + 10 hex digits


def _leading_cell(line: bytes) -> str | None:
    """The cell id of a line written by `dumps_line` (cell first), without parsing the rest."""
    if line.startswith(_CELL_PREFIX) and line[_CELL_END:_CELL_END + 2] == b'",':
        return line[len(_CELL_PREFIX):_CELL_END].decode("ascii", "replace")
    return None


def whole_row(data: bytes) -> bool:
    """A line that parses as a whole row of outputs (a cell and a status): kept, even without its newline."""
    try:
        row = json_loads(data)
    except ValueError:
        return False
    return isinstance(row, dict) and "cell" in row and "status" in row

# ------------------------------------------------------------------------------ each cell's current outcome
# outputs.jsonl is append-only, a retry included (run/_retry.py): a cell's outcome is its last row, and the
# manifest's `retries` say where each retry began. Read here, for the run stage that resumes and the verdict and
# the pages that count.

class _CellStatus(msgspec.Struct):
    """The two fields of an outputs row a retry reads."""

    cell: str
    status: str


@dataclass(frozen=True)
class Outcomes:
    """A run's cells by current outcome: how many have one, how many of those failed (and may be called again),
    the cells an earlier retry reopened that have no new outcome yet (they are called by the next resume), and
    in a sequential run the failed cells a look already read (`final`: never called again, not in `failed`)."""

    recorded: int
    failed: int
    waiting: frozenset[str] = frozenset()
    final: int = 0


@contextlib.contextmanager
def held_still(run_dir: Path, alone: bool = False) -> Iterator[bool]:
    """Hold a run still while it is read and judged: its lock (the one `run/store.OutputWriter` holds while it
    writes outputs.jsonl, and a retry while it reopens the run) taken shared for the block, so that no resume or
    retry of the run starts until the block ends; `alone` takes it exclusive, for a writer of the run's other
    files (`grade`), which no verdict may be reading meanwhile. Yields False, holding nothing, when another holds
    it now; True otherwise (also for a run without outputs.jsonl, and off POSIX, where there is no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield True
        return
    try:
        fh = open(run_dir / OUTPUTS, "rb")  # noqa: SIM115 - closed below, which releases the lock
    except OSError:
        yield True
        return
    with fh:
        try:
            fcntl.flock(fh.fileno(), (fcntl.LOCK_EX if alone else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True


def set_aside_of(run_dir: Path) -> SetAside | None:
    """The run's first readable set-aside row (the record; later rows only add to it), None when it has none."""
    try:
        data = (run_dir / SET_ASIDE).read_bytes()
    except OSError:
        return None
    for line in data.splitlines():
        with contextlib.suppress(msgspec.ValidationError, msgspec.DecodeError):
            return decode_line(line, SetAside)
    return None


def manifest_present(run_dir: Path) -> bool:
    """Whether the folder holds a manifest (a run, planned): a folder or a FIFO in its place is one RunError naming
    it, the line every command that reads the run says, never 'not a run folder' or a run dropped unsaid. It is
    named within its project (`results/…/manifest.json`), as `status`, `ledger` and `site` name it; the project is
    looked for only then, since every command asks this of each run folder it passes."""
    path = run_dir / MANIFEST
    with contextlib.suppress(RunError):
        return present(path, str(path), RunError)
    return present(path, Project.find(run_dir).relative(path), RunError)  # the same refusal, named within its project


def read_manifest(run_dir: Path) -> Manifest:
    """A run's manifest, typed (a missing identifying field is a one-line error naming it); a folder without one is
    not a run folder."""
    store = RunReader(run_dir)
    if not store.has_manifest():
        raise RunError(f"{run_dir}: not a run folder (no manifest.json)")
    return store.read_manifest()


def retry_from(manifest: Manifest) -> int | None:
    """Where in outputs.jsonl the latest retry began (None: never retried, or retried the old way)."""
    start = manifest.retries[-1].start if manifest.retries else UNSET
    return None if isinstance(start, UnsetType) else start


def looked_cells(store: RunReader, manifest: Manifest) -> frozenset[str]:
    """The cells a sequential run's looks have read (those of the repetitions before its last look's count): a
    look taken is final, so none of them is called again; empty for any other run."""
    if manifest.sequential is None or not manifest.looks:
        return frozenset()
    upto = manifest.looks[-1].repetitions
    return frozenset(a.cell for a in iter_rows(store.assignment_path, AssignmentRow) if a.repetition < upto)


def outcomes(store: RunReader) -> Outcomes:
    """Each cell's current outcome, from the last row of each cell."""
    manifest = store.read_manifest()
    looked = looked_cells(store, manifest)
    if not manifest.retries and not looked:  # never retried: one row per cell
        recorded = failed = 0
        for _, line in _lines(store):
            recorded += 1
            failed += b'"status":"failed"' in line and json_loads(line).get("status") == "failed"
        return Outcomes(recorded, failed)
    start = retry_from(manifest)
    last: dict[str, tuple[bool, int]] = {}  # cell → (its last row failed, where that row starts)
    for pos, line in _lines(store):
        try:
            row = decode_line(line, _CellStatus)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise RunError(f"{store.outputs_path}: the row at byte {pos} is not a row of outputs ({exc})") from None
        last[row.cell] = (row.status == "failed", pos)
    final = sum(f for c, (f, _) in last.items() if c in looked)
    waiting = frozenset(c for c, (failed_, pos) in last.items()
                        if failed_ and start is not None and pos < start and c not in looked)
    failed = sum(f for f, _ in last.values()) - len(waiting) - final
    return Outcomes(len(last) - len(waiting), failed, waiting, final)


def _lines(store: RunReader) -> Iterator[tuple[int, bytes]]:
    """Each whole row of outputs.jsonl with the byte it starts at (a torn final line, from a kill mid-write, is
    left to the store's repair)."""
    path = store.outputs_path
    if not present(path, str(path), RunError):
        return
    pos = 0
    with open(path, "rb") as fh:
        for line in fh:
            if line.endswith(b"\n") and line.strip():
                yield pos, line
            pos += len(line)
