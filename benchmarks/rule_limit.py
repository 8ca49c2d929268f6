"""What running `rules` in a child process under a time limit costs per scored output.

Blind scoring and `check` send each output's rules to one long-lived child process (`scoring/rulelimit.py`)
so that a catastrophic-backtracking pattern can be stopped. This times the same rules on the same outputs
matched in-process (no limit) and through the child (with the limit).

    python benchmarks/rule_limit.py --outputs 10000
"""

from __future__ import annotations

import argparse
import time

from benchcard.scoring.jsregex import compile_js
from benchcard.scoring.rulelimit import test_rules

RULES = [("one_word", "/^\\s*[a-z]+\\s*$/i"), ("no_period", "/\\.\\s*$/"), ("terminator", "/<<END>>\\s*$/")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=10_000)
    args = parser.parse_args()
    outputs = [f"answer number {i}: " + "lorem ipsum dolor sit amet " * (i % 40) + "<<END>>" for i in
               range(args.outputs)]
    compiled = [compile_js(literal) for _, literal in RULES]
    started = time.perf_counter()
    direct = [[r.test(o) for r in compiled] for o in outputs]
    in_process = time.perf_counter() - started
    test_rules(RULES, "warm up")  # the child is started once per process
    started = time.perf_counter()
    guarded = [test_rules(RULES, o) for o in outputs]
    child = time.perf_counter() - started
    assert guarded == direct
    n = len(outputs)
    print(f"{n} outputs x {len(RULES)} rules: in-process {in_process:.3f} s ({in_process / n * 1e6:.1f} us/output), "
          f"child process {child:.3f} s ({child / n * 1e6:.1f} us/output)")


if __name__ == "__main__":
    main()
