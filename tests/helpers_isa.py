"""What a portable llama.cpp build may hold: the instruction-set ceiling of the Makefile's flags, read from
`llama_print_system_info()` and from `objdump -d` of `libggml-cpu`.

A wheel that holds one instruction beyond the ceiling dies with SIGILL on a user's machine that lacks it, and
runs fine on the machine that built it; so the check names everything beyond the ceiling rather than the two
sets (AMX, `%zmm`) one build once had. x86-64: the x86-64-v3 set (AVX2, FMA, F16C, BMI2). Beyond it, and
seen in no `%zmm`: AVX-512VL code on `%ymm`/`%xmm` (EVEX: `%k` masks, `%xmm16`–`%xmm31`, `{1to8}`,
EVEX-only mnemonics), AVX-VNNI (`{vex} vpdpbusd`, which Zen 3 and Zen 4 and Ice Lake Xeons lack), AVX-IFMA,
AVX-VNNI-INT8, BF16, FP16, GFNI, AMX. arm64: the armv8-a baseline (NEON, FMA). Beyond it: SVE and SME (Graviton 3
has SVE, Apple's M1–M3 and Graviton 2 do not), the dot-product and int8 matrix instructions, BF16, the
half-precision arithmetic of armv8.2-a, and every later or optional instruction a `-march=armv8.x-a` build emits
by itself: armv8.1's LSE atomics (`ldadd`, `casal`: the Cortex-A53 and A72 of the Raspberry Pi 3 and 4 have
none), RDM, RCpc, CRC32, the cryptographic instructions, pointer authentication.
"""

from __future__ import annotations

import re

# What `llama_print_system_info()` may report as `= 1`: the baseline's instruction sets and the build's own
# switches (not instruction sets). Anything else on (AVX_VNNI, AVX512_*, AMX_INT8, SVE, DOTPROD, MATMUL_INT8,
# FP16_VA, SME, …) is beyond the ceiling.
SWITCHES = frozenset({"LLAMAFILE", "OPENMP", "REPACK"})
ALLOWED_FEATURES = {
    "x86_64": frozenset({"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"}) | SWITCHES,
    "aarch64": frozenset({"NEON", "ARM_FMA"}) | SWITCHES,
}
REQUIRED_FEATURES = {"x86_64": "AVX2", "aarch64": "NEON"}

_X86_EVEX_ONLY = (
    r"vpternlog[dq]|vperm[it]2\w+|vpermw|vpermb|vpmultishiftqb|vp(and|andn|or|xor)[dq]|vmovdq[au](8|16|32|64)"
    r"|vpro[lr]v?[dq]|vpsravq|vpsraq|vpmov(s|us)?(qd|qw|qb|dw|db|wb)|vpmov\w+2m|vpmovm2\w+|vptestn?m\w+"
    r"|vcvtt?(\w+2u\w+|u\w+|\w*qq\w*)|vrcp14\w+|vrsqrt14\w+|vpabsq|vp(max|min)[su]q|vpmullq"
    r"|v(extract|insert|broadcast|shuf)[fi](32|64)x\d|valign[dq]|vpcompress\w+|vpexpand\w+|vpconflict\w+"
    r"|vplzcnt\w+|vpopcnt\w+|vpsh[lr]dv?\w+|vscalef\w+|vgetexp\w+|vgetmant\w+|vfixupimm\w+|vfpclass\w+"
    r"|vrange\w+|vreduce\w+|vrndscale\w+|vdbpsadbw|vpbroadcastm\w+|k\w+"
)
BEYOND = {
    "x86_64": re.compile(
        r"%zmm|%k[0-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b|%tmm|\{1to\d+\}|\{z\}|\{(rn|rd|ru|rz)-sae\}|\{sae\}"
        r"|^\s*(\{(vex|evex)\}\s+)?("
        + _X86_EVEX_ONLY
        + r"|vpdp\w+|vpmadd52\w+|v(?!cvtps2ph\b)\w+[ps]h|vmovw|\w*bf16\w*|vbcstne\w+|gf2p8\w+|vaes\w+|vpclmulqdq"
        r"|tile\w+|ldtilecfg|sttilecfg|tdp\w+|tcmmul\w+)\b"
    ),
    "aarch64": re.compile(
        r"\bz\d+\.[bhsdq]\b|\bp\d+(/[mz]|\.[bhsd])\b|\bza\w*\b"
        r"|^\s*([su]dot|usdot|sudot|[su]?[su]mmla|bf(cvt\w*|dot|mmla|mlal[bt])|ptrue\w*|whilel\w+|smstart|smstop"
        r"|rdvl|addvl|cnt[bhwd])\b"
        # half-precision arithmetic and conversions: an FP instruction with an h operand, save the armv8-a
        # conversions between half and single precision (fcvt, fcvtl, fcvtn)
        r"|^\s*(f(?!cvtl2?\s|cvtn2?\s|cvt\s)\w+|[su]cvtf)\s.*\b(v\d+\.[48]h|h\d+)\b"
        # armv8.1's atomics (LSE) and rounding multiply-accumulate (RDM), armv8.3-8.5's RCpc loads and stores,
        # complex and JavaScript arithmetic, FRINT32/64, pointer authentication outside the hint space; and
        # what armv8-a leaves optional: CRC32 and the cryptographic instructions
        r"|^\s*(casp?|swp|ld(add|clr|eor|set|[su]max|[su]min)|st(add|clr|eor|set|[su]max|[su]min))(a|al|l)?[bh]?\s"
        r"|^\s*(sqrdml[as]h|ldapu?r\w*|stlur\w*|fcmla|fcadd|fjcvtzs|frint(32|64)[xz]|crc32\w*|aes\w+|sha\d+\w*"
        r"|sm[34]\w*|eor3|bcax|rax1|xar|(pac|aut)(ia|ib|da|db|iza|izb|dza|dzb|ga)|reta[ab]|bla?ra\w*|ldra[ab])\b"
        r"|^\s*pmull2?\s+v\d+\.1q\b"
    ),
}


