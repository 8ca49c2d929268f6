"""Wall time of the judging pass against the fake server: N outputs judged once, at a fixed latency.

A synthetic ab judge card (2 variants × F fixtures × 1 repetition, every output distinct) is run against the
fake server, which answers the model and the judge alike after `--latency-ms`; the judging pass's own wall time
(`RunSummary.judge.wall_s`: planning the judge requests, the calls, the scores) is compared with the ideal,
ceil(outputs / concurrency) × latency.

    python benchmarks/judge_throughput.py --outputs 10000 --latency-ms 100 --concurrency 64

Target (issue 17): ≤ 1.10 × ideal, as the run itself.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path

from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer
from benchproject import sealed_project  # benchmarks/benchproject.py, beside this script

CARD = """\
id: synth-judge
version: 1
kind: ab
title: Synthetic judge grid
rig: {provider: bench, model: fake-model}
params: {max_tokens: 16, temperature: 0}
prompt:
  user: |-
    Describe it.
    {{variant}}<item>{{fixture}}</item>
variants: {baseline: "", A: "Be brief.\\n"}
baseline: baseline
fixtures: fixtures/synth-judge/*.txt
repetitions: 1
scoring:
  method: judge
  rig: {provider: bench, model: fake-judge}
  params: {max_tokens: 16, temperature: 0}
  judgements: 1
  scale: pass_fail
  answer: final_line
  rubric: The description is apt.
  prompt: {user: "{{rubric}}\\n{{output}}\\n{{format}}"}
win:
  all:
    - {metric: score, test: rises}
  equivalence_margin: 0.05
examples:
  - {label: ok, output: x, expect: pass, judge_answers: "GRADE: PASS"}
history:
  - {version: 1, note: synthetic}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outputs", type=int, default=10000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    os.environ["BENCH_KEY"] = "bench"
    with tempfile.TemporaryDirectory() as tmp, FakeServer() as server:
        root = Path(tmp)
        server.configure({"latency_ms": args.latency_ms, "default_reply": "GRADE: PASS"})
        fixtures = ((f"f{i:06d}", f"item {i}") for i in range(math.ceil(args.outputs / 2)))
        project = sealed_project(root, "synth-judge", CARD, fixtures, server.base_url, "BENCH_KEY")
        started = time.perf_counter()
        [summary] = run(project, "synth-judge", RunOptions(concurrency=args.concurrency, progress=False))
        total = time.perf_counter() - started
        assert summary.judge is not None and summary.judge.finished, summary
        judged = summary.judge.judgements
        ideal = math.ceil(judged / args.concurrency) * args.latency_ms / 1000
        print(json.dumps({"outputs": summary.cells, "judgements": judged, "concurrency": args.concurrency,
                          "latency_ms": args.latency_ms, "judge_wall_s": summary.judge.wall_s,
                          "ideal_s": round(ideal, 3), "ratio": round(summary.judge.wall_s / ideal, 3),
                          "run_and_judge_wall_s": round(total, 3)}, indent=2))


if __name__ == "__main__":
    main()
