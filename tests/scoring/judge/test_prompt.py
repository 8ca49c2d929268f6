"""The prompt the judge is shown: blind to the variant (its echoes removed), slots filled once, the answer form said."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from benchcard.card.reader import read_card
from benchcard.scoring.judge import blind_output, judge_messages

from ...helpers_judge import CARD_ID, VARIANT_TEXT, card_text, judge_project, spec_of


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


def test_the_answer_form_told_to_the_judge_matches_each_answer_kind(tmp_path: Path) -> None:
    criteria = "rubric: [{id: colour, ask: Names the colour.}, {id: short, ask: One sentence.}]"
    rubric = "rubric: The description names the fruit's colour as the key states it."
    lines = spec_of(tmp_path / "a", **{rubric: criteria, "scale: pass_fail": "scale: {min: 1, max: 5}"})
    user = judge_messages(lines, "out")[1]["content"]
    assert ("End your reply with these 2 lines, in this order and nothing after them:\n"
            "colour: <a whole number from 1 to 5>\nshort: <a whole number from 1 to 5>") in user
    assert "Rubric: - colour: Names the colour.\n- short: One sentence." in user
    as_json = spec_of(tmp_path / "b", **{"answer: final_line": "answer: json"})
    assert ('Reply with only one JSON object, nothing before or after it: {"grade": <PASS or FAIL>, '
            '"reason": "<one sentence>"}.') in judge_messages(as_json, "out")[1]["content"]


def test_short_variant_lines_are_not_blinded_and_the_whole_block_goes_before_its_lines() -> None:
    variant = "Please.\nMention the colour of the fruit explicitly.\n"
    blinded = blind_output("Please. Mention the colour of the fruit explicitly. Then: red", [variant])
    assert blinded.text == "Please. […] Then: red" and blinded.removed == 1
    whole = blind_output("Please.\nMention the colour of the fruit explicitly. Red.", [variant])
    assert whole.text == "[…] Red." and whole.removed == 1
    assert blind_output("red", [variant, ""]) == type(blinded)("red", 0)


def test_a_judge_prompt_sealed_before_the_escape_reads_a_backslash_as_text(tmp_path: Path) -> None:
    """A version sealed before the escape (`Card.slot_escapes`, `card.load`) sends `C:\\{{output}}` as `C:\\` and the
    output, and counts `\\{{key}}` as its key slot, as it did; since, `C:\\\\{{output}}` does so and `\\{{key}}` is
    text."""
    project = judge_project(tmp_path, seal=False, card_text=card_text())
    path = project.card_path(CARD_ID)
    old = read_card(path.read_text(encoding="utf-8"), "cards/judged-ab.yaml", project, path, escapes=False)
    assert old.judge_spec is not None and not old.judge_spec.escapes
    then = dataclasses.replace(old.judge_spec, user=r"C:\{{output}} {{rubric}} \{{key}}")
    assert then.uses_key and judge_messages(then, "out", "", "KEY")[1]["content"].startswith(r"C:\out ")
    now = dataclasses.replace(then, user=r"C:\\{{output}} {{rubric}} \{{key}}", escapes=True)
    assert not now.uses_key
    user = judge_messages(now, "out", "", "KEY")[1]["content"]
    assert user.startswith(r"C:\out ") and user.endswith("{{key}}")
