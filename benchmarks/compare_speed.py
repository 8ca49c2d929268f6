"""Time `benchcard compare` on two logs of 10,000 samples each (budget: 2 s beyond the reader's load time).

inspect_ai: a one-sample task is run once against the fake server to get a real log; its sample is then copied
into 10,000 samples (ids 0…9999, two scorers, a C/I match and a numeric score) and each log is written with
inspect_ai's own `write_eval_log`, as `.eval`. lm-eval: two `samples_*.jsonl` files of 10,000 documents with
`acc` and `acc_norm`. Timed: `compare()` from the call to the return, split into the two logs' reading
(`read`: inspect_ai's `read_eval_log`, or the JSONL reader) and the rest (`compare`: pairing, the statistics with
the sign-flip p and a 10,000-resample cluster bootstrap, table.csv and verdict.json).

    python benchmarks/compare_speed.py --repeat 3
    python benchmarks/compare_speed.py --repeat 1 --whole   # also inspect_ai reading whole samples, once

`--whole` times what compare does not do: `read_eval_log` of one log with its samples (messages, events, store
and attachments excluded) against `read_eval_log_sample_summaries`, which compare uses.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

from benchcard.compare import RuleOptions, compare
from machine import cpu_model  # benchmarks/machine.py, beside this script

BUDGET_S = 2.0
N = 10_000


def inspect_logs(folder: Path, n: int) -> tuple[Path, Path]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import write_eval_log
    from inspect_ai.scorer import Score, match
    from inspect_ai.solver import generate

    from benchcard.testing.fakeserver import FakeServer

    os.environ.setdefault("OPENAI_API_KEY", "not-a-key")
    with FakeServer() as server:
        server.configure({"default_reply": "red"})
        [log] = inspect_eval(Task(dataset=[Sample(input="colour?", target="red", id=0)], solver=generate(),
                                  scorer=match()), model="openai/fake", model_base_url=server.base_url,
                             model_args={"responses_api": False}, log_dir=str(folder / "template"), display="none")
    assert log.samples
    template = log.samples[0]
    rng = random.Random(7)
    paths = []
    for arm, p_right in (("a", 0.6), ("b", 0.65)):
        samples = []
        for i in range(n):
            right = rng.random() < p_right
            scores = {"match": Score(value="C" if right else "I"), "quality": Score(value=rng.random())}
            samples.append(template.model_copy(update={"id": i, "epoch": 1, "scores": scores}))
        path = folder / f"{arm}.eval"
        write_eval_log(log.model_copy(update={"samples": samples}), str(path))
        paths.append(path)
    return paths[0], paths[1]


def lm_eval_logs(folder: Path, n: int) -> tuple[Path, Path]:
    rng = random.Random(7)
    paths = []
    for arm, p_right in (("a", 0.6), ("b", 0.65)):
        path = folder / arm / "samples_arc_easy_2026-11-30T10-00-00.jsonl"
        path.parent.mkdir(parents=True)
        with open(path, "w", encoding="utf-8") as fh:
            for i in range(n):
                acc = float(rng.random() < p_right)
                fh.write(json.dumps({"doc_id": i, "doc": {"q": f"question {i}"}, "target": 0, "filter": "none",
                                     "metrics": ["acc", "acc_norm"], "acc": acc, "acc_norm": acc}) + "\n")
        paths.append(path)
    return paths[0], paths[1]


def whole_samples(path: Path) -> None:
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

    started = time.perf_counter()
    read_eval_log_sample_summaries(str(path))
    summaries = time.perf_counter() - started
    started = time.perf_counter()
    read_eval_log(str(path), exclude_fields={"messages", "events", "store", "attachments"})
    whole = time.perf_counter() - started
    print(f"inspect_ai, one log: sample summaries {summaries:.2f} s, whole samples {whole:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("-n", type=int, default=N)
    parser.add_argument("--whole", action="store_true")
    args = parser.parse_args()
    print(f"{platform.python_version()} · {cpu_model()} · {os.cpu_count()} cores · {args.n:,} samples per log")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, make, metric in (("inspect_ai .eval", inspect_logs, "match"),
                                   ("lm-eval samples", lm_eval_logs, "acc")):
            a, b = make(folder / name.split()[0], args.n)
            if args.whole and make is inspect_logs:
                whole_samples(a)
            reads, rests = [], []
            for r in range(args.repeat):
                timings: dict[str, float] = {}
                compare(a, b, RuleOptions(clauses=(f"{metric} rises",)), out=folder / f"out-{name[:3]}-{r}",
                        timings=timings)
                reads.append(timings["read"])
                rests.append(timings["compare"])
            rest = statistics.median(rests)
            print(f"{name}: read {statistics.median(reads):.2f} s (median of {args.repeat}), compare beyond it "
                  f"{rest:.2f} s median, {max(rests):.2f} s worst — budget {BUDGET_S} s: "
                  f"{'ok' if max(rests) <= BUDGET_S else 'OVER'}")


if __name__ == "__main__":
    main()
