"""`table.csv`: one row per planned cell and metric, the run's figures in a form any tool reads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from benchcard._util.files import synced_file
from benchcard.records.rows import Metric
from benchcard.verdict._tablecells import csv_field, table_value

if TYPE_CHECKING:
    from benchcard.verdict.runfolder import RunData

TABLE_FILE = "table.csv"
TABLE_COLUMNS = ("fixture", "variant", "repetition", "metric", "value", "rig")
HEADER = (",".join(TABLE_COLUMNS) + "\n").encode("utf-8")

MetricRow = dict[str, Metric] | None
IntArray = npt.NDArray[np.int64]


def table_text(data: RunData, rig: str) -> str:
    """`table.csv` as text: `table_bytes` decoded."""
    return table_bytes(data, rig).decode("utf-8")


def table_bytes(data: RunData, rig: str) -> bytes:
    """`table.csv`: one row per planned cell and metric (fixture, variant, repetition, metric, value, rig).

    Rows are ordered by fixture, variant (baseline first) and repetition; a cell's metrics keep the scorer's
    order. Cells without a score (truncated, failed, missing) have an empty value for every metric: they are
    in the table, unscored, never scored as wrong. Values are written as `_tablecells.table_value` says: exactly
    as scores.jsonl holds them. Built as UTF-8 bytes (pandas' writer is several times slower at 10⁶ rows, and
    text would be encoded again to be written); `pandas.read_csv` reads it back.
    """
    names, order, in_order, uniform = _rows(data)
    fixtures = _encoded([csv_field(f) + "," for f in data.fixtures])
    variants = _encoded([csv_field(v) + "," for v in data.variants])
    reps = _encoded([str(r) + "," for r in data.repetitions])
    pairs = fixtures[:, None] + variants[None, :]  # each (fixture, variant) once, then the repetition per cell
    prefix = (pairs[data.fixture[order], data.variant[order]] + reps[data.repetition[order]]).tolist()
    suffix = "," + csv_field(rig) + "\n"
    if uniform:
        return HEADER + _uniform_body(prefix, in_order, names, suffix)
    return HEADER + _any_body([p.decode("utf-8") for p in prefix], in_order, names, suffix).encode("utf-8")


#: Rows from which pyarrow forms the table: its first CSV write in a process has a fixed cost that only a
#: large table repays (measured in docs/verdict.md, "Speed").
ARROW_FROM_ROWS = 250_000


def write_table(path: Path, data: RunData, rig: str, arrow_from: int = ARROW_FROM_ROWS) -> None:
    """Write `table.csv` (`table_bytes`'s bytes) to `path` and sync it.

    For a table of `arrow_from` rows or more, when pyarrow is installed (the `parquet` extra) and no name needs
    quoting, its CSV writer forms the rows, without the GIL, from each metric's distinct values formatted here;
    the bytes are the same (tests compare them with `table_bytes` on odd values). Otherwise `table_bytes`.
    """
    rows = len(data.cells) * max(1, len(data.metrics))
    body = _arrow_body(data, rig) if rows >= arrow_from else None
    # a temporary name: the verdict moves it into place once it is entered
    with synced_file(path, path.parent / TABLE_FILE) as fh:
        if body is None:
            fh.write(table_bytes(data, rig))
        else:
            fh.write(HEADER)
            fh.write(body)


def _rows(data: RunData) -> tuple[list[str], IntArray, list[MetricRow], bool]:
    """The metric names, the cells' order in the table, their metric rows in that order, and whether every
    scored row has exactly those names in that order."""
    names = list(data.metrics) or ["score"]
    rows: Sequence[MetricRow] = data.metric_rows
    if not data.metrics:  # a scorer that wrote no metrics: its score is the one metric
        rows = [None if math.isnan(s) else {"score": s} for s in data.score.tolist()]
    order = np.lexsort((data.repetition, data.variant, data.fixture))
    in_order = [rows[i] for i in order.tolist()]
    return names, order, in_order, data.metric_order == tuple(names) or _one_order(in_order, names)


def _arrow_body(data: RunData, rig: str) -> memoryview | None:
    """The table's rows without its header, written by pyarrow's CSV writer; None without pyarrow, when a name
    would need quoting (its writer then refuses: every field is written as it is) or for an empty table."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:  # pragma: no cover - pyarrow is the `parquet` extra
        return None
    names, order, in_order, uniform = _rows(data)
    n, k = len(in_order), len(names)
    if not uniform or not n or any(csv_field(t) != t for t in (*data.fixtures, *data.variants, *names, rig)):
        return None
    has, columns = _value_columns(in_order, names)
    texts = [""]  # unscored cells: an empty value
    codes = np.zeros((n, k), dtype=np.int32)
    for j, (column_texts, column_codes) in enumerate(columns):
        codes[has, j] = len(texts) + column_codes
        texts += column_texts

    def coded(index: npt.NDArray[np.int64], values: list[str]) -> Any:
        return pa.DictionaryArray.from_arrays(pa.array(index.astype(np.int32)), pa.array(values, pa.string()))

    table = pa.table({
        "fixture": coded(np.repeat(data.fixture[order], k), data.fixtures),
        "variant": coded(np.repeat(data.variant[order], k), data.variants),
        "repetition": pa.array(np.repeat(np.asarray(data.repetitions, dtype=np.int64)[data.repetition[order]], k)),
        "metric": coded(np.tile(np.arange(k, dtype=np.int64), n), names),
        "value": pa.DictionaryArray.from_arrays(pa.array(codes.ravel()), pa.array(texts, pa.string())),
        "rig": coded(np.zeros(n * k, dtype=np.int64), [rig]),
    })
    sink = pa.BufferOutputStream()
    pcsv.write_csv(table, sink, pcsv.WriteOptions(include_header=False, quoting_style="none", batch_size=1 << 16))
    return memoryview(sink.getvalue())


def _encoded(texts: list[str]) -> npt.NDArray[np.object_]:
    """A 1-d object array of the texts as UTF-8 bytes (added element-wise, they concatenate)."""
    out = np.empty(len(texts), dtype=object)
    out[:] = [t.encode("utf-8") for t in texts]
    return out


def _uniform_body(prefix: list[bytes], rows: list[MetricRow], names: list[str], suffix: str) -> bytes:
    """The table's rows when every scored cell has exactly `names`, in that order (the usual case).

    Each metric's "metric,value,rig" lines are formed once per distinct value; each distinct combination of a
    cell's lines once, as a tuple; a cell's rows are then `prefix.join(("",) + its lines)`: one C-level join
    per cell and one for the table, no Python work per row.
    """
    n, k = len(rows), len(names)
    has, columns = _value_columns(rows, names)
    codes = np.zeros((n, k), dtype=np.int64)
    texts: list[list[bytes]] = []
    for j, (name, (column_texts, column_codes)) in enumerate(zip(names, columns, strict=True)):
        start = csv_field(name) + ","
        texts.append([(start + t + suffix).encode("utf-8") for t in ["", *column_texts]])  # "": unscored
        codes[has, j] = column_codes + 1
    radix = [len(t) for t in texts]
    if math.prod(radix) < 2**62:
        key = np.zeros(n, dtype=np.int64)
        for j in range(k):
            key = key * radix[j] + codes[:, j]
        combos, which = np.unique(key, return_inverse=True)
        first = np.zeros(combos.size, dtype=np.int64)
        first[which[::-1]] = np.arange(n - 1, -1, -1)  # a cell of each combination
        lines = [(b"", *(texts[j][c] for j, c in enumerate(row))) for row in codes[first].tolist()]
        blocks = np.empty(len(lines), dtype=object)
        blocks[:] = lines
        cell_lines = blocks[which].tolist()
    else:
        cell_lines = [(b"", *(texts[j][c] for j, c in enumerate(row))) for row in codes.tolist()]
    return b"".join(map(bytes.join, prefix, cell_lines))


def _value_columns(rows: list[MetricRow], names: list[str]
                   ) -> tuple[npt.NDArray[np.bool_], list[tuple[list[str], IntArray]]]:
    """Which rows are scored, and per metric the distinct value texts of the scored rows with each row's code
    into them (`_value_texts`); every scored row has exactly `names`, in that order.

    Rows that are one object (the reader shares each distinct metrics object among the rows that repeat it,
    `verdict.columns.read_scores`) are formatted once: the codes of the distinct objects, gathered per row."""
    ids, first, which = np.unique(np.fromiter(map(id, rows), np.int64, len(rows)), return_index=True,
                                  return_inverse=True)
    if 2 * ids.size > len(rows):
        return _row_value_columns(rows, names)
    distinct_has, columns = _row_value_columns([rows[i] for i in first.tolist()], names)
    has = distinct_has[which]
    at = np.full(ids.size, -1, dtype=np.int64)  # a distinct row's position among the scored distinct rows
    at[distinct_has] = np.arange(int(distinct_has.sum()))
    scored_at = at[which][has]
    return has, [(texts, codes[scored_at]) for texts, codes in columns]


def _row_value_columns(rows: list[MetricRow], names: list[str]
                            ) -> tuple[npt.NDArray[np.bool_], list[tuple[list[str], IntArray]]]:
    """`_value_columns`, a row at a time."""
    k = len(names)
    has = np.fromiter(map(bool, rows), bool, len(rows))
    values = list(chain.from_iterable(map(dict.values, filter(None, rows))))
    if set(map(type, values)) <= {float, type(None)}:  # one conversion for all columns
        floats = np.array(values, dtype=np.float64).reshape(-1, k)
        return has, [_value_texts(floats[:, j]) for j in range(k)]
    return has, [_value_texts(values[j::k]) for j in range(k)]


def _one_order(rows: list[MetricRow], names: list[str]) -> bool:
    """Whether every row with metrics has exactly `names`, in that order."""
    return not set(map(tuple, filter(None, rows))) - {tuple(names)}


def _value_texts(column: list[Metric] | npt.NDArray[np.float64]) -> tuple[list[str], IntArray]:
    """The distinct `table_value` texts of a column and each value's code into them, each formatted once:
    floats (and nulls) told apart by their bits, so 0.0 and -0.0 stay apart; anything else by its text (true
    and 1 both write as 1)."""
    if isinstance(column, np.ndarray) or set(map(type, column)) <= {float, type(None)}:
        bits, which = np.unique(np.asarray(column, dtype=np.float64).view(np.int64), return_inverse=True)
        # a null is NaN here: both write as an empty value
        return [table_value(v) for v in bits.view(np.float64).tolist()], which.astype(np.int64)
    memo: dict[str, int] = {}
    found = [memo.setdefault(table_value(v), len(memo)) for v in column]
    return list(memo), np.asarray(found, dtype=np.int64)


def _any_body(prefix: list[str], rows: list[MetricRow], names: list[str], suffix: str) -> str:
    """The table's rows, cell by cell: any metric names, order and values (`table_value` for each)."""
    empty = [f"{csv_field(m)}," for m in names]
    parts: list[str] = []
    for start, row in zip(prefix, rows, strict=True):
        fields = [f"{csv_field(m)},{table_value(v)}" for m, v in row.items()] if row else empty
        parts.extend(start + f + suffix for f in fields)
    return "".join(parts)
