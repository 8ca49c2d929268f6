"""Sealed projects and hand-written run folders for the verdict's tests (`make_run`), in the run-folder
contract's format (docs/architecture.md), so these tests need neither the runner nor a model."""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from click.testing import CliRunner

from benchcard._util.hashing import file_digest
from benchcard.card import seal
from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records.plandigest import sealed_digests
from benchcard.run.grid import planned_assignment

# Case A of docs/statistics.md: six fixtures, three repetitions.
BASE_A: list[list[float]] = [[0.5, 0.75, 0.5], [0.75, 0.75, 1], [0.25, 0.5, 0.5], [1, 0.75, 1], [0.5, 0.5, 0.75],
                             [0.75, 1, 0.75]]
VAR_A: list[list[float]] = [[0.75, 0.75, 0.75], [1, 0.75, 1], [0.5, 0.5, 0.75], [1, 1, 1], [0.5, 0.75, 0.75],
                            [0.75, 1, 1]]
FIXTURES = [f"ex-{i:02d}" for i in range(1, 7)]

AB_CARD = """\
id: extract-ab
version: 1
kind: ab
title: Does a self-check rubric change the answer?
question: Does the rubric change the answer, or only the tone?
variable: One self-scoring rubric before the excerpt.
rig: {provider: openai, model: test/model-1, effort: high, surface: Test API}
params: {max_tokens: 200, temperature: 0}
prompt:
  user: |-
    Extract the parties, effective date, termination rights and obligations.
    {{variant}}<excerpt>{{fixture}}</excerpt>
variants: {baseline: "", A: "Score your own output before returning it.\\n"}
baseline: baseline
fixtures: fixtures/extract-ab/*.txt
repetitions: 3
scoring:
  method: fields
  fields: [parties, effective_date, termination_rights, obligations]
  abstain_field: termination_rights
win:
  all:
    - {metric: field_recall, test: rises}
    - {metric: unsupported_values, test: not_rises, margin: 0.25}
    - {metric: abstains, fixture: ex-06, test: holds}
  alpha: 0.05
  equivalence_margin: 0.05
examples:
  - {label: Correct, fixture: ex-01, output: "parties: Acme", expect: {field_recall: 1}}
history:
  - {version: 1, note: First version.}
"""

PROBE_CARD = """\
id: say-negative
version: 1
kind: probe
title: Answer with one word
rig: {provider: openrouter, model: vendor/model-x, effort: null}
params: {max_tokens: 20, temperature: 0}
prompt:
  user: Classify the sentiment of "it broke". One word.
repetitions: 5
scoring:
  method: rules
  rules:
    - {id: says-negative, must_match: /negative/i, why: The answer.}
    - {id: no-period, must_not_match: /\\./, why: No punctuation.}
examples:
  - {label: Correct, output: negative, expect: pass}
  - {label: Rejected, output: negative., expect: fail}
history:
  - {version: 1, note: First version.}
"""

_run_counter = itertools.count(1)


def make_project(root: Path, card_text: str = AB_CARD, fixtures: list[str] = FIXTURES) -> Project:
    """A project with one sealed card (ab by default, with six fixtures)."""
    (root / "cards").mkdir(parents=True, exist_ok=True)
    card_id = card_text.split("\n", 1)[0].split(":", 1)[1].strip()
    (root / "cards" / f"{card_id}.yaml").write_text(card_text, encoding="utf-8")
    if "kind: ab" in card_text:
        folder = root / "fixtures" / card_id
        folder.mkdir(parents=True, exist_ok=True)
        for f in fixtures:
            (folder / f"{f}.txt").write_text(f"Excerpt {f}: Acme Ltd and Beta plc agree ...\n", encoding="utf-8")
    project = Project(root)
    seal.seal(load_card(project.card_path(card_id), project), project)
    return project


def the_card(project: Project, card_id: str = "extract-ab") -> Card:
    return load_card(project.card_path(card_id), project)


