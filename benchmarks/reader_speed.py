"""Time reading a run's three JSONL files into the verdict's columns, 100,000 cells (docs/verdict.md, "Speed").

Builds the run folder of `verdict_speed.py --full` (10,000 fixtures × 5 repetitions × 2 arms: assignment,
outputs with their texts, scores with nine metrics), then times, interleaved, each reader over the files'
bytes (read once, outside the timing):

- `records` — benchcard's one reader (`verdict.columns`: msgspec typed decode into `records` structs);
- `json` — `json.loads` on every line (what any reader built on the standard library pays);
- with `--old REV`: the two readers this one replaced (`verdict/fastcolumns.py`, regular expressions, and
  `verdict/columns.py`, `json`), exported from that git revision and run in a child interpreter;
- with `--retried N`: `records` over a run that `run --retry-failed` called N cells of again (their new rows
  appended to outputs.jsonl, the manifest listing `retries`), so each cell's last row is kept.

    python benchmarks/reader_speed.py --repeat 5 --old c41e166
    python benchmarks/reader_speed.py --repeat 7 --retried 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from machine import cpu_model  # benchmarks/machine.py, beside this script
from verdict_speed import build_full

FILES = ("sealed/assignment.jsonl", "scores.jsonl", "outputs.jsonl")

_OLD = """
import json, sys, time
from pathlib import Path
from benchcard.verdict import columns, fastcolumns
run = Path(sys.argv[1])
data = [(run / f).read_bytes() for f in ("sealed/assignment.jsonl", "scores.jsonl", "outputs.jsonl")]
out = {"regex": [], "json (old reference)": []}
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    plan = fastcolumns.read_plan(data[0], "baseline", run)
    scores = fastcolumns.read_scores(data[1], run)
    outputs = fastcolumns.read_outputs(data[2])
    assert plan is not None and scores is not None and outputs is not None
    scores.column("field_recall")
    out["regex"].append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    columns.read_plan(data[0], "baseline", run)
    s = columns.read_scores(data[1], run)
    columns.read_outputs(data[2], run)
    s.column("field_recall")
    out["json (old reference)"].append(time.perf_counter() - t0)
print(json.dumps(out))
"""


def _records(data: list[bytes], run: Path, latest: bool = False) -> None:
    from benchcard.verdict import columns

    columns.read_assignment(data[0], "baseline", run)
    scores = columns.read_scores(data[1], run)
    columns.read_outputs(data[2], run, latest=latest)
    scores.column("field_recall")


def _json(data: list[bytes], run: Path) -> None:
    for blob in data:
        rows = [json.loads(line) for line in blob.splitlines() if line.strip()]
        assert rows


def _old(rev: str, run: Path, repeat: int) -> dict[str, list[float]]:
    """The replaced readers, from `rev`, timed in a child interpreter that imports that revision's package."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(root), "archive", rev, "src"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        out = subprocess.run([sys.executable, "-c", _OLD, str(run), str(repeat)], env=env, check=True,
                             capture_output=True, text=True).stdout
    result: dict[str, list[float]] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--old", metavar="REV", help="also time the readers of this git revision")
    parser.add_argument("--retried", type=int, default=0, metavar="N",
                        help="also time `records` over the run with N cells retried")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _, run = build_full(Path(tmp) / "proj", 10_000, 5, 0)
        data = [(run / f).read_bytes() for f in FILES]
        sizes = ", ".join(f"{f} {len(d) / 1e6:.1f} MB" for f, d in zip(FILES, data, strict=True))
        readers: list[tuple[str, Callable[[list[bytes], Path], None]]] = [("records (msgspec)", _records),
                                                                          ("json per line", _json)]
        if args.retried:
            outputs = data[2].splitlines(keepends=True)
            retried = [*data[:2], data[2] + b"".join(outputs[: args.retried])]
            readers.append((f"records, {args.retried:,} cells retried (last row per cell)",
                            lambda _, run: _records(retried, run, latest=True)))
        times: dict[str, list[float]] = {name: [] for name, _ in readers}
        for _ in range(args.repeat):
            for name, fn in readers:
                t0 = time.perf_counter()
                fn(data, run)
                times[name].append(time.perf_counter() - t0)
            if args.old:
                for name, values in _old(args.old, run, 1).items():
                    times.setdefault(name, []).extend(values)
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    print(f"100,000 rows of each file ({sizes}); median of {args.repeat}, interleaved\n")
    base = statistics.median(times["records (msgspec)"])
    print("| reader | median (s) | relative to records |")
    print("|---|---|---|")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"| {name} | {med:.3f} | {med / base:.2f}× |")


if __name__ == "__main__":
    main()