INSTRUCTION_LINE = re.compile(r"^\s*[0-9a-f]+:\s+(.+)$")
FUNCTION_LINE = re.compile(r"^[0-9a-f]+ <([^>]*)>:$")
# libgcc's outline atomics (GCC's default on arm64 Linux): each holds an LSE instruction and the armv8-a
# exclusive-load loop, and picks one at run time from the CPU's hwcaps, so its LSE line never runs on armv8.0.
RUNTIME_CHOSEN = re.compile(r"__aarch64_(cas|swp|ldadd|ldclr|ldeor|ldset)\d+_(relax|acq|rel|acq_rel|sync)")


def instructions(disassembly: str) -> list[str]:
    """The instruction text of each line of `objdump -d --no-show-raw-insn` (address, symbol names and comments
    dropped), so that a function named like an instruction is never read as one; the lines of libgcc's outline
    atomics are left out (they choose between armv8.0 and armv8.1 code at run time)."""
    found = []
    chosen_at_run_time = False
    for line in disassembly.splitlines():
        function = FUNCTION_LINE.match(line)
        if function:
            chosen_at_run_time = RUNTIME_CHOSEN.fullmatch(function[1]) is not None
        match = INSTRUCTION_LINE.match(line)
        if match and not chosen_at_run_time:
            text = re.sub(r"<[^>]*>", "", match[1]).split("//")[0].split(" # ")[0].strip()
            if text:
                found.append(text)
    return found


def beyond_the_ceiling(arch: str, system_info: str, disassembly: str) -> list[str]:
    """What the build holds beyond the portable ceiling of `arch`: each feature `system_info` reports on that
    is not allowed, then each distinct instruction line beyond it (the first 20); empty for a portable build.
    An architecture with no ceiling here is one line of its own, never a silent pass."""
    if arch not in BEYOND:
        return [f"no instruction-set ceiling is written down for {arch} (tests/helpers_isa.py)"]
    on = set(re.findall(r"\b([A-Z0-9_]+) = 1\b", system_info))
    found = [f"{name} = 1 in llama_print_system_info()" for name in sorted(on - ALLOWED_FEATURES[arch])]
    if REQUIRED_FEATURES[arch] not in on:
        found.append(f"{REQUIRED_FEATURES[arch]} is not on: not the {arch} baseline ({system_info!r})")
    seen: list[str] = []
    for insn in instructions(disassembly):
        if BEYOND[arch].search(insn) and insn not in seen:
            seen.append(insn)
    return found + seen[:20]
