"""The rules scorer must match as JavaScript does, where Python's `re` would answer differently."""

from __future__ import annotations

import pytest

from benchcard.errors import CardError
from benchcard.jsregex import compile_js, compile_rule


@pytest.mark.parametrize(
    ("literal", "text", "expected"),
    [
        # `$` without m: only at the very end in JavaScript; Python's `$` would also match before a final "\n".
        (r"/END$/", "END\n", False),
        (r"/END\s*$/", "END\n", True),
        (r"/END$/", "END", True),
        (r"/END$/m", "END\nmore", True),
        (r"/END$/", "END\nmore", False),
        # `^` without m: only at the start of the input.
        (r"/^B/", "A\nB", False),
        (r"/^B/m", "A\nB", True),
        (r"/^B/m", "A\rB", True),
        # `.` excludes every line terminator unless s is set.
        (r"/a.b/", "a\rb", False),
        (r"/a.b/", "a\u2028b", False),
        (r"/a.b/s", "a\nb", True),
        (r"/a.b/", "a-b", True),
        # \d, \w and \b are ASCII in JavaScript.
        (r"/\d/", "\u0663", False),
        (r"/\w/", "é", False),
        (r"/\bcafé\b/", "café!", False),
        (r"/\bcaf/", "café", True),
        # \s includes U+FEFF and NBSP in JavaScript.
        (r"/^\s+$/", "\ufeff\xa0", True),
        # i flag.
        (r"/pluto/i", "PLUTO", True),
        (r"/pluto/", "PLUTO", False),
        # Identity escapes and the escaped slash.
        (r"/a\/b/", "a/b", True),
        (r"/\A/", "A", True),
        # Named groups and back references in JavaScript syntax.
        (r"/(?<w>ab)\k<w>/", "abab", True),
        # [^] matches anything, [] matches nothing.
        (r"/a[^]b/", "a\nb", True),
        (r"/a[]b/", "ab", False),
        # y (sticky) anchors at the start for test() with lastIndex 0.
        (r"/b/y", "ab", False),
        (r"/a/y", "ab", True),
        # \u{...} needs the u flag.
        (r"/\u{1F600}/u", "\U0001f600", True),
        (r"/\u0041/", "A", True),
    ],
)
def test_matches_like_javascript(literal: str, text: str, expected: bool) -> None:
    assert compile_js(literal).test(text) is expected


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("pluto", "expected a JavaScript regex literal"),
        ("/pluto/x", "unknown flag"),
        ("/pluto/ii", "repeated flag"),
        ("/(unclosed/", "does not compile"),
        ("/a[b/", "expected a JavaScript regex literal"),
        (r"/\p{L}/u", "not supported"),
    ],
)
def test_bad_literals_are_explained(literal: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compile_js(literal)


def test_card_error_names_file_and_rule() -> None:
    with pytest.raises(CardError) as info:
        compile_rule("/(a/", source="cards/x.yaml", field="scoring.rules.0.must_match")
    assert str(info.value).startswith("cards/x.yaml: field 'scoring.rules.0.must_match': ")
