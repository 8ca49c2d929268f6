"""Wall time and peak resident memory of `benchcard ledger` (the table), `ledger --json` and `ledger --verify` on a
long synthetic ledger (docs/performance.md).

Builds a hash-chained ledger of N rows the way `benchmarks/ledger_append.py` does (the repository's own row, about
1.7 kB, with its seq, run and chain fields renewed: 347 MB at 200,000 rows), then runs each command in a process of
its own under `/usr/bin/time -v`, its output to /dev/null, at `--columns` columns. Every row names a run whose folder
this project does not have, so `--verify` lists a problem for each; `--no-runs` writes rows naming no run (as
`long_ledger(…, runs=False)` of tests/helpers_project.py), whose evidence `--verify` does not look for.

    python benchmarks/ledger_reads.py --rows 200000 --commands table,verify
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchcard.records import ledger
from ledger_append import template  # benchmarks/ledger_append.py, beside this script
from machine import cpu_model  # benchmarks/machine.py, beside this script

COMMANDS = {"table": [], "json": ["--json"], "verify": ["--verify"]}


def build(root: Path, n: int, *, runs: bool) -> Path:
    """A project whose ledger holds `n` chained rows built from the template, written in one pass."""
    (root / "cards").mkdir(parents=True)
    (root / "results").mkdir()
    base, prev = template(), None
    with open(root / "results" / "ledger.jsonl", "w", encoding="utf-8") as fh:
        for seq in range(1, n + 1):
            run = f"20261201T000000Z-{seq:08x}" if runs else ""
            row = {**base, "seq": seq, "run": run, "prev": prev}
            if not runs:
                row["evidence"] = ""
            row.pop("hash")
            row["hash"] = prev = ledger.row_hash(row)
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
    return root


def measured(root: Path, args: list[str], columns: int) -> tuple[float, float]:
    """The command's wall time in seconds and peak resident memory in MB, from `/usr/bin/time -v`."""
    env = {**os.environ, "COLUMNS": str(columns)}
    with open(os.devnull, "w") as null:
        done = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "benchcard", "-C", str(root), "ledger",
                               *args], stdout=null, stderr=subprocess.PIPE, text=True, env=env, check=False)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if wall is None or rss is None:
        raise SystemExit(done.stderr[-2000:])
    seconds = sum(float(part) * 60 ** i for i, part in enumerate(reversed(wall.group(1).split(":"))))
    return seconds, int(rss.group(1)) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="the ledger's length")
    parser.add_argument("--commands", default="table,json,verify", help=f"of {', '.join(COMMANDS)}")
    parser.add_argument("--columns", type=int, default=160, help="the terminal's width (COLUMNS)")
    parser.add_argument("--no-runs", action="store_true", help="rows naming no run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "p", args.rows, runs=not args.no_runs)
        size = (root / "results" / "ledger.jsonl").stat().st_size / 1e6
        print(f"# {cpu_model()} · python {sys.version.split()[0]} · {args.rows} rows, {size:.0f} MB, "
              f"COLUMNS={args.columns}, load average {os.getloadavg()[0]:.1f}")
        for name in args.commands.split(","):
            seconds, mb = measured(root, COMMANDS[name], args.columns)
            print(f"{name:>8} {seconds:>8.1f} s {mb:>8.0f} MB")


if __name__ == "__main__":
    main()
