"""Scale-out figures for docs/scale.md: a pool of fake servers, and `run --batch` at 100,000 cells.

Every fake server runs in its own process (FakeServer), so the runner's figures are the runner's alone.

    python benchmarks/scale.py --mode pool            # 4 servers at 100 ms, 16 in flight each, 10,000 cells
    python benchmarks/scale.py --mode pool-failing    # the same with one of the four failing every call
    python benchmarks/scale.py --mode batch --cells 100000   # run --batch: upload files, then collection
    python benchmarks/scale.py --mode grids           # BENCH-01-sized (120) and 10,000-cell grids: wall and cost

Targets (issue 16): the pool within 1.15 × the ideal wall time ceil(cells / 64) × 100 ms; with one server
failing every call, within 1.5 × and no cell lost; `--batch` on 100,000 cells: the upload files written in
≤ 2 s, memory ≤ 250 MB, the results collected in ≤ 3 s once the batch has finished (fake server at latency 0).
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

from benchcard.project import parse_config
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


def mode_batch(args: argparse.Namespace) -> dict[str, Any]:
    import asyncio
    import shutil

    import httpx

    from benchcard.run.batch._driver import plan_chunks
    from benchcard.run.batch._journal import Journal
    from benchcard.run.batch._vendors import vendor_for
    from benchcard.run.providers import make_provider, provider_config
    from benchcard.run.providers.base import HttpProvider
    from benchcard.run.store import RunStore

    # the batches stay in progress 30 s, so `--no-wait` returns first; collection is timed once they have ended
    config = {"default_reply": "ok", "batch": {"in_progress_s": 30}}
    with tempfile.TemporaryDirectory() as tmp, FakeServer(config) as srv:
        root = Path(tmp)
        project = make_project(root, args.cells, srv.base_url)
        t0 = time.perf_counter()
        [submitted] = run(project, "synth", RunOptions(progress=False, batch=True, wait=False))
        submit_s = time.perf_counter() - t0
        submitted_at = time.perf_counter()
        folder = project.root / submitted.folder
        # the upload files alone, written again into a scratch copy of the run folder
        scratch = RunStore(root / "scratch")
        (scratch.folder / "sealed").mkdir(parents=True)
        for name in ("assignment.jsonl", "requests.jsonl"):
            shutil.copy(folder / "sealed" / name, scratch.folder / "sealed" / name)
        cfg = provider_config("bench", parse_config({"providers": {"bench": {"type": "openai", "base_url": srv.base_url,
                                                                             "api_key_env": KEY_ENV}}}))
        provider = make_provider(cfg, httpx.AsyncClient())
        assert isinstance(provider, HttpProvider)
        t0 = time.perf_counter()
        chunks = plan_chunks(scratch, vendor_for(provider, 1, (0.1, 1.0)), Journal(scratch.folder))
        write_s = time.perf_counter() - t0
        asyncio.run(provider.client.aclose())
        assert not any(c.collected for c in Journal(folder).chunks()), "a batch ended before --no-wait returned"
        time.sleep(max(0.0, 31 - (time.perf_counter() - submitted_at)))
        from benchcard.run.batch.status import run_status

        status = run_status(project, folder)  # the vendor sees the batches end and has their files ready
        assert all(b.status == "completed" for b in status.batches), status
        t0 = time.perf_counter()
        [done] = run(project, "synth", RunOptions(progress=False, resume=submitted.run, poll_interval=0.05))
        collect_s = time.perf_counter() - t0
        stats = srv.stats(by_request=False)["batch"]
        from benchcard.card.load import load_card
        from benchcard.run.runner import score_blind

        t0 = time.perf_counter()  # blind scoring alone, part of the resume above (the interactive runner does it too)
        score_blind(folder / "outputs.jsonl", root / "scores-again.jsonl", load_card(project.card_path("synth"),
                                                                                     project), project)
        score_s = time.perf_counter() - t0
    return {"mode": "batch", "cells": args.cells, "batches": len(chunks),
            "upload_files_mb": round(sum(c.bytes for c in chunks) / 1e6, 1), "write_upload_files_s": round(write_s, 3),
            "plan_and_submit_s": round(submit_s, 3), "collect_and_score_s": round(collect_s, 3),
            "of_which_scoring_s": round(score_s, 3), "collect_s": round(collect_s - score_s, 3),
            "counts": done.counts, "submitted": stats["submitted"], "distinct_submitted": stats["distinct_submitted"],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


PRICES = "prices:\n  fake-model: {input: 1.0, output: 4.0, batch_discount: 0.5}\n"


def mode_grids(args: argparse.Namespace) -> dict[str, Any]:
    """Wall time and cost of one grid run interactively (one server at 100 ms, 64 in flight), on a pool of 4
    such servers (16 each) and through the batch API (the fake vendor ends each batch at once: this is the
    client's own time; a real batch adds the vendor's, up to 24 h)."""
    rows = []
    for cells in (120, 10_000):
        for how in ("interactive", "pool", "batch"):
            latency = 0.0 if how == "batch" else args.latency_ms
            config = {"default_reply": "ok", "models": ["fake-model"], "latency_ms": latency}
            with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
                servers = [stack.enter_context(FakeServer(config)) for _ in range(4 if how == "pool" else 1)]
                project = make_project(Path(tmp), cells, servers[0].base_url)
                if how == "pool":
                    (Path(tmp) / "benchcard.yaml").write_text(pool_yaml([s.base_url for s in servers], 16) + PRICES)
                else:
                    with open(Path(tmp) / "benchcard.yaml", "a") as fh:
                        fh.write(PRICES)
                options = RunOptions(progress=False, concurrency=64, batch=how == "batch", poll_interval=0.2)
                t0 = time.perf_counter()
                [summary] = run(project, "synth", options)
                rows.append({"cells": cells, "how": how, "wall_s": round(time.perf_counter() - t0, 2),
                             "cost_usd": summary.cost, "ok": summary.counts["ok"]})
    return {"mode": "grids", "latency_ms": args.latency_ms, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("pool", "pool-failing", "batch", "grids"), default="pool")
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--per-server", type=int, default=16)
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-bench")
    if args.mode in ("batch", "grids"):
        print(json.dumps(mode_batch(args) if args.mode == "batch" else mode_grids(args)))
        return
    print(json.dumps(mode_pool(args, failing=args.mode == "pool-failing")))


if __name__ == "__main__":
    main()
