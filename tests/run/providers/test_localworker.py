"""The embedded model in its worker process: a native crash or a hang ends the worker, never the run; the build
is portable; a preflight refuses a model that cannot run before any run folder exists.

Crashes are real: a `sitecustomize` placed on the worker's PYTHONPATH makes llama.cpp's chat call kill its own
process with SIGILL or SIGSEGV (or hang) at a chosen call, exactly as a bad native build would.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
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

from ...helpers_isa import beyond_the_ceiling, instructions
from ...helpers_project import REPO
from ...helpers_run import ab_project, seal_card

INJECT = '''
import os, signal, time
os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # as the worker sets it before llama.cpp loads (localmodel)
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

def disassemble(lib: Path) -> str:
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils, part of build-essential) is needed to inspect the llama.cpp build"
    return subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.local_model
def test_the_installed_llama_cpp_holds_nothing_beyond_the_portable_baseline() -> None:
    """Fails on any CPU if the build ever goes native again, or turns on one set beyond the baseline: AMX code
    dies with SIGILL where the kernel guards the tile state per thread, AVX-512 code where the CPU has none
    (every AMD before Zen 4), AVX-VNNI code on Zen 3, Zen 4 and Ice Lake Xeons, SVE code on Graviton 2."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    libs = sorted((Path(llama_cpp.__file__).parent / "lib").glob("libggml-cpu*.so"))
    assert libs, "no libggml-cpu in the installed llama-cpp-python"
    for lib in libs:
        code = disassemble(lib)
        assert len(instructions(code)) > 10_000  # really disassembled
        assert beyond_the_ceiling(platform.machine(), info, code) == [], lib.name


# What a native build on a recent Xeon or Zen emits, one line each, none of it with a %zmm register: the checks
# above must name every one. The portable lines are x86-64-v3 (AVX2, FMA, F16C, BMI2) and must pass.
NATIVE_X86 = """\
{vex} vpdpbusd %ymm2, %ymm1, %ymm0
vpdpbusd %ymm2, %ymm1, %ymm0
vpdpbusd %zmm2, %zmm1, %zmm0
vpternlogd $0x96, %ymm2, %ymm1, %ymm0
vpaddd %ymm17, %ymm1, %ymm0
vpaddd %ymm2, %ymm1, %ymm0{%k1}
kmovw %k1, %eax
vpaddd (%rax){1to8}, %ymm1, %ymm0
vpandd %xmm2, %xmm1, %xmm0
vmovdqu16 %ymm1, %ymm0
vpmovdb %ymm1, %xmm0
vcvtps2udq %ymm1, %ymm0
vextracti32x4 $1, %ymm1, %xmm0
vdpbf16ps %ymm2, %ymm1, %ymm0
{vex} vcvtneps2bf16 %ymm1, %xmm0
{vex} vpmadd52luq %ymm2, %ymm1, %ymm0
vpdpbssd %ymm2, %ymm1, %ymm0
vaddph %xmm2, %xmm1, %xmm0
gf2p8affineqb $0, %xmm1, %xmm0
tdpbssd %tmm2, %tmm1, %tmm0
ldtilecfg (%rax)
"""
PORTABLE_X86 = """\
vfmadd231ps %ymm2, %ymm1, %ymm0
vcvtph2ps %xmm1, %ymm0
vcvtps2ph $0, %ymm1, %xmm0
vpmaddubsw %ymm2, %ymm1, %ymm0
vpmaddwd %ymm2, %ymm1, %ymm0
vpshufb %ymm2, %ymm1, %ymm0
vpmovsxbw %xmm1, %ymm0
vpmovzxbd %xmm1, %ymm0
vpmovmskb %ymm1, %eax
vpbroadcastd %xmm1, %ymm0
vperm2i128 $1, %ymm2, %ymm1, %ymm0
vpermps %ymm2, %ymm1, %ymm0
vextracti128 $1, %ymm1, %xmm0
vgatherdps %ymm2, (%rax,%ymm1,4), %ymm0
vpsravd %ymm2, %ymm1, %ymm0
vcvttps2dq %ymm1, %ymm0
vpand %ymm2, %ymm1, %ymm0
vmovdqu %ymm1, (%rax)
vptest %ymm1, %ymm0
andn %eax, %ebx, %ecx
bzhi %eax, %ebx, %ecx
shlx %eax, %ebx, %ecx
pdep %eax, %ebx, %ecx
kmovq_is_a_symbol:
call kmovq_is_a_symbol
"""
X86_V3 = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | "
          "OPENMP = 1 | REPACK = 1 | ")


