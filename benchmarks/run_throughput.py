"""Throughput, CPU, memory and resume latency of `benchcard run` against the fake server.

The fake server runs in its own process (benchcard.testing.fakeserver.FakeServer), so every figure measured here with
`resource.getrusage(RUSAGE_SELF)` belongs to the runner alone. A synthetic ab card (2 variants × F fixtures ×
R repetitions, every body distinct) is written into a temporary project and sealed.

    python benchmarks/run_throughput.py --mode throughput --cells 10000 --latency-ms 100 --concurrency 64
    python benchmarks/run_throughput.py --mode memory --cells 100000 --latency-ms 0 --concurrency 64
    python benchmarks/run_throughput.py --mode resume --cells 10000 --done 9000
    python benchmarks/run_throughput.py --mode all          # each mode in a fresh process, as above
    python benchmarks/run_throughput.py --mode reference    # a bare aiohttp client: this server's floor
    python benchmarks/run_throughput.py --mode limited --cells 2000 --takes 5   # a server taking 5 calls at once

`limited` runs against a server of its own (in this process, so its CPU is counted too) that takes `--takes` calls
at once and answers the rest `429, Retry-After: 0.05`: the run should find that width (`run/_gate`) and lose no
cell, its wall near cells / takes × latency.

Targets: (a) wall ≤ 1.10 × ideal, ideal = ceil(cells / concurrency) × latency; (b) runner CPU ≤ 1 ms per cell;
(c) peak RSS ≤ 250 MB for 100,000 cells; (d) a resumed 10,000-cell run with 9,000 done makes its first call
within 2 s of `benchcard run --resume` being started.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchcard.card.load import load_card
from benchcard.project import Project
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer
from benchproject import sealed_project  # benchmarks/benchproject.py, beside this script

CARD = """\
id: synth
version: 1
kind: ab
title: Synthetic grid for the runner benchmark
rig: {{provider: bench, model: fake-model, effort: null}}
params: {{max_tokens: 64, temperature: 0}}
prompt:
  system: Answer with one word.
  user: |-
    Summarise the excerpt in one word.
    {{{{variant}}}}<excerpt>{{{{fixture}}}}</excerpt>
