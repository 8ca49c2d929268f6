"""`make arm64-check`'s last step, after benchmarks/arm64_build.py: the aarch64 build read through the arm64 ceiling.

Not a `test_*.py` file, so `make test` does not collect it (the cross build takes about 20 minutes and is made by
`make arm64-check` alone); the Makefile names this file, and without the build's folder it fails, never skips.
Benchmarks never import the tests, hence the second step here.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...helpers_isa import beyond_the_ceiling, instructions


def test_the_arm64_cross_build_holds_nothing_beyond_armv8_a() -> None:
    """The aarch64 `libggml-cpu.so` as `aarch64-linux-gnu-objdump -d` reads it, and its system info under qemu's
    Cortex-A53: nothing beyond armv8-a."""
    build = os.environ.get("BENCHCARD_ARM64_BUILD", "")
    assert build, "BENCHCARD_ARM64_BUILD names the folder of benchmarks/arm64_build.py --work (make arm64-check)"
    folder = Path(build) / "aarch64"
    info = (folder / "system_info.txt").read_text(encoding="utf-8")
    code = (folder / "libggml-cpu.objdump").read_text(encoding="utf-8")
    assert len(instructions(code)) > 10_000  # really disassembled
    assert beyond_the_ceiling("aarch64", info, code) == []