def make_run(
    project: Project,
    card: Card,
    metrics: Mapping[str, Mapping[str, Any]],
    *,
    status: Mapping[tuple[str, str, int], str] | None = None,
    rules: Mapping[str, Any] | None = None,
    finished: bool = True,
    drop_outputs: int = 0,
    texts: Mapping[tuple[str, str, int], str] | None = None,
    compact: bool = False,
    scratch: str | None = None,
) -> Path:
    """Write a run folder by hand, in the contract's format.

    `metrics[name][variant]` is an array (fixtures × repetitions) in `card.fixture_ids()` order; `status`
    marks cells (variant, fixture, repetition) truncated or failed; `rules[rule][variant]` likewise for probes.
    The first metric is also the cell's `score`. `scratch` marks the run a trial, as `run --scratch` does.
    """
    status = status or {}
    run_id = f"20261130T{next(_run_counter):06d}Z-3f9a"
    run_dir = project.run_dir(card.id, card.version, run_id)
    (run_dir / "sealed").mkdir(parents=True)
    fixtures = card.fixture_ids()
    # the plan the runner makes with seed 1
    assignment: list[Any] = [msgspec.to_builtins(a) for a in planned_assignment(card, 1)]
    outputs, scores = [], []
    names = list(metrics)
    for i, a in enumerate(assignment):
        cell, v, f, r = a["cell"], a["variant"], a["fixture"], a["repetition"]
        st = status.get((v, f, r), "ok")
        fi = fixtures.index(f)
        text = (texts or {}).get((v, f, r), f"Parties: Acme Ltd (output {i})")
        outputs.append({
            "cell": cell, "fixture": f, "status": st, "text": text if st != "failed" else "",
            "finish_reason": {"ok": "stop", "truncated": "length", "failed": None}[st],
            "usage": {"input": 120, "output": 30, "reasoning": 0}, "cost": 0.002 if st != "failed" else None,
            "latency_ms": 100.0 + i, "attempts": 1, "error": "HTTP 503" if st == "failed" else None,
        })
        if st != "ok":
            scores.append({"cell": cell, "fixture": f, "status": st, "score": None, "metrics": {}, "rules": None})
            continue
        values = {m: float(np.asarray(metrics[m][v], dtype=float)[fi, r]) for m in names}
        rule_values = None
        if rules:
            rule_values = {k: bool(np.asarray(rules[k][v])[fi, r]) for k in rules}
            values.update({f"rule.{k}": float(b) for k, b in rule_values.items()})
        scores.append({"cell": cell, "fixture": f, "status": st, "score": values[names[0]], "metrics": values,
                       "rules": rule_values})
    outputs = outputs[: len(outputs) - drop_outputs] if drop_outputs else outputs
    seps = (",", ":") if compact else (", ", ": ")  # the runner writes compact lines; both must read the same
    write = lambda path, rows: path.write_text(  # noqa: E731
        "".join(json.dumps(r, separators=seps) + "\n" for r in rows), encoding="utf-8")
    write(run_dir / "sealed" / "assignment.jsonl", assignment)
    write(run_dir / "sealed" / "requests.jsonl", [{"cell": a["cell"], "provider": card.rig.provider,
                                                  "url": "http://x/v1/chat/completions", "body": {}}
                                                 for a in assignment])
    write(run_dir / "outputs.jsonl", outputs)
    write(run_dir / "scores.jsonl", [s for s in scores if s["cell"] in {o["cell"] for o in outputs}])
    sealed = seal.read(card.id, card.version, project)
    assert sealed is not None
    manifest: dict[str, Any] = {
        "run": run_id, "card": card.id, "version": card.version, "kind": card.kind, "seal_root": sealed.root,
        "rig": {"provider": card.rig.provider, "model": card.rig.model, "effort": card.rig.effort,
                "surface": card.rig.surface, "line": card.rig.line()},
        "provider_type": "openai", "base_url": "http://x/v1", "params": dict(card.params), "seed": 1,
        "repetitions": card.repetitions, "cells": len(assignment), "concurrency": 4, "benchcard_version": "0.1.0",
        "started_at": "2026-11-30T15:12:00Z",
    }
    if scratch is not None:
        manifest["scratch"] = scratch
    manifest.update(sealed_digests(run_dir, manifest))
    if finished:
        counts = {s: sum(o["status"] == s for o in outputs) for s in ("ok", "truncated", "failed")}
        manifest.update({"finished_at": "2026-11-30T15:20:00Z", "counts": counts,
                         "outputs_digest": file_digest(run_dir / "outputs.jsonl"),
                         "scores_digest": file_digest(run_dir / "scores.jsonl")})
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return run_dir


def grid(value: float, shape: tuple[int, int] = (6, 3)) -> np.ndarray:
    return np.full(shape, value)


def ab_metrics(recall_base: Any = BASE_A, recall_var: Any = VAR_A, unsupported_var: Any = None,
               abstains_var: Any = None, shape: tuple[int, int] = (6, 3)) -> dict[str, dict[str, Any]]:
    return {
        "field_recall": {"baseline": recall_base, "A": recall_var},
        "unsupported_values": {"baseline": grid(0.0, shape),
                               "A": grid(0.0, shape) if unsupported_var is None else unsupported_var},
        "abstains": {"baseline": grid(1.0, shape), "A": grid(1.0, shape) if abstains_var is None else abstains_var},
    }


# A strong, clean effect: the baseline is steady from run to run (noise floor 0), every fixture gains.
STRONG_BASE = np.array([[0.5] * 3, [0.25] * 3, [0.5] * 3, [0.75] * 3, [0.25] * 3, [0.5] * 3])
STRONG_VAR = STRONG_BASE + np.array([[0.25], [0.5], [0.25], [0.25], [0.5], [0.25]])
# The same with ten fixtures: enough for a sign-flip p (2/1024) to survive Holm's corrections.
FIXTURES10 = [f"ex-{i:02d}" for i in range(1, 11)]
STRONG10_BASE = np.vstack([STRONG_BASE, STRONG_BASE[:4]])
STRONG10_VAR = np.vstack([STRONG_VAR, STRONG_VAR[:4]])


def cli_run(project: Project, *args: str) -> Any:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args], catch_exceptions=False)