def objdump_of(assembly: str, tmp_path: Path) -> str:
    """`assembly` through GNU as and objdump, as the installed library is read: real disassembler output."""
    source, obj = tmp_path / "a.s", tmp_path / "a.o"
    source.write_text(assembly, encoding="utf-8")
    subprocess.run(["as", "--64", str(source), "-o", str(obj)], check=True, capture_output=True)
    return disassemble(obj)


def test_the_ceiling_names_every_x86_instruction_beyond_v3_and_none_of_v3(tmp_path: Path) -> None:
    native = instructions(objdump_of(NATIVE_X86, tmp_path))
    assert len(native) == len(NATIVE_X86.splitlines())
    assert [line for line in native if not beyond_the_ceiling("x86_64", X86_V3, "0:\t" + line)] == []
    portable = objdump_of(PORTABLE_X86, tmp_path)
    assert len(instructions(portable)) == len(PORTABLE_X86.splitlines()) - 1  # the label is not an instruction
    assert beyond_the_ceiling("x86_64", X86_V3, portable) == []


def test_the_ceiling_reads_system_info_as_an_allow_list() -> None:
    assert beyond_the_ceiling("x86_64", X86_V3.replace("BMI2 = 1", "BMI2 = 1 | AVX_VNNI = 1"), "") == [
        "AVX_VNNI = 1 in llama_print_system_info()"]
    assert beyond_the_ceiling("x86_64", "CPU : SSE3 = 1 | ", "") == [
        "AVX2 is not on: not the x86_64 baseline ('CPU : SSE3 = 1 | ')"]
    graviton3 = ("CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | MATMUL_INT8 = 1 | SVE = 1 | DOTPROD = 1 | "
                 "SVE_CNT = 16 | OPENMP = 1 | REPACK = 1 | ")
    assert beyond_the_ceiling("aarch64", graviton3, "") == [
        f"{name} = 1 in llama_print_system_info()" for name in ("DOTPROD", "FP16_VA", "MATMUL_INT8", "SVE")]
    assert beyond_the_ceiling("aarch64", "CPU : NEON = 1 | ARM_FMA = 1 | OPENMP = 1 | REPACK = 1 | ", "") == []
    assert beyond_the_ceiling("riscv64", "CPU : RISCV_V = 1 | ", "") == [
        "no instruction-set ceiling is written down for riscv64 (tests/helpers_isa.py)"]


