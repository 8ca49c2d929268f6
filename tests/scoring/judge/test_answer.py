"""The judge's answer read strictly: anything but the declared form is unreadable, never a guessed grade."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.errors import UnreadableAnswer
from benchcard.records.rows import JudgeRequestRow, OutputRow, dumps_line
from benchcard.records.runreader import JudgeReader
from benchcard.scoring.judge import judge_messages, read_answer, read_judgements
from benchcard.testing.fakeserver import FakeServer

from ...helpers_judge import CARD_ID, ECHO, card_text, judge_project, spec_of


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
                '{"colour": 4.5, "short": 1}', 'Here: {"colour": 5, "short": 1}',
                '{"colour": 1, "short": 1, "colour": 5}', '{"colour": 5, "short": 5, "reason": "x", "reason": "y"}',
                '{"colour": 5, "short": 5, "reason": NaN}'):  # a key twice was read as its last, silently
        with pytest.raises(UnreadableAnswer):
            read_answer(criteria, bad)


def test_a_grade_is_a_whole_number_with_one_sign_or_none(tmp_path: Path) -> None:
    """`-2`, `+1`, `02` on a scale from -2 to 2 (the one reading of ASCII digits, `_util/text.ascii_int`, with the
    sign the judge may write); two signs, a sign alone or 19 digits is unreadable, never a guessed grade."""
    spec = spec_of(tmp_path, **{"scale: pass_fail": "scale: {min: -2, max: 2}"})
    assert [read_answer(spec, f"GRADE: {g}")["score"] for g in ("-2", "+1", "02", "-0", "2")] == [
        0.0, 0.75, 1.0, 0.5, 1.0]
    for bad in ("+-1", "--1", "-+1", "-", "+", "- 1", "1-", "0" * 18 + "1", "\u2212" "1"):
        with pytest.raises(UnreadableAnswer):
            read_answer(spec, f"GRADE: {bad}")


def test_a_bare_answer_with_declared_words(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, **{"scale: pass_fail": "scale: {pass: \"Yes\", fail: \"No\"}",
                                "answer: final_line": "answer: bare"})
    assert read_answer(spec, " Yes.\n") == {"score": 1.0} and read_answer(spec, "no") == {"score": 0.0}
    for bad in ("No, it does not.", "Yes!", "PASS", "Yes. No.", ""):
        with pytest.raises(UnreadableAnswer):
            read_answer(spec, bad)
    assert "Reply with only Yes or No, nothing else." in judge_messages(spec, "x", "", "")[1]["content"]


def test_each_outputs_judgements_in_order_none_where_unreadable_failed_or_not_made(tmp_path: Path) -> None:
    spec = spec_of(tmp_path / "p")
    run = tmp_path / "run"
    (run / "sealed").mkdir(parents=True)
    requests = [("j1", "o1", 0), ("j2", "o1", 1), ("j3", "o1", 2), ("j4", "o2", 0)]
    planned = [JudgeRequestRow(cell=c, output=o, judgement=k, fixture="f", provider="judge", url="http://x", body={})
               for c, o, k in requests]
    made = [OutputRow(cell="j1", fixture="f", status="ok", text="GRADE: pass"),
            OutputRow(cell="j2", fixture="f", status="failed"),
            OutputRow(cell="j3", fixture="f", status="ok", text="GRADE: maybe")]
    (run / "sealed" / "judge-requests.jsonl").write_bytes(b"".join(map(dumps_line, planned)))
    (run / "judge-outputs.jsonl").write_bytes(b"".join(map(dumps_line, made)))
    assert read_judgements(spec, JudgeReader(run)) == {"o1": [{"score": 1.0}, None, None], "o2": [None, None, None]}


def test_a_grade_of_thousands_of_digits_is_unreadable_not_a_traceback(tmp_path: Path, server: FakeServer,
                                                                       key: str) -> None:
    """A judge that repeats a digit ("GRADE: 1111…", 5,000 of them) made int() refuse past Python's 4,300-digit
    limit with a ValueError, so the run's judging ended in a traceback; it is an unreadable judgement now."""
    text = card_text(**{"scale: pass_fail": "scale: {min: 1, max: 5}", '"GRADE: PASS"': '"GRADE: 5"',
                        '["It does not say.\\nGRADE: FAIL", "GRADE: fail"]': '["GRADE: 1"]'})
    judge_project(tmp_path, server.base_url, fixtures=2, card_text=text)  # 2 variants × 2 fixtures × 2, 3 each
    server.configure({"replies": [{"match": "<<A RED", "replies_cycle": ["GRADE: 5", "GRADE: " + "1" * 5000]},
                                  {"match": "<<A tomato", "reply": "GRADE: 1"},
                                  {"match": "Mention the colour", "reply": ECHO}, {"match": "", "reply": "A tomato."}]})
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "run", CARD_ID])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "24 judgements (3 per ok output): 18 read as grades, 6 unreadable, 0 truncated, 0 failed" in result.output
    assert read_answer(spec_of(tmp_path / "spec", **{"scale: pass_fail": "scale: {min: 1, max: 5}"}),
                       "GRADE: 0000000005") == {"score": 1.0}


def test_a_grade_in_digits_other_than_ascii_is_unreadable(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Hostile audit 11: `GRADE: ٥` (an Arabic-Indic five) read as 5, since the pattern's \\d and int() take any
    script's digits; a grade is read in the digits 0-9 only, anything else an unreadable judgement."""
    text = card_text(**{"scale: pass_fail": "scale: {min: 1, max: 5}", '"GRADE: PASS"': '"GRADE: 5"',
                        '["It does not say.\\nGRADE: FAIL", "GRADE: fail"]': '["GRADE: 1"]'})
    judge_project(tmp_path, server.base_url, fixtures=2, card_text=text)
    server.configure({"replies": [{"match": "<<A RED", "replies_cycle": ["GRADE: 5", "GRADE: \u0665"]},
                                  {"match": "<<A tomato", "reply": "GRADE: 1"},
                                  {"match": "Mention the colour", "reply": ECHO}, {"match": "", "reply": "A tomato."}]})
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "run", CARD_ID])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "24 judgements (3 per ok output): 18 read as grades, 6 unreadable, 0 truncated, 0 failed" in result.output
    spec = spec_of(tmp_path / "spec", **{"scale: pass_fail": "scale: {min: 1, max: 5}"})
    for bad in ("GRADE: \u0663", "GRADE: \uff13", "GRADE: 0_3"):
        with pytest.raises(UnreadableAnswer):
            read_answer(spec, bad)
