"""The embedded model in its worker process: a native crash or a hang ends the worker, never the run; the build
is portable; a preflight refuses a model that cannot run before any run folder exists.

Crashes are real: a `sitecustomize` placed on the worker's PYTHONPATH makes llama.cpp's chat call kill its own
process with SIGILL or SIGSEGV (or hang) at a chosen call, exactly as a bad native build would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.run.providers._localworker import serve

from ...helpers_project import REPO
from ...helpers_run import ab_project, seal_card

INJECT = '''
import os, signal, time
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the worker sets it before llama.cpp loads (localmodel)
import llama_cpp
_at = int(os.environ.get("BENCHCARD_TEST_FAULT_AT", "0"))
_what = os.environ.get("BENCHCARD_TEST_FAULT", "")
_calls = [0]
_original = llama_cpp.Llama.create_chat_completion
def _faulty(self, *args, **kwargs):
    _calls[0] += 1
    flag = os.environ.get("BENCHCARD_TEST_FAULT_FLAG", "")
    if _what and _calls[0] == _at and not os.path.exists(flag):
        open(flag, "w").close()  # once: the worker that replaces this one behaves
        if _what == "HANG":
            time.sleep(3600)
        os.kill(os.getpid(), getattr(signal, _what))
    return _original(self, *args, **kwargs)
llama_cpp.Llama.create_chat_completion = _faulty
'''


@pytest.fixture
def fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """fault(kind, at): the worker processes started from now on die (or hang) at their `at`-th model call."""
    site = tmp_path / "inject"
    site.mkdir()
    (site / "sitecustomize.py").write_text(INJECT)

    def arm(kind: str, at: int) -> None:
        from benchcard.run.providers.local import close_all

        close_all()  # workers of earlier tests were started without the fault
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
        monkeypatch.setenv("BENCHCARD_TEST_FAULT", kind)
        monkeypatch.setenv("BENCHCARD_TEST_FAULT_AT", str(at))
        monkeypatch.setenv("BENCHCARD_TEST_FAULT_FLAG", str(site / "fault-used"))

    yield arm
    from benchcard.run.providers.local import close_all

    close_all()  # a worker started with the fault armed must not serve the next test


def local_card(root: Path) -> Path:
    project = ab_project(root, None, fixtures=2, repetitions=2, max_tokens=6)
    card = project.root / "cards" / "colour-ab.yaml"
    card.write_text(card.read_text().replace("rig: {provider: fake, model: test/model,",
                                             "rig: {provider: local, model: SmolLM2-135M-Instruct,"))
    for old in (root / "keys" / "colour-ab").glob("*.seal.json"):
        old.unlink()  # sealed by ab_project with the fake rig; this card names the local model
    seal_card(root, "colour-ab")  # not `benchcard seal`: its design check draws tables no test here reads (13 CPU-s)
    return root


def outputs(root: Path) -> list[dict[str, Any]]:
    [path] = list((root / "results").rglob("outputs.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.local_model
@pytest.mark.parametrize(("signal_name", "cause"), [
    ("SIGILL", "illegal instruction (SIGILL): this llama-cpp-python build uses CPU instructions this machine "
               "refuses; rebuild it with `make wheel`"),
    ("SIGSEGV", "segmentation fault (SIGSEGV) inside llama.cpp"),
])
def test_a_worker_crash_fails_its_cell_stops_the_run_and_resume_finishes_it(
        tmp_path: Path, fault, signal_name: str, cause: str) -> None:
    root = local_card(tmp_path / "proj")
    fault(signal_name, 3)  # call 1 is the preflight, 2 the first cell, 3 the second cell
    result = CliRunner().invoke(cli, ["-C", str(root), "run", "colour-ab", "--provider", "local"])
    assert result.exit_code == 1
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: the local model's worker process died: " + cause)
    run_id = re.search(r"--resume (\S+)", last)
    assert run_id and "the run stopped with 2 of 8 cells recorded" in last
    rows = outputs(root)
    assert [r["status"] for r in rows][1:] == ["failed"] and rows[0]["status"] in ("ok", "truncated")
    assert cause in str(rows[1]["error"])
    assert rows[1]["text"] == "" and rows[1]["attempts"] == 1

    from benchcard.run.providers.local import close_all

    close_all()
    os.environ.pop("BENCHCARD_TEST_FAULT")  # the cause is fixed
    result = CliRunner().invoke(cli, ["-C", str(root), "run", "colour-ab", "--resume", run_id.group(1)])
    assert result.exit_code == 0, result.output
    rows = outputs(root)
    assert len(rows) == 8 and len({r["cell"] for r in rows}) == 8  # nothing lost, nothing called twice
    assert [r["status"] for r in rows].count("failed") == 1  # the crashed cell stays on record as failed
    manifest = json.loads(next((root / "results").rglob("manifest.json")).read_text())
    counts = manifest["counts"]
    assert counts["failed"] == 1 and counts["ok"] + counts["truncated"] == 7


@pytest.mark.local_model
def test_a_hung_worker_is_ended_by_the_timeout_and_the_run_goes_on(tmp_path: Path, fault) -> None:
    root = local_card(tmp_path / "proj")
    fault("HANG", 2)  # the first cell hangs; its retry runs in a fresh worker
    # 8 s ends the hang sooner than the 20 s before: a 6-token call here takes 0.2-0.9 s at load 7.5 on 2 cores
    # (the model's load and a worker's restart are outside the timeout); one cut short would fail the attempts,
    # so the margin is kept wide for a CI machine whose other test worker runs the model at the same time.
    result = CliRunner().invoke(cli, ["-C", str(root), "run", "colour-ab", "--provider", "local",
                                      "--timeout", "8", "--attempts", "2"])
    assert result.exit_code == 0, result.output
    rows = outputs(root)
    assert len(rows) == 8 and all(r["status"] in ("ok", "truncated") for r in rows)
    assert sorted(int(r["attempts"]) for r in rows) == [1] * 7 + [2]


@pytest.mark.local_model
def test_the_preflight_refuses_a_model_that_cannot_run_before_any_folder_exists(tmp_path: Path, fault) -> None:
    root = local_card(tmp_path / "proj")
    fault("SIGILL", 1)
    result = CliRunner().invoke(cli, ["-C", str(root), "run", "colour-ab", "--provider", "local"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: the local model cannot run on this machine: the local model's worker process died: illegal "
        "instruction (SIGILL): this llama-cpp-python build uses CPU instructions this machine refuses; rebuild "
        "it with `make wheel` (a portable build; see README)"]
    assert not (root / "results").exists() or not any((root / "results").rglob("*"))
    from benchcard.run.providers.local import close_all

    close_all()
    (tmp_path / "inject" / "fault-used").unlink()  # the same fault again, now for check's preflight
    result = CliRunner().invoke(cli, ["-C", str(root), "check", "colour-ab"])
    assert result.exit_code == 1
    assert "FAIL local model SmolLM2-135M-Instruct (local): the local model cannot run on this machine: " \
           "the local model's worker process died: illegal instruction (SIGILL)" in result.output


@pytest.mark.local_model
def test_check_says_the_local_model_answered(tmp_path: Path) -> None:
    root = local_card(tmp_path / "proj")
    result = CliRunner().invoke(cli, ["-C", str(root), "check", "colour-ab"])
    assert result.exit_code == 0, result.output
    assert "ok   local model SmolLM2-135M-Instruct (local): loaded and answered a one-token call" in result.output


# ---------------------------------------------------------------------------------------------- a portable build

AMX = re.compile(r"\b(tilezero|tileloadd\w*|tilestored|ldtilecfg|sttilecfg|tilerelease|tdpb\w+|tdpfp16ps)\b")


@pytest.mark.local_model
def test_the_installed_llama_cpp_has_no_amx_and_no_avx512_code() -> None:
    """Fails on any CPU if the build ever goes native again: AMX code dies with SIGILL where the kernel guards
    the tile state per thread, and AVX-512 code where the CPU has none (every AMD before Zen 4)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    assert "AMX" not in info and "AVX512 = 1" not in info, info
    assert "AVX2 = 1" in info or "NEON = 1" in info, info  # the x86-64-v3 (or arm64) baseline is there
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils, part of build-essential) is needed to inspect the llama.cpp build"
    libs = sorted((Path(llama_cpp.__file__).parent / "lib").glob("libggml-cpu*.so"))
    assert libs, "no libggml-cpu in the installed llama-cpp-python"
    for lib in libs:
        code = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                              check=True).stdout
        assert code.count("\n") > 10_000  # really disassembled
        assert not AMX.search(code), f"{lib.name} holds AMX instructions"
        assert "%zmm" not in code, f"{lib.name} holds AVX-512 instructions"


