"""Scale-out figures for docs/scale.md: a pool of fake servers, and `run --batch` at 100,000 cells.

Every fake server runs in its own process (FakeServer), so the runner's figures are the runner's alone.

    python benchmarks/scale.py --mode pool            # 4 servers at 100 ms, 16 in flight each, 10,000 cells
    python benchmarks/scale.py --mode pool-failing    # the same with one of the four failing every call

Targets (issue 16): the pool within 1.15 × the ideal wall time ceil(cells / 64) × 100 ms; with one server
failing every call, within 1.5 × and no cell lost.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer
from run_throughput import KEY_ENV, make_project


def pool_yaml(urls: list[str], per_server: int) -> str:
    lines = [f"      - {{url: '{u}', concurrency: {per_server}}}" for u in urls]
    return (f"providers:\n  bench:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n"
            + "\n".join(lines) + "\n    pool: {fail_after: 3, out_for_s: 5}\n")


def mode_pool(args: argparse.Namespace, failing: bool) -> dict[str, Any]:
    config = {"default_reply": "ok", "models": ["fake-model"], "latency_ms": args.latency_ms}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        servers = [stack.enter_context(FakeServer(config)) for _ in range(args.servers)]
        if failing:
            servers[0].configure({**config, "latency_ms": 0,
                                  "faults": [{"match": "", "kind": "500", "times": 1_000_000}]})
        project = make_project(Path(tmp), args.cells, servers[0].base_url)
        (Path(tmp) / "benchcard.yaml").write_text(pool_yaml([s.base_url for s in servers], args.per_server))
        t0 = time.perf_counter()
        [summary] = run(project, "synth", RunOptions(progress=False, attempts=6))
        wall = time.perf_counter() - t0
        calls = [s.stats(by_request=False)["calls"] for s in servers]
        in_flight = [s.stats(by_request=False)["max_in_flight"] for s in servers]
    capacity = args.servers * args.per_server
    ideal = math.ceil(args.cells / capacity) * args.latency_ms / 1000.0
    return {"mode": "pool-failing" if failing else "pool", "cells": args.cells, "servers": args.servers,
            "per_server": args.per_server, "latency_ms": args.latency_ms, "wall_s": round(wall, 3),
            "ideal_s": round(ideal, 3), "ratio": round(wall / ideal, 3), "counts": summary.counts,
            "missing": summary.missing, "calls_per_server": calls, "max_in_flight_per_server": in_flight,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("pool", "pool-failing"), default="pool")
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--per-server", type=int, default=16)
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-bench")
    print(json.dumps(mode_pool(args, failing=args.mode == "pool-failing")))


if __name__ == "__main__":
    main()
