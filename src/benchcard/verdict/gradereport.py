"""What `blind-sheet` and `grade` print: the JSON a script reads and the lines a person reads."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from benchcard.project import Project
from benchcard.verdict.grading import GradeImport, Sheet


def sheet_report(project: Project, sheet: Sheet, run_name: str) -> tuple[dict[str, Any], list[str]]:
    data = {"sheet": str(sheet.path), "name": sheet.name, "rows": sheet.rows,
            "mapping": project.relative(sheet.mapping), "left_out": dict(sheet.left_out),
            "backup": str(sheet.backup) if sheet.backup else None}
    lines = [f"wrote {sheet.rows} outputs, shuffled, to {sheet.path}"
             + (f" (the file that was there is now {sheet.backup})" if sheet.backup else "")]
    if sheet.left_out:
        lines.append("  left out (never scored): " + ", ".join(f"{n} {s}" for s, n in sheet.left_out.items()))
    lines.append(f"  grade each row pass, fail or 0–1, then: benchcard grade {run_name} {_as_typed(sheet.path)}"
                 + ("" if sheet.name == "human" else f" --name {sheet.name}"))
    return data, lines


def _as_typed(path: Path) -> str:
    """The sheet's path as the user can type it from here: relative below the current folder, else absolute."""
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(path.resolve())
    return shlex.quote(shown)


def grade_report(project: Project, result: GradeImport) -> tuple[dict[str, Any], list[str]]:
    data = {"grades": project.relative(result.path), "name": result.name, "graded": result.graded,
            "ungraded": result.ungraded, "backup": project.relative(result.backup) if result.backup else None}
    line = (f"imported {result.graded} grade(s) ({result.ungraded} row(s) left ungraded) → "
            f"{project.relative(result.path)}"
            + (f" (the grades imported before are now {project.relative(result.backup)})" if result.backup else ""))
    return data, [line]