# GNU objdump's lines for arm64, written as objdump writes them (the tests need no arm64 assembler; these were
# checked on 2026-12-07 with Debian's aarch64-linux-gnu-as and -objdump 2.40).
NATIVE_ARM = """\
   0:\tsdot\tv0.4s, v1.16b, v2.16b
   4:\tsmmla\tv0.4s, v1.16b, v2.16b
   8:\tld1w\t{z0.s}, p0/z, [x0]
   c:\tfmla\tz0.s, p0/m, z1.s, z2.s
  10:\tfmla\tv0.8h, v1.8h, v2.8h
  14:\tbfmmla\tv0.4s, v1.8h, v2.8h
  18:\tptrue\tp0.s
  1c:\twhilelo\tp0.s, x0, x1
  20:\tsmstart
  24:\tfadd\th0, h1, h2
  28:\tfmov\th0, w0
  2c:\tfcvtzs\tw0, h1
  30:\tscvtf\th0, w1
  34:\tfcmp\th0, h1
  38:\tldadd\tw0, w0, [x1]
  3c:\tldaddal\tx0, x1, [x2]
  40:\tcasal\tw0, w1, [x2]
  44:\tcaspal\tx0, x1, x2, x3, [x4]
  48:\tswpal\tw0, w1, [x2]
  4c:\tstadd\tw0, [x1]
  50:\tldsetalh\tw0, w1, [x2]
  54:\tldumaxb\tw0, w1, [x2]
  58:\tsqrdmlah\tv0.4s, v1.4s, v2.4s
  5c:\tldapr\tw0, [x1]
  60:\tldapurb\tw0, [x1, #1]
  64:\tstlur\tw0, [x1]
  68:\tfcmla\tv0.4s, v1.4s, v2.4s, #90
  6c:\tfjcvtzs\tw0, d1
  70:\tfrint32z\tv0.4s, v1.4s
  74:\tcrc32cx\tw0, w1, x2
  78:\taese\tv0.16b, v1.16b
  7c:\tsha256h\tq0, q1, v2.4s
  80:\tpmull\tv0.1q, v1.1d, v2.1d
  84:\teor3\tv0.16b, v1.16b, v2.16b, v3.16b
  88:\tpacia\tx0, x1
  8c:\tretaa
"""
PORTABLE_ARM = """\
0000000000001000 <ggml_vec_dot_sdot>:
   0:\tfmla\tv0.4s, v1.4s, v2.4s
   4:\tfcvtl\tv0.4s, v1.4h
   8:\tfcvtn\tv0.4h, v1.4s
   c:\tsmull\tv0.8h, v1.8b, v2.8b
  10:\tsadalp\tv0.4s, v1.8h
  14:\tld1\t{v0.16b}, [x0]
  18:\tbl\t1000 <ggml_vec_dot_sdot>
  1c:\tadd\tx0, x0, #0x10
  20:\tbfi\tw0, w1, #3, #4
  24:\tbfxil\tx0, x1, #0, #8
  28:\tcnt\tv0.8b, v1.8b
  2c:\tfcvt\th0, s0
  30:\tldr\th0, [x0]
  34:\tprfm\tpldl1keep, [x0]
  38:\tfcvt\ts0, h0
  3c:\tfcvtl2\tv0.4s, v1.8h
  40:\tfcvtn2\tv0.8h, v1.4s
  44:\tfcvtns\tw0, s0
  48:\tmov\tv0.h[1], w0
  4c:\tumov\tw0, v0.h[1]
  50:\tldaxr\tw0, [x1]
  54:\tstlxr\tw2, w0, [x1]
  58:\tldar\tw0, [x1]
  5c:\tstlr\tw0, [x1]
  60:\tsqrdmulh\tv0.4s, v1.4s, v2.4s
  64:\tpmull\tv0.8h, v1.8b, v2.8b
  68:\tpaciasp
  6c:\tautiasp
  70:\tbti\tc
"""
# libgcc's outline atomic, as every armv8-a build links it, and the same LSE line compiled inline in ggml (what
# -march=armv8.2-a emits in ggml-cpu.c): the first picks it at run time, the second dies on a Cortex-A72.
OUTLINE_ATOMIC = """\
00000000000aed50 <__aarch64_ldadd4_relax>:
   aed50:\tmov\tw16, w0
   aed54:\tadrp\tx17, 120000 <__aarch64_have_lse_atomics>
   aed58:\tldrb\tw16, [x17, #1234]
   aed5c:\tcbz\tw16, aed68 <__aarch64_ldadd4_relax+0x18>
   aed60:\tldadd\tw0, w0, [x1]
   aed64:\tret
   aed68:\tmov\tw16, w0
   aed6c:\tldxr\tw0, [x1]
   aed70:\tadd\tw17, w0, w16
   aed74:\tstxr\tw15, w17, [x1]
   aed78:\tcbnz\tw15, aed6c <__aarch64_ldadd4_relax+0x1c>
   aed7c:\tret

00000000000aed80 <ggml_threadpool_chunk_add>:
   aed80:\tldadd\tw1, w0, [x2]
"""


