"""Runs that stopped before every cell had an outcome (a crash, Ctrl-C, a stop on errors), found on disk.

`benchcard ledger` lists them under the verdicts, so a stopped run is never mistaken for one waiting for its
verdict, and says how to finish each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from benchcard.project import Project
from benchcard.records import MANIFEST, OUTPUTS, RUN_ID


@dataclass(frozen=True)
class Unfinished:
    card: str
    version: int
    run: str
    done: int
    cells: int

    @property
    def label(self) -> str:
        return f"unfinished ({self.done} of {self.cells} cells)"

    @property
    def resume(self) -> str:
        return f"benchcard run {self.card} --resume {self.run}"


def unfinished_runs(project: Project) -> list[Unfinished]:
    """Every run folder whose manifest has no `finished_at`, with how many cells have an output row."""
    found: list[Unfinished] = []
    results = project.root / "results"
    if not results.is_dir():
        return found
    for manifest_path in sorted(results.glob(f"*/v*/*/{MANIFEST}")):
        folder = manifest_path.parent
        if not RUN_ID.fullmatch(folder.name) or manifest_path.is_symlink():
            continue
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(manifest, dict) or "finished_at" in manifest:
            continue
        cells: set[str] = set()
        try:
            with open(folder / OUTPUTS, "rb") as fh:
                for line in fh:
                    try:
                        cells.add(str(json.loads(line)["cell"]))
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line: the cell has no outcome yet
        except OSError:
            pass
        total = manifest.get("cells")
        found.append(Unfinished(str(manifest.get("card") or folder.parents[1].name),
                                int(manifest.get("version") or 0), folder.name, len(cells),
                                total if isinstance(total, int) else len(cells)))
    return found
