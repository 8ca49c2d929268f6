"""ECMAScript `/pattern/flags` run with JavaScript semantics on Python's `re`.

The published probe pages state their rules as JavaScript literals, and `re` disagrees with JavaScript in
places that decide a score: `$` without `m` matches before a final newline in Python but only at the very end
in JavaScript; `.` excludes `\\r`, U+2028 and U+2029 in JavaScript; `\\d`, `\\w` and `\\b` are ASCII there.
The pattern is rewritten token by token so that `re` behaves as JavaScript would.
Known gap: case-insensitive matching uses Python's case folding, which differs from JavaScript's for a handful of
non-ASCII letters (for example U+017F without the `u` flag).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchcard.errors import CardError

_LINE_TERMINATORS = "\\n\\r\\u2028\\u2029"
_JS_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_WORD = "A-Za-z0-9_"
_WORD_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_WORD_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"

# Escapes that mean the same in both engines, copied through unchanged.
_SAME_ESCAPES = set("nrtfv") | set("123456789")
_CLASS_ESCAPES_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_JS_SPACE}]",
    "S": f"[^{_JS_SPACE}]",
}
_CLASS_ESCAPES_INSIDE = {"d": "0-9", "w": _WORD, "s": _JS_SPACE}
_NEGATED_SETS = {"D": "0-9", "W": _WORD, "S": _JS_SPACE}
_FLAGS = set("dgimsuyv")
_LITERAL = re.compile(r"^/(?P<body>(?:\\.|\[(?:\\.|[^\]\\])*\]|[^/\\\[\n])+)/(?P<flags>[a-z]*)$", re.S)


@dataclass(frozen=True)
class JsRegex:
    """A compiled ECMAScript literal; `test` answers as JavaScript's `RegExp.prototype.test` would."""

    source: str
    flags: str
    compiled: re.Pattern[str]

    def test(self, text: str) -> bool:
        if "y" in self.flags:
            return self.compiled.match(text) is not None
        return self.compiled.search(text) is not None


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
    return m.group("body"), flags


def compile_js(literal: str) -> JsRegex:
    """Compile `/pattern/flags`; a pattern JavaScript or this translation cannot take raises ValueError."""
    body, flags = parse_literal(literal)
    translated = translate(body, flags)
    py_flags = re.IGNORECASE if "i" in flags else 0
    try:
        compiled = re.compile(translated, py_flags)
    except re.error as exc:
        raise ValueError(f"pattern {literal} does not compile: {exc}") from None
    return JsRegex(source=body, flags=flags, compiled=compiled)


def compile_rule(literal: str, *, source: str, field: str) -> JsRegex:
    """`compile_js` for a card: a bad pattern becomes a CardError naming the file and the rule."""
    try:
        return compile_js(literal)
    except ValueError as exc:
        raise CardError(f"{source}: field '{field}': {exc}") from None


def translate(body: str, flags: str) -> str:
    """Rewrite an ECMAScript pattern body into a Python pattern with the same meaning."""
    multiline, dotall = "m" in flags, "s" in flags
    unicode_mode = "u" in flags or "v" in flags
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if i + 1 >= len(body):
                raise ValueError("pattern ends with a lone backslash")
            piece, i = _escape(body, i + 1, False, unicode_mode)
            out.append(piece)
            continue
        if ch == "[":
            piece, i = _class(body, i, unicode_mode)
            out.append(piece)
            continue
        if ch == ".":
            out.append("[\\s\\S]" if dotall else f"[^{_LINE_TERMINATORS}]")
        elif ch == "^":
            out.append(f"(?:(?<=[{_LINE_TERMINATORS}])|\\A)" if multiline else "\\A")
        elif ch == "$":
            out.append(f"(?=[{_LINE_TERMINATORS}]|\\Z)" if multiline else "\\Z")
        elif ch == "(" and body.startswith("(?<", i) and not body.startswith(("(?<=", "(?<!"), i):
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _class(body: str, start: int, unicode_mode: bool) -> tuple[str, int]:
    """Translate the character class opening at `body[start]`; return the Python text and the next index.

    JavaScript's negated shorthands (`\\S`, `\\W`, `\\D`) inside a class cannot be written as Python class
    members without taking Python's Unicode meaning, so a class holding one becomes an alternation of its plain
    members and the negated JavaScript sets (and a negated class becomes "any character but that").
    """
    i = start + 1
    negated = body.startswith("^", i)
    if negated:
        i += 1
    if body.startswith("]", i):  # [] matches nothing, [^] anything
        return ("[\\s\\S]" if negated else "(?!)"), i + 1
    members: list[str] = []
    excluded: list[str] = []  # JavaScript sets whose complement is a member
    while i < len(body) and body[i] != "]":
        ch = body[i]
        if ch == "\\":
            if i + 1 >= len(body):
                raise ValueError("pattern ends with a lone backslash")
            letter = body[i + 1]
            if letter in _NEGATED_SETS:
                excluded.append(_NEGATED_SETS[letter])
                i += 2
                continue
            piece, i = _escape(body, i + 1, True, unicode_mode)
            members.append(piece)
            continue
        members.append("\\[" if ch == "[" else ch)
        i += 1
    if i >= len(body):
        raise ValueError("unterminated character class")
    plain = "".join(members)
    if not excluded:
        return f"[{'^' if negated else ''}{plain}]", i + 1
    options = ([f"[{plain}]"] if plain else []) + [f"[^{js_set}]" for js_set in excluded]
    union = "(?:" + "|".join(options) + ")"
    return (f"(?:(?!{union})[\\s\\S])" if negated else union), i + 1


def _escape(body: str, i: int, in_class: bool, unicode_mode: bool) -> tuple[str, int]:
    """Translate the escape whose letter is at `body[i]`; return the Python text and the next index."""
    ch = body[i]
    if ch in _CLASS_ESCAPES_OUTSIDE:
        table = _CLASS_ESCAPES_INSIDE if in_class else _CLASS_ESCAPES_OUTSIDE
        return table[ch], i + 1
    if ch == "b":
        return ("\\x08" if in_class else _WORD_BOUNDARY), i + 1
    if ch == "B" and not in_class:
        return _NOT_WORD_BOUNDARY, i + 1
    if ch in _SAME_ESCAPES:
        return "\\" + ch, i + 1
    if ch == "0":
        return "\\x00", i + 1
    if ch == "c" and i + 1 < len(body) and body[i + 1].isalpha():
        return f"\\x{ord(body[i + 1]) % 32:02x}", i + 2
    if ch == "x" and re.match(r"[0-9A-Fa-f]{2}", body[i + 1 : i + 3]):
        return "\\x" + body[i + 1 : i + 3], i + 3
    if ch == "u":
        braced = re.match(r"\{([0-9A-Fa-f]{1,6})\}", body[i + 1 :])
        if unicode_mode and braced:
            return f"\\U{int(braced.group(1), 16):08x}", i + 1 + braced.end()
        if re.match(r"[0-9A-Fa-f]{4}", body[i + 1 : i + 5]):
            return "\\u" + body[i + 1 : i + 5], i + 5
    if ch == "k" and body.startswith("<", i + 1):
        end = body.find(">", i)
        if end > 0:
            return f"(?P={body[i + 2 : end]})", end + 1
    if ch in "pP" and unicode_mode:
        raise ValueError("Unicode property escapes (\\p{...}) are not supported")
    if ch.isalnum() and unicode_mode:
        raise ValueError(f"invalid escape \\{ch} in unicode mode")
    # An identity escape: JavaScript matches the character itself (`\/`, `\.`, and `\A` means "A").
    return re.escape(ch), i + 1
