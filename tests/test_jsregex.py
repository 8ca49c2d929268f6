"""The rules scorer must match as JavaScript does, where Python's `re` would answer differently."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from benchcard.errors import CardError
from benchcard.scoring.jsregex import compile_js, compile_rule


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


@pytest.mark.parametrize(
    ("literal", "text", "expected"),
    [
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
def test_classes_with_negated_shorthands(literal: str, text: str, expected: bool) -> None:
    assert compile_js(literal).test(text) is expected


def test_the_published_rules_agree_with_javascript_on_odd_whitespace() -> None:
    """A repeated terminator separated by NEL must still fail terminator_appears_once."""
    assert compile_js(r"/<<END>>[\s\S]*<<END>>/").test("summary\n<<END>>\x85<<END>>")


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="needs node to compare with a real JavaScript engine")
def test_every_shipped_rule_matches_like_node() -> None:
    """Differential test: every rule of every card against JavaScript's own RegExp, on awkward inputs."""
    import yaml

    from .conftest import REPO

    patterns = []
    for card in sorted((REPO / "cards").glob("*.yaml")):
        for rule in yaml.safe_load(card.read_text()).get("scoring", {}).get("rules", []):
            patterns.append(rule.get("must_match") or rule.get("must_not_match"))
    pieces = ["<<END>>", "END-7731", "BEGIN-7731", "COUNT: 3", "CHECKSUM: 6", "- Jupiter", "- Saturn", "- Uranus",
              "pluto", "Sure", "here's", "positive", "negative", "red", "é", "\n", "\r", "\r\n", "\u2028", "\x85",
              "\x1c", "\ufeff", "\xa0", " ", ".", "\"", "'", "3", "\u0663", "A"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(400)]
    script = (
        "const [pats, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = pats.map(p => { const m = p.match(/^\\/(.*)\\/([a-z]*)$/s); const r = new RegExp(m[1], m[2]);"
        " return texts.map(t => r.test(t)); });"
        "process.stdout.write(JSON.stringify(out));"
    )
    assert NODE is not None
    result = subprocess.run([NODE, "-e", script], input=json.dumps([patterns, texts]), capture_output=True,
                            text=True, check=True)
    expected = json.loads(result.stdout)
    for pattern, answers in zip(patterns, expected, strict=True):
        regex = compile_js(pattern)
        wrong = [t for t, want in zip(texts, answers, strict=True) if regex.test(t) is not want]
        assert not wrong, f"{pattern} differs from JavaScript on {wrong[:3]!r}"
