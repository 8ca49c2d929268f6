"""Names a person reads (variant names, fixture ids, metric names, provider names): visibly what they are.

A verdict or a page that names two arms must let a reader tell them apart. So a name is refused when it holds
a character that does not show (a zero-width space, a joiner, a variation selector), one that reorders what
follows (a right-to-left override), a control character, whitespace at its ends or two spaces in a row, or
when it is not in Unicode's NFKC form (a full-width or ligature letter that reads as another name's plain
one); and two names of one set are refused when they look alike (`skeleton`: NFKC, then Cyrillic and Greek
letters mapped to the Latin letters they look like, `0` to `O`, `1`/`I`/`|` to `l`, `m` to `rn`, dashes to `-`).

A name that also names a file (a card id, a fixture's file) must be one Windows can hold: `windows_name_problem`,
and short enough for every machine a project is cloned on: `length_problem`.

The look-alike table is written here, small and for the scripts names are written in here (Latin, Cyrillic,
Greek); Unicode's full table (UTS #39) covers more. `confusable-homoglyphs` (PyPI, 3.3.1 of 2024-01) was
considered: it answers "is this text of mixed scripts or dangerous", not "do these two names look the same".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from benchcard._util.text import escape

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# default-ignorable characters of other categories: they show nothing either
_INVISIBLE = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810),
                        *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)})
_BIDI_CONTROLS = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
#: Names Windows keeps for its devices, whatever the extension or case (`con.txt`, `Lpt1.md`): no file there has one.
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"{d}{n}" for d in ("COM", "LPT") for n in "123456789¹²³")})
_NOT_ON_WINDOWS = frozenset('<>:"|?*\\') | frozenset(map(chr, range(32)))
#: The most bytes (UTF-8) of a file name a user's name makes. Every common file system holds 255 (ext4 and APFS
#: count bytes, NTFS UTF-16 units), and a fixture's name gains `.json` as its key and `.txt` as its published
#: copy; half of it keeps a clone's paths inside Windows' 260 (`MAX_PATH_CHARS`). A data file's ids hold as many.
MAX_NAME_BYTES = 128
#: The most characters of a path in a project that a user's names make (a fixture's file, its key): Windows holds
#: 259 in a path where long paths are not enabled (Git for Windows' default, core.longpaths false), so a clone's
#: own folder (C:\Users\<name>\Documents\<project>\) keeps 59.
MAX_PATH_CHARS = 200

_LOOKALIKES = {
    # Cyrillic
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ь": "b", "г": "r", "п": "n", "к": "k",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I", "Ү": "Y",
    # Greek
    "α": "a", "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "υ": "u", "χ": "x", "γ": "y", "ϲ": "c",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Latin and digits that read as one another
    "ɑ": "a", "ı": "i", "ɡ": "g", "0": "O", "1": "l", "I": "l", "|": "l",
    # dashes
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2043": "-",
}


def shown(name: str) -> str:
    """A name quoted in a message so that a reader sees every character: what does not print as an escape (as
    `repr` does, in `text.escape`'s notation), and a name with other non-ASCII letters also in escapes."""
    quoted = repr(name)
    return quoted if quoted.isascii() else f"{quoted} ({name!a})"


def hidden_chars(text: str) -> list[str]:
    """The characters of a text that do not show as themselves: controls, format characters (zero-width, the
    direction overrides and isolates), private use, surrogates, unassigned, line and paragraph separators, and
    the default-ignorable characters of other categories."""
    return [ch for ch in text if unicodedata.category(ch) in _HIDDEN_CATEGORIES or ord(ch) in _INVISIBLE]


def visible(text: str) -> str:
    """`text` with each character that does not show (`hidden_chars`) written as its escape (`text.escape`), the
    rest as it is: a name from elsewhere (the model a server's reply names) kept and printed as what it is."""
    hidden = set(hidden_chars(text))
    return "".join(escape(ch) if ch in hidden else ch for ch in text)


def hidden_problem(text: str) -> str | None:
    """Why a text does not read as it is written (a character that does not show, or reorders what follows), in
    a phrase; None when every character shows. Free text (a rig's surface) needs only this, a name more."""
    hidden = hidden_chars(text)
    if not hidden:
        return None
    ch = hidden[0]
    kind = ("a bidirectional control character" if unicodedata.bidirectional(ch) in _BIDI_CONTROLS
            or ch in "\u200e\u200f\u061c" else "an invisible or control character")
    label = unicodedata.name(ch, "CONTROL" if unicodedata.category(ch) == "Cc" else "UNASSIGNED")
    return f"holds {kind} (U+{ord(ch):04X} {label}), so it does not read as it is written"


def name_problem(name: str) -> str | None:
    """Why a name does not read as what it is, in a phrase; None when it does."""
    hidden = hidden_problem(name)
    if hidden is not None:
        return hidden
    for ch in name:
        if ch.isspace() and ch != " ":
            return f"holds whitespace other than a plain space (U+{ord(ch):04X})"
    if name != name.strip() or "  " in name:
        return "begins or ends with a space, or holds two in a row, which a reader cannot see"
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return f"is not in Unicode normal form (NFKC); write it as {shown(normal)}"
    return None


def windows_name_problem(part: str) -> str | None:
    """Why one component of a path (a file or folder name) cannot be a name on Windows, in a phrase; None when it
    can. A project sealed on Linux is checked out anywhere: a fixture's file, and a card's id, which names
    cards/<id>.yaml and the folders of its fixtures, keys and results."""
    bad = sorted(set(part) & _NOT_ON_WINDOWS)
    if bad:
        return f"holds {bad[0]!r}, which Windows does not allow in a file name"
    if part.split(".")[0].rstrip(" ").upper() in _RESERVED:
        return "is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension or case)"
    if part.endswith((".", " ")):
        return "ends in a dot or a space, which Windows drops from a file name"
    return None


def length_problem(name: str, limit: int = MAX_NAME_BYTES) -> str | None:
    """Why a file name is too long for a project cloned anywhere (more than `limit` bytes of UTF-8), in a phrase;
    None when it is not. Linux holds it (the file is here), so the limit is what the name becomes elsewhere."""
    size = len(name.encode("utf-8", "surrogateescape"))
    if size <= limit:
        return None
    ascii_only = "" if name.isascii() else ", fewer letters beyond ASCII"
    return f"is {size} bytes long (UTF-8); expected at most {limit} ({limit} ASCII letters{ascii_only})"


def path_length_problem(path: str) -> str | None:
    """Why a path in a project (`/`-separated, relative) is too long for a Windows clone, in a phrase; None when
    it is not."""
    if len(path) <= MAX_PATH_CHARS:
        return None
    return (f"is {len(path)} characters long; expected at most {MAX_PATH_CHARS}, so that a clone's own folder on "
            "Windows keeps room within its 260 (long paths are off by default)")


def folded(name: str) -> str:
    """A file name as a disk that tells neither case nor Unicode form apart finds it (macOS; Windows tells the forms
    apart but not case): two names of one fold are one file there. Letter by letter, as those disks fold (Unicode's
    simple folding): `ß` stays `ß`, so `straße` and `strasse` are two files, as they are on both."""
    return _case_fold(unicodedata.normalize("NFD", name))


def _case_fold(name: str) -> str:
    return "".join(map(_fold_letter, name))


def _fold_letter(ch: str) -> str:
    """One letter's simple case folding: its full folding when that is one letter, else its lower case when that
    is one, else itself."""
    for folding in (ch.casefold(), ch.lower()):
        if len(folding) == 1:
            return folding
    return ch


def one_file_on(name: str, other: str) -> str:
    """Where two names of one fold (`folded`) are one file: case alone is told apart by neither macOS nor Windows,
    a Unicode form (an `é` as one letter or two) by Windows alone."""
    return "macOS and Windows" if _case_fold(name) == _case_fold(other) else "macOS"


def differ_by(name: str, other: str) -> str:
    """What alone sets apart two names of one fold (`folded`), as a line says it: `case`, or `Unicode form` (an `é`
    as one letter or two), where `one_file_on` says which disks make them one file."""
    return "case" if _case_fold(name) == _case_fold(other) else "Unicode form"


def skeleton(name: str) -> str:
    """What a name looks like: two names with one skeleton read the same (its runs of whitespace read as one
    space; case is the caller's: a card's `A` and `a` are two names, compare's labels are read case-blind)."""
    text = " ".join(unicodedata.normalize("NFKC", name).split())
    return "".join(_LOOKALIKES.get(ch, ch) for ch in text).replace("m", "rn")


def name_clash(names: Iterable[str]) -> tuple[str, str, str] | None:
    """The first problem among one set of names: (name, other name or "", phrase); None when every name reads
    as itself and no two look alike."""
    seen: dict[str, str] = {}
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            return name, "", problem
        key = skeleton(name)
        if key in seen and seen[key] != name:
            return seen[key], name, "read the same"
        seen.setdefault(key, name)
    return None
