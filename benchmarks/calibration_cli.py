"""A/A through the real command line: `benchcard run` + `benchcard verdict` against the fake server, many times.

Each iteration seals a fresh two-arm card (F fixtures × R repetitions, rules scoring: "red" is right), draws
every fixture's chance of a right answer p_f = sigmoid(N(0.5, 1)), and configures the fake server so that
each (arm, fixture) walks its own cycle of R answers drawn independently from p_f: both arms come from the
same distribution, so every "result" (win or loss) is a false one. The runs go over real sockets through the
runner, the blind scorer and the verdict, exactly as a user's would (click's CliRunner, in this process).

    python benchmarks/calibration_cli.py --runs 200 --fixtures 12 --repetitions 3 --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.stats import paired as stats
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer
from benchproject import sealed_project  # beside this script

KEY_ENV = "BENCHCARD_CALIBRATION_KEY"


def replies(rng: np.random.Generator, fixtures: int, repetitions: int) -> list[dict[str, object]]:
    """One reply cycle per (arm, fixture); a baseline body is told from a variant's by what precedes <item>."""
    rules: list[dict[str, object]] = []
    p = 1 / (1 + np.exp(-(0.5 + rng.standard_normal(fixtures))))
    for i in range(fixtures):
        for prefix in ("Name the colour.\n", "Please.\n"):
            cycle = ["red" if rng.random() < p[i] else "blue" for _ in range(repetitions)]
            rules.append({"match": f"{prefix}<item>a ripe tomato, number {i}<", "replies_cycle": cycle})
    return rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--fixtures", type=int, default=12)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    os.environ[KEY_ENV] = "sk-calibration-0000"
    findings: dict[str, int] = {}
    started = time.perf_counter()
    with FakeServer() as server, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            root = Path(tmp) / f"p{i}"
            server.configure({"default_reply": "blue",
                              "replies": replies(rng, args.fixtures, args.repetitions)})
            card = COLOUR_AB.format(provider="bench", reps=args.repetitions, effort="null", max_tokens=50)
            sealed_project(root, "colour-ab", card,
                           [(f"item-{f:03d}", f"a ripe tomato, number {f}") for f in range(args.fixtures)],
                           server.base_url, KEY_ENV)
            run = CliRunner().invoke(cli, ["-C", str(root), "run", "colour-ab"], catch_exceptions=False)
            assert run.exit_code == 0, run.output
            verdict = CliRunner().invoke(cli, ["-C", str(root), "verdict", "colour-ab", "--json"],
                                         catch_exceptions=False)
            assert verdict.exit_code == 0, verdict.output
            finding = json.loads(verdict.output)["finding"]
            findings[finding] = findings.get(finding, 0) + 1
    results = findings.get("win", 0) + findings.get("loss", 0)
    lo, hi = stats.wilson(results, args.runs)
    print(f"A/A through `benchcard run` + `benchcard verdict` against the fake server: {args.runs} runs of "
          f"{args.fixtures} fixtures × {args.repetitions} repetitions × 2 arms, seed {args.seed}")
    print(f"findings: {dict(sorted(findings.items()))}")
    print(f"result rate {results / args.runs:.4f} [95% Wilson {lo:.4f}, {hi:.4f}]; "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
