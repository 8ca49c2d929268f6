"""Cards and benchcard.yaml as a hostile or careless user writes them: every bad file is one line, at once."""

from __future__ import annotations

import inspect
import re
import signal
import sys
from datetime import date, datetime
from pathlib import Path

import pytest
import yaml

from benchcard._util import yamlread
from benchcard.errors import CardError

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project

BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))


def _card(root: Path, text: str) -> None:
    (root / "cards" / "tiny-ab.yaml").write_text(text, encoding="utf-8")


def test_an_alias_bomb_in_a_card_is_refused_at_once(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace("rubric:", "l0: &l0 [lol, lol]\n" + BOMB + "rubric:", 1)
          if "rubric:" in AB_CARD else "l0: &l0 [lol, lol]\n" + BOMB + AB_CARD)
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "cards/tiny-ab.yaml" in line and "aliases" in line


def test_an_alias_bomb_in_benchcard_yaml_is_refused(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "benchcard.yaml").write_text("l0: &l0 [lol, lol]\n" + BOMB, encoding="utf-8")
    line = one_line_error(bc(root, "curl", "tiny-ab"))
    assert "benchcard.yaml" in line and "aliases" in line


def test_an_oversized_card_is_refused(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD + "# " + "x" * (2 << 20) + "\n")
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "cards/tiny-ab.yaml" in line and "at most" in line


