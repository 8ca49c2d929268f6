"""The ledger as `benchcard ledger` shows it: a table of the rows, the line `--repair` prints."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchcard.project import Project
from benchcard.run.unfinished import unfinished_runs

COLUMNS = ("seq", "date", "card", "version", "rig", "finding", "outcome", "run")
NO_WRAP = frozenset({"seq", "date", "version", "run", "finding", "outcome"})


def print_rows(project: Project, rows: Sequence[dict[str, Any]]) -> None:
    """The rows as a rich table on stdout (results bold, non-results dim), or a line saying there are none."""
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 200)
    try:
        _print_table(console, project, rows)
    finally:
        for u in unfinished_runs(project):  # a stopped run is no verdict waiting: say so, and how to finish it
            console.print(f"{u.card} v{u.version} · run {u.run}: {u.label} — {u.resume}", highlight=False,
                          markup=False)


def _print_table(console: Any, project: Project, rows: Sequence[dict[str, Any]]) -> None:
    from rich.table import Table

    if not rows:
        console.print(f"{project.relative(project.ledger_path)}: no verdicts yet", highlight=False, markup=False)
        return
    table = Table(title="benchcard ledger", title_justify="left")
    for col in COLUMNS:
        table.add_column(col, no_wrap=col in NO_WRAP)
    for r in rows:
        style = {"result": "bold", "non-result": "dim"}.get(str(r.get("outcome")), "")
        table.add_row(str(r.get("seq")), str(r.get("date")), str(r.get("card")),
                      "unsealed" if r.get("kind") == "compare" else f"v{r.get('version')}",
                      str(r.get("rig")), str(r.get("finding")), str(r.get("outcome")), str(r.get("run")), style=style)
    console.print(table)


def repair_line(project: Project, side: Path | None) -> str:
    if side is None:
        return "nothing to repair: the ledger's last line is whole"
    return f"moved the torn last line to {project.relative(side)}; the ledger ends at its last whole row"
