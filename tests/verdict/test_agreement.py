"""The verdict's human grades beside the blind scorer (`verdict/_agreement.py`): the agreement rate, Cohen's kappa,
every disagreement and note, in verdict.json, its text and its ledger row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.grading.sheets import blind_sheet, import_grades
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.verdict.give import give_verdict

from ..helpers_verdict import auto_scores, read_sheet, strong_run, write_sheet


def test_grades_agreement_and_disagreements_in_the_verdict(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    runner = CliRunner()
    out = tmp_path / "sheets" / "sheet.csv"
    exported = runner.invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(out)])
    assert exported.exit_code == 0
    # the hint names the path given (from here, relative), so it can be pasted as it is
    assert f"then: benchcard grade {run_dir.name} sheets/sheet.csv" in exported.output
    auto = auto_scores(run_dir)
    rows = read_sheet(out)
    flipped = {3: "the date is there, just reformatted", 8: ""}
    for r in rows:
        rid = int(r["row"])
        passes = auto[rid] == 1.0
        if rid in flipped:
            passes = not passes
            r["note"] = flipped[rid]
        r["grade"] = "pass" if passes else "fail"
    rows[5]["grade"] = ""  # one row left ungraded
    write_sheet(out, rows)
    result = runner.invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(out)])
    assert result.exit_code == 0, result.output
    assert "imported 35 grade(s) (1 row(s) left ungraded)" in result.output
    stored = run_dir / "grades" / "human.csv"
    assert stored.is_file()
    assert "baseline" not in stored.read_text() and "c000000" not in stored.read_text()

    verdict = runner.invoke(cli, ["-C", str(project.root), "verdict", run_dir.name])
    assert verdict.exit_code == 0, verdict.output
    assert "human grades: 35 graded · agreement 0.943" in verdict.output
    assert "2 disagreement(s)" in verdict.output
    assert "the date is there, just reformatted" in verdict.output
    data = json.loads((run_dir / "verdict.json").read_text())
    human = data["human"]
    assert human["graded"] == 35 and human["agreement"] == pytest.approx(33 / 35)
    # Cohen's kappa from the 2 × 2 table
    graded = [int(r["row"]) for r in rows if r["grade"]]
    h = [(auto[i] == 1.0) != (i in flipped) for i in graded]
    a = [auto[i] == 1.0 for i in graded]
    n = len(graded)
    po = sum(x == y for x, y in zip(h, a, strict=True)) / n
    pe = (sum(h) / n) * (sum(a) / n) + (1 - sum(h) / n) * (1 - sum(a) / n)
    assert human["kappa"] == pytest.approx((po - pe) / (1 - pe))
    dis = {d["row"]: d for d in human["disagreements"]}
    assert set(dis) == set(flipped)
    d3 = dis[3]
    assert d3["auto_score"] == auto[3] and d3["note"] == "the date is there, just reformatted"
    assert d3["human_grade"] == ("fail" if auto[3] == 1.0 else "pass")
    for key in ("cell", "fixture", "variant", "repetition"):
        assert key in d3
    assert data["disagreements"] == human["disagreements"]
    assert ledger.read(project)[-1].fields()["human"] == {"graded": 35, "agreement": pytest.approx(33 / 35),
                                                          "kappa": pytest.approx(human["kappa"]),
                                                          "disagreements": 2}


def test_numeric_grades_disagree_when_they_differ(project: Project, tmp_path: Path) -> None:
    run_dir = strong_run(project)
    sheet = blind_sheet(project, run_dir, tmp_path / "s.csv")
    auto = auto_scores(run_dir)
    rows = read_sheet(sheet.path)
    for r in rows:
        r["grade"] = repr(auto[int(r["row"])])
    rows[0]["grade"] = "0.1" if auto[1] != 0.1 else "0.2"
    write_sheet(sheet.path, rows)
    import_grades(project, run_dir, sheet.path)
    v = give_verdict(project, run_dir)
    human = v.to_json()["human"]
    assert [d["row"] for d in human["disagreements"]] == [1]
    assert human["graded"] == 36
