"""The path a cell takes through the package: which modules `benchcard run` and `benchcard verdict` enter, and
how often the walk switches between stages or goes back into a stage it had left.

A small sealed ab card (2 variants × 2 fixtures × 2 repetitions) is run against the fake server and judged,
in process, under `sys.setprofile`; every call into a benchcard function is recorded by its module. The walk is
the sequence of modules entered (consecutive repeats folded). A stage is a module's package under
`benchcard` (`run`, `records`, `verdict`…; a top-level module is its own stage). A switch is a distinct
(caller module, callee module) call from one stage into another; a re-entry is such a call into a stage that is
already on the call stack below the caller: the walk went back into a stage it had come from (a walk that reads
top-down has none: each stage calls only into stages below it and returns).

    python benchmarks/cell_path.py            # the figures (docs/architecture.md, "A cell's path")
    python benchmarks/cell_path.py --modules  # also the modules in the order first entered
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer
from benchproject import sealed_project  # benchmarks/benchproject.py, beside this script

KEY_ENV = "CELL_PATH_KEY"


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else module


Edge = tuple[str, str, bool]


def recorder(edges: set[Edge], modules: list[str]) -> Callable[[FrameType, str, Any], None]:
    """A profile hook: the modules in the order first entered, and every call from one stage into another as a
    (caller module, callee module, re-entry) edge, re-entry meaning the callee's stage is already on the stack
    below the caller (the walk went back into a stage it had come from)."""
    stack: list[str] = []
    seen: set[str] = set()

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("benchcard"):
            return
        if event == "return":
            if stack:
                stack.pop()
            return
        if module not in seen:
            seen.add(module)
            modules.append(module)
        if stack and stage_of(stack[-1]) != stage_of(module):
            below = {stage_of(m) for m in stack[:-1]} - {stage_of(stack[-1])}
            edges.add((stack[-1], module, stage_of(module) in below))
        stack.append(module)

    return hook


def read_order(modules: list[str]) -> tuple[int, int]:
    """The issue's measure (issue 26.9): along the modules in the order first entered, with consecutive modules
    of one stage folded, how many times the walk switches stage and how many of those go back into a stage it
    had already left. It counts reading order, not calls: a stage entered early and needed again later counts."""
    folded = [stage for i, stage in enumerate(map(stage_of, modules)) if i == 0 or stage_of(modules[i - 1]) != stage]
    return len(folded) - 1, sum(1 for i, stage in enumerate(folded) if stage in folded[:i])


def walk(edges: set[Edge], modules: list[str]) -> dict[str, Any]:
    switches, back = read_order(modules)
    return {"modules": modules, "distinct": len(modules), "stages": len({stage_of(m) for m in modules}),
            "switches": len(edges), "reentries": sum(1 for e in edges if e[2]),
            "reentering": sorted(f"{a} -> {b}" for a, b, back in edges if back),
            "read_switches": switches, "read_back": back}


def measure(card_cmds: list[list[str]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, FakeServer() as server:
        server.configure({"default_reply": "red"})
        os.environ[KEY_ENV] = "not-a-key"
        card = COLOUR_AB.format(provider="bench", reps=2, effort="null", max_tokens=20)
        project = sealed_project(Path(tmp) / "proj", "colour-ab", card,
                                 [(f"item-{i:03d}", f"fruit {i}") for i in range(2)], server.base_url, KEY_ENV)
        edges: set[Edge] = set()
        modules: list[str] = []
        runner = CliRunner()
        sys.setprofile(recorder(edges, modules))
        try:
            for args in card_cmds:
                result = runner.invoke(cli, ["-C", str(project.root), *args])
                if result.exit_code not in (0, 4):  # 4: inconclusive, a finding like any other
                    raise SystemExit(f"benchcard {' '.join(args)}: exit {result.exit_code}\n{result.output}")
        finally:
            sys.setprofile(None)
        return walk(edges, modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="also list the modules in the order first entered")
    args = parser.parse_args()
    for name, cmds in (("run", [["run", "colour-ab"]]), ("run + verdict", [["run", "colour-ab"],
                                                                            ["verdict", "colour-ab"]])):
        figures = measure(cmds)
        print(f"{name}: {figures['distinct']} modules in {figures['stages']} stages; {figures['switches']} distinct "
              f"calls from one stage into another, {figures['reentries']} of them back into a stage below on the "
              f"stack; in reading order {figures['read_switches']} stage switches, {figures['read_back']} back into a "
              "stage already left")
        for edge in figures["reentering"]:
            print(f"  back: {edge}")
        if args.modules:
            print("  " + "\n  ".join(figures["modules"]))


if __name__ == "__main__":
    main()
