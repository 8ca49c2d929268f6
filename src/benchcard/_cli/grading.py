"""Blind human grading: `benchcard blind-sheet` and `benchcard grade`, and what they print (the JSON a script
reads, the lines a person reads)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from benchcard._cli.common import Said, project_of, report
from benchcard._util.text import shell_path
from benchcard.project import Project

if TYPE_CHECKING:
    from benchcard.grading.sheets import GradeImport, Sheet


@click.command("blind-sheet")
@click.argument("run_name", metavar="RUN")
@click.option("--out", type=click.Path(dir_okay=False), help="Where to write the sheet (default: "
              "blind-<run>-<name>.csv in the current folder).")
@click.option("--name", default="human", show_default=True, help="The sheet's name (one per grader).")
@click.option("--force", is_flag=True, help="Write even if the file exists (the old one is kept as .bak).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_context
def blind_sheet_cmd(ctx: click.Context, run_name: str, out: str | None, name: str, force: bool, as_json: bool) -> None:
    """Export RUN's answered outputs as a shuffled CSV for blind human grading (no variant, model or run index)."""
    from benchcard.grading.sheets import blind_sheet

    project = project_of(ctx)
    sheet = blind_sheet(project, run_name, Path(out) if out else None, name, force)
    report(sheet_report(project, sheet, run_name), as_json)


@click.command("grade")
@click.argument("run_name", metavar="RUN")
@click.argument("sheet", type=click.Path(dir_okay=False))
@click.option("--name", help="The sheet's name (default: the only sheet exported for RUN).")
@click.option("--force", is_flag=True, help="Replace grades imported before (they are kept as .bak).")
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as JSON.")
@click.pass_context
def grade_cmd(ctx: click.Context, run_name: str, sheet: str, name: str | None, force: bool, as_json: bool) -> None:
    """Import a filled blind sheet into RUN's grades/; the verdict compares them with the scorer."""
    from benchcard.grading.sheets import import_grades

    project = project_of(ctx)
    report(grade_report(project, import_grades(project, run_name, Path(sheet), name, force)), as_json)


def sheet_report(project: Project, sheet: Sheet, run_name: str) -> Said:
    data = {"sheet": str(sheet.path), "name": sheet.name, "rows": sheet.rows,
            "mapping": project.relative(sheet.mapping), "left_out": dict(sheet.left_out),
            "backup": str(sheet.backup) if sheet.backup else None}
    lines = [f"wrote {sheet.rows} outputs, shuffled, to {sheet.path}"
             + (f" (the file that was there is now {sheet.backup})" if sheet.backup else "")]
    if sheet.left_out:
        lines.append("  left out (never scored): " + ", ".join(f"{n} {s}" for s, n in sheet.left_out.items()))
    lines.append(f"  grade each row pass, fail or 0–1, then: benchcard grade {run_name} {_as_typed(sheet.path)}"
                 + ("" if sheet.name == "human" else f" --name {sheet.name}"))
    return Said(data, tuple(lines))


def _as_typed(path: Path) -> str:
    """The sheet's path as the user can type it from here: relative below the current folder, else absolute."""
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(path.resolve())
    return shell_path(shown)


def grade_report(project: Project, result: GradeImport) -> Said:
    data = {"grades": project.relative(result.path), "name": result.name, "graded": result.graded,
            "ungraded": result.ungraded, "backup": project.relative(result.backup) if result.backup else None}
    line = (f"imported {result.graded} grade(s) ({result.ungraded} row(s) left ungraded) → "
            f"{project.relative(result.path)}"
            + (f" (the grades imported before are now {project.relative(result.backup)})" if result.backup else ""))
    return Said(data, (line,))
