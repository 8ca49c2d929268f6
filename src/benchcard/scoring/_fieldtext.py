"""Text as the fields scorer compares it: normalised words, dates in one canonical form, and restatement.

Every comparison in `fields` goes through `norm`: lower case, every run of non-alphanumerics one space, and a date
written as "3 February 2025", "the 3rd day of February 2025", "February 3, 2025" or "2025-02-03" replaced by one
token (``d20250203``), so that every written form of the same day compares equal as a word. Ambiguous numeric dates
such as 03/02/2025 are not parsed.
"""

from __future__ import annotations

import re
from datetime import date

# An output holding this share of the excerpt's five-word runs restates the excerpt rather than extracting from it.
RESTATE_SHARE = 0.75
SHINGLE = 5

_MONTHS = {m: i + 1 for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july",
                                            "august", "september", "october", "november", "december"))}
_MONTHS |= {m[:3]: n for m, n in _MONTHS.items()} | {"sept": 9}
_ORD_UNITS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_ORDINALS = {w: i + 1 for i, w in enumerate(_ORD_UNITS)} | {"tenth": 10, "eleventh": 11, "twelfth": 12}
_TEENS = ("thir", "four", "fif", "six", "seven", "eigh", "nine")
_ORDINALS |= {f"{p}teenth": 13 + i for i, p in enumerate(_TEENS)}
_ORDINALS |= {"twentieth": 20, "thirtieth": 30, "thirty-first": 31, "thirty first": 31}
_ORDINALS |= {f"twenty{sep}{w}": 21 + i for i, w in enumerate(_ORD_UNITS) for sep in ("-", " ")}
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"\d{1,2}(?:st|nd|rd|th)?|" + "|".join(sorted(_ORDINALS, key=len, reverse=True))
DATE = re.compile(
    rf"\b(?:the\s+)?(?P<d1>{_DAY})\s+(?:day\s+)?(?:of\s+)?(?P<m1>{_MON})\.?,?\s+(?P<y1>\d{{4}})\b"
    rf"|\b(?P<m2>{_MON})\.?\s+(?P<d2>{_DAY}),?\s+(?P<y2>\d{{4}})\b"
    r"|\b(?P<y3>\d{4})[-/.](?P<m3>\d{1,2})[-/.](?P<d3>\d{1,2})\b",
    re.IGNORECASE,
)


def canon_date(m: re.Match[str]) -> str:
    """Replace a date by one token, so every written form of the same day compares equal as a word."""
    y, mo, d = (m.group(f"{p}1") or m.group(f"{p}2") or m.group(f"{p}3") for p in "ymd")
    try:
        month = int(mo) if mo.isdigit() else _MONTHS[mo.lower().rstrip(".")]
        dl = d.lower()
        day = _ORDINALS[dl] if dl in _ORDINALS else int(re.sub(r"\D", "", dl))
        return f" d{date(int(y), month, day):%Y%m%d} "
    except (KeyError, ValueError):
        return m.group(0)


def without_asides(text: str) -> str:
    """The text with each "(…)" taken out (a party's role, a label's gloss). A "(" with no ")" after it can never
    match, and searching on from each of them took quadratic time (a reply of 8,000 "Parties (": 3 s; of
    50,000 "(": 2 s; a reply may be 32 MiB), so the text after the last ")" is kept as it is, unsearched: the
    same text, in linear time."""
    last = text.rfind(")")
    return re.sub(r"\([^)]*\)", " ", text[:last + 1]) + text[last + 1:]


def norm(text: str) -> str:
    """Lower case, dates canonical, every run of non-alphanumerics one space: the form all matching uses."""
    return " ".join(re.sub(r"[\W_]+", " ", DATE.sub(canon_date, text)).lower().split())


def within(needle: str, padded_hay: str) -> bool:
    """Whole-word containment of a normalised needle in a space-padded normalised haystack."""
    return bool(needle) and f" {needle} " in padded_hay


def restates(output: str, excerpt: str, share: float = RESTATE_SHARE, shingle: int = SHINGLE) -> bool:
    """True when the output reproduces most of the excerpt (`share` of its `shingle`-word runs)."""
    ew, ow = norm(excerpt).split(), norm(output).split()
    eshingles = {tuple(ew[i:i + shingle]) for i in range(len(ew) - shingle + 1)}
    oshingles = {tuple(ow[i:i + shingle]) for i in range(len(ow) - shingle + 1)}
    return bool(eshingles) and len(eshingles & oshingles) >= share * len(eshingles)
