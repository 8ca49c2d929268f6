"""Time the verdict's outputs reader on a 100,000-cell run, never retried and retried (docs/verdict.md, "Speed").

Builds the run folder of `verdict_speed.py --full` (10,000 fixtures × 5 repetitions × 2 arms), then times,
interleaved, `verdict.columns.read_outputs` over the bytes of its `outputs.jsonl` (read once, outside the timing):

- `never retried` — the common path: one row per cell, read as it is;
- `retried, last row per cell` — the same file with --retried rows appended again after it (as
  `run --retry-failed` appends the retried cells' new rows), read keeping each cell's last row
  (`_util/lastrow.last_per_cell`, what a run whose manifest lists `retries` pays).

    python benchmarks/retry_reader.py --repeat 7 --retried 1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from machine import cpu_model  # benchmarks/machine.py, beside this script
from verdict_speed import build_full


def main() -> None:
    from benchcard.verdict.columns import read_outputs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--retried", type=int, default=1_000, help="cells called again by the retry")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _, run = build_full(Path(tmp) / "proj", 10_000, 5, 0)
        path = run / "outputs.jsonl"
        plain = path.read_bytes()
        lines = plain.splitlines(keepends=True)
        retried = plain + b"".join(lines[: args.retried])
    cases = {"never retried": (plain, False), "retried, last row per cell": (retried, True)}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, (data, latest) in cases.items():
            t0 = time.perf_counter()
            outputs = read_outputs(data, path, latest=latest)
            times[name].append(time.perf_counter() - t0)
            assert len(outputs.cells) == len(lines)
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    print(f"{len(lines):,} cells, {args.retried:,} of them retried; median of {args.repeat}, interleaved\n")
    base = statistics.median(times["never retried"])
    print("| outputs.jsonl | median (s) | worst (s) | relative |")
    print("|---|---|---|---|")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"| {name} | {med:.3f} | {max(values):.3f} | {med / base:.2f}× |")


if __name__ == "__main__":
    main()
