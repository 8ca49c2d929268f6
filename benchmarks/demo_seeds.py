"""How a run's finding on the embedded model depends on its seed: one run's replies dealt to other run seeds.

On the embedded model a sampled body's k-th call always gets seed k (`run/providers/local.call_seed`), so every run
of a card has the same replies per (variant, fixture) on one machine and build; the run's seed (from the seal root
and the start time, or `--seed N`) only decides which repetition each reply lands on, through the call order
(`run/grid.plan_cells`). This script takes one finished run, checks that its plan and its sealed requests are that
deal (the run's own seed rebuilds its assignment, and each request's seed is `call_seed` of its body and its
occurrence), then for each run seed 1…N deals the same replies as that seed's call order would, and judges each
table with the verdict's own code (`clausestats.ab_stats` + `findings.ab_body`, every clause of the sealed rule).
The share of seeds that win is how often `make demo` (or docs/ci.md's embedded-model job) wins on this machine.

    python benchmarks/demo_seeds.py demo demo-answer-cue --seeds 200     # after `make demo`: its latest run
    python benchmarks/demo_seeds.py PROJECT CARD --run RUN_ID --seeds 200
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchcard._util.hashing import seed_from
from benchcard.card.load import load_named
from benchcard.card.model import Card
from benchcard.project import Project
from benchcard.records.runreader import read_manifest
from benchcard.records.verdictfile import VerdictHead
from benchcard.run.grid import plan_cells
from benchcard.run.providers.local import call_seed
from benchcard.stats.paired import wilson
from benchcard.verdict.clausestats import ab_stats
from benchcard.verdict.findings import ab_body
from benchcard.verdict.runfolder import RunData, read_run_data


def occurrences(keys: list[tuple[str, str]]) -> list[int]:
    """For each call in order, how many calls of the same (variant, fixture) came before it: its body's seed
    index."""
    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    out = []
    for key in keys:
        out.append(seen[key])
        seen[key] += 1
    return out


def checked_deal(run_dir: Path, data: RunData, card_seed: int, card: Card) -> list[int]:
    """Each cell's occurrence index in the run's own call order, after checking that the run is the deal this
    script assumes: `plan_cells` of the manifest's seed gives the run's assignment, and every sealed request's
    seed is `call_seed` of its body (without the seed) and that occurrence."""
    planned = plan_cells(card, card_seed)
    if [p.cell for p in planned] != list(data.cells):
        raise SystemExit(f"{run_dir}: plan_cells of the manifest's seed does not give the run's assignment")
    k = occurrences([(p.variant, p.fixture) for p in planned])
    by_cell = dict(zip(data.cells, k, strict=True))
    with (run_dir / "sealed" / "requests.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            body = dict(row["body"])
            seed = body.pop("seed", None)
            if seed is not None and seed != call_seed(body, by_cell[row["cell"]]):
                raise SystemExit(f"{run_dir}: cell {row['cell']}'s seed is not call_seed of its occurrence")
    return k


def dealt(data: RunData, own: list[int], card: Card, seed: int) -> RunData:
    """The run's cells as run seed `seed` would have placed them: the reply of each (variant, fixture)'s k-th call
    goes to the repetition that seed's k-th call of that pair is."""
    planned = plan_cells(card, seed)
    k = occurrences([(p.variant, p.fixture) for p in planned])
    rep_of = {(p.variant, p.fixture, kk): p.repetition for p, kk in zip(planned, k, strict=True)}
    code = {r: i for i, r in enumerate(data.repetitions)}
    repetition = np.array([code[rep_of[(data.variants[int(v)], data.fixtures[int(f)], kk)]]
                           for v, f, kk in zip(data.variant, data.fixture, own, strict=True)], np.int64)
    return dataclasses.replace(data, repetition=repetition)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("card")
    parser.add_argument("--run", help="a run id of the card (default: its latest run)")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (not part of the finding)")
    args = parser.parse_args()
    project = Project(args.project.resolve())
    card = load_named(project, args.card)
    runs = sorted((project.results_dir / card.id / f"v{card.version}").glob("*/manifest.json"))
    run_dir = next((p.parent for p in runs if p.parent.name == args.run), None) if args.run else runs[-1].parent
    if run_dir is None:
        raise SystemExit(f"no run {args.run} of {card.id} v{card.version}")
    manifest = read_manifest(run_dir)
    if manifest.seed is None:
        raise SystemExit(f"{run_dir}: its manifest records no run seed")
    data = read_run_data(run_dir, manifest=manifest, baseline=card.baseline)
    own = checked_deal(run_dir, data, manifest.seed, card)
    head = VerdictHead(run=run_dir.name, card=card.id, version=card.version, kind=card.kind, rig=manifest.rig_line,
                       seal_root=manifest.seal_root, evidence=str(run_dir))
    started = time.perf_counter()
    findings: collections.Counter[str] = collections.Counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        def finding(d: RunData) -> str:
            figures = ab_stats(card, d, seed_from(manifest.seal_root), args.resamples, pool).result()
            return ab_body(card, d, figures, head).finding

        written = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["finding"] \
            if (run_dir / "verdict.json").is_file() else None
        rebuilt = dealt(data, own, card, manifest.seed)
        if not np.array_equal(rebuilt.repetition, data.repetition):
            raise SystemExit(f"{run_dir}: its own seed does not deal its replies to the repetitions they are in")
        again = finding(rebuilt)
        print(f"run {run_dir.name}: its own seed dealt again: {again} (its verdict.json: {written})")
        for seed in range(1, args.seeds + 1):
            findings[finding(dealt(data, own, card, seed))] += 1
    wins = findings["win"]
    low, high = wilson(wins, args.seeds)
    print(f"run seeds 1–{args.seeds}: " + ", ".join(f"{k} {n}" for k, n in findings.most_common())
          + f"; win share {wins / args.seeds:.3f} [Wilson 95 % {low:.3f}, {high:.3f}] "
          f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
