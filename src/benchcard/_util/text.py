"""Text shown to people (pages, grading sheets, exported CSV) from text stored as it came (model replies).

A reply may hold a lone surrogate, which `outputs.jsonl` keeps losslessly as a JSON escape but which no UTF-8
file can hold: where such text is shown, each lone surrogate becomes U+FFFD, the replacement character. A CSV
cell a spreadsheet would run as a formula is written as text (`spreadsheet_text`, docs/security.md). Text that
could reorder what is around it on a page (a right-to-left letter or a bidi control) is isolated there
(`reorders`, `balanced_isolates`, used by the pages' `<bdi>`). Text printed to a terminal shows its control
and format characters as escapes (`terminal_text`): a ledger row edited by hand could otherwise clear the screen or
set the clipboard (ESC [2J, OSC 52) when `benchcard ledger` prints it, or with a bidi override make a line read as
other text (Trojan Source); but the joiners and tags an emoji is made of (a woman and a laptop joined, a
subdivision's flag) print as they are, so that a model's emoji answer reads as the emoji. One line printed for a
person (a table's cell, a report's line) also shows a newline,
a tab and Unicode's line separators as escapes (`terminal_line`). A character is escaped in one notation everywhere
but JSON, Python's (`escape`). A number written by a person or a
server is read in ASCII digits only (`ascii_int`, `ascii_decimal`): `int()` and `float()` also take '٣' and '1_2'.
A number in a name benchcard reads (a process id in a temporary's name, a list index in a field's path, a sample id
of another tool's log) is read by `ascii_int` too, of any length (`digits=None`): a 30-digit process id is a number
no process has, not text, and `str.isdigit()`, which those places used, also takes '²'. What a line quotes of a
server's words is `squeezed` to one line of a few hundred characters. A path in a command shown to be pasted is
`shell_path`: quoted, and never read as an option.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

import regress

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_FORMULA_STARTS = frozenset("=+-@\t\r")
# bidi classes that can move text other than themselves: right-to-left letters, Arabic numbers, the controls
_REORDERING = frozenset({"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
_ISOLATE_STARTS = frozenset("\u2066\u2067\u2068")
_ISOLATE_END = "\u2069"
# C0 controls but the tab and the newline, DEL, and the C1 controls (U+009B is a one-character CSI); a lone
# surrogate, which no terminal's encoding can write (a ledger row edited to hold `"\ud800"` was a traceback); and
# every format character (category Cf, Unicode 15): the bidi embeddings, overrides, isolates and marks (U+202A-202E,
# U+2066-2069, U+200E, U+200F, U+061C), which make a line read as other text (Trojan Source), the zero-width ones
# (U+200B-200D, U+2060, U+FEFF), the soft hyphen, the tags (U+E0001, U+E0020-E007F); test_text checks the list
# against the running Python's unicodedata
_FORMAT = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
           "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
           "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
_TERMINAL_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_FORMAT}]")
# the format characters an emoji is made with (UTS #51): a zero-width joiner between two pictographs, each of which
# may carry the emoji presentation selector and a skin tone, and the tags after a black flag that name a
# subdivision whose flag is drawn (the recommended ones, RGI: England, Scotland, Wales), ended by the cancel tag.
# Any other tags, a subdivision's name of CLDR's (`usca`, `ignore` has its form) included, are drawn as a black flag
# alone: text no one sees ("ASCII smuggling"), shown
_ZWJ = re.compile("\u200d")
_DRAWN_SUBDIVISIONS = "|".join("".join(chr(0xE0000 + ord(c)) for c in name) for name in ("gbeng", "gbsct", "gbwls"))
_TAG_FLAG = re.compile(f"\U0001f3f4((?:{_DRAWN_SUBDIVISIONS})\U000e007f)")
_EMOJI_MODIFIERS = frozenset(["\ufe0f", *map(chr, range(0x1F3FB, 0x1F400))])
_PICTOGRAPHIC = regress.Regex(r"^\p{Extended_Pictographic}$", "u")  # Python's unicodedata lacks the property
# what `terminal_text` leaves and would still break a line or jump along it
_LINE_BREAKS = {"\n": "\\n", "\t": "\\t", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_LINE_BREAK = re.compile("[\n\t\u2028\u2029]")
_DIGITS = re.compile("[0-9]+")
#: Digits `int()` always converts: the least `sys.set_int_max_str_digits` may be set to (its default is 4,300).
_INT_DIGITS = 640
#: A decimal: up to 18 digits before the point, as `ascii_int` reads; after it as many as a cell holds (a grade of
#: `=1/3` written out to 19 places, `0.3333333333333333333`, is a number, and float() reads it in microseconds).
_FRACTION_DIGITS = 1000
_DECIMAL = re.compile(rf"[0-9]{{1,18}}(?:\.[0-9]{{0,{_FRACTION_DIGITS}}})?|\.[0-9]{{1,{_FRACTION_DIGITS}}}")


def ascii_int(text: str, digits: int | None = 18) -> int | None:
    """The whole number `text` writes in ASCII digits and nothing else (no sign, space or underscore; '007' is 7),
    else None; None too past `digits` digits, so that a line quoting what a person or a server wrote (a sheet's row
    id, a judge's grade) quotes a number of a few characters. `digits=None` reads any number of them, for names
    whose number only compares (a process id, a list index, a sample id, a length): past Python's limit on the
    digits `int()` converts, the halves are converted and joined, so a long number costs no more than its digits
    take (a million digits: half a second) and never a ValueError."""
    if digits is not None and len(text) > digits:
        return None
    return _whole_of(text) if _DIGITS.fullmatch(text) else None


def _whole_of(digits: str) -> int:
    if len(digits) <= _INT_DIGITS:
        return int(digits)
    half = len(digits) // 2
    scale: int = 10 ** (len(digits) - half)
    return _whole_of(digits[:half]) * scale + _whole_of(digits[half:])


def ascii_decimal(text: str) -> float | None:
    """The number `text` is in ASCII digits with at most one decimal point (`0.5`, `.5`, `1.`), else None."""
    return float(text) if _DECIMAL.fullmatch(text) else None


def squeezed(text: str, limit: int) -> str:
    """`text` as one line of at most `limit` characters, each run of whitespace (a newline among them) one space:
    what a line quotes of a server's words (an error's message, a refusal, a batch's status), which may run to
    megabytes over many lines."""
    return " ".join(text.split())[:limit]


def displayable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def escape(ch: str) -> str:
    """One character as an escape in Python's notation, `\\x1b`, `\\u202e`, `\\U000e0001`: the one notation in which
    benchcard writes a character that must not act or does not show (`terminal_text`, `names.visible`; a name
    quoted in a message, `names.shown`, is Python's `repr`, which writes the same)."""
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def terminal_text(text: str) -> str:
    """`text` with each control character a terminal would act on (ESC, BEL, a carriage return, a C1 control)
    written as its escape, `\\x1b`, so that what is printed can only be read, never run by the terminal; a lone
    surrogate too (`\\ud800`), which no encoding writes; and each format character (`\\u202e`, `\\u200b`), which
    shows nothing itself and could make the line read as something else (a bidi override reversing a run id, a
    zero-width space inside a model's name), but for those that are part of an emoji (`_emoji_glue`)."""
    glue = _emoji_glue(text)
    return _TERMINAL_CONTROLS.sub(lambda m: m.group() if m.start() in glue else escape(m.group()), text)


def _emoji_glue(text: str) -> frozenset[int]:
    """Where `text` holds a format character that is part of an emoji, which a terminal draws as one picture: a
    zero-width joiner with a pictograph on each side (Extended_Pictographic; the one before may carry U+FE0F and
    skin tones, or be a subdivision's flag), and the tags of a subdivision's flag (a black flag, tags, the cancel
    tag). A joiner or a tag anywhere else (between letters, at an end, alone) is not one and is shown."""
    glue = {at for m in _TAG_FLAG.finditer(text) for at in range(*m.span(1))}
    glue.update(m.start() for m in _ZWJ.finditer(text) if _joins_emoji(text, m.start(), glue))
    return frozenset(glue)


def _joins_emoji(text: str, at: int, tags: set[int]) -> bool:
    before = at - 1
    while before >= 0 and text[before] in _EMOJI_MODIFIERS:
        before -= 1
    return (before >= 0 and (before in tags or _pictographic(text[before]))
            and at + 1 < len(text) and _pictographic(text[at + 1]))


def _pictographic(ch: str) -> bool:
    return not "\ud800" <= ch <= "\udfff" and _PICTOGRAPHIC.find(ch) is not None  # regress takes no lone surrogate


def terminal_line(text: str) -> str:
    """`terminal_text` kept to one visible line: a newline, a tab and a line or paragraph separator written as
    `\\n`, `\\t`, `\\u2028`, `\\u2029`, so that a value read from a file cannot break a table's row or a
    report's line."""
    return _LINE_BREAK.sub(lambda m: _LINE_BREAKS[m.group()], terminal_text(text))


def spreadsheet_text(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one starting with = + - @ (or a tab or carriage return, which
    some spreadsheets skip) would be read as a formula, so it gets a leading apostrophe (OWASP's advice)."""
    return "'" + text if text[:1] in _FORMULA_STARTS else text


def plain_text(cell: str) -> str:
    """`spreadsheet_text` undone, for a cell read back from a sheet."""
    return cell[1:] if cell[:1] == "'" and cell[1:2] in _FORMULA_STARTS else cell


def reorders(text: str) -> bool:
    """Whether `text` holds a character that can reorder text beside it on a page (a right-to-left letter, an
    Arabic number, or a bidi control), so a page must isolate it."""
    return any(unicodedata.bidirectional(ch) in _REORDERING for ch in text)


def balanced_isolates(text: str) -> str:
    """`text` with its bidi isolates paired, so that it cannot close the isolate a page puts around it: a stray
    pop (U+2069) gets an isolate opened before the text, an isolate left open gets its pop at the end. The
    browser closes embeddings and overrides at the isolate's end itself; isolates it pairs like characters."""
    stray, open_ = 0, 0
    for ch in text:
        if ch in _ISOLATE_STARTS:
            open_ += 1
        elif ch == _ISOLATE_END:
            if open_:
                open_ -= 1
            else:
                stray += 1
    return "\u2068" * stray + text + _ISOLATE_END * open_


def shell_path(path: str) -> str:
    """A path as one word of a command shown to be pasted into a shell: quoted (`shlex.quote`), and a relative one
    that starts with '-' written `./-…`, so that `cd`, or benchcard itself, does not read it as an option (`cd
    -dash` is `cd: -d: invalid option`)."""
    return shlex.quote(f"./{path}" if path.startswith("-") else path)
