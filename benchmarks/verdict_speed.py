"""Time the statistics of one verdict over 100,000 scored cells (budget: 3 s on a 2-core machine).

One metric, both arms: paired_gap (t interval and the sign-flip p, 100,000 seeded draws above 20 fixtures),
noise_floor, wilson and a 10,000-resample fixture bootstrap (resample.bootstrap_intervals). Data generation
and imports are outside the timed region; each shape is timed --repeat times and the median and worst are reported.

    python benchmarks/verdict_speed.py --repeat 5

`--full` times the whole verdict path instead (`benchcard.verdict.give.give_verdict`): a project with a BENCH-01-like
card (fields scoring: nine metrics per cell; win rule rises + not_rises + holds) and a finished run folder of
100,000 scored cells written in the run-folder contract's format; timed from the call to the return: seal
re-verification (every fixture file hashed), the outputs digest, reading and joining assignment, outputs and
scores, the statistics of both gap clauses (sign-flip p and a 10,000-resample cluster bootstrap each), the
holds clause, table.csv (900,000 rows), verdict.json and the ledger append. Between repeats the verdict files
and the ledger are removed (outside the timed region).

    python benchmarks/verdict_speed.py --full --repeat 3

"CPU median" is the process's CPU time over one verdict (every thread; the child's own in `--cold`): a figure
that other work on a shared machine disturbs less than the wall time.
    python benchmarks/verdict_speed.py --full --cold --repeat 5   # each verdict in a fresh interpreter
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from benchcard.stats import paired as stats
from benchcard.stats.resample import bootstrap_intervals
from machine import cpu_model  # benchmarks/machine.py, beside this script

BUDGET_S = 3.0  # the statistics alone
FULL_BUDGET_S = {False: 1.0, True: 2.0}  # the whole verdict (issue 14): warm median, and in a fresh interpreter
FloatArray = npt.NDArray[np.float64]


def one_verdict(base: FloatArray, var: FloatArray, seed: int, resamples: int) -> dict[str, float]:
    """Every statistic a verdict reports for one metric; returns seconds per step."""
    steps: dict[str, float] = {}
    t0 = time.perf_counter()
    gap = stats.paired_gap(base, var, 0.05, seed=seed)
    t1 = time.perf_counter()
    nf = stats.noise_floor(base, 0.05)
    stats.wilson(int((var[0] > 0.5).sum()), var.shape[1])
    t2 = time.perf_counter()
    [boot] = bootstrap_intervals([stats.fixture_differences(base, var)], resamples, seed, 0.05)
    t3 = time.perf_counter()
    low, high = boot if boot is not None else (gap.gap, gap.gap)  # None: every fixture's difference alike
    assert low <= gap.gap <= high or abs(gap.gap) < 1e-9, "bootstrap interval does not bracket the gap"
    assert nf.value > 0
    steps["paired_gap"] = t1 - t0
    steps["noise_floor+wilson"] = t2 - t1
    steps["cluster_bootstrap"] = t3 - t2
    steps["total"] = t3 - t0
    return steps


def row(*cells: str) -> str:
    """One markdown table row."""
    return "| " + " | ".join(cells) + " |"


FIELDS = ("parties", "effective_date", "termination_rights", "obligations")
FULL_CARD = """\
id: speed-ab
version: 1
kind: ab
title: Verdict speed
rig: {{provider: openai, model: bench/model, effort: high, surface: Bench API}}
params: {{max_tokens: 400, temperature: 0}}
prompt:
  user: |-
    Extract the fields.
    {{{{variant}}}}<excerpt>{{{{fixture}}}}</excerpt>
