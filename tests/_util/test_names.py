"""A name reads as what it is, and two names of one set never read the same."""

from __future__ import annotations

import pytest

from benchcard._util.names import name_clash, name_problem, shown, skeleton, visible


@pytest.mark.parametrize(("name", "phrase"), [
    ("plain\u200b", "invisible or control character (U+200B ZERO WIDTH SPACE)"),
    ("\u202eplain", "bidirectional control character (U+202E RIGHT-TO-LEFT OVERRIDE)"),
    ("pla\u2066in", "bidirectional control character (U+2066 LEFT-TO-RIGHT ISOLATE)"),
    ("plain\u200f", "bidirectional control character (U+200F RIGHT-TO-LEFT MARK)"),
    ("pl\u034fain", "invisible or control character (U+034F COMBINING GRAPHEME JOINER)"),
    ("plain\ufe0f", "invisible or control character (U+FE0F VARIATION SELECTOR-16)"),
    ("\u3164", "invisible or control character (U+3164 HANGUL FILLER)"),
    ("pla\tin", "invisible or control character (U+0009"),
    ("plain\u00a0", "whitespace other than a plain space (U+00A0)"),
    ("plain ", "begins or ends with a space"),
    ("two  spaces", "two in a row"),
    ("\uff50lain", "not in Unicode normal form (NFKC); write it as 'plain'"),
    ("ﬁnal", "write it as 'final'"),
])
def test_a_name_that_does_not_read_as_written_is_named(name: str, phrase: str) -> None:
    problem = name_problem(name)
    assert problem is not None and phrase in problem


@pytest.mark.parametrize("name", ["plain", "A", "with-rubric", "Säure", "é", "résumé v2", "日本語", "μ-law"])
def test_ordinary_names_pass(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(("a", "b"), [
    ("plain", "pl\u0430in"),      # Cyrillic a
    ("A", "\u0391"),              # Greek capital alpha
    ("ex-01", "ex-0l"),           # one and l
    ("ex-01", "ex-O1"),           # zero and O
    ("rubric", "rubr\u0456c"),    # Cyrillic i
    ("modern", "rnodern"),        # m and rn
    ("a-b", "a\u2013b"),          # en dash
    ("COPY", "\u0421\u041e\u0420\u0423"),  # all Cyrillic
])
def test_look_alikes_share_a_skeleton_and_clash(a: str, b: str) -> None:
    assert skeleton(a) == skeleton(b)
    assert name_clash(["baseline", a, b]) == (a, b, "read the same")


def test_distinct_names_do_not_clash_and_are_shown_with_escapes() -> None:
    assert name_clash(["baseline", "A", "B", "a", "with-rubric", "plain"]) is None
    assert name_clash(["plain", "plain"]) is None  # the same name twice is not two names
    assert shown("plain") == "'plain'" and shown("pl\u0430in") == "'plаin' ('pl\\u0430in')"


def test_visible_writes_what_does_not_show_as_its_escape_and_the_rest_as_it_is() -> None:
    assert visible("a\x1b[2J\u202eb\u200b\U000e0001 é ש\ud800") == "a\\x1b[2J\\u202eb\\u200b\\U000e0001 é ש\\ud800"
    assert visible("gpt-4o-2024-08-06") == "gpt-4o-2024-08-06"


def test_a_skeleton_reads_a_run_of_spaces_as_one_and_keeps_case() -> None:
    assert skeleton("no  hint") == skeleton("no hint") == skeleton(" no\thint ")
    assert skeleton("A") != skeleton("a")  # a card's A and a are two names