def rewrite_rows(run_dir: Path, name: str, change: Any) -> None:
    """Rewrite a run file's rows (`change(rows)` edits the list) and record its new digest, as a faulty or
    concurrent writer would have."""
    path = run_dir / name
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    change(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest[{"outputs.jsonl": "outputs_digest", "scores.jsonl": "scores_digest"}[name]] = file_digest(path)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def reference_table(run_dir: Path, baseline: str, rig: str) -> str:
    """table.csv as the row-by-row writer before 2026-12-01 wrote it, from the files alone: rows by fixture,
    variant (baseline first) and repetition; a scored cell's metrics in its own order, values as JSON holds them
    (true/false as 1/0; null, NaN and infinities empty); an unscored cell has every metric, empty."""
    def field(text: str) -> str:
        return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\n\r') else text

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return str(int(v))
        if isinstance(v, int) or (isinstance(v, float) and np.isfinite(v)):
            return repr(v)
        return ""

    plan = [json.loads(line) for line in (run_dir / "sealed" / "assignment.jsonl").read_text().splitlines()]
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    by_cell = {s["cell"]: s for s in scores}
    names = list(dict.fromkeys(k for s in scores for k in s["metrics"]))
    variants = sorted({a["variant"] for a in plan}, key=lambda v: (v != baseline, v))
    plan.sort(key=lambda a: (a["fixture"], variants.index(a["variant"]), a["repetition"]))
    lines = ["fixture,variant,repetition,metric,value,rig\n"]
    for a in plan:
        start = f"{field(a['fixture'])},{field(a['variant'])},{a['repetition']},"
        s = by_cell[a["cell"]]
        pairs = s["metrics"].items() if s["status"] == "ok" and s["metrics"] else [(m, None) for m in names]
        lines += [f"{start}{field(m)},{value(v)},{field(rig)}\n" for m, v in pairs]
    return "".join(lines)


# Ten fixtures of a steady baseline; the variant is ahead only in repetition 0 (its own run shock) plus a
# little cell noise: the paired t interval alone is far from 0 (p ≈ 1e-6), but the gap is run-level noise.
BASE10 = np.repeat(np.array([[0.75], [0.75], [0.25], [0.75], [0.5], [0.5], [0.5], [0.25], [0.75], [0.25]]), 3, 1)
NOISE10 = np.array([[0, .25, 0], [0, 0, .25], [.25, 0, 0], [0, 0, 0], [0, .25, 0], [0, 0, 0], [.25, 0, 0],
                    [0, 0, .25], [0, 0, 0], [0, .25, 0]])
SHOCKED10 = np.clip(BASE10 + NOISE10 + np.array([[0.25, 0, 0]]), 0, 1)


# Ten fixtures, the variant ahead by about 0.14 in every repetition (no shock of either arm).
STEADY10_BASE = np.array([[1.0, 0.75, 0.5], [0.75, 0.75, 1.0], [0.25, 0.0, 0.25], [0.75, 1.0, 0.75],
                          [0.75, 0.25, 0.75], [0.25, 0.5, 0.5], [0.25, 0.5, 0.5], [0.25, 0.25, 0.0],
                          [0.75, 0.75, 0.75], [0.25, 0.5, 0.25]])
STEADY10_VAR = np.array([[1.0, 0.875, 0.75], [1.0, 1.0, 1.0], [0.375, 0.125, 0.25], [0.75, 1.0, 0.875],
                         [0.875, 0.375, 1.0], [0.5, 0.75, 0.75], [0.5, 0.5, 0.75], [0.5, 0.25, 0.125],
                         [0.875, 1.0, 1.0], [0.25, 0.625, 0.25]])



def two_variant_project(root: Path) -> tuple[Project, str]:
    text = AB_CARD.replace('variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
                           'variants: {baseline: "", A: "Check.\\n", B: "Check twice.\\n"}')
    project = make_project(root, text, fixtures=FIXTURES10)
    metrics = {
        "field_recall": {"baseline": STRONG10_BASE, "A": STRONG10_VAR, "B": STRONG10_BASE - 0.25},
        "unsupported_values": {v: grid(0.0, (10, 3)) for v in ("baseline", "A", "B")},
        "abstains": {v: grid(1.0, (10, 3)) for v in ("baseline", "A", "B")},
    }
    return project, make_run(project, the_card(project), metrics).name


def strong_run(project: Project, **kw: object) -> Path:
    return make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), **kw)  # type: ignore[arg-type]


def read_sheet(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def write_sheet(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["row", "fixture", "output", "grade", "note"])
        writer.writeheader()
        writer.writerows(rows)


def auto_scores(run_dir: Path, name: str = "human") -> dict[int, float]:
    """Sheet row → automatic score, read from the sealed mapping (what only the verdict may do)."""
    cells = {json.loads(line)["cell"]: json.loads(line)["score"]
             for line in (run_dir / "scores.jsonl").read_text().splitlines()}
    mapping = [json.loads(line) for line in (run_dir / "sealed" / f"sheet-{name}.jsonl").read_text().splitlines()]
    return {m["row"]: cells[m["cell"]] for m in mapping}

