"""ECMAScript `/pattern/flags` literals run by an ECMAScript engine (`regress`, Rust's implementation of the
ECMAScript regular expression grammar), so a rule means what it means in a browser.

The published probe pages state their rules as JavaScript literals. Python's `re` disagrees with JavaScript in
places that decide a score (`$` before a final newline, what `.`, `\\d`, `\\w`, `\\b` and `\\s` match, case
folding such as `ſ` and the Kelvin sign); `regress` implements JavaScript's rules, including lookbehind of any
length, `\\p{…}` property escapes and the `v` flag.

Where `regress` and JavaScript (node) still differ, both found by the differential test of
`tests/scoring/test_jsregex.py` and written down in docs/cards.md ("Rules and JavaScript"):

- a text holding a lone surrogate (a JavaScript string may; UTF-8 cannot) is matched with each lone surrogate
  read as U+FFFD, so only a pattern that names surrogates can see the difference;
- without the `u` or `v` flag, JavaScript sees a character outside the BMP (an emoji) as two UTF-16 units, and
  `regress` as one character: `/^.$/` matches "😀" here and not in JavaScript. With `u` or `v` they agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import regress

_FLAGS = set("dgimsuyv")
_ENGINE_FLAGS = set("imsuv")  # d, g and y change what exec/lastIndex report, not whether `test` matches from 0
_LITERAL = re.compile(r"^/(?P<body>(?:\\.|\[(?:\\.|[^\]\\])*\]|[^/\\\[\n])+)/(?P<flags>[a-z]*)$", re.S)


@dataclass(frozen=True)
class JsRegex:
    """A compiled ECMAScript literal; `test` answers as JavaScript's `RegExp.prototype.test` does from
    `lastIndex` 0."""

    source: str
    flags: str
    compiled: regress.Regex = field(compare=False, repr=False)

    def test(self, text: str) -> bool:
        try:
            found = self.compiled.find(text)
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 form (see the module docstring)
            found = self.compiled.find(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
        if found is None:
            return False
        # sticky: the match must start where the search does; the leftmost match starts at 0 if any does
        return "y" not in self.flags or found.range().start == 0


def parse_literal(literal: str) -> tuple[str, str]:
    """Split `/body/flags`; raise ValueError with what was expected."""
    m = _LITERAL.match(literal.strip())
    if not m:
        raise ValueError(f"expected a JavaScript regex literal like /pattern/flags, got {literal!r}")
    flags = m.group("flags")
    unknown = sorted(set(flags) - _FLAGS)
    if unknown:
        raise ValueError(f"unknown flag(s) {''.join(unknown)!r} in {literal!r}; JavaScript allows d g i m s u v y")
    if len(set(flags)) != len(flags):
        raise ValueError(f"repeated flag in {literal!r}")
    if "u" in flags and "v" in flags:
        raise ValueError(f"flags u and v together in {literal!r}; JavaScript allows one of them")
    return m.group("body"), flags


def compile_js(literal: str) -> JsRegex:
    """Compile `/pattern/flags`; a pattern JavaScript would refuse raises ValueError saying why."""
    body, flags = parse_literal(literal)
    try:
        compiled = regress.Regex(body, "".join(f for f in flags if f in _ENGINE_FLAGS))
    except regress.RegressError as exc:
        raise ValueError(f"pattern {literal} does not compile: {exc}") from None
    return JsRegex(source=body, flags=flags, compiled=compiled)
