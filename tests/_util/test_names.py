"""A name reads as what it is, and two names of one set never read the same."""

from __future__ import annotations

import pytest

from benchcard._util.names import (
    differ_by,
    folded,
    length_problem,
    name_clash,
    name_problem,
    one_file_on,
    path_length_problem,
    shown,
    skeleton,
    visible,
)


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



@pytest.mark.parametrize(("a", "b", "where"), [
    ("Invoice", "invoice", "macOS and Windows"), ("\u03c3", "\u03c2", "macOS and Windows"),  # σ and final ς
    ("caf\u00e9", "cafe\u0301", "macOS"), ("CAF\u00c9", "cafe\u0301", "macOS"),
])
def test_names_one_file_on_a_folding_disk_share_a_fold(a: str, b: str, where: str) -> None:
    assert folded(a) == folded(b) and one_file_on(a, b) == where
    assert differ_by(a, b) == ("case" if where == "macOS and Windows" else "Unicode form")


@pytest.mark.parametrize(("a", "b"), [("stra\u00dfe", "strasse"), ("f1", "f2"), ("\u0130", "i")])
def test_names_two_files_on_every_disk_do_not_share_a_fold(a: str, b: str) -> None:
    """ß is no ss, nor İ an i, on macOS and Windows: they fold letter by letter (Unicode's simple folding)."""
    assert folded(a) != folded(b)


def test_a_name_or_path_too_long_for_a_clone_elsewhere_is_said_in_bytes_and_characters() -> None:
    assert length_problem("a" * 128) is None and path_length_problem("p/" * 100) is None
    assert length_problem("a" * 129) == "is 129 bytes long (UTF-8); expected at most 128 (128 ASCII letters)"
    assert length_problem("\u00e9" * 65) == ("is 130 bytes long (UTF-8); expected at most 128 (128 ASCII letters, "
                                            "fewer letters beyond ASCII)")
    assert (path_length_problem("p" * 201) or "").startswith("is 201 characters long; expected at most 200")
