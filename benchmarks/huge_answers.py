"""Peak memory of `benchcard run` when every answer is huge: many calls in flight, each just under the cap.

A server of its own, in another process (its memory is not the runner's), answers every call with one chat
completion of `--mib` MiB (the reply text ASCII, so its JSON is about that size), sends all of it but the last KiB,
and holds that back until `--concurrency` answers are held so (or 2 s went by): the runner has every answer in
flight at once, each nearly read, the worst it can meet. `benchcard run` runs under `/usr/bin/time -v`, whose
"Maximum resident set size" is the figure.

    python benchmarks/huge_answers.py --mib 30 --concurrency 64 --cells 128
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchproject import sealed_project  # benchmarks/benchproject.py, beside this script

CARD = """\
id: huge
version: 1
kind: ab
title: Huge answers for the memory benchmark
rig: {provider: bench, model: fake-model, effort: null}
params: {max_tokens: 64, temperature: 0}
prompt:
  user: |-
    {{variant}}Say ok about {{fixture}}.
variants: {baseline: "", A: "Be careful.\\n"}
baseline: baseline
fixtures: fixtures/huge/*.txt
repetitions: 1
scoring: {method: exact, expected: ok, trim: true, case_sensitive: false}
win:
  all:
    - {metric: score, test: rises}
  equivalence_margin: 0.05
examples:
  - {label: Correct, output: ok, expect: pass}
  - {label: Rejected, output: "nope", expect: fail}
history:
  - {version: 1, note: synthetic}
"""
KEY_ENV = "BENCH_FAKE_KEY"
HELD = 1024  # the bytes of each answer held back until all are nearly sent


def answer_body(mib: float) -> bytes:
    head = {"id": "huge", "object": "chat.completion", "model": "fake-model",
            "usage": {"prompt_tokens": 5, "completion_tokens": 64, "total_tokens": 69}}
    text = "x" * int(mib * 2**20 - 400)
    return json.dumps({**head, "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}]}).encode()


def serve(listener: socket.socket, mib: float, together: int) -> None:
    """The server's process: each request answered with the huge body, its last KiB held for the barrier."""
    body = answer_body(mib)
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    held = [0]
    release = asyncio.Event()

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                lines = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)content-length:\s*(\d+)", lines)
                await reader.readexactly(int(length.group(1)) if length else 0)
                writer.write(head + body[:-HELD])
                await writer.drain()
                held[0] += 1
                if held[0] >= together:  # the first `together` answers are held until all are nearly sent
                    release.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(release.wait(), 2.0)
                writer.write(body[-HELD:])
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(one, sock=listener)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _peak_while_calling(timed: subprocess.Popen[str], root: Path, cells: int) -> int | None:
    """The runner's peak RSS (VmHWM, MiB) when its outputs.jsonl holds every cell's row, before it scores them:
    the calls' own peak, read from /proc while `/usr/bin/time`'s child runs."""
    rows, offset, peak = 0, 0, None
    while rows < cells and timed.poll() is None:
        time.sleep(0.05)
        try:
            children = Path(f"/proc/{timed.pid}/task/{timed.pid}/children").read_text().split()
            status = Path(f"/proc/{children[0]}/status").read_text() if children else ""
        except OSError:
            continue
        hwm = re.search(r"VmHWM:\s+(\d+) kB", status)
        peak = round(int(hwm.group(1)) / 1024) if hwm else peak
        for outputs in root.glob("results/**/outputs.jsonl"):
            with outputs.open("rb") as f:
                f.seek(offset)
                more = f.read()
            offset += len(more)
            rows += more.count(b"\n")
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=30.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--cells", type=int, default=128)
    a = parser.parse_args()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = multiprocessing.get_context("fork").Process(target=serve, args=(listener, a.mib, a.concurrency),
                                                         daemon=True)
    server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            fixtures = ((f"f{i:05d}", f"item {i}\n") for i in range(a.cells // 2))
            project = sealed_project(Path(tmp) / "p", "huge", CARD, fixtures, f"http://127.0.0.1:{port}/v1", KEY_ENV)
            env = {**os.environ, KEY_ENV: "bench-fake-key-0000"}
            started = time.perf_counter()
            command = ["/usr/bin/time", "-v", sys.executable, "-m", "benchcard", "-C", str(project.root), "run",
                       "huge", "--concurrency", str(a.concurrency), "--json"]
            with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
                calls_peak = _peak_while_calling(p, project.root, a.cells)
                out, err = p.communicate()
            wall = time.perf_counter() - started
            done = subprocess.CompletedProcess(command, p.returncode, out, err)
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        runs = json.loads(done.stdout)["runs"] if done.returncode == 0 else None
        print(json.dumps({"mib": a.mib, "concurrency": a.concurrency, "cells": a.cells, "exit": done.returncode,
                          "max_rss_mib": round(int(rss.group(1)) / 1024) if rss else None,
                          "max_rss_mib_calling": calls_peak, "wall_s": round(wall, 1),
                          "counts": runs[0]["counts"] if runs else None,
                          "errors": None if runs else done.stderr.strip().splitlines()[:3]}))
    finally:
        server.terminate()
        server.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
