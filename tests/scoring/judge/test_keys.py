"""A judge card's answer keys: every fixture's JSON object, a missing or malformed one named by its file, and the key
shown to the judge as one line of JSON with its non-ASCII text kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.errors import CardError
from benchcard.records.answerkey import AnswerKey
from benchcard.scoring.judge.keys import key_text, load_judge_keys


def keys_for(tmp_path: Path, **keys: str) -> tuple[Path, dict[str, Path]]:
    folder = tmp_path / "keys" / "card"
    folder.mkdir(parents=True)
    for fixture, text in keys.items():
        (folder / f"{fixture}.json").write_text(text, encoding="utf-8")
    return folder, {name: tmp_path / "fixtures" / f"{name}.txt" for name in keys}


def test_every_fixture_gets_its_key(tmp_path: Path) -> None:
    folder, fixtures = keys_for(tmp_path, b='{"colour": "green"}', a='{"colour": "red", "notes": ["crème"]}')
    keys = load_judge_keys(folder, fixtures)
    assert {f: k.body for f, k in keys.items()} == {"a": {"colour": "red", "notes": ["crème"]},
                                                    "b": {"colour": "green"}}
    assert (keys["a"].fixture, keys["a"].source) == ("a", str(folder / "a.json"))


def test_a_missing_key_names_its_file_and_fixture(tmp_path: Path) -> None:
    folder, fixtures = keys_for(tmp_path, a='{"colour": "red"}')
    fixtures["b"] = tmp_path / "fixtures" / "b.txt"
    with pytest.raises(CardError, match=r"keys/card/b\.json: missing answer key for fixture 'b' \(the judge's "
                                        r"prompt has \{\{key\}\}\)$"):
        load_judge_keys(folder, fixtures)


@pytest.mark.parametrize(("text", "says"), [('["red"]', "expected a JSON object, got list"),
                                            ('"red"', "expected a JSON object, got str"),
                                            ('{"colour": ', "not valid JSON")])
def test_a_key_that_is_not_a_json_object_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    folder, fixtures = keys_for(tmp_path, a=text)
    with pytest.raises(CardError, match=r"keys/card/a\.json: ") as caught:
        load_judge_keys(folder, fixtures)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_the_key_text_is_one_line_of_json_with_non_ascii_kept() -> None:
    shown = key_text(AnswerKey("a", "k", {"colour": "rouge foncé", "n": [1, 2]}))
    assert shown == '{"colour": "rouge foncé", "n": [1, 2]}'
    assert key_text(AnswerKey("a", "k", {"text": "two\nlines"})) == '{"text": "two\\nlines"}'
    assert key_text(None) == ""


def test_a_key_named_but_for_its_case_is_refused(tmp_path: Path) -> None:
    """macOS and Windows open a.json for fixture A; the seal lists the folder and would not cover it."""
    folder, _ = keys_for(tmp_path, a='{"colour": "red"}')
    with pytest.raises(CardError, match=r"keys/card/a\.json: named for fixture 'A' but for its case; expected "
                                        r"'A\.json' exactly"):
        load_judge_keys(folder, {"A": tmp_path / "fixtures" / "A.txt"})
