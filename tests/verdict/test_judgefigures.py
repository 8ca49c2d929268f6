"""A judge card's verdict figures (verdict/judgefigures.py): the agreement floor that makes a run inconclusive,
judge files changed after the run refused, and the judge's figures as the terminal and a run's page show them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from benchcard.project import Project
from benchcard.records.ledgerrow import JudgeFigures
from benchcard.records.verdictfigures import JudgeBlock
from benchcard.records.verdictfile import decode_verdict
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.give import give_verdict
from benchcard.verdict.judgefigures import judge_lines, judge_table, with_judge
from benchcard.verdict.runfolder import read_run_data

from ..helpers_cli import bc
from ..helpers_judge import CARD_ID, card_text, judge_project, script
from ..helpers_run import only_run, read_jsonl
from ..helpers_verdict import ab_metrics, make_run, the_card


def test_a_judge_below_its_agreement_floor_makes_the_run_inconclusive(tmp_path: Path, server: FakeServer,
                                                                      key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3, floor=0.8)
    # the judge flips on the good outputs: PASS, FAIL, PASS for each; the gap alone would still be a win
    server.configure(script({"replies_cycle": ["GRADE: PASS", "GRADE: FAIL"]}))
    assert bc(tmp_path, "run", CARD_ID).exit_code == 0
    folder = only_run(project, CARD_ID)
    result = bc(tmp_path, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    assert "finding: inconclusive → non-result" in result.output
    assert "below the declared floor 0.8" in result.output and "floor 0.8 NOT MET" in result.output
    given = json.loads((folder / "verdict.json").read_text())
    assert given["judge"]["floor_met"] is False and given["judge"]["self_agreement"]["alpha"] < 0.8
    assert given["judge"]["noise"]["sd"] > 0 and given["comparisons"][0]["finding"] == "inconclusive"
    ledger = read_jsonl(tmp_path / "results" / "ledger.jsonl")
    assert ledger[-1]["finding"] == "inconclusive" and ledger[-1]["judge"]["floor_met"] is False


def test_the_verdict_refuses_judge_answers_changed_after_the_run(tmp_path: Path, server: FakeServer,
                                                                 key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=1)
    server.configure(script({"reply": "GRADE: PASS"}))
    assert bc(tmp_path, "run", CARD_ID).exit_code == 0
    folder = only_run(project, CARD_ID)
    path = folder / "judge-outputs.jsonl"
    path.write_text(path.read_text().replace("GRADE: FAIL", "GRADE: PASS"))
    result = bc(tmp_path, "verdict", folder.name)
    assert result.exit_code == 1
    assert "judge-outputs.jsonl changed after the judging" in result.output
    assert not (folder / "verdict.json").exists()


BLOCK: dict[str, Any] = {
    "rig": "judge-model · api", "per_output": 3, "judgements": 36, "counts": {"unreadable": 2, "failed": 1},
    "cost": 0.01, "tokens": None,
    "self_agreement": {"alpha": 0.8123, "level": "nominal", "outputs": 12, "exact": 0.75, "by_metric": {}},
    "floor": 0.8, "floor_met": True, "noise": {"sd": 0.2, "share_of_gap_variance": {"A": 0.125}},
    "verbosity": {"spearman_length_score": None, "mean_chars": {"baseline": 40.4, "A": None}},
    "same_model_as_run": False, "redacted": 0,
}


def _block(**change: Any) -> JudgeBlock:
    return msgspec.convert({**BLOCK, **change}, JudgeBlock)


def test_the_judge_lines_name_each_figure_and_what_was_never_read_as_a_grade() -> None:
    assert judge_lines(None) == []
    assert judge_lines(_block()) == [
        "judge judge-model · api: 3 judgement(s) per output · 2 unreadable, 0 truncated, 1 failed (never read as "
        "grades)",
        "  self-agreement: Krippendorff's alpha (nominal) 0.812 over 12 output(s) judged twice or more · identical "
        "grades 0.750 · floor 0.8 met",
        "  judge noise: sd 0.200 per judgement · 0.125 of the A gap's variance",
        "  length vs score: Spearman n/a (needs 3 scored outputs whose lengths and scores vary) · mean characters "
        "baseline 40 · A n/a",
    ]


def test_an_alpha_that_is_not_measured_says_why() -> None:
    """`alpha n/a` left the reader to docs/judge.md: a temperature-0 judge giving every output one grade has no
    alpha (and so misses any agreement_floor), which reads as a fault unless the line says it."""
    same: dict[str, Any] = {"alpha": None, "level": "nominal", "outputs": 4, "exact": 1.0, "by_metric": {}}
    assert judge_lines(_block(self_agreement=same))[1] == (
        "  self-agreement: Krippendorff's alpha (nominal) n/a (every judgement gave one grade: nothing measured) over "
        "4 output(s) judged twice or more · identical grades 1.000 · floor 0.8 met")
    once = {**same, "outputs": 0, "exact": None}
    assert "alpha (nominal) n/a (no output judged twice) over 0" in judge_lines(_block(self_agreement=once))[1]


def test_a_share_that_cannot_be_measured_is_said_in_words() -> None:
    lines = judge_lines(_block(noise={"sd": 0.2, "share_of_gap_variance": {"A": None}}))
    assert lines[2] == "  judge noise: sd 0.200 per judgement · its share of the A gap's variance cannot be measured"


def test_a_floor_not_met_the_model_judging_itself_and_human_grades_are_said() -> None:
    lines = judge_lines(_block(floor_met=False, same_model_as_run=True, floor=0.9,
                               humans={"graded": 20, "kappa": 0.5, "agreement": 0.8}))
    assert lines[1].endswith("· floor 0.9 NOT MET")
    assert lines[-2:] == ["  note: the judge is the model under test (self-preference cannot be ruled out)",
                          "  with human grades: Cohen's kappa 0.500 over 20"]
    assert " floor " not in judge_lines(_block(floor=None, floor_met=None))[1]


def test_the_judge_table_from_a_verdict_or_only_the_headline_from_a_ledger_row() -> None:
    full = judge_table(_block())
    assert full["Krippendorff's alpha (with itself)"] == 0.8123 and full["level"] == "nominal"
    assert full["unreadable / truncated / failed"] == "2 / 0 / 1" and full["noise sd per judgement"] == 0.2
    row = judge_table(JudgeFigures(rig="judge-model · api", per_output=3, alpha=0.7, floor=0.8, floor_met=False,
                                   cost=0.01))
    assert list(row) == list(full)  # the same rows, so a page lays both out alike
    assert (row["judge"], row["Krippendorff's alpha (with itself)"], row["floor met"]) == ("judge-model · api", 0.7,
                                                                                           False)
    assert row["level"] is None and row["noise sd per judgement"] is None and row["variant echoes removed"] is None
    assert row["unreadable / truncated / failed"] == "0 / 0 / 0"


def test_a_card_without_a_judge_keeps_its_verdict(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    verdict = decode_verdict((run_dir / "verdict.json").read_bytes(), run_dir / "verdict.json")
    assert with_judge(the_card(project), read_run_data(run_dir, baseline="baseline"), verdict) is verdict


def _unreadable_judge_run(tmp_path: Path, server: FakeServer, floor: str = "") -> tuple[Project, Path, Any]:
    """A 3-repetition judge card allowing 4 unscored cells, whose judge answers the colour variant's outputs in a
    form that cannot be read as a grade: 9 cells with an output and no readable judgement."""
    text = card_text(**{"  equivalence_margin: 0.05": "  equivalence_margin: 0.05\n  allow_failed: 4",
                        "repetitions: 2": "repetitions: 3", "  scale: pass_fail": f"{floor}  scale: pass_fail"})
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=3, k=3, card_text=text)
    server.configure(script({"reply": "I would say it does."}))
    ran = bc(tmp_path, "run", CARD_ID)
    assert ran.exit_code == 0, ran.output
    return project, only_run(project, CARD_ID), ran


def test_unreadable_judge_answers_are_named_as_such_and_the_judgements_add_up(tmp_path: Path, server: FakeServer,
                                                                              key: str) -> None:
    _, folder, ran = _unreadable_judge_run(tmp_path, server)
    assert ("judge test/judge · judge: 54 judgements (3 per ok output): 27 read as grades, 27 unreadable, 0 "
            "truncated, 0 failed · 9 output(s) with no readable judgement") in ran.output
    shown = bc(tmp_path, "verdict", folder.name, "--allow-incomplete", "--gate")
    assert shown.exit_code == 5, shown.output
    assert "failed in transport" not in shown.output
    assert ("9 cell(s) have an output but no readable judgement (the judge's answers were unreadable, cut off or "
            "failed: judge-outputs.jsonl) and the card allows 4") in shown.output
    assert ("note: 9 cell(s) have no score (yy-plain-variant 0, zz-colour-variant 9): 9 cell(s) have an output but "
            "no readable judgement (the judge's answers were unreadable, cut off or failed: judge-outputs.jsonl); the "
            "card allows 4 unscored cell(s).") in shown.output
    assert "gate: incomplete → exit 5" in shown.output


def test_a_judge_floor_not_met_does_not_turn_an_incomplete_grid_inconclusive(tmp_path: Path, server: FakeServer,
                                                                             key: str) -> None:
    _, folder, _ = _unreadable_judge_run(tmp_path, server, floor="  agreement_floor: 0.8\n")
    shown = bc(tmp_path, "verdict", folder.name, "--allow-incomplete", "--gate")
    assert shown.exit_code == 5, shown.output
    assert "finding: incomplete → non-result" in shown.output and "floor 0.8 NOT MET" in shown.output
    assert json.loads((folder / "verdict.json").read_text())["finding"] == "incomplete"


def test_an_unmeasured_run_spread_names_the_scored_repetitions_it_lacks(tmp_path: Path, server: FakeServer,
                                                                        key: str) -> None:
    text = card_text(**{"  equivalence_margin: 0.05": "  equivalence_margin: 0.05\n  allow_failed: 20",
                        "repetitions: 2": "repetitions: 3"})
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=3, k=1, card_text=text)
    # the judge's answers are readable on one fixture only: no two fixtures are scored in every repetition
    server.configure({"replies": [{"match": "Item: a ripe tomato, number 0", "reply": "GRADE: PASS"},
                                  {"match": "Item: ", "reply": "no grade"}, {"match": "", "reply": "A tomato."}]})
    assert bc(tmp_path, "run", CARD_ID).exit_code == 0
    shown = bc(tmp_path, "verdict", only_run(project, CARD_ID).name, "--allow-incomplete")
    assert "fewer than two repetitions" not in shown.output
    assert ("the run-to-run spread cannot be measured: it needs two fixtures scored in all 3 repetitions of both "
            "arms, and 1 is (unscored cells leave the others out)") in shown.output, shown.output
