"""Time one ledger append, and the ledger reads around a verdict, against the ledger's length (docs/performance.md).

Builds a hash-chained `results/ledger.jsonl` of N rows, each the repository's own ledger row (about 1.6 kB) with
its seq, run, date and chain fields renewed, then times, per length:

- `append` — `records.ledger.append` of one more row, under the lock, as `benchcard verdict` enters one (each
  timed append adds a row: the file grows by the repeats, which does not matter at these lengths);
- `row_of_run` — the lookup `benchcard verdict` makes under the lock before appending (is the run in already?);
- `verify` — `records.ledger.verify`, the whole chain (what `benchcard ledger --verify` checks first);
- `append MB` — the peak of Python's allocations (tracemalloc) during one more append, against the file's size
  (`file MB`): the chain is checked a row at a time, so the peak should not grow with the ledger.

The figures to quote are the ratios between lengths, not the absolute times (a shared machine's load moves
those). The median of `--repeat` runs of each; the lengths are built once each, outside the timing.

    python benchmarks/ledger_append.py --rows 1000,10000,50000 --repeat 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.ledgerrow import CHAIN_FIELDS, LedgerRow
from machine import cpu_model  # benchmarks/machine.py, beside this script

TEMPLATE = Path(__file__).resolve().parent.parent / "results" / "ledger.jsonl"


def template() -> dict[str, Any]:
    """The repository's own first ledger row, as written."""
    first: dict[str, Any] = json.loads(TEMPLATE.read_bytes().split(b"\n", 1)[0])
    return first


def build(root: Path, n: int) -> Project:
    """A project whose ledger holds `n` chained rows built from the template (written in one pass)."""
    (root / "cards").mkdir(parents=True)
    (root / "results").mkdir()
    base, prev = template(), None
    with open(root / "results" / "ledger.jsonl", "w", encoding="utf-8") as fh:
        for seq in range(1, n + 1):
            row = {**base, "seq": seq, "run": f"20261201T000000Z-{seq:08x}", "prev": prev}
            row.pop("hash")
            row["hash"] = prev = ledger.row_hash(row)
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
    return Project(root)


def new_row(i: int) -> LedgerRow:
    """A row as a verdict hands it to `append`: the template's fields without those the ledger sets."""
    fields = {k: v for k, v in template().items() if k not in (*CHAIN_FIELDS, "hash")}
    fields["run"] = f"20261202T000000Z-{i:08x}"
    return msgspec.convert(fields, LedgerRow)


def timed(fn: Callable[[], object], repeat: int) -> float:
    """The median wall time of `repeat` calls, in milliseconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def peak_mb(fn: Callable[[], object]) -> float:
    """The peak of Python's allocations during one call, in MB."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def measure(n: int, repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        project = build(Path(tmp) / "p", n)
        counter = iter(range(10**9))
        return {
            "append": timed(lambda: ledger.append(project, new_row(next(counter))), repeat),
            "row_of_run": timed(lambda: ledger.row_of_run(project, "20261203T000000Z-00000000"), repeat),
            "verify": timed(lambda: ledger.verify(project), max(1, repeat // 3)),
            "file MB": project.ledger_path.stat().st_size / 1e6,
            "append MB": peak_mb(lambda: ledger.append(project, new_row(next(counter)))),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1000,10000,50000", help="ledger lengths, comma-separated")
    parser.add_argument("--repeat", type=int, default=7, help="timed calls per length (median)")
    args = parser.parse_args()
    lengths = [int(x) for x in args.rows.split(",")]
    print(f"# {cpu_model()} · python {sys.version.split()[0]} · median of {args.repeat} (verify: "
          f"{max(1, args.repeat // 3)})")
    results = {n: measure(n, args.repeat) for n in lengths}
    first = results[lengths[0]]
    print(f"{'rows':>8} " + " ".join(f"{k if k.endswith('MB') else k + ' ms':>14} {'× ' + str(lengths[0]):>9}"
                                       for k in first))
    for n, got in results.items():
        print(f"{n:>8} " + " ".join(f"{v:>14.2f} {v / first[k]:>9.1f}" for k, v in got.items()))


if __name__ == "__main__":
    main()