def test_a_key_written_twice_is_an_error_not_last_wins(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace("repetitions: 3\n", "repetitions: 3\nrepetitions: 30\n"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "field 'repetitions'" in line and "written twice" in line
    assert line.startswith("error: cards/tiny-ab.yaml:")


def test_a_lone_surrogate_in_a_card_is_one_line(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace("title: Does saying please", 'title: "\\ud800 Does saying please'
                                ).replace("change the answer?\nquestion", 'change the answer?"\nquestion', 1))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "field 'title'" in line and "surrogate" in line


@pytest.mark.parametrize(("where", "char"), [("cards/tiny-ab.yaml", "\x00"), ("cards/tiny-ab.yaml", "\x07"),
                                           ("benchcard.yaml", "\x01")])
def test_a_control_character_yaml_does_not_allow_is_one_line_naming_its_line(tmp_path: Path, where: str,
                                                                              char: str) -> None:
    """PyYAML refuses NUL and most C0 controls before it parses (a ReaderError): the line names file and line."""
    root = make_ab_project(tmp_path / "proj")
    text = AB_CARD if where.startswith("cards") else "providers: {}\n"
    (root / where).write_text(text.replace("\n", f"\n# a stray {char} here\n", 1), encoding="utf-8")
    line = one_line_error(bc(root, "curl", "tiny-ab"))
    assert line.startswith(f"error: {where}:2: malformed YAML: character #x{ord(char):04x} is not allowed")


@pytest.mark.parametrize("text", ["a: " + "[" * 200_000, "a:\n" + "".join(" " * i + "- \n" for i in range(2000))])
def test_deeply_nested_yaml_is_one_line(tmp_path: Path, text: str) -> None:
    root = make_ab_project(tmp_path / "proj")
    _card(root, text)
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "cards/tiny-ab.yaml" in line


def test_a_card_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "cards" / "tiny-ab.yaml").write_bytes(AB_CARD.encode("utf-8").replace(b"Name the", b"Name \xff the"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "cards/tiny-ab.yaml" in line and "not UTF-8" in line


@pytest.mark.parametrize(("old", "new", "field"), [
    ("repetitions: 3", "repetitions: 0", "repetitions"),
    ("temperature: 0.7", "temperature: .nan", "params.temperature"),
    ("temperature: 0.7", "temperature: .inf", "params.temperature"),
    ("  alpha: 0.05\n", "  alpha: 0.05\n  allow_failed: -1\n", "win.allow_failed"),
])
def test_silent_coercions_are_errors(tmp_path: Path, old: str, new: str, field: str) -> None:
    root = make_ab_project(tmp_path / "proj")
    assert old in AB_CARD
    _card(root, AB_CARD.replace(old, new))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert f"field '{field}'" in line


@pytest.mark.parametrize(("variants", "read_as"), [
    ('{baseline: "", yes: "Please.\\n"}', "true/false"),
    ('{baseline: "", 1: "Please.\\n", 1.0: "Kindly.\\n"}', "a number"),
    ('{baseline: "", 2026-01-01: "Please.\\n"}', "a date"),
    ('{baseline: "", ~: "Please.\\n"}', "null"),
])
def test_a_key_yaml_reads_as_another_type_is_one_line_not_a_traceback(tmp_path: Path, variants: str,
                                                                       read_as: str) -> None:
    """YAML 1.1 reads an unquoted yes/no/on/off, a number, a date or ~ as a key of that type: canonical JSON
    could not sort the card (a traceback), and 1 and 1.0 are one key, so one variant vanished silently."""
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace('variants: {baseline: "", A: "Please.\\n"}', f"variants: {variants}"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line.startswith("error: cards/tiny-ab.yaml:15: field 'variants.")
    assert f"YAML reads this key as {read_as}" in line and "quote it" in line


@pytest.mark.parametrize("where", ["cards/tiny-ab.yaml", "benchcard.yaml"])
def test_an_alias_inside_its_own_anchor_is_one_line_at_once(tmp_path: Path, where: str) -> None:
    """`&x [*x]` is a list holding itself: the walk went one level deeper at every step, copying a longer path
    each time, so `seal` ran for hours before the 200,000-value bound could stop it."""
    root = make_ab_project(tmp_path / "proj")
    text = AB_CARD if where.startswith("cards") else "providers: {}\n"
    (root / where).write_text(text + "loop: &x [*x]\n", encoding="utf-8")

    def too_slow(signum: int, frame: object) -> None:
        raise TimeoutError("still reading the YAML after 20 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        line = one_line_error(bc(root, "curl", "tiny-ab"))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert line.startswith(f"error: {where}:") and "nested more than" in line and "its own anchor" in line


def test_a_text_read_again_is_not_parsed_again_and_each_reader_gets_its_own_copy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A card is read by several steps of one command (and a test process reads the same cards hundreds of times):
    the second read of a text gives the same data and lines without composing it again, and what one reader
    changes in its data never reaches the next."""
    text = AB_CARD + "# read twice\n"
    first, first_lines = yamlread.load_yaml(text, "cards/one.yaml", CardError)
    made: list[str] = []
    monkeypatch.setattr(yaml, "SafeLoader", lambda stream: made.append(stream))  # a parse would now fail
    first["title"] = "changed by its reader"
    first_lines.clear()
    again, again_lines = yamlread.load_yaml(text, "cards/two.yaml", CardError)
    assert made == []
    monkeypatch.undo()
    fresh, fresh_lines = yamlread._parsed(text, "cards/three.yaml", CardError)
    assert again == fresh and again_lines == fresh_lines and again["title"] != "changed by its reader"


def test_a_refused_text_is_refused_every_time_naming_each_file() -> None:
    """Only what parsed is kept: the same bad text read as two files names each file in its own line."""
    text = AB_CARD.replace("repetitions: 3\n", "repetitions: 3\nrepetitions: 30\n")
    for source in ("cards/one.yaml", "cards/two.yaml"):
        with pytest.raises(CardError, match=rf"^{re.escape(source)}:[0-9]+: field 'repetitions': written twice"):
            yamlread.load_yaml(text, source, CardError)


def test_a_kept_text_too_deep_to_copy_is_read_as_if_never_kept() -> None:
    """The copy of a kept text recurses: where the stack has no room for it, the text is parsed again and says
    what a first read says there (not a RecursionError)."""
    text = "a: " + "[" * 90 + "]" * 90 + "\n"
    nested: list[object] = []
    for _ in range(89):
        nested = [nested]
    assert yamlread.load_yaml(text, "cards/deep.yaml", CardError)[0] == {"a": nested}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 120)
    try:
        with pytest.raises(CardError) as kept:
            yamlread.load_yaml(text, "cards/deep.yaml", CardError)
        with pytest.raises(CardError) as fresh:
            yamlread._parsed(text, "cards/deep.yaml", CardError)
    finally:
        sys.setrecursionlimit(limit)
    assert str(kept.value) == str(fresh.value) == "cards/deep.yaml: malformed YAML: nested too deeply"


@pytest.mark.parametrize(("date", "why"), [("2026-02-30", "day is out of range for month"),
                                           ("2026-13-01", "month must be in 1..12"),
                                           ("2026-12-04 25:00:00", "hour must be in 0..23")])
def test_a_date_the_calendar_has_not_is_one_line(tmp_path: Path, date: str, why: str) -> None:
    """`date: 2026-02-30` in a history entry (or any field) ended `check` in PyYAML's ValueError traceback: YAML 1.1
    reads it as a date, and constructing it fails outside PyYAML's own errors."""
    root = make_ab_project(tmp_path / "proj")
    old = "  - {version: 1, note: Initial version.}"
    assert old in AB_CARD
    _card(root, AB_CARD.replace(old, f"  - {{version: 1, note: Initial version., date: {date}}}"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line.startswith("error: cards/tiny-ab.yaml:") and (
        f"field 'history.0.date': YAML reads {date} as a date, and there is no such date ({why}); write a date of "
        "the calendar, or quote it for text") in line, line


@pytest.mark.parametrize("written", ["1" + "0" * 308, "9" * 5000, "-" + "9" * 5000, "0" + "7" * 5000])
def test_an_integer_no_float_holds_is_one_line(tmp_path: Path, written: str) -> None:
    """`repetitions:` with 5,000 digits ended in PyYAML's ValueError (Python reads at most 4,300 digits) and one of
    309 passed the reader to end in an OverflowError wherever it became a float: each is the field's one line."""
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace("repetitions: 3", f"repetitions: {written}"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    digits = len(written.lstrip("-"))
    assert line.startswith("error: cards/tiny-ab.yaml:") and (
        f"field 'repetitions': an integer of {digits:,} digits; expected a number of at most 308 digits") in line


def test_a_long_number_written_for_text_is_told_to_quote_it(tmp_path: Path) -> None:
    """Review (review23b): a worked example's output of 2**1024 written plain (309 digits) was told 'quote it' before
    the digit limit, and after it only 'expected a number of at most 308 digits', wrong for a field that is text."""
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace("output: red,", f"output: {2**1024},"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert "an integer of 309 digits; expected a number of at most 308 digits" in line, line
    assert line.endswith("or quote it for text"), line


@pytest.mark.parametrize(("old", "new", "said"), [
    ("repetitions: 3", "repetitions: 010", "field 'repetitions': YAML 1.1 reads 010 as the number 8 (octal); write 8"),
    ("repetitions: 3", "repetitions: 1:30", "field 'repetitions': YAML 1.1 reads 1:30 as the number 90 (base 60)"),
    ("max_tokens: 50", "max_tokens: 0x40", "field 'params.max_tokens': YAML 1.1 reads 0x40 as the number 64 "
                                           "(hexadecimal)"),
    ("  alpha: 0.05\n", "  alpha: 0.05\n  allow_failed: 1_0\n", "field 'win.allow_failed': YAML 1.1 reads 1_0 as "
                                                                 "the number 10; write 10"),
    ("temperature: 0.7", "temperature: 7e-1", "field 'params.temperature': expected a number, got text ('7e-1'; "
                                              "YAML 1.1 reads it as text, write 0.7)"),
    ("max_tokens: 50", "max_tokens: 1e3", "field 'params.max_tokens': expected a whole number, got text ('1e3'; "
                                          "YAML 1.1 reads it as text, write 1000.0)"),
])
def test_a_number_yaml_1_1_reads_otherwise_than_it_looks_is_one_line(tmp_path: Path, old: str, new: str,
                                                                      said: str) -> None:
    """`repetitions: 010` ran 8 repetitions, `1:30` 90 and `1_0` allowed 10 failed cells, silently (YAML 1.1's
    octal, base 60 and underscores); `7e-1` is text to YAML 1.1, and the error said 'expected a int'."""
    root = make_ab_project(tmp_path / "proj")
    assert old in AB_CARD
    _card(root, AB_CARD.replace(old, new))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line.startswith("error: cards/tiny-ab.yaml:") and said in line


BLOCK_END = ("malformed YAML: expected <block end>, but found '<scalar>'; likely text after a closing quote (quote a "
             "value holding quotes with the other mark: 'a \"b\" c'), a quote opened above and never closed, or a line "
             "indented as no field is")


@pytest.mark.parametrize(("slip", "said"), [
    (("title: Does saying please change the answer?", 'title: "Does saying "please" change the answer?"'),
     f":5: {BLOCK_END}"),
    (("title: Does saying please change the answer?", 'title: "Does saying please change the answer?'),
     f":15: {BLOCK_END}"),
    (("question: Does saying please change the answer?", "question: Please: does it change the answer?"),
     ":6: malformed YAML: mapping values are not allowed here; likely a value holding ': ' that is not quoted, or a "
     "line indented too far"),
    (("  user: |-\n", "  user: |-\n\t"), ":13: malformed YAML: found character '\\t' that cannot start any token; "
                                        "likely a tab indenting a line (YAML indents with spaces only)"),
], ids=["quote-in-quotes", "open-quote", "colon", "tab"])
def test_a_card_authors_slip_is_told_its_likely_cause(tmp_path: Path, slip: tuple[str, str], said: str) -> None:
    """PyYAML says where a card stopped parsing, in its own words ('expected <block end>, but found
    '<scalar>''); the line also names the slip that most often makes each, so a newcomer knows what to change."""
    root = make_ab_project(tmp_path)
    _card(root, AB_CARD.replace(*slip))
    assert f"  error: cards/tiny-ab.yaml{said}\n" in bc(root, "check", "tiny-ab").output


@pytest.mark.parametrize(("written", "said"), [
    ("!!timestamp x", "the tag !!timestamp on a value"), ("!!bool maybe", "the tag !!bool on a value"),
    ("!!null x", "the tag !!null on a value"), ("!!int abc", "the tag !!int on a value"),
    ("!!set {a, b}", "the tag !!set on a mapping"), ("!!binary aGk=", "the tag !!binary on a value"),
    ("!mine 3", "the tag !mine on a value"),
    ("0x_", "YAML 1.1 reads 0x_ as a number, and it has no digits to read"),
    ("!!int 0b_", "YAML 1.1 reads 0b_ as a number, and it has no digits to read"),
])
def test_a_tag_or_a_number_yaml_cannot_construct_is_one_line(tmp_path: Path, written: str, said: str) -> None:
    """`repetitions: !!timestamp x`, `!!bool maybe` and `0x_` ended `check` in PyYAML's ValueError or KeyError
    traceback; `!!null x` was read as a field left out, and `!!int abc` said 'reads abc as the number abc'."""
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace("repetitions: 3", f"repetitions: {written}"))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line.startswith("error: cards/tiny-ab.yaml:") and f"field 'repetitions': {said}" in line, line


def test_a_tagged_value_in_benchcard_yaml_is_not_repeated(tmp_path: Path) -> None:
    """Review (review23b): a header value tagged as another tool writes its secrets (`!secret`, `!!binary`) was
    said back in the tag's line ('the tag !secret on \'Bearer sk-…\''), a key in an error; PyYAML's own line,
    before the tag check, named only the tag. The line names the file, the field and the tag, never the value."""
    from benchcard.errors import ProviderError

    text = "providers:\n  p: {type: openai, headers: {Authorization: !secret Bearer sk-live-0123456789}}\n"
    with pytest.raises(ProviderError) as raised:
        yamlread.load_yaml(text, "benchcard.yaml", ProviderError)
    assert "sk-live" not in str(raised.value)
    assert str(raised.value).startswith("benchcard.yaml:2: field 'providers.p.headers.Authorization': the tag !secret "
                                        "on a value;"), raised.value


def test_a_tag_that_reads_as_written_is_kept() -> None:
    """`!!str 3` is a quote, `!!int 3` the number it reads as: neither changes the value, and both are taken."""
    data, _ = yamlread.load_yaml("a: !!str 3\nb: !!int 3\nc: !!map {d: !!seq [1]}\n", "x.yaml", CardError)
    assert data == {"a": "3", "b": 3, "c": {"d": [1]}}


def test_a_float_tag_on_a_whole_number_is_kept() -> None:
    """Review (review23b): `top_p: !!float 1` was read as 1.0 before the tag check, and after it refused as a tag
    'that makes a value another type': a whole number written as a float is the same number."""
    data, _ = yamlread.load_yaml("a: !!float 1\nb: !!float -2\n", "x.yaml", CardError)
    assert data == {"a": 1.0, "b": -2.0} and isinstance(data["a"], float)


@pytest.mark.parametrize("written", ["=", "<<"])
def test_a_bare_equals_sign_is_told_to_quote_it(tmp_path: Path, written: str) -> None:
    """Review (tail23a): `expected: =` (an exact answer that is an equals sign) said 'malformed YAML: could not
    determine a constructor for the tag 'tag:yaml.org,2002:value'': YAML 1.1 reads a bare `=` as its value key,
    and `<<` as its merge key, neither of which PyYAML's safe loader makes. The line names the file, line and
    field and says to quote it, as YAML 1.1's other surprises are told; quoted, the card checks."""
    from ..helpers_project import copy_project

    root = copy_project(tmp_path / "proj", ("one-word-sentiment",))
    card = root / "cards" / "one-word-sentiment.yaml"
    text = card.read_text(encoding="utf-8")
    assert "  expected: negative\n" in text
    card.write_text(text.replace("  expected: negative\n", f"  expected: {written}\n"), encoding="utf-8")
    line = one_line_error(bc(root, "seal", "one-word-sentiment"))
    key = "value" if written == "=" else "merge"
    assert line == (f"error: cards/one-word-sentiment.yaml:32: field 'scoring.expected': a bare {written} is not "
                    f"text to YAML 1.1 (it reads it as its {key} key, which no field holds); quote it ('{written}')")
    data, _ = yamlread.load_yaml(f"expected: '{written}'\n", "x.yaml", CardError)
    assert data == {"expected": written}


def _secret_everywhere(path: tuple[str, ...]) -> bool:
    return True


@pytest.mark.parametrize(("written", "hidden", "shown"), [
    ("0x_", "a number (hexadecimal)", "YAML 1.1 reads 0x_ as a number, and it has no digits to read; write the "
                                      "number, or quote it for text"),
    ("0x5f3a", "a number (hexadecimal)", "YAML 1.1 reads 0x5f3a as the number 24378 (hexadecimal); write 24378"),
    ("017", "a number (octal)", "YAML 1.1 reads 017 as the number 15 (octal); write 15"),
    ("1:20:30", "a number (base 60)", "YAML 1.1 reads 1:20:30 as the number 4830 (base 60); write 4830"),
    ("1_000.5", "a number", "YAML 1.1 reads 1_000.5 as the number 1000.5; write 1000.5"),
    ("2026-02-30", "a date", "YAML reads 2026-02-30 as a date, and there is no such date (day is out of range for "
                             "month); write a date of the calendar"),
    ("9" * 5000, "a number", "an integer of 5,000 digits; expected a number of at most 308 digits"),
])
def test_a_number_or_date_misread_is_named_by_what_yaml_read_and_said_back_only_where_no_secret_is(
        written: str, hidden: str, shown: str) -> None:
    """One reading of a number or a date (yamlread._misread) serves both lines: a field that may hold a secret is
    told what YAML read (a number, its base; a date) and never the value, a card's field is told the value and
    what to write. A whole number past Python's 4,300 digits reads as nothing: where it may be a secret it is
    'a number', elsewhere its count of digits."""
    text = f"a: {written}\n"
    with pytest.raises(CardError) as secret:
        yamlread.load_yaml(text, "x.yaml", CardError, _secret_everywhere)
    assert str(secret.value) == (f"x.yaml:1: field 'a': YAML 1.1 reads this value as {hidden}, not as text (not "
                                 "shown: the field may hold a secret); quote it")
    with pytest.raises(CardError) as card:
        yamlread.load_yaml(text, "x.yaml", CardError)
    assert str(card.value).startswith(f"x.yaml:1: field 'a': {shown}"), card.value


@pytest.mark.parametrize("written", ["1" + "0" * 400, "2026-12-07", "1.5", ".inf", "1e3", "0", "-12"])
def test_a_number_or_date_read_as_written_is_left_to_the_fields_own_check(written: str) -> None:
    """A plain number or a date the calendar has passes the reader where a secret may be (the field's own check
    names its type: `project.check_headers`); a plain integer of 401 digits is refused by its count alone."""
    text = f"a: {written}\n"
    if len(written) > yamlread.MAX_INT_DIGITS:
        with pytest.raises(CardError, match=r"^x\.yaml:1: field 'a': an integer of 401 digits;"):
            yamlread.load_yaml(text, "x.yaml", CardError, _secret_everywhere)
        return
    data, _ = yamlread.load_yaml(text, "x.yaml", CardError, _secret_everywhere)
    assert data == yaml.safe_load(text)


@pytest.mark.parametrize(("value", "words"), [
    (True, "true/false"), (3, "a number"), (2.5, "a number"), (date(2026, 12, 7), "a date"),
    (datetime(2026, 12, 7, 10, 20), "a date"), (None, "null"), ([1], "a list"), ({"a": 1}, "a mapping"),
    ("x", "text"),
])
def test_what_a_value_read_as_is_said_in_a_users_words(value: object, words: str) -> None:
    assert yamlread.read_as(value) == words


TAG_LINE = ("values are written as themselves (text, a number, true/false, a list, a mapping): drop the tag, or quote "
            "the text")
MERGE_LINE = ("a merge key (<<) takes a mapping or a list of mappings (`<<: *name`, the alias of a mapping written "
              "`&name` above), got {got}; merge a mapping, or quote '<<' for a key named so")


@pytest.mark.parametrize(("old", "new", "said"), [
    ("repetitions: 3", "repetitions: !!merge x", f":18: field 'repetitions': the tag !!merge on a value; {TAG_LINE}"),
    ("repetitions: 3", "repetitions:\n  <<: 1", f":19: field 'repetitions.<<': {MERGE_LINE.format(got='a number')}"),
    ("repetitions: 3", "repetitions:\n  <<: [1]",
     f":19: field 'repetitions.<<': {MERGE_LINE.format(got='a list holding a number')}"),
    ("repetitions: 3", "repetitions:\n  <<: [[1]]",
     f":19: field 'repetitions.<<': {MERGE_LINE.format(got='a list holding a list')}"),
    ("repetitions: 3", "repetitions:\n  <<:", f":19: field 'repetitions.<<': {MERGE_LINE.format(got='null')}"),
    ("baseline: baseline\n", "baseline: &b baseline\n", None),  # (an anchor on a value merges nothing: kept)
    ("repetitions: 3", "repetitions: &r 3\nparams2:\n  &m <<: *r",
     f":20: field 'params2.<<': {MERGE_LINE.format(got='a number')}"),
    ("repetitions: 3", "repetitions: !!binary aGk=",
     f":18: field 'repetitions': the tag !!binary on a value; {TAG_LINE}"),
    ("repetitions: 3", "repetitions: !!omap [a: 1]", f":18: field 'repetitions': the tag !!omap on a list; {TAG_LINE}"),
    ("repetitions: 3", "repetitions: !!pairs [a: 1]",
     f":18: field 'repetitions': the tag !!pairs on a list; {TAG_LINE}"),
    ("repetitions: 3", "repetitions: !!python/object:os.system x",
     f":18: field 'repetitions': the tag !!python/object:os.system on a value; {TAG_LINE}"),
    ("repetitions: 3", "repetitions: !foo 3", f":18: field 'repetitions': the tag !foo on a value; {TAG_LINE}"),
    ("repetitions: 3", "repetitions: !e!x 3",
     ":18: malformed YAML: found undefined tag handle; likely a value starting with '!' (a tag to YAML) that is not "
     "quoted"),
    ("params: {max_tokens: 50, temperature: 0.7}", "params: {max_tokens: 50, !!map x: 0.7}",
     f":9: field 'params.x': the tag !!map on a key; {TAG_LINE}"),
    ("params: {max_tokens: 50, temperature: 0.7}", "params: {max_tokens: 50, [t]: 0.7}",
     ":9: field 'params': a key that is a list; expected a name (text)"),
    ("params: {max_tokens: 50, temperature: 0.7}", "params: {max_tokens: 50, '<<': 1, '<<': 2}",
     ":9: field 'params.<<': written twice (also line 9); keep one"),
    ("repetitions: 3\n", "repetitions: 3\n---\nrepetitions: 4\n",
     ":19: malformed YAML: a second document starts here ('---' after the first); expected one document in the "
     "file: remove the line"),
    ("baseline: baseline\n", "baseline: &b baseline\nrepetitions2: &b 3\n",
     ":17: malformed YAML: an anchor (&name) set a second time (first on line 16); expected each anchor once: rename "
     "one, and the aliases (*name) that mean it"),
    ("baseline: baseline\n", "baseline: &b baseline\nrepetitions2: &y *b\n",
     ":17: malformed YAML: expected <block end>, but found '<alias>'; likely an alias (*name) given an anchor or a "
     "tag (an alias takes neither), or a value starting with '*' that is not quoted"),
    ("repetitions: 3", "repetitions: *", ":18: malformed YAML: an anchor (&) or an alias (*) with no name; likely a "
                                         "value starting with '&' or '*' that is not quoted"),
    ("title: Does saying please change the answer?", 'title: "Does \\d saying please change the answer?"',
     ":5: malformed YAML: found unknown escape character; likely a backslash in double-quoted text, where it "
     "starts an escape (\\n, \\\"): write \\\\ for a backslash, or quote the text with ' instead"),
    ("title: Does saying please", "title: Does\tsaying please",
     ":5: malformed YAML: found character '\\t' that cannot start any token; likely a tab outside quotes (YAML 1.1 "
     "takes one only in quoted text or a | block): write a space, or quote the text"),
    ("title: Does saying", "title: Does\u2028saying",
     ":6: malformed YAML: could not find expected ':'; likely the line break U+2028 on line 5, which an editor shows "
     "as none and YAML reads as the end of a line: remove it"),
    ("id: tiny-ab", "\ufeffid: tiny-ab", None),  # a byte-order mark at the start: an editor's "UTF-8 with BOM"
])
def test_each_yaml_construct_pyyaml_refuses_is_our_one_line(tmp_path: Path, old: str, new: str,
                                                             said: str | None) -> None:
    """Review (left24b): `!!merge x`, a merge key given no mapping (`<<: 1`), a key that is a list, two documents, an
    anchor set twice, an escape double quotes do not know, a tag handle no %TAG declares, an anchor or alias with no
    name: each reached the user as PyYAML's own words ('could not determine a constructor for the tag
    …merge', 'expected a mapping or list of mappings for merging', 'found unhashable key', 'but found another
    document', 'second occurrence'), some with a wrong likely cause; a quoted '<<' written twice kept the last,
    silently. Each is now one line naming the file, the line and what was expected."""
    assert old in AB_CARD
    text = AB_CARD.replace(old, new, 1)
    root = make_ab_project(tmp_path / "proj")
    _card(root, text)
    if said is None:
        assert bc(root, "check", "tiny-ab").exit_code == 0
        return
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert line.startswith(f"error: cards/tiny-ab.yaml{said}"), line


@pytest.mark.parametrize(("written", "said"), [
    ("headers: {!Xy9SECRET Authorization: v}", "field 'providers.p.headers': a key starting with '!', which YAML "
                                               "reads as a tag (not shown: the field may hold a secret)"),
    ('headers: {Authorization: "Bearer \\qSECRET"}', "malformed YAML: found unknown escape character; likely"),
    ("headers: {Authorization: &$SECRET}", "malformed YAML: an anchor (&) or an alias (*) with no name; likely"),
    ("headers: {Authorization: !e!SECRET x}", "malformed YAML: found undefined tag handle; likely"),
    ("headers: {<<: !SECRET x}", "field 'providers.p.headers.<<': a merge key (<<) takes a mapping or a list of "
                                 "mappings (`<<: *name`, the alias of a mapping written `&name` above), got a value"),
])
def test_a_yaml_slip_where_a_secret_may_be_says_no_part_of_it(written: str, said: str) -> None:
    """Review (left24b): a header key written with a tag of one's own was named by its tag ('YAML reads a key here
    as !Xy9…'), and PyYAML's words quoted the letter after a backslash and the character after an empty anchor:
    each is now its one line, naming what YAML met and none of what was written."""
    from benchcard.errors import ProviderError
    from benchcard.project import may_hold_secret

    text = f"providers:\n  p:\n    type: openai\n    {written}\n"
    with pytest.raises(ProviderError) as raised:
        yamlread.load_yaml(text, "benchcard.yaml", ProviderError, may_hold_secret)
    assert str(raised.value).startswith(f"benchcard.yaml:4: {said}"), raised.value
    assert "SECRET" not in str(raised.value) and "$" not in str(raised.value)


@pytest.mark.parametrize(("char", "name"), [
    ("\x85", "U+0085 NEXT LINE (NEL)"), ("\u2028", "U+2028 LINE SEPARATOR"), ("\u2029", "U+2029 PARAGRAPH SEPARATOR"),
    ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE (a byte-order mark)")])
@pytest.mark.parametrize("quote", ['"', "'", ""])
def test_an_invisible_break_or_mark_inside_a_value_is_one_line(tmp_path: Path, char: str, name: str,
                                                                quote: str) -> None:
    """Inside quotes, U+2028 and U+2029 were kept in the value and U+0085 folded into a space, and a byte-order
    mark was kept quoted or not: a variant's text, which the model receives, changed where no reader of the card
    sees it. Each is now refused in one line naming the file, the field, the character and where it stands, as the
    three breaks were already outside quotes (where YAML reads them as the end of a line); a byte-order mark at the
    file's start is an editor's "UTF-8 with BOM" and is read as before."""
    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace('variants: {baseline: "", A: "Please.\\n"}',
                                f'variants:\n  baseline: ""\n  A: {quote}Please{char} say it.{quote}', 1))
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    if quote or char == "\ufeff":
        assert line == (f"error: cards/tiny-ab.yaml:17: field 'variants.A': the invisible character {name} at line "
                        f"17, column {12 + len(quote)} (an editor shows nothing there; YAML reads it into the "
                        f"value); remove it, or write it as the escape \"\\u{ord(char):04x}\" in double quotes "
                        "where it is meant")
    else:  # outside quotes a break ends the line, as before
        assert f"likely the line break {name.split(' ')[0]} on line 17, which an editor shows as none" in line


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029", "\ufeff"])
def test_the_same_character_written_as_an_escape_is_read(tmp_path: Path, char: str) -> None:
    """Written as a double-quoted escape the character shows in the card, and the value holds it."""
    from benchcard.card.load import load_card
    from benchcard.project import Project

    root = make_ab_project(tmp_path / "proj")
    _card(root, AB_CARD.replace('A: "Please.\\n"', f'A: "Please.\\u{ord(char):04x}"', 1))
    assert bc(root, "check", "tiny-ab").exit_code == 0
    card = load_card(root / "cards" / "tiny-ab.yaml", Project(root))
    assert card.variants["A"] == f"Please.{char}"


def test_an_invisible_character_in_benchcard_yaml_is_one_line_without_the_value(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "benchcard.yaml").write_text(
        "providers:\n  p:\n    type: openai\n    base_url: 'http://127.0.0.1:9/v1'\n    headers:\n"
        "      X-Route: 'eu\u2028SECRET-1'\n", encoding="utf-8")
    line = one_line_error(bc(root, "curl", "tiny-ab"))
    assert line == ("error: benchcard.yaml:6: field 'providers.p.headers.X-Route': the invisible character U+2028 LINE "
                    "SEPARATOR at line 6, column 19 (an editor shows nothing there; YAML reads it into the value); "
                    "remove it, or write it as the escape \"\\u2028\" in double quotes where it is meant")
    assert "SECRET" not in line
