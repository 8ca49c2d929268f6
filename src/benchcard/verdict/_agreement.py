"""The human grades beside the blind scorer, once the verdict unblinds the run: the agreement rate, Cohen's kappa on
pass/fail, and every disagreement and note (verdict.json's `human`). The grades are read through `grading/`."""

from __future__ import annotations

import msgspec

from benchcard.errors import VerdictError
from benchcard.grading.sheets import grade_files, imported_grades, parse_grade
from benchcard.project import Project
from benchcard.records.verdictfigures import Disagreement, HumanGrades, SheetAgreement
from benchcard.verdict.runfolder import OK, RunData

_TOL = 1e-9


def _kappa(human: list[bool], auto: list[bool]) -> float | None:
    """Cohen's kappa of two pass/fail raters; None when chance agreement is total (kappa undefined)."""
    n = len(human)
    if n == 0:
        return None
    po = sum(h == a for h, a in zip(human, auto, strict=True)) / n
    ph = sum(human) / n
    pa = sum(auto) / n
    pe = ph * pa + (1 - ph) * (1 - pa)
    if pe >= 1.0 - 1e-12:
        return None
    return (po - pe) / (1 - pe)


def agreement(project: Project, data: RunData) -> HumanGrades | None:
    """How far the human grades in `grades/` agree with the automatic scores, after unblinding.

    Pass means a score of exactly 1 (the scorer's own convention) or a grade of `pass`. A numeric grade
    disagrees when it differs from the automatic score; a pass/fail grade when the pass/fail differs.
    Returns None when the run has no grades.
    """
    sheets = grade_files(data.run_dir)
    if not sheets:
        return None
    index = {c: i for i, c in enumerate(data.cells)}
    human_pass: list[bool] = []
    auto_pass: list[bool] = []
    disagreements: list[Disagreement] = []
    notes: list[Disagreement] = []
    per_sheet: dict[str, SheetAgreement] = {}
    for path in sheets:
        agree_here = 0
        graded_here = 0
        for row in imported_grades(project, data.run_dir, path):
            i = index.get(row.cell)
            if i is None:
                raise VerdictError(f"{project.relative(path)}: cell of sheet row {row.row} is not in the run")
            grade = parse_grade(row.grade)
            if grade is None or data.status[i] != OK:
                continue
            auto = float(data.score[i])
            a_pass = abs(auto - 1.0) <= _TOL
            if isinstance(grade, str):
                h_pass = grade == "pass"
                differs = h_pass != a_pass
            else:
                h_pass = abs(grade - 1.0) <= _TOL
                differs = abs(grade - auto) > _TOL
            graded_here += 1
            agree_here += not differs
            human_pass.append(h_pass)
            auto_pass.append(a_pass)
            entry = Disagreement(sheet=row.sheet, row=row.row, cell=data.cells[i],
                                 fixture=data.fixtures[int(data.fixture[i])],
                                 variant=data.variants[int(data.variant[i])],
                                 repetition=data.repetitions[int(data.repetition[i])], auto_score=auto,
                                 human_grade=grade, note=row.note)
            if differs:
                disagreements.append(entry)
            if entry.note:
                notes.append(msgspec.structs.replace(entry, agrees=not differs))
        per_sheet[path.stem] = SheetAgreement(graded_here, agree_here / graded_here if graded_here else None)
    graded = len(human_pass)
    agree = graded - len(disagreements)
    return HumanGrades(
        graded=graded,
        agreement=agree / graded if graded else None,
        kappa=_kappa(human_pass, auto_pass),
        pass_rule="pass = automatic score 1, or a grade of pass (or 1)",
        disagreements=disagreements,
        notes=notes,
        sheets=per_sheet,
    )
