"""The judge card: its spec, the prompt the judge is shown, the strict answer parser, check and seal (offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchcard.card.load import load_card
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.scoring.judge import JudgeSpec, UnreadableAnswer, blind_output, judge_messages, read_answer

from ..helpers_judge import CARD_ID, JUDGE_CARD, VARIANT_TEXT, judge_project


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def card_text(**changes: str) -> str:
    text = JUDGE_CARD.format(reps=2, k=3, floor="", variant_text=VARIANT_TEXT.replace("\n", "\\n"))
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def spec_of(root: Path, **changes: str) -> JudgeSpec:
    project = judge_project(root, seal=False, card_text=card_text(**changes))
    spec = load_card(project.card_path(CARD_ID), project).scoring
    assert isinstance(spec, JudgeSpec)
    return spec


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


@pytest.mark.parametrize(("old", "new", "says"), [
    ("Description: <<{{output}}>>", "Description: <<{{output}}>> {{variant}}",
     "field 'scoring.prompt.user': unknown slot {{variant}} — the judge never sees which variant"),
    ("Description: <<{{output}}>>", "Description: none",
     "field 'scoring.prompt.user': expected the slot {{output}} exactly once, found 0"),
    ("  judgements: 3\n", "  judgements: 1\n  agreement_floor: 0.5\n",
     "field 'scoring.agreement_floor': a floor on the judge's agreement with itself needs judgements: 2"),
    ("scale: pass_fail", "scale: {min: 5, max: 1}",
     "field 'scoring.scale': expected pass_fail, {pass: \"Yes\", fail: \"No\"}"),
    ("scale: pass_fail", "scale: {pass: Yes, fail: No}", "(quote them: YAML reads an unquoted Yes or No as true"),
    ("scale: pass_fail", "scale: {pass: yes, fail: YES}", "field 'scoring.scale': expected two different words"),
    ("answer: final_line", "answer: regex", "field 'scoring.answer': expected final_line, json or bare"),
    ("rig: {provider: judge, model: test/judge}", "rig: {provider: judge}",
     "field 'scoring.rig.model': missing; expected text"),
])
def test_bad_judge_fields_are_one_line_errors(tmp_path: Path, old: str, new: str, says: str) -> None:
    judge_project(tmp_path, seal=False, card_text=card_text(**{old: new}))
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 1
    assert f"cards/{CARD_ID}.yaml:" in result.output and says in result.output, result.output


def test_the_judge_prompt_is_blind(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    echo = f"Sure. {VARIANT_TEXT.strip()} A RED tomato."
    blinded = blind_output(echo, [VARIANT_TEXT, ""])
    assert blinded.removed == 1 and VARIANT_TEXT.strip() not in blinded.text
    messages = judge_messages(spec, blinded.text, "a ripe tomato", '{"colour": "red"}')
    text = json.dumps(messages, ensure_ascii=False)
    assert "Sure. […] A RED tomato." in text and "a ripe tomato" in text and "colour" in text
    assert "GRADE: <PASS or FAIL>" in text
    # an output holding a slot stays text: one pass, so it cannot pull the key in a second time
    messages = judge_messages(spec, "see {{key}}", "", "SECRET-KEY")
    assert messages[1]["content"].count("SECRET-KEY") == 1 and "see {{key}}" in messages[1]["content"]


def test_the_answer_parser_is_strict(tmp_path: Path) -> None:
    spec = spec_of(tmp_path)
    assert read_answer(spec, "Reasoning here.\nGRADE: pass\n") == {"score": 1.0}
    for bad in ("GRADE: PASS.", "GRADE: PASS\nthanks", "grade pass", "", "GRADE: maybe"):
        with pytest.raises(UnreadableAnswer):
            read_answer(spec, bad)
    criteria = spec_of(tmp_path / "c", **{
        "rubric: The description names the fruit's colour as the key states it.":
            "rubric: [{id: colour, ask: Names the colour.}, {id: short, ask: One sentence.}]",
        "scale: pass_fail": "scale: {min: 1, max: 5}", "answer: final_line": "answer: json"})
    got = read_answer(criteria, '```json\n{"colour": 5, "short": 2, "reason": "ok"}\n```')
    assert got == {"score": 0.625, "criterion.colour": 1.0, "criterion.short": 0.25}
    for bad in ('{"colour": 5}', '{"colour": 6, "short": 1}', '{"colour": 5, "short": 1, "extra": 1}',
                '{"colour": 4.5, "short": 1}', 'Here: {"colour": 5, "short": 1}'):
        with pytest.raises(UnreadableAnswer):
            read_answer(criteria, bad)


def test_a_bare_answer_with_declared_words(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, **{"scale: pass_fail": "scale: {pass: \"Yes\", fail: \"No\"}",
                                "answer: final_line": "answer: bare"})
    assert read_answer(spec, " Yes.\n") == {"score": 1.0} and read_answer(spec, "no") == {"score": 0.0}
    for bad in ("No, it does not.", "Yes!", "PASS", "Yes. No.", ""):
        with pytest.raises(UnreadableAnswer):
            read_answer(spec, bad)
    assert "Reply with only Yes or No, nothing else." in judge_messages(spec, "x", "", "")[1]["content"]


def test_win_rule_may_name_a_criterion(tmp_path: Path) -> None:
    text = card_text(**{
        "rubric: The description names the fruit's colour as the key states it.":
            "rubric: [{id: colour, ask: Names the colour.}]",
        "{metric: score, test: rises}": "{metric: criterion.colour, test: rises}",
        "judge_answers: \"GRADE: PASS\"": "judge_answers: \"colour: PASS\"",
        "[\"It does not say.\\nGRADE: FAIL\", \"GRADE: fail\"]": "\"colour: FAIL\""})
    judge_project(tmp_path, seal=False, card_text=text)
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 0, result.output
    judge_project(tmp_path, seal=False, card_text=text.replace("criterion.colour", "criterion.taste"))
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 1 and "unknown metric 'criterion.taste'" in result.output


def test_a_probe_judge_may_not_ask_for_fixture_or_key(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "p.yaml").write_text("""\
id: p
version: 1
kind: probe
title: t
rig: {provider: fake, model: m}
params: {max_tokens: 5}
prompt: {user: Say hi.}
scoring:
  method: judge
  rig: {provider: judge, model: j}
  params: {max_tokens: 5}
  scale: pass_fail
  rubric: Says hi.
  prompt: {user: "{{rubric}} {{key}} {{output}} {{format}}"}
examples: [{label: a, output: hi, expect: pass, judge_answers: "GRADE: PASS"}]
history: [{version: 1, note: n}]
""")
    result = bc(project.root, "check", "p")
    assert result.exit_code == 1 and "a probe has no fixtures or keys" in result.output


def test_krippendorff_alpha_reproduces_the_published_worked_example() -> None:
    """Krippendorff (2011), 4 coders × 12 units with missing values: nominal 0.743, interval 0.849."""
    from benchcard.verdict.reliability import krippendorff_alpha

    nan = float("nan")
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
              [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    units = [list(u) for u in zip(*coders, strict=True)]
    assert round(krippendorff_alpha(units, "nominal") or 0, 3) == 0.743
    assert round(krippendorff_alpha(units, "interval") or 0, 3) == 0.849
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no disagreement to expect: undefined, not 1
    assert krippendorff_alpha([[1], [0]]) is None  # no unit judged twice
