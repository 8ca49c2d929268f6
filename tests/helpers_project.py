"""Builders of small projects that many test modules share: copies of the repository's cards, the published
results, a tiny ab card; a ledger row; a seed page's body."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from benchcard.project import Project
from benchcard.records.ledgerrow import Latency, LedgerRow, RowCounts, VariantFinding

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "tests" / "data" / "seeds"
#: The repository's results/ as published on 2026-11-30 (BENCH-01's run on SmolLM2 and its ledger row), copied.
#: Tests read this copy, never results/: a user's `benchcard verdict` appends to that ledger and adds runs.
PUBLISHED = REPO / "tests" / "data" / "projects" / "published-2026-11-30" / "results"
PROBES = {"emit-terminator": "000", "six-step-chain": "001", "reordered-input": "002", "one-word-sentiment": "003"}


def copy_project(dest: Path, cards: tuple[str, ...] = (), seals: bool = False) -> Path:
    """A copy of the repository's cards (all, or the named ones), with their fixtures and keys (and, with
    `seals`, their seals: `benchcard seal` then finds the version sealed, as in the repository)."""
    (dest / "cards").mkdir(parents=True, exist_ok=True)
    names = cards or tuple(p.stem for p in (REPO / "cards").glob("*.yaml"))
    for name in names:
        shutil.copy(REPO / "cards" / f"{name}.yaml", dest / "cards" / f"{name}.yaml")
        for folder in ("fixtures", "keys"):
            src = REPO / folder / name
            if src.is_dir():
                shutil.copytree(src, dest / folder / name,
                                ignore=None if seals else shutil.ignore_patterns("*.seal.json"))
    return dest


def published_project(dest: Path) -> Path:
    """The repository's cards, fixtures and keys (seals included) with the published results of `PUBLISHED`."""
    for folder in ("cards", "fixtures", "keys"):
        shutil.copytree(REPO / folder, dest / folder)
    shutil.copytree(PUBLISHED, dest / "results")
    return dest


AB_CARD = """\
id: tiny-ab
version: 1
kind: ab
category: Prompt sensitivity
title: Does saying please change the answer?
question: Does saying please change the answer?
variable: One word of politeness before the fixture.
rig: {provider: openrouter, model: test/model, effort: null}
params: {max_tokens: 50, temperature: 0.7}
prompt:
  system: Answer with one word.
  user: |-
    Name the colour.
    {{variant}}<item>{{fixture}}</item>
variants: {baseline: "", A: "Please.\\n"}
baseline: baseline
fixtures: fixtures/tiny-ab/*.txt
repetitions: 3
scoring:
  method: rules
  rules:
    - {id: says_red, must_match: /^\\s*red\\s*$/i, why: The only right answer.}
win:
  all:
    - {metric: score, test: rises}
    - {metric: rule.says_red, test: not_falls, margin: 0.2}
  alpha: 0.05
  equivalence_margin: 0.05
  accept_cannot_win: true  # a test card: four fixtures cannot win
examples:
  - {label: Correct, output: red, expect: pass}
  - {label: Rejected — explained, output: "red, because", expect: fail}
history:
  - {version: 1, note: Initial version.}
"""


def make_ab_project(dest: Path, card_text: str = AB_CARD, n_fixtures: int = 4) -> Path:
    """A small ab project with rules scoring, for tests of the ab path that need no answer keys."""
    (dest / "cards").mkdir(parents=True, exist_ok=True)
    (dest / "cards" / "tiny-ab.yaml").write_text(card_text, encoding="utf-8")
    fixtures = dest / "fixtures" / "tiny-ab"
    fixtures.mkdir(parents=True, exist_ok=True)
    for i in range(1, n_fixtures + 1):
        (fixtures / f"item-{i:02d}.txt").write_text(f"a ripe tomato, number {i}\n", encoding="utf-8")
    return dest


def ledger_row(run: str = "run-1", **fields: Any) -> LedgerRow:
    """A ledger row as `benchcard verdict` builds one for an ab run (before `ledger.append` chains it), with
    `fields` replacing any of its values: for tests that write the ledger without a run."""
    base: dict[str, Any] = {
        "card": "demo", "version": 1, "kind": "ab", "rig": "m · effort high · api", "run": run, "cells": 12,
        "counts": RowCounts(planned=12, scored=12, truncated=0, failed=0, missing=0), "outcome": "non-result",
        "finding": "inconclusive", "comparisons": [VariantFinding("A", "inconclusive", "non-result")],
        "metrics": {"score": {"means": {"baseline": 0.5, "A": 0.6}, "gap": 0.1}}, "clauses": [],
        "cost": 0.5, "latency": Latency(median_ms=100.0, total_ms=1200.0), "seal_root": "sha256:" + "a" * 64,
        "evidence": f"results/demo/v1/{run}",
    }
    return LedgerRow(**{**base, **fields})


def long_ledger(project: Project, n: int, *, runs: bool = True) -> int:
    """Write a chained ledger of `n` rows (`ledger_row`s, run-1 … run-N; without `runs`, rows after the first name
    no run, so that `ledger --verify` has no evidence to miss) in one pass, far faster than `n` appends; returns
    its size in bytes: for the tests that hold a reader's memory under it."""
    from benchcard.records import ledger

    first = ledger.append(project, ledger_row("run-1"))
    row, prev = first.fields(), first.hash
    with project.ledger_path.open("a", encoding="utf-8") as fh:
        for seq in range(2, n + 1):
            run = f"run-{seq}" if runs else ""
            row = {**row, "seq": seq, "prev": prev, "run": run, "evidence": f"results/demo/v1/{run}" if run else ""}
            row["hash"] = prev = ledger.row_hash(row)
            fh.write(ledger.encode_row(LedgerRow(**row)) + "\n")
    return project.ledger_path.stat().st_size


def seed_body(name: str) -> dict[str, object]:
    """The JSON body of the seed page's "Run it yourself" command."""
    text = next(SEEDS.glob(f"{PROBES[name]}_*.txt")).read_text(encoding="utf-8")
    match = re.search(r"-d '(.*)'\s*$", text, re.S)
    assert match
    body: dict[str, object] = json.loads(match.group(1).replace("'\\''", "'"))
    return body
