"""Runs set aside: kept on disk, never deleted, and never used again.

A run started on the wrong endpoint (or with the wrong key, or for nothing) can neither be resumed elsewhere (a
resumed run keeps its rig) nor removed (a run's evidence is never deleted). `benchcard set-aside RUN --why …`
appends one row, `{at, why}`, to the run's `set-aside.jsonl`; from then on the run is refused by `run --resume`,
`verdict` and `plan --from`, never chosen for a card's name (`records/cardruns.py`), left off the pages'
headlines and the ledger's resume hints, and shown as set aside wherever it is listed. A run in the ledger is
never set aside: its row is the record. Nothing is ever taken back: the file is only appended to.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from benchcard._util.files import writing
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.cardruns import find_run
from benchcard.records.rows import SET_ASIDE, SetAside, dumps_line, utc_stamp
from benchcard.records.runreader import held_still, read_manifest, set_aside_of


def refuse_set_aside(run_dir: Path, where: str) -> None:
    """RunError when the run was set aside: it is resumed, judged and graded never again."""
    found = set_aside_of(run_dir)
    if found is not None:
        raise RunError(f"{where}: this run was {found.label}; it is kept as it is and never resumed or judged "
                       "(start a new run)")


@dataclass(frozen=True)
class SetAsideDone:
    """What `benchcard set-aside` did."""

    run: str
    entry: SetAside
    where: str  # the run's folder, relative to the project

    def lines(self) -> list[str]:
        """What `benchcard set-aside` prints."""
        return [f"run {self.run} {self.entry.label}; kept in {self.where}/, recorded in {SET_ASIDE} there"]

    def to_json(self) -> dict[str, str]:
        return {"run": self.run, "at": self.entry.at, "why": self.entry.why, "folder": self.where}


def set_aside(project: Project, name: str, why: str) -> SetAsideDone:
    """Set a run aside (see the module docstring): `benchcard set-aside RUN`'s core. The run is named by its id or
    folder, never by its card (never "whichever run is newest"). Under the ledger's lock, so no verdict enters it
    meanwhile."""
    if "/" not in name and (project.results_dir / name).is_dir():
        raise RunError(f"{name} is a card; name the run to set aside by its id (`benchcard ledger` lists the "
                       "unfinished ones)")
    run_dir = find_run(project, name)
    read_manifest(run_dir)  # a malformed manifest is the one line every command that takes a run refuses it with
    run = run_dir.name
    reason = " ".join(why.split())
    if not reason:
        raise RunError("--why: say in a few words why the run is set aside (it is kept with the run)")
    with ledger.locked(project):
        row = ledger.row_of_run(project, run)
        if row is not None:
            raise RunError(f"run {run} is in the ledger (seq {row.seq}); a ledgered verdict is the record and is "
                           "never set aside")
        earlier = set_aside_of(run_dir)
        if earlier is not None:
            raise RunError(f"run {run} was already {earlier.label}")
        if _running(run_dir):
            raise RunError(f"run {run} is running now; stop it (Ctrl-C) before setting it aside")
        entry = SetAside(at=utc_stamp(), why=reason)
        with writing(run_dir / SET_ASIDE), open(run_dir / SET_ASIDE, "ab") as fh:
            fh.write(dumps_line(entry))
            fh.flush()
            os.fsync(fh.fileno())
    return SetAsideDone(run, entry, project.relative(run_dir))


def _running(run_dir: Path) -> bool:
    """Whether a process holds the run's lock (it appends to outputs.jsonl now)."""
    with held_still(run_dir) as still:
        return not still
