"""One cell of `table.csv` as text: shared by the table writer and the column readers."""

from __future__ import annotations

import math
from typing import Any


def csv_field(text: str) -> str:
    """A CSV field: quoted (quotes doubled) only when it holds a comma, a quote or a line break."""
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def table_value(value: Any) -> str:
    """A metric value as table text: exactly as JSON writes it (so both readers agree); empty if not a number."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return ""