def test_the_wheel_cache_is_keyed_by_the_build_flags() -> None:
    make = shutil.which("make")
    assert make, "make is needed (README: build-essential)"

    def wheelhouse(*extra: str) -> str:
        out = subprocess.run([make, "-s", "-C", str(REPO), "wheelhouse", *extra], capture_output=True, text=True,
                             check=True).stdout.strip()
        return out

    default = wheelhouse()
    assert "benchcard-wheels/" in default
    assert wheelhouse("LLAMA_CMAKE=-DGGML_NATIVE=ON") != default
    assert wheelhouse("LLAMA=llama-cpp-python==0.3.35") != default
    flags = subprocess.run([make, "-s", "-C", str(REPO), "llama-flags"], capture_output=True, text=True,
                           check=True).stdout
    assert "-DGGML_NATIVE=OFF" in flags and "AMX_INT8=ON" not in flags and "-DGGML_AVX512=ON" not in flags


# --------------------------------------------------------------------------------- the loop, in this process


class Pipe:
    """The worker's end of its pipe: the messages the parent sends, and the replies it got back."""

    def __init__(self, *messages: dict[str, object]):
        self.inbox = list(messages)
        self.sent: list[dict[str, object]] = []

    def recv(self) -> dict[str, object]:
        if not self.inbox:
            raise EOFError  # the parent closed its end
        return self.inbox.pop(0)

    def send(self, reply: dict[str, object]) -> None:
        self.sent.append(reply)


