"""The Unicode form in which answers and replies are compared, and the answers that would not read as written.

One text may be stored in two forms that show alike: "é" composed (NFC, one character, what keyboards and models
write) or decomposed (NFD, "e" and a combining accent, what macOS gives a file name copied from the Finder). The
`exact` and `fields` scorers compared them as different text, so an answer key pasted in NFD scored the usual
reply as wrong. A seal made since 2026-12-08 records `unicode: nfc` (`NFC_RULE`, covered by its root): its scorers
compare both sides in NFC. A seal without it keeps its byte comparison (`ExactSpec.nfc`/`FieldsSpec.nfc` False,
set by `card/load.py`), so the scores of every run already made stay as taken. Rules match as JavaScript does, on
the text as it is, in both.

A seal made since 2026-12-08 (score25) also records `whitespace: js` (`JS_SPACE_RULE`): `exact`'s `trim` (and the
`fields` scorer's ends of a reply) removes what JavaScript's `String.prototype.trim` removes, the ECMAScript
WhiteSpace and LineTerminator characters (`JS_SPACE`), which the rules follow. Python's `str.strip` removes a
different set: it keeps U+FEFF (a byte-order mark a reply may open with, invisible) and removes U+001C–U+001F and
U+0085, which JavaScript keeps. A seal without it trims as Python does (`ExactSpec.js_trim` False).

`answer_problems` says, for `check` and `seal`, what in an answer a careful user would not see: a form the
scorer does not normalise (NFD under a seal compared byte for byte, or in a rule), and characters that look
like others but compare as themselves (a no-break or other space, a zero-width or other format character, a
full-width letter or digit).
"""

from __future__ import annotations

import unicodedata

from benchcard._util.names import hidden_chars

#: The text rule a seal records (`unicode`) since 2026-12-08: answers and replies compared in NFC.
NFC_RULE = "nfc"
#: The trim rule a seal records (`whitespace`) since 2026-12-08 (score25): JavaScript's `trim`.
JS_SPACE_RULE = "js"
#: The JSON rule a seal records (`json_keys`) since 2026-12-08 (score25): a key a `fields` reply writes twice in one
#: object gives all its values, where `json.loads` kept only the last (`{"parties": "Acme Ltd", "parties": "Beta
#: plc"}` read as Beta plc alone: the Acme Ltd the reply named was not found).
ALL_KEYS_RULE = "all"
#: What JavaScript's `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator): tab, line
#: tabulation, form feed, U+FEFF, the Zs category (space, no-break space, U+1680, U+2000–U+200A, U+202F, U+205F,
#: U+3000), line feed, carriage return, U+2028 and U+2029 (tests/scoring/test_textform.py checks the Zs part
#: against this Python's Unicode database).
JS_SPACE = ("\t\v\f\ufeff \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
            + "\n\r\u2028\u2029")


def compared(text: str, nfc: bool) -> str:
    """`text` in the form a scorer compares it: NFC under the rule, else as it is."""
    return unicodedata.normalize("NFC", text) if nfc else text


def trimmed(text: str, js: bool) -> str:
    """`text` without the white space at its ends: JavaScript's set under the rule (`JS_SPACE`), else Python's."""
    return text.strip(JS_SPACE) if js else text.strip()


def _lookalike(text: str, spaces: bool) -> str | None:
    """The first character of `text` that looks like another or like nothing, said; None when there is none.
    `spaces`: whether a space other than U+0020 counts (the fields scorer reads every space as one)."""
    for ch in text:
        name = unicodedata.name(ch, "UNASSIGNED")
        if ch in hidden_chars(ch) and ch not in "\n\t":
            return f"U+{ord(ch):04X} {name}, which shows as nothing but is compared as itself"
        if spaces and ch.isspace() and ch not in " \n\t\r":
            return f"U+{ord(ch):04X} {name}, which looks like a space but is compared as itself"
        if 0xFF01 <= ord(ch) <= 0xFF5E:
            return (f"U+{ord(ch):04X} {name}, which looks like {chr(ord(ch) - 0xFEE0)!r} but is compared as "
                    "itself")
    return None


def answer_problems(text: str, *, normalised: bool, spaces: bool = True) -> list[str]:
    """What in an answer's `text` a reply typed as it reads would not match, each as a phrase after "the answer
    'x' holds …" or "is …": a form other than NFC where the scorer does not normalise (`normalised` False), and a
    look-alike character (`spaces`: whether a space other than U+0020 is one)."""
    problems = []
    if not normalised and not unicodedata.is_normalized("NFC", text):
        problems.append("is not in NFC, the composed form replies use (it is decomposed, NFD, as text copied "
                        "from a macOS file name is)")
    lookalike = _lookalike(text, spaces)
    if lookalike is not None:
        problems.append(f"holds {lookalike}")
    return problems
