"""A judge card's `scoring` block read into a `JudgeSpec`: a bad field is one line naming file, field and what was
expected; the rubric's criteria become metrics a win rule may name; a probe's judge sees no fixture or key."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.card.reader import read_card
from benchcard.card.seal import seal
from benchcard.project import Project

from ...helpers_cli import bc
from ...helpers_judge import CARD_ID, card_text, judge_project


@pytest.mark.parametrize(("old", "new", "says"), [
    ("Description: <<{{output}}>>", "Description: <<{{output}}>> {{variant}}",
     "field 'scoring.prompt.user': unknown slot {{variant}} — the judge never sees which variant"),
    ("Description: <<{{output}}>>", "Description: <<{{output}}>> as {{ grade }}",
     "field 'scoring.prompt.user': unknown slot {{ grade }}; expected {{output}}, {{fixture}}, {{key}}, {{rubric}}, "
     "{{format}} (write \\{{ grade }} to send {{ grade }} as text)"),
    ("Description: <<{{output}}>>", "Description: <<{{output}}>> {{key.colour}}",
     "field 'scoring.prompt.user': unknown slot {{key.colour}}; expected {{output}}"),
    ("Description: <<{{output}}>>", "Description: \\{{output}}",
     "field 'scoring.prompt.user': expected the slot {{output}} exactly once, found 0"),
    ("Description: <<{{output}}>>", "Description: none",
     "field 'scoring.prompt.user': expected the slot {{output}} exactly once, found 0"),
    ("  judgements: 3\n", "  judgements: 1\n  agreement_floor: 0.5\n",
     "field 'scoring.agreement_floor': a floor on the judge's agreement with itself needs judgements: 2"),
    ("scale: pass_fail", "scale: {min: 5, max: 1}",
     "field 'scoring.scale': expected pass_fail, {pass: \"Yes\", fail: \"No\"}"),
    ("scale: pass_fail", "scale: {pass: Yes, fail: No}", "(quote them: YAML reads an unquoted Yes or No as true"),
    ("scale: pass_fail", "scale: {pass: yes, fail: YES}", "field 'scoring.scale': expected two different words"),
    ("scale: pass_fail", 'scale: {pass: "Yes\\n", fail: "No"}', "field 'scoring.scale': expected two different words"),
    ("answer: final_line", "answer: regex", "field 'scoring.answer': expected final_line, json or bare"),
    ("rig: {provider: judge, model: test/judge}", "rig: {provider: judge}",
     "field 'scoring.rig.model': missing; expected text"),
])
def test_bad_judge_fields_are_one_line_errors(tmp_path: Path, old: str, new: str, says: str) -> None:
    judge_project(tmp_path, seal=False, card_text=card_text(**{old: new}))
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 1
    assert f"cards/{CARD_ID}.yaml:" in result.output and says in result.output, result.output


def test_an_escaped_slot_passes_the_check_and_is_not_the_prompts_slot(tmp_path: Path) -> None:
    """`\\{{x}}` is text to the judge as to an ab prompt: an escaped unknown slot passes, an escaped `{{key}}`
    does not make the card read keys (`uses_key`)."""
    text = card_text(**{"Key: {{key}}": "Key: none. Answer as \\{{grade}} or \\{{variant}}, not \\{{key}}."})
    project = judge_project(tmp_path, seal=False, card_text=text)
    for key in (tmp_path / "keys" / CARD_ID).iterdir():
        key.unlink()  # a judge whose prompt reads no key may have none
    result = bc(tmp_path, "check", CARD_ID)
    assert result.exit_code == 0, result.output
    spec = load_card(project.card_path(CARD_ID), project).judge_spec
    assert spec is not None and not spec.uses_key and spec.uses_fixture


def test_a_card_sealed_with_a_dotted_judge_slot_still_reads_with_a_warning(tmp_path: Path) -> None:
    """A judge's prompt sent `{{key.colour}}` to the judge as written before 2026-12-07: a version sealed so keeps
    its verdict, resume and status (`check` warns); an unsealed one is refused (above)."""
    text = card_text(**{"Key: {{key}}": "Key: {{key}} {{key.colour}}"})
    judge_project(tmp_path, seal=False, card_text=text)
    project = Project(tmp_path)
    path = project.card_path(CARD_ID)
    seal(read_card(text, f"cards/{CARD_ID}.yaml", project, path), project)  # as benchcard sealed it before
    said = (f"cards/{CARD_ID}.yaml:{text[:text.index('      Item:')].count(chr(10))}: field "
            "'scoring.prompt.user': unknown slot {{key.colour}}; expected {{output}}, {{fixture}}, {{key}}, "
            "{{rubric}}, {{format}} (write \\{{key.colour}} to send {{key.colour}} as text)")
    assert load_card(path, project).later_checks == (said,)
    again = bc(tmp_path, "check", CARD_ID)
    assert again.exit_code == 0 and f"warning: {said} (v1 was sealed before this check" in again.stdout, \
        again.output


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
