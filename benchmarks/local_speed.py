"""Speed of the embedded model (SmolLM2-135M-Instruct through llama-cpp-python) on this machine.

Reports, as a markdown table:

- load: seconds to load the bundled GGUF (once per run);
- prompt processing: tokens per second when a prompt of N tokens is evaluated in one go (`Llama.eval` after a
  reset, so nothing is reused from a cache), for N in --prompt-sizes;
- generation: tokens per second of greedy decoding, one token at a time after a short prompt (wall time of
  `Llama.eval` of each chosen token), for n_threads 1 and the CPUs this process may use (`usable_cpus`), or --threads;
- calls: end-to-end chat completions per second through `benchcard.run.providers.local.LocalProvider` (its own
  thread counts: half the cores generating, all of them on the prompt) over the demo card's 20 distinct requests
  in a shuffled order at the card's params (max_tokens 128, temperature 0.7); `benchcard run demo-answer-cue
  --provider local` makes each of them 5 times. As in a run, each prompt is evaluated in 32-token chunks from its
  first token, the context keeping from the call before only whole chunks both prompts share, so that a reply does
  not depend on the call before it (`localmodel.chunked_prefill`, docs/performance.md).

Each figure is the median of --repeat timings. Other processes on the machine slow llama.cpp's threads down
sharply, so the load average is printed beside the figures. The OpenMP wait policy is PASSIVE, as in a run,
unless the environment sets it (`OMP_WAIT_POLICY=ACTIVE python benchmarks/local_speed.py` shows the default of
libgomp, whose threads spin while they wait).

    python benchmarks/local_speed.py --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

from benchcard.card.load import load_card
from benchcard.project import Project
from benchcard.run.providers import BUILTIN
from benchcard.run.providers.local import LocalProvider
from benchcard.run.providers.localmodel import bundled_gguf, require_llama_cpp, usable_cpus
from machine import cpu_model  # benchmarks/machine.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
FILLER = (
    "The migration ran for six hours against the replica before anyone noticed that the replica had been "
    "promoted the previous week, which meant the whole rehearsal had been executed against production data. "
)


def row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def load(n_threads: int, n_ctx: int = 8192) -> tuple[Any, float]:
    llama_cpp = require_llama_cpp()
    t0 = time.perf_counter()
    llama = llama_cpp.Llama(model_path=str(bundled_gguf()), n_ctx=n_ctx, n_threads=n_threads,
                            n_threads_batch=n_threads, verbose=False)
    return llama, time.perf_counter() - t0


def prompt_speed(llama: Any, n_tokens: int, repeat: int) -> float:
    """Tokens per second of evaluating an n-token prompt from an empty context."""
    tokens = llama.tokenize((FILLER * (n_tokens // 20 + 2)).encode())[:n_tokens]
    times = []
    for _ in range(repeat):
        llama.reset()
        t0 = time.perf_counter()
        llama.eval(tokens)
        times.append(time.perf_counter() - t0)
    return n_tokens / statistics.median(times)


def generation_speed(llama: Any, n_tokens: int, repeat: int) -> float:
    """Tokens per second of greedy decoding after a short prompt: one token per eval, argmax of the logits."""
    prompt = llama.tokenize(b"Write a long story about a lighthouse keeper.")
    times = []
    for _ in range(repeat):
        llama.reset()
        llama.eval(prompt)
        t0 = time.perf_counter()
        for _ in range(n_tokens):
            token = int(llama.scores[llama.n_tokens - 1].argmax())
            llama.eval([token])
        times.append(time.perf_counter() - t0)
    return n_tokens / statistics.median(times)


async def call_speed(seed: int = 0) -> tuple[int, float, int, int]:
    """The demo card's 20 distinct requests (10 fixtures x 2 variants) once each, in a shuffled order as in a run:
    (calls, seconds, prompt tokens, output tokens)."""
    project = Project(ROOT)
    card = load_card(project.card_path("demo-answer-cue"), project)
    provider = LocalProvider(BUILTIN["local"], None)
    bodies = [provider.build_body("SmolLM2-135M-Instruct", card.messages(v, card.fixture_text(f)), card.params, None)
              for f in card.fixture_ids() for v in card.variant_names()]
    random.Random(seed).shuffle(bodies)
    await provider.complete(provider.build_body("x", [{"role": "user", "content": "hi"}], {"max_tokens": 1}, None))
    prompt = out = 0
    t0 = time.perf_counter()
    for body in bodies:
        result = await provider.complete(body)
        prompt += result.usage.input
        out += result.usage.output
    elapsed = time.perf_counter() - t0
    await provider.aclose()
    return len(bodies), elapsed, prompt, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--prompt-sizes", type=int, nargs="+", default=[64, 512, 2048])
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts to measure (default: 1 and the CPUs this process may use); "
                             "under `taskset -c 0,1`, 32 is what a 64-core host's count gave to generating")
    args = parser.parse_args()

    llama_cpp = require_llama_cpp()  # sets OMP_WAIT_POLICY=PASSIVE unless it is set already
    cpus = usable_cpus()
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, {cpus} usable here, "
          f"load average {os.getloadavg()[0]:.2f} at start; "
          f"llama-cpp-python {llama_cpp.__version__}; model {bundled_gguf().name}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    print()
    print(row("measure", "n_threads", "median"))
    print(row("---", "---:", "---:"))
    thread_counts = sorted(set(args.threads or (1, cpus)))
    for n_threads in thread_counts:
        llama, load_s = load(n_threads)
        if n_threads == thread_counts[-1]:
            print(row("load the GGUF", str(n_threads), f"{load_s:.2f} s"))
        for n in args.prompt_sizes:
            rate = prompt_speed(llama, n, args.repeat)
            print(row(f"prompt processing, {n} tokens", str(n_threads), f"{rate:,.0f} tokens/s"))
        rate = generation_speed(llama, args.gen_tokens, args.repeat)
        print(row(f"generation, {args.gen_tokens} tokens greedy", str(n_threads), f"{rate:,.0f} tokens/s"))
        llama.close()
    calls, seconds, prompt, out = asyncio.run(call_speed())
    print(row(f"demo-answer-cue: its {calls} distinct requests via LocalProvider ({prompt} prompt, {out} output "
              "tokens)", f"{max(1, cpus // 2)} / {cpus} batch", f"{calls / seconds:.1f} calls/s ({seconds:.1f} s)"))
    print()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
