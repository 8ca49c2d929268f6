"""`check` and `seal` run a judge card's examples through its recorded judge answers, and refuse a misgrading one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..helpers_cli import bc
from ..helpers_judge import CARD_ID, card_text, judge_project


def test_check_reads_recorded_judge_answers_and_seal_covers_the_judge(tmp_path: Path) -> None:
    judge_project(tmp_path, seal=False)
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 0, result.output
    assert bc(tmp_path, "seal", CARD_ID).exit_code == 0
    # a change of the judge's model is a change of the protocol: the seal names the scoring field
    path = tmp_path / "cards" / f"{CARD_ID}.yaml"
    path.write_text(path.read_text().replace("model: test/judge", "model: test/judge-2"))
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 1
    assert "field 'scoring'" in result.output and "changed after sealing v1" in result.output


@pytest.mark.parametrize(("old", "new", "says"), [
    ("judge_answers: \"GRADE: PASS\"", "judge_answers: \"GRADE: FAIL\"",
     "example 'Names the colour': recorded judge answer 1: expected a score of exactly 1, got 0.00"),
    ("judge_answers: \"GRADE: PASS\"", "judge_answers: \"PASS\"",
     "recorded judge answer 1 is unreadable: expected a line `GRADE: <grade>`, got 'PASS'"),
    (", judge_answers: \"GRADE: PASS\"", "",
     "field 'examples.0.judge_answers': missing; expected the judge's recorded answer"),
])
def test_check_and_seal_refuse_a_judge_that_misgrades_its_examples(tmp_path: Path, old: str, new: str,
                                                                     says: str) -> None:
    judge_project(tmp_path, seal=False, card_text=card_text(**{old: new}))
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 1 and says in result.output
    result = bc(tmp_path, "seal", CARD_ID)
    assert result.exit_code == 1 and says in result.output
    assert not list((tmp_path / "keys" / CARD_ID).glob("*.seal.json"))
