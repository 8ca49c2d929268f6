"""Text shown to people (pages, grading sheets, exported CSV) from text stored as it came (model replies).

A reply may hold a lone surrogate, which `outputs.jsonl` keeps losslessly as a JSON escape but which no UTF-8
file can hold: where such text is shown, each lone surrogate becomes U+FFFD, the replacement character. A CSV
cell a spreadsheet would run as a formula is written as text (`spreadsheet_text`, docs/security.md).
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_FORMULA_STARTS = frozenset("=+-@\t\r")


def displayable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def spreadsheet_text(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one starting with = + - @ (or a tab or carriage return, which
    some spreadsheets skip) would be read as a formula, so it gets a leading apostrophe (OWASP's advice)."""
    return "'" + text if text[:1] in _FORMULA_STARTS else text


def plain_text(cell: str) -> str:
    """`spreadsheet_text` undone, for a cell read back from a sheet."""
    return cell[1:] if cell[:1] == "'" and cell[1:2] in _FORMULA_STARTS else cell