variants: {{baseline: "", A: "Score your own output before returning it.\\n"}}
baseline: baseline
fixtures: fixtures/speed-ab/*.txt
repetitions: {reps}
scoring:
  method: fields
  fields: [parties, effective_date, termination_rights, obligations]
  abstain_field: termination_rights
win:
  all:
    - {{metric: field_recall, test: rises}}
    - {{metric: unsupported_values, test: not_rises, margin: 0.25}}
    - {{metric: abstains, fixture: fx-00007, test: holds}}
  alpha: 0.05
  equivalence_margin: 0.05
examples:
  - {{label: Correct, fixture: fx-00001, output: "parties: Acme", expect: {{field_recall: 1}}}}
history:
  - {{version: 1, note: Speed test.}}
"""


def _line(row: dict[str, Any]) -> str:
    """A JSONL line as the runner writes it (benchcard.records.rows.dumps_line): compact separators."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


def build_full(root: Path, n_fixtures: int, reps: int, seed: int) -> tuple[Any, Path]:
    """A sealed project and one finished run of 2 × n_fixtures × reps scored cells (outside the timing)."""
    from benchcard._util.hashing import file_digest
    from benchcard.card import seal
    from benchcard.card.load import load_card
    from benchcard.project import Project
    from benchcard.records.plandigest import sealed_digests
    from benchcard.run.grid import planned_assignment

    (root / "cards").mkdir(parents=True)
    (root / "cards" / "speed-ab.yaml").write_text(FULL_CARD.format(reps=reps), encoding="utf-8")
    fixtures = [f"fx-{i:05d}" for i in range(1, n_fixtures + 1)]
    folder = root / "fixtures" / "speed-ab"
    folder.mkdir(parents=True)
    for f in fixtures:
        (folder / f"{f}.txt").write_text(f"Excerpt {f}: Acme Ltd and Beta plc agree to ...\n", encoding="utf-8")
    project = Project(root)
    card = load_card(project.card_path("speed-ab"), project)
    _, sealed, _ = seal.seal(card, project)
    run_id = "20261130T151200Z-3f9a"
    run_dir = project.run_dir("speed-ab", 1, run_id)
    (run_dir / "sealed").mkdir(parents=True)
    rng = np.random.default_rng(seed)
    # the plan the runner makes with seed 1, as the verdict re-derives it
    plan = [msgspec.to_builtins(a) for a in planned_assignment(card, 1)]
    n = len(plan)
    names = ("baseline", "A")
    variant = np.array([names.index(a["variant"]) for a in plan])
    index = {f: i for i, f in enumerate(fixtures)}
    fixture = np.array([index[a["fixture"]] for a in plan])
    difficulty = rng.random(n_fixtures)
    recall = np.clip(difficulty[fixture] + 0.02 * variant + rng.normal(0, 0.15, n), 0, 1)
    recall = np.round(recall * 4) / 4
    unsupported = rng.poisson(0.4, n).astype(float)
    with open(run_dir / "sealed" / "assignment.jsonl", "w", encoding="utf-8") as fa, \
            open(run_dir / "sealed" / "requests.jsonl", "w", encoding="utf-8") as fr, \
            open(run_dir / "outputs.jsonl", "w", encoding="utf-8") as fo, \
            open(run_dir / "scores.jsonl", "w", encoding="utf-8") as fs:
        for i in range(n):
            cell = plan[i]["cell"]
            fx = fixtures[fixture[i]]
            fa.write(_line(dict(plan[i])))
            fr.write(_line({"cell": cell, "provider": "openai", "url": "http://x/v1/chat/completions", "body": {}}))
            text = "Parties: Acme Ltd; Beta plc\nEffective date: 3 February 2025\nTermination rights: not stated\n" \
                   "Obligations: deliver the Monthly Volume Report no later than the fifth Business Day"
            fo.write(_line({"cell": cell, "fixture": fx, "status": "ok", "text": text, "finish_reason": "stop",
                            "usage": {"input": 600, "output": 90, "reasoning": 0}, "cost": 0.0021,
                            "latency_ms": float(300 + i % 97), "attempts": 1, "error": None}))
            r = float(recall[i])
            metrics = {"score": r, "field_recall": r, "unsupported_values": float(unsupported[i]),
                       "abstains": 1.0, "values_returned": 5.0}
            metrics.update({f"field_recall.{f}": r for f in FIELDS})
            fs.write(_line({"cell": cell, "fixture": fx, "status": "ok", "score": r, "metrics": metrics,
                            "rules": None}))
    manifest = {"run": run_id, "card": "speed-ab", "version": 1, "kind": "ab", "seal_root": sealed.root,
                "rig": {"provider": "openai", "model": "bench/model", "effort": "high", "surface": "Bench API",
                        "line": "bench/model · effort high · Bench API"},
                "cells": n, "repetitions": reps, "seed": 1, "started_at": "2026-11-30T15:12:00Z"}
    manifest.update(sealed_digests(run_dir, manifest))
    manifest.update({"finished_at": "2026-11-30T16:12:00Z", "outputs_digest": file_digest(run_dir / "outputs.jsonl"),
                     "scores_digest": file_digest(run_dir / "scores.jsonl"),
                     "counts": {"ok": n, "truncated": 0, "failed": 0}})
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return project, run_dir


_COLD = """
import json, sys, time
from pathlib import Path
from benchcard.project import Project
from benchcard.verdict.give import give_verdict
laps = {}
c0 = time.process_time()
t0 = time.perf_counter()
v = give_verdict(Project(Path(sys.argv[1])), Path(sys.argv[2]), n_resamples=int(sys.argv[3]), timings=laps)
print(json.dumps({"seconds": time.perf_counter() - t0, "laps": laps, "finding": v.finding,
                  "cpu": time.process_time() - c0}))
"""


def _cold_verdict(root: Path, run_dir: Path, resamples: int) -> tuple[float, dict[str, float], str, float]:
    """One verdict in a fresh interpreter, as `benchcard verdict` gives it: scipy and the first use of every
    code path are inside the timing; the interpreter's start and the import of benchcard are not."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _COLD, str(root), str(run_dir), str(resamples)], check=True,
                         capture_output=True, text=True).stdout
    data = json.loads(out)
    return float(data["seconds"]), dict(data["laps"]), str(data["finding"]), float(data["cpu"])


def main_full(args: argparse.Namespace) -> None:
    from benchcard.verdict.give import give_verdict

    budget = FULL_BUDGET_S[args.cold]
    print(f"# Full verdict path speed (target: median ≤ {budget:g} s)\n")
    versions = f"numpy {np.__version__}, python {platform.python_version()}"
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, {versions}, load average "
          f"{os.getloadavg()[0]:.1f} at start")
    print(f"bootstrap resamples {args.resamples:,}, sign-flip draws 100,000 (F > 20), repeats {args.repeat}, "
          f"{'each in a fresh interpreter' if args.cold else 'in this interpreter (the first one cold)'}\n")
    print(row("fixtures × reps × arms", "scored cells", "table rows", "finding", "median (s)", "worst (s)",
              "CPU median (s)", "within budget", "median phases (s)"))
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    for shape in args.shapes:
        f_str, r_str = shape.lower().split("x")
        f, r = int(f_str), int(r_str)
        with tempfile.TemporaryDirectory() as tmp:
            project, run_dir = build_full(Path(tmp) / "proj", f, r, args.seed)
            times, cpus = [], []
            phases: list[dict[str, float]] = []
            finding = ""
            for _ in range(args.repeat):
                for name in ("verdict.json", "table.csv"):
                    (run_dir / name).unlink(missing_ok=True)
                project.ledger_path.unlink(missing_ok=True)
                if args.cold:
                    seconds, laps, finding, cpu = _cold_verdict(project.root, run_dir, args.resamples)
                    times.append(seconds)
                    cpus.append(cpu)
                    phases.append(laps)
                    continue
                laps = {}
                c0 = time.process_time()
                t0 = time.perf_counter()
                verdict = give_verdict(project, run_dir, n_resamples=args.resamples, timings=laps)
                times.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
                phases.append(laps)
                finding = verdict.finding
            with open(run_dir / "table.csv", encoding="utf-8") as fh:
                table_rows = sum(1 for _ in fh) - 1
            if args.keep:  # the last verdict's files, to compare two versions' bytes (`--keep DIR`)
                kept = Path(args.keep) / shape
                kept.mkdir(parents=True, exist_ok=True)
                for source in (run_dir / "verdict.json", run_dir / "table.csv", project.ledger_path):
                    shutil.copyfile(source, kept / source.name)
        worst = max(times)
        within = statistics.median(times) <= budget
        ok &= within
        laps_text = "; ".join(f"{k} {statistics.median(p[k] for p in phases):.2f}" for k in phases[0])
        print(row(f"{f:,} × {r} × 2", f"{2 * f * r:,}", f"{table_rows:,}", finding,
                  f"{statistics.median(times):.3f}", f"{worst:.3f}", f"{statistics.median(cpus):.3f}",
                  "yes" if within else "NO", laps_text))
    if not ok:
        raise SystemExit("over budget")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument(
        "--shapes",
        nargs="+",
        default=["10000x5", "1000x50"],
        help="fixtures x repetitions per arm (two arms): 10000x5 and 1000x50 are 100,000 cells each",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--full", action="store_true",
                        help="time the whole verdict path (give_verdict) over a run folder instead")
    parser.add_argument("--keep", metavar="DIR",
                        help="with --full: copy the last verdict's verdict.json, table.csv and ledger to DIR/SHAPE/")
    parser.add_argument("--cold", action="store_true",
                        help="with --full: give each verdict in a fresh interpreter, as the command does")
    args = parser.parse_args()
    if args.full:
        main_full(args)
        return

    print(f"# Verdict statistics speed (budget {BUDGET_S:g} s)\n")
    versions = f"numpy {np.__version__}, python {platform.python_version()}"
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, {versions}")
    print(f"bootstrap resamples {args.resamples:,}, sign-flip draws 100,000, repeats {args.repeat}\n")
    head = ["fixtures × reps × arms", "cells", "paired_gap (s)", "nf+wilson (s)", "bootstrap (s)"]
    head += ["total median (s)", "total worst (s)", "within budget"]
    print(row(*head))
    print("|---|---|---|---|---|---|---|---|")
    ok = True
    for shape in args.shapes:
        f_str, r_str = shape.lower().split("x")
        f, r = int(f_str), int(r_str)
        rng = np.random.default_rng(args.seed)
        difficulty = rng.random((f, 1))
        base = np.clip(difficulty + rng.normal(0, 0.15, (f, r)), 0, 1).round(2)
        var = np.clip(difficulty + 0.01 + rng.normal(0, 0.15, (f, r)), 0, 1).round(2)
        runs = [one_verdict(base, var, args.seed + i, args.resamples) for i in range(args.repeat)]
        med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
        worst = max(run["total"] for run in runs)
        within = worst <= BUDGET_S
        ok &= within
        cells = [f"{f:,} × {r} × 2", f"{2 * f * r:,}", f"{med['paired_gap']:.3f}"]
        cells += [f"{med['noise_floor+wilson']:.3f}", f"{med['cluster_bootstrap']:.3f}"]
        cells += [f"{med['total']:.3f}", f"{worst:.3f}", "yes" if within else "NO"]
        print(row(*cells))
    if not ok:
        raise SystemExit("over budget")


if __name__ == "__main__":
    main()
