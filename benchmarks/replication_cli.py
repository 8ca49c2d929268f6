"""A/A replication through the real command line: `benchcard run` + `verdict`, then `benchcard replicate`, against
the fake server, many times; and the same with the world changed before the rerun.

Each pair seals a fresh two-arm card (F fixtures × R repetitions, rules scoring: "red" is right; calibration_cli.py's
world), draws every fixture's chance of a right answer p_f = sigmoid(N(0.5, 1)), runs and judges it, then
configures the fake server afresh from the same p_f (new draws: the same world, new cells; with `--fall D` the
variant's chance falls by D, a changed world) and replicates the run. The replication's recorded judgement
(verdict.json's `replication`) is counted. Over real sockets, through the runner, the blind scorer, the verdict
and the replication rule, exactly as a user's run would (click's CliRunner, in this process).

    python benchmarks/replication_cli.py --pairs 100 --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.stats import paired as stats
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer
from benchproject import sealed_project  # beside this script

KEY_ENV = "BENCHCARD_CALIBRATION_KEY"


def replies(rng: np.random.Generator, p: npt.NDArray[np.float64], repetitions: int, fall: float
            ) -> list[dict[str, object]]:
    """One reply cycle per (arm, fixture); a baseline body is told from a variant's by what precedes <item>."""
    rules: list[dict[str, object]] = []
    for i, p_i in enumerate(p):
        for prefix, q in (("Name the colour.\n", p_i), ("Please.\n", max(0.0, p_i - fall))):
            cycle = ["red" if rng.random() < q else "blue" for _ in range(repetitions)]
            rules.append({"match": f"{prefix}<item>a ripe tomato, number {i}<", "replies_cycle": cycle})
    return rules


def bc(root: Path, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["-C", str(root), *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out: dict[str, object] = json.loads(result.output)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--fixtures", type=int, default=12)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--fall", type=float, default=0.0, help="the variant's chance falls by this before the rerun")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    os.environ[KEY_ENV] = "sk-calibration-0000"
    judged: dict[str, int] = {}
    started = time.perf_counter()
    with FakeServer() as server, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            root = Path(tmp) / f"p{i}"
            p = 1 / (1 + np.exp(-(0.5 + rng.standard_normal(args.fixtures))))
            server.configure({"default_reply": "blue", "replies": replies(rng, p, args.repetitions, 0.0)})
            card = COLOUR_AB.format(provider="bench", reps=args.repetitions, effort="null", max_tokens=50)
            sealed_project(root, "colour-ab", card,
                           [(f"item-{f:03d}", f"a ripe tomato, number {f}") for f in range(args.fixtures)],
                           server.base_url, KEY_ENV)
            CliRunner().invoke(cli, ["-C", str(root), "run", "colour-ab"], catch_exceptions=False)
            original = bc(root, "verdict", "colour-ab")
            server.configure({"default_reply": "blue", "replies": replies(rng, p, args.repetitions, args.fall)})
            done = bc(root, "replicate", str(original["run"]))
            verdict = done["verdict"]
            assert isinstance(verdict, dict), done
            finding = str(verdict["replication"]["finding"])
            judged[finding] = judged.get(finding, 0) + 1
    print(f"`benchcard replicate` against the fake server: {args.pairs} pairs of {args.fixtures} fixtures × "
          f"{args.repetitions} repetitions × 2 arms, the variant's chance falling by {args.fall:g}, seed {args.seed}")
    for finding in ("replicated", "not replicated", "inconclusive"):
        k = judged.get(finding, 0)
        lo, hi = stats.wilson(k, args.pairs)
        print(f"{finding}: {k} ({k / args.pairs:.3f} [95% Wilson {lo:.3f}, {hi:.3f}])")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
