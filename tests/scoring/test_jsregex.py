"""The rules scorer must match as JavaScript does, where Python's `re` would answer differently."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess

import pytest

from benchcard.scoring.jsregex import compile_js


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
        # Case folding as JavaScript does it: U+017F (long s) and U+212A (Kelvin) fold to s and k only with u.
        (r"/\b(positive|negative)\b/i", "positive\u017f", True),
        (r"/^positives$/iu", "positive\u017f", True),
        (r"/k/i", "\u212a", False),
        (r"/k/iu", "\u212a", True),
        # Lookbehind of any length, property escapes, the v flag's set operations.
        (r"/(?<=a+)b/", "aaab", True),
        (r"/(?<!a+)b/", "aaab", False),
        (r"/^\p{Lu}/u", "\xc9cole", True),
        (r"/[\p{L}--[a-z]]/v", "abc", False),
        (r"/[\p{L}--[a-z]]/v", "abC", True),
        # Astral characters: one character with u, two UTF-16 units without (a documented difference, below).
        (r"/^.$/u", "\U0001f600", True),
        # A lone surrogate (a JavaScript string may hold one) is matched, not an error.
        (r"/^red/", "red \ud800", True),
        (r"/\ud800/", "\ud800", False),
        # Negated shorthands inside a class keep JavaScript's sets: U+0085 and U+001C are not JS whitespace.
        (r"/<<END>>[\s\S]*<<END>>/", "<<END>>\x85<<END>>", True),
        (r"/^[\S]$/", "\x1c", True),
        (r"/[\W]/", "é", True),
        (r"/[\D]/", "\u0663", True),
        (r"/[^\W]/", "é", False),
        (r"/[^\W]/", "a", True),
        (r"/[a\d]/", "7", True),
        (r"/[^\s\d]/", " 7", False),
        (r"/[^\s\d]/", " 7x", True),
        (r"/[\w-]+$/", "a-b", True),
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
        (r"/\p{NoSuchProperty}/u", "does not compile"),
        ("/a/uv", "u and v together"),
    ],
)
def test_bad_literals_are_explained(literal: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compile_js(literal)


def test_the_published_rules_agree_with_javascript_on_odd_whitespace() -> None:
    """A repeated terminator separated by NEL must still fail terminator_appears_once."""
    assert compile_js(r"/<<END>>[\s\S]*<<END>>/").test("summary\n<<END>>\x85<<END>>")


def _node() -> str:
    """node, the reference JavaScript engine; CI must have it (a missing node fails there, never skips)."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed: the differential test against JavaScript cannot run")
        pytest.skip("needs node to compare with a real JavaScript engine")
    return node


def _node_answers(patterns: list[str], texts: list[str]) -> list[list[bool]]:
    """Each pattern's `test` on each text, as node's RegExp answers (texts go as JSON, lone surrogates kept)."""
    script = (
        "const [pats, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = pats.map(p => { const m = p.match(/^\\/(.*)\\/([a-z]*)$/s); const r = new RegExp(m[1], m[2]);"
        " return texts.map(t => r.test(t)); });"
        "process.stdout.write(JSON.stringify(out));"
    )
    payload = json.dumps([patterns, texts])  # ASCII with \u escapes: a lone surrogate survives the pipe
    result = subprocess.run([_node(), "-e", script], input=payload, capture_output=True, text=True, check=True)
    answers: list[list[bool]] = json.loads(result.stdout)
    return answers


# Beyond the shipped rules: the constructs where engines part (case folding, lookbehind, \p{…}, the v flag).
EXTRA_PATTERNS = [
    r"/\b(positive|negative)\b/i", r"/^(positive|negative)$/i", r"/^positive.$/iu", r"/k/i", r"/k/iu",
    r"/(?<=- )\w+/", r"/(?<!\d+)COUNT/", r"/(?<=^|\n)- [A-Z]/", r"/\p{Lu}/u", r"/^\P{L}*$/u",
    r"/\p{Emoji_Presentation}/u", r"/[\p{L}--[a-z]]/v", r"/^[\w&&[a-f]]+$/v", r"/[\q{END|ok}]/v",
    r"/^\s*$/", r"/\bEND\b/", r"/.\n?$/", r"/^.$/su", r"/^..?$/u",
]


def test_every_shipped_rule_matches_like_node() -> None:
    """Differential test: every rule of every card, and the patterns above, against JavaScript's own RegExp on
    awkward inputs (odd whitespace, long s, Kelvin, astral characters, lone surrogates)."""
    import yaml

    from ..helpers_project import REPO

    patterns = []
    for card in sorted((REPO / "cards").glob("*.yaml")):
        for rule in yaml.safe_load(card.read_text()).get("scoring", {}).get("rules", []):
            patterns.append(rule.get("must_match") or rule.get("must_not_match"))
    patterns += EXTRA_PATTERNS
    pieces = ["<<END>>", "END-7731", "BEGIN-7731", "COUNT: 3", "CHECKSUM: 6", "- Jupiter", "- Saturn", "- Uranus",
              "pluto", "Sure", "here's", "positive", "negative", "red", "é", "\n", "\r", "\r\n", "\u2028", "\x85",
              "\x1c", "\ufeff", "\xa0", " ", ".", "\"", "'", "3", "\u0663", "A", "\u017f", "\u212a", "K", "k", "s",
              "\U0001f600", "\U0001d49c", "\ud800", "\udfff", "ok"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(400)]
    texts += ["positive\u017f", "\u212a", "\U0001f600", "\ud800"]
    expected = _node_answers(patterns, texts)
    for pattern, answers in zip(patterns, expected, strict=True):
        regex = compile_js(pattern)
        wrong = [t for t, want in zip(texts, answers, strict=True) if regex.test(t) is not want]
        assert not wrong, f"{pattern} differs from JavaScript on {wrong[:3]!r}"


def test_the_documented_differences_from_node_hold() -> None:
    """The two places docs/cards.md says regress and JavaScript part, both without the u or v flag: an astral
    character is two UTF-16 units to JavaScript and one character to regress; and JavaScript's `i` never folds a
    letter beyond ASCII to an ASCII one, while regress folds U+017F (long s) to `s`, U+0131 (dotless i) to `i` and,
    in a class, the Kelvin sign to `k`. If a regress release changes either, this test says the page is out
    of date. (The shipped rules meet neither: the differential test above runs them on both kinds of text.)"""
    cases = [(r"/^.$/", "\U0001f600"), (r"/^..$/", "\U0001f600"), (r"/^positives$/i", "positive\u017f"),
             (r"/^positives$/iu", "positive\u017f"), (r"/^i$/i", "\u0131"), (r"/^[a-z]$/i", "\u212a"),
             (r"/^[a-z]$/iu", "\u212a"), (r"/^i$/iu", "\u0131")]
    node = [answers[i] for i, answers in
            enumerate(_node_answers([p for p, _ in cases], [t for _, t in cases]))]
    ours = [compile_js(p).test(t) for p, t in cases]
    assert node == [False, True, False, True, False, False, True, False]
    assert ours == [True, False, True, True, True, True, True, False]