def test_the_ceiling_names_every_arm64_instruction_beyond_armv8_a_and_none_of_it() -> None:
    info = "CPU : NEON = 1 | ARM_FMA = 1 | "
    native = instructions(NATIVE_ARM)
    assert [line for line in native if not beyond_the_ceiling("aarch64", info, "0:\t" + line)] == []
    assert len(native) == 36
    assert beyond_the_ceiling("aarch64", info, PORTABLE_ARM) == []
    assert beyond_the_ceiling("aarch64", info, OUTLINE_ATOMIC) == ["ldadd\tw1, w0, [x2]"]


def test_the_arm64_flags_are_the_ones_built_and_run_on_a_cortex_a53_under_qemu() -> None:
    """benchmarks/arm64_build.py cross-built these and ran the model under `qemu-aarch64 -cpu cortex-a53`
    (docs/performance.md): `armv8-a`, not `armv8.2-a` (inline LSE atomics: SIGILL on a Raspberry Pi's A53/A72),
    not native, not the variants. Another set is run there again before it is written here."""
    flags = subprocess.run(["make", "-s", "-C", str(REPO), "llama-flags", "ARCH=aarch64"], capture_output=True,
                           text=True, check=True, timeout=60, env={k: v for k, v in os.environ.items()
                                                                   if k not in ("LLAMA_CMAKE", "MAKEFLAGS")})
    assert flags.stdout.split() == ["-DGGML_NATIVE=OFF", "-DGGML_CPU_ARM_ARCH=armv8-a", "-DGGML_BACKEND_DL=OFF",
                                    "-DGGML_CPU_ALL_VARIANTS=OFF"]


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


def test_the_wheel_cache_is_under_xdg_cache_home_else_home_and_its_folder_may_hold_spaces(tmp_path: Path) -> None:
    """As the table cache reads them: `$XDG_CACHE_HOME` when absolute, else `~/.cache`; neither is one line. A
    folder with spaces was split by the recipes (`mkdir -p /tmp/a  b/…` made `/tmp/a` and `b/…`)."""
    make = shutil.which("make")
    assert make, "make is needed (README: build-essential)"
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME", "WHEELHOUSE", "MAKEFLAGS")}

    def make_in(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([make, "-s", "-C", str(REPO), *args], capture_output=True, text=True,
                              env={**base, **env})

    home = str(tmp_path / "home")
    key = make_in({"HOME": home}, "wheelhouse").stdout.strip().rsplit("/", 1)[1]
    spaced = tmp_path / "cache  dir"
    assert make_in({"HOME": home}, "wheelhouse").stdout == f"{home}/.cache/benchcard-wheels/{key}\n"
    assert make_in({"HOME": home, "XDG_CACHE_HOME": str(spaced)}, "wheelhouse").stdout == (
        f"{spaced}/benchcard-wheels/{key}\n")
    assert make_in({"HOME": home, "XDG_CACHE_HOME": "relative"}, "wheelhouse").stdout == (
        f"{home}/.cache/benchcard-wheels/{key}\n")
    nowhere = make_in({}, "wheelhouse")
    assert nowhere.returncode == 2 and nowhere.stdout == "", nowhere
    assert "neither XDG_CACHE_HOME nor HOME is set" in nowhere.stderr and nowhere.stderr.count("\n") == 1
    assert make_in({}, "help").returncode == 0  # only what needs the folder asks for it
    # every command that names the folder keeps it one word (make -n prints the commands and runs none)
    folder = f"{spaced}/benchcard-wheels/{key}"
    printed = make_in({"HOME": home, "XDG_CACHE_HOME": str(spaced)}, "-n", "wheel", "install-run").stdout
    commands = printed.replace("\\\n", " ").splitlines()
    words = [word for line in commands for word in shlex.split(line) if word.startswith(str(tmp_path))]
    assert len(words) == 6 and all(word.startswith(folder) for word in words), words


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

    def reset(self) -> None:
        """localmodel.generate evaluates each prompt whole: it resets the context before every call."""

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