class StandInLlama:
    """In place of llama_cpp.Llama: a file named `fails-to-load.gguf` does not load; content picks the answer."""

    def __init__(self, model_path: str, n_ctx: int, **kwargs: object):
        if model_path.endswith("fails-to-load.gguf"):
            raise ValueError(f"Failed to load model from file: {model_path}\nsecond line")
        self.window = n_ctx

    def n_ctx(self) -> int:
        return self.window

    def create_chat_completion(self, messages: list[dict[str, str]], **kwargs: object) -> dict[str, object]:
        content = messages[-1]["content"]
        if content == "too long":
            raise ValueError("Requested tokens (900) exceed context window of 256\nmore")
        if content == "boom":
            raise RuntimeError("llama_decode returned -3")
        return {"choices": [{"message": {"content": content.upper()}, "finish_reason": "stop"}], "kwargs": kwargs}


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A stand-in llama_cpp module for this process; the worker's loop sets SIGINT aside, so it is put back."""
    module = types.ModuleType("llama_cpp")
    module.Llama = StandInLlama  # type: ignore[attr-defined]
    module.llama_print_system_info = lambda: b"AVX2 = 1 | NEON = 0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    handler = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


def chat(content: str) -> dict[str, object]:
    return {"op": "complete", "messages": [{"role": "user", "content": content}], "kwargs": {"max_tokens": 4}}


def test_the_worker_loads_once_answers_each_request_and_stops_when_asked(stand_in: None) -> None:
    pipe = Pipe({"op": "load"}, chat("red"), {"op": "reload"}, chat("too long"), chat("boom"), {"op": "stop"},
                chat("never read"))
    serve(pipe, "model.gguf", 256)
    loaded, answer, unknown, too_long, boom = pipe.sent
    assert loaded["ok"] is True and loaded["system_info"] == "AVX2 = 1 | NEON = 0"
    assert answer["ok"] is True and answer["window"] == 256
    assert answer["response"]["choices"][0]["message"]["content"] == "RED"  # type: ignore[index]
    assert unknown == {"ok": False, "kind": "call", "error": "unknown request 'reload'"}
    assert too_long == {"ok": False, "kind": "call",
                        "error": "local model: Requested tokens (900) exceed context window of 256"}
    assert boom == {"ok": False, "kind": "call", "error": "local model: RuntimeError: llama_decode returned -3"}
    assert pipe.inbox == [chat("never read")]  # nothing is read after `stop`
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # Ctrl-C is the parent's to handle


def test_a_model_that_does_not_load_is_a_provider_error_and_the_loop_ends_with_its_pipe(stand_in: None) -> None:
    pipe = Pipe(chat("red"), {"op": "load"})
    serve(pipe, "/models/fails-to-load.gguf", 256)
    message = ("cannot load the local model /models/fails-to-load.gguf: Failed to load model from file: "
               "/models/fails-to-load.gguf")
    assert pipe.sent == [{"ok": False, "kind": "provider", "error": message}] * 2  # each request tries again