variants: {{baseline: "", A: "Be careful.\\n"}}
baseline: baseline
fixtures: fixtures/synth/*.txt
repetitions: {reps}
scoring: {{method: exact, expected: ok, trim: true, case_sensitive: false}}
win:
  all:
    - {{metric: score, test: rises}}
  equivalence_margin: 0.05
examples:
  - {{label: Correct, output: ok, expect: pass}}
  - {{label: Rejected, output: "nope", expect: fail}}
history:
  - {{version: 1, note: synthetic}}
"""

KEY_ENV = "BENCH_FAKE_KEY"


def make_project(root: Path, cells: int, base_url: str) -> Project:
    """A project whose card has exactly `cells` cells: 2 variants × fixtures × repetitions."""
    reps = 10 if cells >= 200 else 1
    if cells % (2 * reps):
        raise SystemExit(f"--cells must be a multiple of {2 * reps}")
    fixtures = cells // (2 * reps)
    filler = "The supplier shall deliver the goods to the buyer's warehouse within thirty days. " * 3
    texts = ((f"f{i:06d}", f"Excerpt {i}. {filler}\n") for i in range(fixtures))
    return sealed_project(root, "synth", CARD.format(reps=reps), texts, base_url, KEY_ENV)


def rusage() -> tuple[float, int]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_maxrss  # maxrss in KiB on Linux


def mode_throughput(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, FakeServer({"default_reply": "ok"}, latency_ms=args.latency_ms) as srv:
        project = make_project(Path(tmp), args.cells, srv.base_url)
        srv.reset()
        cpu0, _ = rusage()
        t0 = time.perf_counter()
        [summary] = run(project, "synth", RunOptions(concurrency=args.concurrency, progress=False))
        wall = time.perf_counter() - t0
        cpu1, maxrss = rusage()
        stats = srv.stats(by_request=False)
    ideal = math.ceil(args.cells / args.concurrency) * args.latency_ms / 1000.0
    return {
        "mode": "throughput", "cells": args.cells, "latency_ms": args.latency_ms, "concurrency": args.concurrency,
        "wall_s": round(wall, 3), "ideal_s": round(ideal, 3), "ratio": round(wall / ideal, 3) if ideal else None,
        "cpu_s": round(cpu1 - cpu0, 3), "cpu_ms_per_cell": round((cpu1 - cpu0) * 1000 / args.cells, 3),
        "server_calls": stats["calls"], "server_max_in_flight": stats["max_in_flight"],
        "counts": summary.counts, "peak_rss_mb": round(maxrss / 1024, 1),
    }


def mode_memory(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, FakeServer({"default_reply": "ok"}, latency_ms=args.latency_ms) as srv:
        project = make_project(Path(tmp), args.cells, srv.base_url)
        _, rss_before = rusage()
        cpu0, _ = rusage()
        t0 = time.perf_counter()
        [summary] = run(project, "synth", RunOptions(concurrency=args.concurrency, progress=False))
        wall = time.perf_counter() - t0
        cpu1, maxrss = rusage()
    return {
        "mode": "memory", "cells": args.cells, "latency_ms": args.latency_ms, "concurrency": args.concurrency,
        "peak_rss_mb": round(maxrss / 1024, 1), "rss_before_run_mb": round(rss_before / 1024, 1),
        "wall_s": round(wall, 3), "cpu_ms_per_cell": round((cpu1 - cpu0) * 1000 / args.cells, 3),
        "counts": summary.counts,
    }


def mode_resume(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, FakeServer({"default_reply": "ok"}) as srv:
        project = make_project(Path(tmp), args.cells, srv.base_url)
        os.environ[KEY_ENV] = "sk-bench"
        [first] = run(project, "synth", RunOptions(concurrency=args.concurrency, progress=False),
                      stop_after=args.done)
        assert first.counts["ok"] == args.done and not first.finished, first
        srv.configure({"default_reply": "ok", "latency_ms": args.latency_ms})
        env = {**os.environ, KEY_ENV: "sk-bench"}
        cmd = [str(Path(sys.executable).with_name("benchcard")), "-C", str(project.root), "run", "synth",
               "--resume", first.run, "--json", "--concurrency", str(args.concurrency)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first_call = None
        while first_call is None and proc.poll() is None:
            if srv.stats(by_request=False)["calls"] > 0:
                first_call = time.perf_counter() - t0
            time.sleep(0.005)
        out, err = proc.communicate(timeout=120)
        total = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"resume failed: {err}")
        [summary] = json.loads(out)["runs"]
        calls = srv.stats(by_request=False)["calls"]
    return {
        "mode": "resume", "cells": args.cells, "done_before": args.done, "first_call_s": round(first_call or -1, 3),
        "resume_total_s": round(total, 3), "calls_on_resume": calls, "counts": summary["counts"],
    }


def mode_reference(args: argparse.Namespace) -> dict[str, Any]:
    """The floor of this server on this machine: a bare aiohttp client (no httpx, no plan, no files) posting the
    synthetic card's bodies with `concurrency` loops, timed the same way as `throughput`."""
    import asyncio

    import aiohttp

    with tempfile.TemporaryDirectory() as tmp, FakeServer({"default_reply": "ok"}, latency_ms=args.latency_ms) as srv:
        project = make_project(Path(tmp), args.cells, srv.base_url)
        card = load_card(project.card_path("synth"), project)
        bodies = [{"model": "fake-model", "messages": card.messages(v, card.fixture_text(f)), **card.params}
                  for f in card.fixture_ids() for v in card.variant_names() for _ in range(card.repetitions)]
        latencies: list[float] = []

        async def go() -> float:
            todo = list(reversed(bodies))
            connector = aiohttp.TCPConnector(limit=args.concurrency)
            async with aiohttp.ClientSession(connector=connector) as session:
                async def loop() -> None:
                    while todo:
                        body = todo.pop()
                        t = time.perf_counter()
                        async with session.post(f"{srv.base_url}/chat/completions", json=body,
                                                headers={"Authorization": "Bearer sk-bench"}) as response:
                            await response.json()
                        latencies.append(time.perf_counter() - t)

                t0 = time.perf_counter()
                await asyncio.gather(*(loop() for _ in range(args.concurrency)))
                return time.perf_counter() - t0

        wall = asyncio.run(go())
    ideal = math.ceil(args.cells / args.concurrency) * args.latency_ms / 1000.0
    return {"mode": "reference", "cells": args.cells, "latency_ms": args.latency_ms, "concurrency": args.concurrency,
            "wall_s": round(wall, 3), "ratio": round(wall / ideal, 3) if ideal else None,
            "mean_latency_ms": round(1000 * sum(latencies) / len(latencies), 2)}


def mode_limited(args: argparse.Namespace) -> dict[str, Any]:
    """`run` at `--concurrency` against a server taking `--takes` calls at once and refusing the rest with `429,
    Retry-After: 0.05`: cells ok, calls refused, and the wall against the ideal at the server's own width."""
    import asyncio
    import threading

    from aiohttp import web

    state = {"in_flight": 0, "most": 0, "answered": 0, "refused": 0}
    reply = {"id": "x", "object": "chat.completion", "model": "fake-model", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}}

    async def chat(request: web.Request) -> web.StreamResponse:
        await request.read()
        if state["in_flight"] >= args.takes:
            state["refused"] += 1
            return web.json_response({"error": {"message": "too many requests in flight"}}, status=429,
                                     headers={"Retry-After": "0.05"})
        state["in_flight"] += 1
        state["most"] = max(state["most"], state["in_flight"])
        try:
            await asyncio.sleep(args.latency_ms / 1000.0)
            state["answered"] += 1
            return web.json_response(reply)
        finally:
            state["in_flight"] -= 1

    async def models(request: web.Request) -> web.StreamResponse:
        return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            project = make_project(Path(tmp), args.cells, f"http://127.0.0.1:{port}/v1")
            t0 = time.perf_counter()
            [summary] = run(project, "synth", RunOptions(concurrency=args.concurrency, progress=False))
            wall = time.perf_counter() - t0
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
    ideal = math.ceil(args.cells / args.takes) * args.latency_ms / 1000.0
    return {"mode": "limited", "cells": args.cells, "latency_ms": args.latency_ms, "concurrency": args.concurrency,
            "takes": args.takes, "wall_s": round(wall, 3), "ideal_s": round(ideal, 3),
            "ratio": round(wall / ideal, 3) if ideal else None, "counts": summary.counts,
            "answered_at_server": state["answered"], "refused_at_server": state["refused"],
            "server_max_in_flight": state["most"], "narrowed": summary.narrowed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", default="all",
                        choices=("throughput", "memory", "resume", "reference", "limited", "all"))
    parser.add_argument("--cells", type=int)
    parser.add_argument("--latency-ms", type=float)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--done", type=int, default=9000, help="resume mode: cells finished before the resume")
    parser.add_argument("--takes", type=int, default=5, help="limited mode: calls the server takes at once")
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-bench")
    if args.mode == "all":
        for mode, cells, latency in (("throughput", 10_000, 100), ("memory", 100_000, 0), ("resume", 10_000, 0)):
            cmd = [sys.executable, __file__, "--mode", mode, "--cells", str(cells), "--latency-ms", str(latency),
                   "--concurrency", str(args.concurrency), "--done", str(args.done)]
            subprocess.run(cmd, check=True)
        return
    defaults = {"throughput": (10_000, 100.0), "memory": (100_000, 0.0), "resume": (10_000, 0.0),
                "reference": (10_000, 100.0), "limited": (2_000, 50.0)}[args.mode]
    args.cells = args.cells or defaults[0]
    args.latency_ms = defaults[1] if args.latency_ms is None else args.latency_ms
    modes = {"throughput": mode_throughput, "memory": mode_memory, "resume": mode_resume, "reference": mode_reference,
             "limited": mode_limited}
    result = modes[args.mode](args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
