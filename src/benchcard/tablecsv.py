"""`table.csv`: one row per planned cell and metric, the run's figures in a form any tool reads."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .runfolder import RunData

TABLE_FILE = "table.csv"
TABLE_COLUMNS = ("fixture", "variant", "repetition", "metric", "value", "rig")


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


def table_text(data: RunData, rig: str) -> str:
    """`table.csv`: one row per planned cell and metric (fixture, variant, repetition, metric, value, rig).

    Rows are ordered by fixture, variant (baseline first) and repetition; a cell's metrics keep the scorer's
    order. Cells without a score (truncated, failed, missing) have an empty value for every metric: they are
    in the table, unscored, never scored as wrong. Values are written exactly as scores.jsonl holds them.
    Built as text (pandas' writer is several times slower at 10⁶ rows); `pandas.read_csv` reads it back.
    """
    names = list(data.metrics) or ["score"]
    empty = "\x00".join(f"{csv_field(m)}," for m in names)
    suffix = "," + csv_field(rig) + "\n"
    fixtures = [csv_field(f) for f in data.fixtures]
    variants = [csv_field(v) for v in data.variants]
    reps = [str(r) for r in data.repetitions]
    order = np.lexsort((data.repetition, data.variant, data.fixture)).tolist()
    fixture, variant, repetition = data.fixture.tolist(), data.variant.tolist(), data.repetition.tolist()
    pairs = data.pairs
    if not data.metrics:  # a scorer that wrote no metrics: its score is the one metric
        pairs = [None if math.isnan(s) else f"score,{s!r}" for s in data.score.tolist()]
    parts = [",".join(TABLE_COLUMNS) + "\n"]
    for i in order:
        prefix = f"{fixtures[fixture[i]]},{variants[variant[i]]},{reps[repetition[i]]},"
        text = pairs[i]
        if text is None:
            text = empty
        parts.append(prefix + text.replace("\x00", suffix + prefix) + suffix)
    return "".join(parts)
