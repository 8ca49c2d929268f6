"""What the embedded model's worker process costs: the same calls in-process, through the worker process
(`LocalProvider`, as a run makes them), and through llama-cpp-python's own server (`python -m llama_cpp.server`,
the other way to keep llama.cpp out of the run's process), alternating rounds so that the machine's drift
falls on all three alike.

- overhead: median wall time of a one-token greedy call on a short prompt (the fixed cost of a call);
- throughput: output tokens per second over the demo card's 20 distinct requests at temperature 0 and
  --max-tokens (the prompt-cache behaviour of a run: consecutive requests share their first tokens).

    python benchmarks/local_worker.py --rounds 3 [--no-server]

Figures go in docs/performance.md with the load average printed here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchcard.card.load import load_card
from benchcard.project import Project
from benchcard.run.options import backoff_delay
from benchcard.run.providers import BUILTIN
from benchcard.run.providers.local import LocalProvider, close_all
from benchcard.run.providers.localmodel import bundled_gguf, generate, load_model, sampling_kwargs, usable_cpus
from machine import cpu_model  # benchmarks/machine.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
SHORT = [{"role": "user", "content": "Say yes."}]


def demo_bodies(max_tokens: int) -> list[dict[str, Any]]:
    project = Project(ROOT)
    card = load_card(ROOT / "cards" / "demo-answer-cue.yaml", project)
    bodies = []
    for variant in card.variants:
        for path in sorted(card.fixtures.values()):
            messages = card.messages(variant, path.read_text(encoding="utf-8"))
            bodies.append({"model": "SmolLM2-135M-Instruct", "messages": messages, "max_tokens": max_tokens,
                           "temperature": 0})
    return bodies


class InProcess:
    name = "in-process"

    def __init__(self) -> None:
        self.model = load_model(bundled_gguf())

    def call(self, body: dict[str, Any]) -> int:
        response, _ = generate(self.model, body["messages"], sampling_kwargs(body))
        return int(response["usage"]["completion_tokens"])


class Worker:
    name = "worker process"

    def __init__(self) -> None:
        self.provider = LocalProvider(BUILTIN["local"], None)
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.provider.prepare())

    def call(self, body: dict[str, Any]) -> int:
        return self.loop.run_until_complete(self.provider.complete(body)).usage.output


#: The poll of a starting server: the run's own backoff (`run.options.backoff_delay`, full jitter), from 0.1 s up to
#: 2 s between tries, so that a server answering 503 while it loads the model is not asked again at once, in a loop.
POLL_BASE, POLL_CAP = 0.1, 2.0


def wait_until_up(client: httpx.Client, timeout: float, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Whether `GET /models` answered 200 within `timeout` s; any other answer, or none (refused, reset), is tried
    again after a backoff, never at once."""
    deadline = time.monotonic() + timeout
    rng = random.Random(0)
    attempt = 0
    while time.monotonic() < deadline:
        attempt += 1
        with contextlib.suppress(httpx.TransportError):
            if client.get("/models").status_code == 200:
                return True
        sleep(min(backoff_delay(attempt, None, POLL_BASE, POLL_CAP, rng), max(0.0, deadline - time.monotonic())))
    return False


class Server:
    name = "llama_cpp.server"

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cpus = usable_cpus()  # as load_model counts them
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_gguf()), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "8192", "--n_threads", str(max(1, cpus // 2)),
             "--n_threads_batch", str(cpus), "--verbose", "False"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{port}/v1", timeout=120)
        if not wait_until_up(self.client, 120.0):
            raise SystemExit("llama_cpp.server did not start")

    def call(self, body: dict[str, Any]) -> int:
        answer = self.client.post("/chat/completions", json=body).json()
        return int(answer["usage"]["completion_tokens"])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def overhead(engine: Any, calls: int) -> float:
    body = {"messages": SHORT, "max_tokens": 1, "temperature": 0}
    engine.call(body)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        engine.call(body)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def throughput(engine: Any, bodies: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    tokens: int = sum(engine.call(b) for b in bodies)
    return tokens / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=40, help="one-token calls per round for the overhead")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    bodies = demo_bodies(args.max_tokens)
    engines: list[Any] = [InProcess(), Worker()] + ([] if args.no_server else [Server()])
    results: dict[str, dict[str, list[float]]] = {e.name: {"overhead": [], "throughput": []} for e in engines}
    try:
        for r in range(args.rounds):
            order = engines if r % 2 == 0 else engines[::-1]
            for engine in order:
                results[engine.name]["overhead"].append(overhead(engine, args.calls))
                results[engine.name]["throughput"].append(throughput(engine, bodies))
    finally:
        for engine in engines:
            if hasattr(engine, "close"):
                engine.close()
        close_all()
    base = results["in-process"]
    print(f"{cpu_model()}; load average {os.getloadavg()[0]:.2f}; {args.rounds} alternating rounds; "
          f"{args.calls} one-token calls and {len(bodies)} demo requests (max_tokens {args.max_tokens}) per round")
    print("| engine | one-token call, median of round medians | vs in-process | output tokens/s, median | "
          "vs in-process |")
    print("|---|---|---|---|---|")
    for name, figures in results.items():
        o, t = statistics.median(figures["overhead"]), statistics.median(figures["throughput"])
        o0, t0 = statistics.median(base["overhead"]), statistics.median(base["throughput"])
        print(f"| {name} | {o:.2f} ms | {o - o0:+.2f} ms | {t:.1f} | {t / t0:.3f}× |")


if __name__ == "__main__":
    main()
