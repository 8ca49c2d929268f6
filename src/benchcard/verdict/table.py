"""`table.csv`: one row per planned cell and metric, the run's figures in a form any tool reads."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from benchcard.verdict.tablecells import csv_field

if TYPE_CHECKING:
    from benchcard.verdict.runfolder import RunData

TABLE_FILE = "table.csv"
TABLE_COLUMNS = ("fixture", "variant", "repetition", "metric", "value", "rig")


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
