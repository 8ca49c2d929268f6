"""Runs that stopped before every cell had an outcome (a crash, Ctrl-C, a stop on errors), found on disk.

`benchcard ledger` lists them under the verdicts, so a stopped run is never mistaken for one waiting for its
verdict, and says how to finish each (a scratch run is marked; a run set aside is shown as such, with no command).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import msgspec

from benchcard._util.safeio import present
from benchcard.errors import BenchcardError, RunError
from benchcard.project import Project
from benchcard.records.rows import MANIFEST, OUTPUTS, RUN_ID, OutputFigures, SetAside, decode_line, manifest_or_none
from benchcard.records.runreader import RunReader, outcomes, set_aside_of


@dataclass(frozen=True)
class Unfinished:
    card: str
    version: int
    run: str
    done: int
    cells: int
    scratch: bool = False
    set_aside: SetAside | None = None

    @property
    def label(self) -> str:
        kind = "scratch run, " if self.scratch else ""
        return f"{kind}unfinished ({self.done} of {self.cells} cells)"

    @property
    def resume(self) -> str:
        return f"benchcard run {self.card} --resume {self.run}"

    @property
    def line(self) -> str:
        """What `benchcard ledger` says of it: how to finish it, or that it was set aside (no command then)."""
        head = f"{self.card} v{self.version} · run {self.run}: {self.label}"
        return f"{head}, {self.set_aside.label}" if self.set_aside else f"{head} — {self.resume}"


def unfinished_runs(project: Project, skipped: list[str] | None = None) -> list[Unfinished]:
    """Every run folder whose manifest has no `finished_at`, with how many cells have an output row. A run whose
    manifest is not a file (a folder in its place) cannot be told finished or not: noted in `skipped`, never left
    out unsaid."""
    found: list[Unfinished] = []
    results = project.root / "results"
    if not results.is_dir():
        return found
    for manifest_path in sorted(results.glob(f"*/v*/*/{MANIFEST}")):
        folder = manifest_path.parent
        if not RUN_ID.fullmatch(folder.name) or manifest_path.is_symlink():
            continue
        try:
            present(manifest_path, project.relative(manifest_path), RunError)
        except RunError as exc:
            if skipped is not None:
                skipped.append(f"{exc}; the run is left out")
            continue
        manifest = manifest_or_none(manifest_path)
        if manifest is None or manifest.finished_at is not None:
            continue
        cells = _done_cells(folder, bool(manifest.retries))
        found.append(Unfinished(manifest.card or folder.parents[1].name, manifest.version, folder.name, len(cells),
                                manifest.cells if manifest.cells is not None else len(cells),
                                bool(manifest.scratch), set_aside_of(folder)))
    return found


def _done_cells(folder: Path, retried: bool) -> set[str]:
    """The cells of a run folder with an output row (a torn last line is none)."""
    cells: set[str] = set()
    try:
        with open(folder / OUTPUTS, "rb") as fh:
            for line in fh:
                try:
                    cells.add(decode_line(line, OutputFigures).cell)
                except (msgspec.ValidationError, msgspec.DecodeError):
                    continue  # a torn last line: the cell has no outcome yet
    except OSError:
        pass
    if retried:  # a retried cell has several rows; one a retry reopened has no new outcome yet
        with contextlib.suppress(BenchcardError, OSError, ValueError):
            cells -= outcomes(RunReader(folder)).waiting
    return cells
