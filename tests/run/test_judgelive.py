"""`benchcard check --live`: a judge card's worked examples sent to its real judge, each judged k times."""

from __future__ import annotations

from pathlib import Path

from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc
from ..helpers_judge import CARD_ID, judge_bodies, judge_project, script
from ..helpers_run import key, server

__all__ = ["key", "server"]  # fixtures used by name



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
