"""The verdict: refusals, the predeclared win rule on worked data, probe rows, files written, and the CLI.

Run folders are built by hand here (`make_run`) in the run-folder contract's format (docs/architecture.md), so
these tests need neither the runner nor a model.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from benchcard import ledger
from benchcard._util.hashing import file_digest, seed_from
from benchcard.card import seal
from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.cli import cli
from benchcard.errors import RunError, VerdictError
from benchcard.project import Project
from benchcard.records import dumps_line
from benchcard.run.grid import assignment_plan, planned_assignment
from benchcard.run.plandigest import seal_plan
from benchcard.verdict import stats
from benchcard.verdict.columns import plan_grid, read_plan
from benchcard.verdict.give import find_run, give_verdict, load_verdict
from benchcard.verdict.resample import bootstrap_intervals
from benchcard.verdict.runfolder import read_run

# Case A of docs/statistics.md: six fixtures, three repetitions.
BASE_A = [[0.5, 0.75, 0.5], [0.75, 0.75, 1], [0.25, 0.5, 0.5], [1, 0.75, 1], [0.5, 0.5, 0.75], [0.75, 1, 0.75]]
VAR_A = [[0.75, 0.75, 0.75], [1, 0.75, 1], [0.5, 0.5, 0.75], [1, 1, 1], [0.5, 0.75, 0.75], [0.75, 1, 1]]
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
) -> Path:
    """Write a run folder by hand, in the contract's format.

    `metrics[name][variant]` is an array (fixtures × repetitions) in `card.fixture_ids()` order; `status`
    marks cells (variant, fixture, repetition) truncated or failed; `rules[rule][variant]` likewise for probes.
    The first metric is also the cell's `score`.
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
        "run": run_id, "card": card.id, "version": card.version, "kind": card.kind, "seal_root": sealed["root"],
        "rig": {"provider": card.rig.provider, "model": card.rig.model, "effort": card.rig.effort,
                "surface": card.rig.surface, "line": card.rig.line()},
        "provider_type": "openai", "base_url": "http://x/v1", "params": dict(card.params), "seed": 1,
        "repetitions": card.repetitions, "cells": len(assignment), "concurrency": 4, "benchcard_version": "0.1.0",
        "started_at": "2026-11-30T15:12:00Z",
    }
    manifest.update(seal_plan(run_dir, manifest))
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


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")


def cli_run(project: Project, *args: str) -> Any:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args], catch_exceptions=False)


# ------------------------------------------------------------------------------------------- Case A & the rule


def test_case_a_shock_shared_by_both_arms_cancels_and_wins(project: Project) -> None:
    """Case A: the baseline's run means climb 0.625 → 0.75, and the variant's climb with them (the runner puts
    repetition r of both arms in the same block of time), so the run-level term is 0 and the paired evidence
    stands: a significant gap, and a sign-flip p of 2/64 ≤ α."""
    run_dir = make_run(project, the_card(project), ab_metrics())
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("win", "result")
    data = v.to_json()
    m = data["metrics"]["field_recall"]
    # the worked numbers of docs/statistics.md, Case A
    assert m["gap"] == pytest.approx(0.111111, abs=1e-6)
    # the paired t (p 0.001457, CI [0.065951, 0.156272]) calibrated to the worst case over the variance
    # components: with R = 3 the run term is known on 2 degrees of freedom only (worstcase.py)
    assert m["ci"] == pytest.approx([0.061241, 0.160982], abs=1e-6)
    assert m["p"] == pytest.approx(0.010299, abs=1e-6)
    assert m["p_signflip"] == pytest.approx(2 / 64)
    assert m["noise_floor"] == 0.0 and m["run_var"] == 0.0 and m["df"] == 5
    assert m["baseline_noise_floor"] == pytest.approx(0.092578, abs=1e-6)
    assert m["means"] == pytest.approx({"baseline": 0.694444, "A": 0.805556}, abs=1e-6)
    lo, hi = m["ci_bootstrap"]
    assert lo <= m["gap"] <= hi
    rises = data["clauses"][0]
    assert rises["holds"] is True
    assert "the calibrated interval and the sign-flip both put the gap above 0" in rises["why"]
    assert [c["holds"] for c in data["clauses"]] == [True, True, True]
    assert "5 of 5" not in data["clauses"][2]["why"] and "3 of 3" in data["clauses"][2]["why"]


def test_case_a_through_the_cli(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "finding: win → result" in out
    assert "field_recall" in out and "noise floor 0.000" in out
    assert "ledger: seq 1" in out


def test_strong_effect_wins(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("win", "result")
    data = v.to_json()
    assert all(c["holds"] for c in data["clauses"])
    assert data["metrics"]["field_recall"]["noise_floor"] == 0.0
    assert data["why"] == "every clause holds."


def test_holds_fixture_failing_once_is_a_non_result(project: Project) -> None:
    abstains = grid(1.0)
    abstains[5, 1] = 0.0  # ex-06, second repetition: the variant stopped abstaining once
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR, abstains_var=abstains))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("inconclusive", "non-result")
    holds = v.to_json()["clauses"][2]
    assert holds["holds"] is False and holds["k"] == 2 and holds["n"] == 3
    assert "2 of 3 scored repetitions" in holds["why"]
    assert holds["wilson"][0] == pytest.approx(stats.wilson(2, 3)[0])


def test_guard_significantly_broken_is_a_loss(project: Project) -> None:
    unsupported = np.array([[2, 3, 2], [3, 3, 2], [2, 2, 3], [3, 2, 2], [2, 3, 3], [3, 3, 3]], dtype=float)
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR, unsupported_var=unsupported))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("loss", "result")
    guard = v.to_json()["clauses"][1]
    assert guard["holds"] is False and guard["broken"] is True
    assert "significantly broken" in guard["why"]
    assert "a guard is significantly broken" in v.to_json()["why"]


def test_effect_the_wrong_way_beyond_noise_is_a_loss(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG10_VAR, STRONG10_BASE, shape=(10, 3)))
    v = give_verdict(project, run_dir)
    assert v.finding == "loss"
    assert "wrong way" in v.to_json()["why"]


def test_six_fixtures_moving_the_wrong_way_are_not_enough_for_a_loss(project: Project) -> None:
    """A loss needs a win's evidence under Holm across the two clauses that can show one: at F = 6 the exact
    sign-flip p (2/64) is above α/2."""
    v = give_verdict(project, make_run(project, the_card(project), ab_metrics(STRONG_VAR, STRONG_BASE)))
    assert v.finding == "inconclusive"
    assert v.to_json()["clauses"][0]["p_signflip"] == pytest.approx(2 / 64)


def test_equivalent_arms_are_no_effect(project: Project) -> None:
    d = np.array([[0.01], [-0.01], [0.0], [0.005], [-0.005], [0.0]])
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_BASE + d))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("no-effect", "non-result")
    eq = v.to_json()["comparisons"][0]["equivalence"]
    assert eq["tost_p"] < 0.05 and -0.05 < eq["ci"][0] < eq["ci"][1] < 0.05
    assert "lies inside ±0.05" in v.to_json()["why"]


def test_failed_cells_make_the_grid_incomplete(project: Project) -> None:
    status = {("A", "ex-02", 0): "failed", ("baseline", "ex-03", 2): "failed"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("incomplete", "non-result")
    data = v.to_json()
    assert data["counts"]["failed"] == 2
    assert "2 cell(s) failed in transport and the card allows 0" in data["why"]


def test_allowed_failures_and_truncations_are_reported_not_scored(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", AB_CARD.replace("  equivalence_margin: 0.05",
                                                           "  equivalence_margin: 0.05\n  allow_failed: 3"),
                           fixtures=FIXTURES10)
    base = STRONG10_BASE.copy()
    status = {("A", "ex-02", 0): "failed", ("A", "ex-04", 1): "truncated", ("baseline", "ex-04", 1): "truncated"}
    # poison the values of the unscored cells: if they were used, the means would move
    base[3, 1] = 0.0
    var = STRONG10_VAR.copy()
    var[1, 0] = var[3, 1] = 0.0
    run_dir = make_run(project, the_card(project), ab_metrics(base, var, shape=(10, 3)), status=status)
    v = give_verdict(project, run_dir)
    data = v.to_json()
    assert v.finding == "win"
    assert data["counts"] == {"planned": 60, "scored": 57, "truncated": 2, "failed": 1, "missing": 0}
    assert data["truncated_by_variant"] == {"baseline": 1, "A": 1}
    assert "2 cell(s) were cut off by the token limit" in data["summary"]
    assert "never scored as wrong, count against allow_failed" in data["summary"]
    assert data["metrics"]["field_recall"]["means"]["baseline"] == pytest.approx(STRONG10_BASE.mean())
    rises = data["clauses"][0]
    # ex-04 bounded: the variant's truncated cell at 0, the baseline's at 1, and the other way round
    assert rises["bounded_gaps"][0] < rises["gap"] < rises["bounded_gaps"][1]
    assert "judged with its 2 truncated cell(s) bounded at the worst case for the claim" in rises["why"]
    table = pd.read_csv(run_dir / "table.csv")
    unscored = table[(table.fixture == "ex-04") & (table.repetition == 1)]
    assert len(unscored) == 2 * 3 and unscored["value"].isna().all()


def test_truncated_cells_count_against_allow_failed(project: Project) -> None:
    status = {("A", "ex-04", 1): "truncated"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: incomplete → non-result" in result.output
    assert "1 cell(s) were cut off by the token limit and the card allows 0" in result.output


def test_truncation_cannot_win(tmp_path: Path) -> None:
    """The variant answers exactly like the baseline, but its wrong answers are cut off by the token limit:
    left out of the means it would look better; bounded at the worst case it cannot win."""
    project = make_project(tmp_path / "p", AB_CARD.replace("  equivalence_margin: 0.05",
                                                           "  equivalence_margin: 0.05\n  allow_failed: 30"),
                           fixtures=FIXTURES10)
    rng = np.random.default_rng(3)
    base = (rng.random((10, 3)) < 0.6).astype(float)
    var = (rng.random((10, 3)) < 0.6).astype(float)
    status = {("A", FIXTURES10[f], r): "truncated" for f in range(10) for r in range(3) if var[f, r] == 0}
    run_dir = make_run(project, the_card(project), ab_metrics(base, var, shape=(10, 3)), status=status)
    data = give_verdict(project, run_dir).to_json()
    rises = data["clauses"][0]
    assert data["metrics"]["field_recall"]["means"]["A"] == 1.0  # what dropping them would have shown
    assert data["finding"] != "win" and rises["holds"] is False
    assert "bounded at the worst case" in rises["why"]


def test_holds_with_an_unscored_repetition_is_not_shown(project: Project) -> None:
    card = the_card(project)
    status = {("A", "ex-06", 2): "truncated"}
    run_dir = make_run(project, card, ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    v = give_verdict(project, run_dir)
    holds = v.to_json()["clauses"][2]
    assert holds["holds"] is False and (holds["k"], holds["n"], holds["planned"]) == (2, 2, 3)
    assert "only 2 of 3 repetitions were scored" in holds["why"]
    assert v.outcome == "non-result"


def test_a_cut_off_repetition_is_named_apart_from_a_transport_failure(tmp_path: Path) -> None:
    """A holds clause with one repetition cut off at max_tokens and one failed in transport: the terminal names
    each for what it is (issue 12: truncation is the model's output cut off, never a failure of transport)."""
    project = make_project(tmp_path / "p", AB_CARD.replace("  equivalence_margin: 0.05",
                                                           "  equivalence_margin: 0.05\n  allow_failed: 3"))
    status = {("A", "ex-06", 1): "truncated", ("A", "ex-06", 2): "failed"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.output.splitlines() if "on ex-06 in every repetition (A)" in x]
    assert line.startswith("  FAILS  ")
    assert ("only 1 of 3 repetitions were scored (1 cut off at the card's max_tokens, which counts against the "
            "claim; 1 failed in transport or have no output, not scored as wrong) and the clause needs every one"
            in line)
    assert "cut off or failed in transport" not in result.output


def test_more_than_one_variant_is_judged_against_the_baseline_each(tmp_path: Path) -> None:
    text = AB_CARD.replace('variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
                           'variants: {baseline: "", A: "Check.\\n", B: "Check twice.\\n"}')
    project = make_project(tmp_path / "p", text, fixtures=FIXTURES10)
    metrics = {
        "field_recall": {"baseline": STRONG10_BASE, "A": STRONG10_VAR, "B": STRONG10_BASE - 0.25},
        "unsupported_values": {v: grid(0.0, (10, 3)) for v in ("baseline", "A", "B")},
        "abstains": {v: grid(1.0, (10, 3)) for v in ("baseline", "A", "B")},
    }
    v = give_verdict(project, make_run(project, the_card(project), metrics))
    data = v.to_json()
    assert [(c["variant"], c["finding"]) for c in data["comparisons"]] == [("A", "win"), ("B", "loss")]
    assert v.finding == "loss"  # one variant's win never hides another's loss
    assert data["why"].startswith("A: win; B: loss.")
    assert set(data["metrics"]["field_recall"]["by_variant"]) == {"A", "B"}
    assert "Holm's correction across the variants" in data["why"]
    assert {c["variant"] for c in data["clauses"]} == {"A", "B"}


# ------------------------------------------------------------------------------------------- files written


def test_verdict_files_and_ledger_row(project: Project) -> None:
    card = the_card(project)
    run_dir = make_run(project, card, ab_metrics())
    v = give_verdict(project, run_dir)
    on_disk = json.loads((run_dir / "verdict.json").read_text(), parse_constant=pytest.fail)
    assert on_disk == v.to_json()
    assert on_disk["ledger"]["seq"] == 1
    table = pd.read_csv(run_dir / "table.csv")
    assert list(table.columns) == ["fixture", "variant", "repetition", "metric", "value", "rig"]
    assert len(table) == 36 * 3
    assert set(table["rig"]) == {"test/model-1 · effort high · Test API"}
    got = table[(table.metric == "field_recall") & (table.variant == "A")].pivot(
        index="fixture", columns="repetition", values="value")
    assert np.allclose(got.to_numpy(), VAR_A)
    row = ledger.read(project)[0].fields()  # as written
    for key in ("seq", "date", "at", "card", "version", "kind", "rig", "run", "cells", "outcome", "finding",
                "metrics", "clauses", "cost", "latency", "seal_root", "evidence", "prev", "hash"):
        assert key in row, key
    assert row["finding"] == "win" and row["outcome"] == "result"
    assert row["evidence"] == project.relative(run_dir) and row["run"] == run_dir.name
    assert row["metrics"]["field_recall"]["noise_floor"] == 0.0
    assert row["metrics"]["field_recall"]["means"]["A"] == pytest.approx(0.805556, abs=1e-6)
    assert row["cost"] == pytest.approx(36 * 0.002)
    assert row["latency"]["median_ms"] == pytest.approx(117.5)
    assert row["date"] == row["at"][:10] and row["prev"] is None
    ledger.verify(project)


def test_second_verdict_refuses_and_show_prints_the_first(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    with pytest.raises(VerdictError, match=r"already has a verdict .*--show"):
        give_verdict(project, run_dir)
    assert len(ledger.read(project)) == 1
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1 and "already has a verdict" in result.output
    shown = cli_run(project, "verdict", run_dir.name, "--show", "--json")
    assert shown.exit_code == 0
    assert json.loads(shown.output)["finding"] == "win"
    assert load_verdict(project, run_dir).finding == "win"
    assert len(ledger.read(project)) == 1


def test_infinities_become_null(tmp_path: Path) -> None:
    # one repetition: the noise floor cannot be measured (inf) and must be written as null
    project = make_project(tmp_path / "p", AB_CARD.replace("repetitions: 3", "repetitions: 1"))
    metrics = {"field_recall": {"baseline": STRONG_BASE[:, :1], "A": STRONG_VAR[:, :1]},
               "unsupported_values": {"baseline": grid(0.0, (6, 1)), "A": grid(0.0, (6, 1))},
               "abstains": {"baseline": grid(1.0, (6, 1)), "A": grid(1.0, (6, 1))}}
    run_dir = make_run(project, the_card(project), metrics)
    v = give_verdict(project, run_dir)
    text = (run_dir / "verdict.json").read_text()
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text)["metrics"]["field_recall"]["noise_floor"] is None
    assert v.finding == "inconclusive"
    assert "cannot be measured from fewer than two repetitions" in v.to_json()["clauses"][0]["why"]
    assert "Infinity" not in project.ledger_path.read_text()


def test_the_bootstrap_is_seeded_from_the_seal(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    data = give_verdict(project, run_dir).to_json()
    root = json.loads((run_dir / "manifest.json").read_text())["seal_root"]
    d = stats.fixture_differences(np.array(BASE_A), np.array(VAR_A))
    expected = bootstrap_intervals([d], 10_000, seed_from(root), 0.05)[0]
    assert data["metrics"]["field_recall"]["ci_bootstrap"] == pytest.approx(list(expected))
    assert data["bootstrap"]["seed"] == seed_from(root)


# ------------------------------------------------------------------------------------------------ refusals


def test_refuses_an_unfinished_run(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert (f"run {run_dir.name} is still in progress (36 of 36 cells recorded, not closed); a verdict waits for "
            f"the run to finish: `benchcard run extract-ab --resume {run_dir.name}`") in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (run_dir / "verdict.json").exists() and not project.ledger_path.exists()


def test_refuses_cells_without_outputs_unless_allowed(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), drop_outputs=2)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert result.output == (f"error: run {run_dir.name} is incomplete: 2 of 36 cells have no output; judge it "
                             "anyway with --allow-incomplete, which counts those cells as failed, or start a new "
                             "run\n")
    result = cli_run(project, "verdict", run_dir.name, "--allow-incomplete")
    assert result.exit_code == 0, result.output
    assert "finding: incomplete → non-result" in result.output
    assert json.loads((run_dir / "verdict.json").read_text())["counts"]["missing"] == 2


def test_refuses_when_the_seal_changed(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    fixture = project.root / "fixtures" / "extract-ab" / "ex-03.txt"
    fixture.write_text("edited after the run\n", encoding="utf-8")
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert "seal changed since run" in result.output and "fixtures/extract-ab/ex-03.txt" in result.output
    assert not (run_dir / "verdict.json").exists()


def test_refuses_when_the_card_was_resealed_under_another_root(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["seal_root"] = "sha256:" + "0" * 64
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VerdictError, match=r"seal changed since run .* was made under sha256:0000"):
        give_verdict(project, run_dir)


def test_refuses_when_outputs_changed_after_the_run(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    outputs = run_dir / "outputs.jsonl"
    outputs.write_text(outputs.read_text().replace("output 3)", "output 3, improved)"))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert "outputs.jsonl changed after the run finished" in result.output


def test_refuses_scores_that_disagree_with_outputs(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-01", 0): "truncated"})
    scores = run_dir / "scores.jsonl"
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    for r in rows:
        if r["status"] == "truncated":
            r.update(status="ok", score=0.0, metrics={"field_recall": 0.0})
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())  # as a faulty scorer would have recorded it
    manifest["scores_digest"] = file_digest(scores)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VerdictError, match=r"scores\.jsonl does not match outputs\.jsonl"):
        give_verdict(project, run_dir)


def test_find_run(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    assert find_run(project, run_dir.name) == run_dir.resolve()
    assert find_run(project, str(run_dir)) == run_dir.resolve()
    assert find_run(project, run_dir.name[:12]) == run_dir.resolve()
    with pytest.raises(RunError, match="no such run"):
        find_run(project, "20991231T000000Z-ffff")
    result = cli_run(project, "verdict", "nope")
    assert result.exit_code == 1 and "nope: no such run" in result.output
    later = make_run(project, the_card(project), ab_metrics())
    assert find_run(project, "extract-ab") == later.resolve()  # a card id: its most recent run
    assert cli_run(project, "verdict", "extract-ab").exit_code == 0
    assert (later / "verdict.json").is_file() and not (run_dir / "verdict.json").exists()


# ---------------------------------------------------------------------------------------------------- probes


def test_probe_row(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", PROBE_CARD)
    card = the_card(project, "say-negative")
    says = {"probe": np.array([[1, 1, 1, 0, 1]])}
    period = {"probe": np.array([[1, 0, 1, 1, 1]])}
    score = {"probe": (says["probe"] + period["probe"]) / 2}
    run_dir = make_run(project, card, {"score": score}, rules={"says-negative": says, "no-period": period})
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: scored → result" in result.output
    assert "rule says-negative: 4 of 5 pass" in result.output
    row = ledger.read(project)[-1].fields()  # as written
    assert row["kind"] == "probe" and row["model"] == "vendor/model-x"
    assert row["score"] == pytest.approx(0.8) and row["passes"] == 3
    assert row["rules"]["says-negative"]["rate"] == pytest.approx(0.8)
    assert row["rules"]["says-negative"]["wilson"] == pytest.approx(list(stats.wilson(4, 5)))
    assert row["cost"] == pytest.approx(5 * 0.002)
    assert row["latency"]["median_ms"] == pytest.approx(102.0)
    assert row["finding"] == "scored" and row["outcome"] == "result"


def test_probe_with_truncated_and_failed_cells(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", PROBE_CARD)
    card = the_card(project, "say-negative")
    ones = {"probe": np.ones((1, 5))}
    status = {("probe", "say-negative", 1): "truncated", ("probe", "say-negative", 3): "failed"}
    run_dir = make_run(project, card, {"score": {"probe": np.array([[1, 0, 1, 0, 0]])}},
                       rules={"says-negative": ones, "no-period": ones}, status=status)
    v = give_verdict(project, run_dir)
    data = v.to_json()
    assert (v.finding, v.outcome) == ("incomplete", "non-result")
    assert data["counts"]["truncated"] == 1 and data["counts"]["failed"] == 1
    assert data["score"] == pytest.approx(2 / 3)  # repetitions 0, 2, 4 scored: the truncated one is no zero
    assert "cut off by the token limit: reported apart, not scored as wrong" in data["why"]
    # truncated only: still scored
    run2 = make_run(project, card, {"score": {"probe": np.ones((1, 5))}},
                    rules={"says-negative": ones, "no-period": ones},
                    status={("probe", "say-negative", 0): "truncated"})
    v2 = give_verdict(project, run2)
    assert (v2.finding, v2.outcome) == ("scored", "result")
    assert v2.to_json()["score"] == 1.0 and v2.to_json()["counts"]["truncated"] == 1


def test_verdict_json_output(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    result = cli_run(project, "verdict", run_dir.name, "--json")
    assert result.exit_code == 0
    data = json.loads(result.output, parse_constant=pytest.fail)
    assert data["finding"] == "win" and data["ledger"]["seq"] == 1


def test_table_csv_quotes_awkward_names(tmp_path: Path) -> None:
    text = AB_CARD.replace("surface: Test API", 'surface: "Test, \\"quoted\\" API"')
    project = make_project(tmp_path / "p", text)
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    rows = list(csv.DictReader(io.StringIO((run_dir / "table.csv").read_text())))
    assert rows[0]["rig"] == 'test/model-1 · effort high · Test, "quoted" API'


# ------------------------------------------------------------------------------------------- the one reader


def test_both_jsonl_dialects_give_the_same_verdict_and_table(tmp_path: Path) -> None:
    """Runs written before scores.jsonl was compact (spaces after separators) are read exactly as new ones."""
    status = {("A", "ex-02", 0): "failed", ("A", "ex-04", 1): "truncated", ("baseline", "ex-04", 1): "truncated"}
    seen = []
    for compact in (True, False):
        project = make_project(tmp_path / str(compact), AB_CARD)
        run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                           compact=compact)
        assert (b'", "' in (run_dir / "scores.jsonl").read_bytes()) is not compact
        result = cli_run(project, "verdict", run_dir.name, "--json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        seen.append(({k: data[k] for k in ("finding", "counts", "metrics", "clauses")},
                     (run_dir / "table.csv").read_text()))
    assert seen[0] == seen[1]


def test_a_mistyped_row_is_named_by_file_line_and_field(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)
    assignment = run_dir / "sealed" / "assignment.jsonl"
    lines = assignment.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"repetition":', '"repetition":"one","was":')
    assignment.write_text("".join(lines))
    result = cli_run(project, "verdict", run_dir.name)  # the sealed digest catches the edit first
    assert result.exit_code == 1 and "sealed/assignment.jsonl changed after the plan was written" in result.output
    with pytest.raises(VerdictError, match=r"assignment.jsonl: line 3: Expected `int`, got `str` - at `\$.repetition`"):
        read_run(run_dir, baseline="baseline")


def test_a_metric_that_is_null_counts_as_unscored(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)
    scores = run_dir / "scores.jsonl"
    text = scores.read_text()
    first = text.index('"unsupported_values":0.0')
    scores.write_text(text[:first] + '"unsupported_values":null' + text[first + len('"unsupported_values":0.0'):])
    data = read_run(run_dir, baseline="baseline")
    assert np.isnan(data.metrics["unsupported_values"]).sum() == 1


def test_the_table_writes_each_metric_value_as_the_scores_hold_it(project: Project) -> None:
    """Integers stay integers, true/false become 1/0, null an empty value, floats their shortest form."""
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)
    scores = run_dir / "scores.jsonl"
    lines = scores.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    lines[0] = lines[0].replace('"unsupported_values":0.0', '"unsupported_values":2')
    lines[0] = lines[0].replace('"abstains":1.0', '"abstains":true')
    lines[1] = lines[1].replace('"abstains":1.0', '"abstains":null')
    second = json.loads(lines[1])
    scores.write_text("".join(lines))
    from benchcard.verdict.table import table_text

    data = read_run(run_dir, baseline="baseline")
    rows = list(csv.DictReader(io.StringIO(table_text(data, "rig"))))
    cell = {(r["metric"], r["fixture"], r["variant"], r["repetition"]): r["value"] for r in rows}
    a = msgspec.to_builtins(next(x for x in planned_assignment(the_card(project), 1) if x.cell == first["cell"]))
    b = msgspec.to_builtins(next(x for x in planned_assignment(the_card(project), 1) if x.cell == second["cell"]))
    at = (a["fixture"], a["variant"], str(a["repetition"]))
    assert cell[("unsupported_values", *at)] == "2" and cell[("abstains", *at)] == "1"
    assert cell[("field_recall", *at)] == repr(first["metrics"]["field_recall"])
    assert cell[("abstains", b["fixture"], b["variant"], str(b["repetition"]))] == ""


def test_a_mistyped_verdict_json_is_one_line_naming_the_field(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    assert cli_run(project, "verdict", run_dir.name).exit_code == 0
    path = run_dir / "verdict.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "finding": 3}))
    shown = cli_run(project, "verdict", run_dir.name, "--show")
    assert shown.exit_code == 1 and "Traceback" not in shown.output
    assert "verdict.json: Expected `str`, got `int` - at `$.finding`" in shown.output


def test_the_verdict_leads_with_the_effect_in_words(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    data = json.loads((run_dir / "verdict.json").read_text())
    first = data["clauses"][0]
    m = data["metrics"][first["metric"]]
    g = (m.get("by_variant") or {}).get(first["variant"]) or m

    def n(x: float) -> str:
        return f"{x:.3f}".replace("-", "−")

    lead = result.output.splitlines()[1]
    assert lead.startswith(f"{first['variant']} raised {first['metric']} from {n(m['means'][data['baseline']])} to "
                           f"{n(m['means'][first['variant']])} (+{n(g['gap'])}, 95 % CI [{n(g['ci'][0])}, "
                           f"{n(g['ci'][1])}]), paired over {g['n_fixtures']} of 6 fixtures; ")
    assert lead.endswith(f"→ {data['comparisons'][0]['outcome']}")


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


@pytest.mark.parametrize("reordered", [False, True], ids=["one metric order", "a row in another order"])
def test_table_csv_bytes_are_the_row_by_row_writers(tmp_path: Path, reordered: bool) -> None:
    """The table is assembled a metric at a time; its bytes are those of the plain row-by-row writer, with odd
    values (an int among floats, true, null, 0.0 beside -0.0, 1e16, 0.1 + 0.2), unscored cells and a fixture
    name that needs quoting."""
    fixtures = [f if f != "ex-02" else 'ex,"02"' for f in FIXTURES]
    text = AB_CARD.replace("surface: Test API", 'surface: "Test, API"')
    project = make_project(tmp_path / "p", text, fixtures=fixtures)
    status = {("A", 'ex,"02"', 0): "failed", ("baseline", "ex-04", 1): "truncated"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                       compact=True)
    scores = run_dir / "scores.jsonl"
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    ok = [r for r in rows if r["status"] == "ok"]
    odd = [("unsupported_values", 2), ("abstains", True), ("field_recall", None), ("field_recall", 0.0),
           ("field_recall", -0.0), ("field_recall", 1e16), ("field_recall", 0.1 + 0.2)]
    for r, (metric, v) in zip(ok, odd, strict=False):
        r["metrics"][metric] = v
    if reordered:
        ok[-1]["metrics"] = dict(reversed(ok[-1]["metrics"].items()))
    scores.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["scores_digest"] = file_digest(scores)
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    table = (run_dir / "table.csv").read_text(encoding="utf-8")
    assert table == reference_table(run_dir, "baseline", "test/model-1 · effort high · Test, API")
    assert ',field_recall,-0.0,' in table and ',field_recall,1e+16,' in table and '"ex,""02""",A,0,' in table


def _rewrite_rows(run_dir: Path, name: str, change: Any) -> None:
    """Rewrite a run file's rows (`change(rows)` edits the list) and record its new digest, as a faulty or
    concurrent writer would have."""
    path = run_dir / name
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    change(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest[{"outputs.jsonl": "outputs_digest", "scores.jsonl": "scores_digest"}[name]] = file_digest(path)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_files_in_any_row_order_give_the_same_verdict_and_table(project: Project) -> None:
    # The runner writes outputs as calls finish, so a file's rows need not follow the plan; the reader's
    # shortcut for rows in plan order (or outputs in the scores' order) must give what the look-up gives.
    card = the_card(project)
    status = {("A", "ex-02", 1): "truncated"}
    verdicts = []
    for order in ("plan", "outputs reversed", "both reversed", "both shuffled alike"):
        run_dir = make_run(project, card, ab_metrics(), status=status, compact=True)
        if order != "plan":
            _rewrite_rows(run_dir, "outputs.jsonl", lambda rows: rows.reverse())
        if order == "both reversed":
            _rewrite_rows(run_dir, "scores.jsonl", lambda rows: rows.reverse())
        if order == "both shuffled alike":
            for name in ("outputs.jsonl", "scores.jsonl"):
                _rewrite_rows(run_dir, name, lambda rows: rows.sort(key=lambda r: r["cell"][::-1]))
        result = cli_run(project, "verdict", run_dir.name, "--allow-incomplete")
        assert result.exit_code == 0, (order, result.output)
        data = json.loads((run_dir / "verdict.json").read_text())
        for key in ("run", "evidence", "given_at", "ledger"):
            data.pop(key)
        data["summary"] = data["summary"].replace(run_dir.name, "RUN")
        verdicts.append((data, (run_dir / "table.csv").read_bytes()))
    assert verdicts[0][0]["counts"]["truncated"] == 1
    assert all(v == verdicts[0] for v in verdicts[1:])


@pytest.mark.parametrize("order", ["plan", "reversed"])
@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: rows[3].update(fixture="ex-06" if rows[3]["fixture"] != "ex-06" else "ex-05"),
     r"outputs\.jsonl: cell c[0-9a-f]{10} names fixture 'ex-0\d' but the plan has 'ex-0\d'"),
    (lambda rows: rows[2].update(cell="c0000000000"), r"outputs\.jsonl: cell c0000000000 is not in the run's plan"),
    (lambda rows: rows[4].update(cell=rows[5]["cell"]), r"outputs\.jsonl: cell c[0-9a-f]{10} is recorded twice"),
])
def test_outputs_that_disagree_with_the_plan_are_refused(project: Project, order: str, change: Any,
                                                        message: str) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())

    def edit(rows: list[dict[str, Any]]) -> None:
        if order == "reversed":
            rows.reverse()
        change(rows)

    _rewrite_rows(run_dir, "outputs.jsonl", edit)
    with pytest.raises(VerdictError, match=message):
        read_run(run_dir, allow_incomplete=True)
    result = cli_run(project, "verdict", run_dir.name, "--allow-incomplete")
    assert result.exit_code == 1 and re.search(message, result.output), result.output


@pytest.mark.parametrize("variants", [
    'variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
    'variants: {Z: "z\\n", baseline: "", A: "a\\n", "C, \\"quoted\\"": "c\\n", Ω: "d\\n"}',
    None,  # a probe
])
@pytest.mark.parametrize("seed", [1, 2**40 + 3])
def test_the_re_derived_plan_is_the_decoded_one(tmp_path: Path, variants: str | None, seed: int) -> None:
    # The verdict takes the plan from the re-derived assignment when the sealed file has its digest; it must be
    # exactly what decoding the file gives: names, their order (baseline first), codes and cell names.
    if variants is None:
        project = make_project(tmp_path / "p", PROBE_CARD)
        card = the_card(project, "say-negative")
    else:
        text = AB_CARD.replace('variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
                               variants)
        project = make_project(tmp_path / "p", text, fixtures=["ex-06", "ex-02", "ex-01", 'ex,"3"', "ex-Ω"])
        card = the_card(project)
    digest, columns = assignment_plan(card, seed)
    assert columns is not None
    written = b"".join(dumps_line(row) for row in planned_assignment(card, seed))
    assert digest == "sha256:" + hashlib.sha256(written).hexdigest()
    got, decoded = plan_grid(columns, card.variant_names(), card.baseline), read_plan(written, card.baseline, Path("a"))
    assert (got.cells, got.variants, got.fixtures, got.repetitions) == \
        (decoded.cells, decoded.variants, decoded.fixtures, decoded.repetitions)
    for name in ("variant", "fixture", "repetition"):
        mine, theirs = getattr(got, name), getattr(decoded, name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), name


def _with_metrics(rows: list[dict[str, Any]], odd: list[tuple[str, Any]], surrogate: bool) -> None:
    """Give the first ok rows odd metric values (the others repeat a few value sets, as runs do), reverse the key
    order of one row, and, with `surrogate`, add an escaped lone surrogate to the last row (msgspec refuses it,
    so the file is read row by row through `json`)."""
    ok = [r for r in rows if r["status"] == "ok"]
    for r, (metric, v) in zip(ok, odd, strict=False):
        r["metrics"][metric] = v
    ok[-2]["metrics"] = dict(reversed(ok[-2]["metrics"].items()))
    if surrogate:
        rows[-1]["note"] = "\udc80"


def test_scores_repeating_metric_values_read_as_row_by_row(tmp_path: Path) -> None:
    # Each distinct metrics object of scores.jsonl is decoded once and shared by the rows that repeat it; the
    # verdict and table.csv must be those of the row-by-row decoder (forced here by a row msgspec refuses).
    odd = [("unsupported_values", 2), ("abstains", True), ("abstains", False), ("field_recall", None),
           ("field_recall", -0.0), ("field_recall", 1e16), ("unsupported_values", 2**53 + 1)]
    seen = []
    for surrogate in (False, True):
        project = make_project(tmp_path / str(surrogate), AB_CARD)
        status = {("A", "ex-02", 0): "failed", ("baseline", "ex-04", 1): "truncated"}
        run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                           compact=True)
        _rewrite_rows(run_dir, "scores.jsonl", lambda rows, s=surrogate: _with_metrics(rows, odd, s))
        result = cli_run(project, "verdict", run_dir.name, "--json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        table = (run_dir / "table.csv").read_text(encoding="utf-8")
        assert table == reference_table(run_dir, "baseline", "test/model-1 · effort high · Test API")
        seen.append(({k: data[k] for k in ("finding", "counts", "metrics", "clauses")}, table))
    assert ",unsupported_values,9007199254740993," in seen[0][1] and ",abstains,0," in seen[0][1]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("surrogate", [False, True])
def test_a_mistyped_metric_is_named_by_its_line(project: Project, surrogate: bool) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)

    def change(rows: list[dict[str, Any]]) -> None:
        rows[4]["metrics"]["abstains"] = "yes"
        if surrogate:
            rows[1]["note"] = "\udc80"

    _rewrite_rows(run_dir, "scores.jsonl", change)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert result.output.strip().endswith("scores.jsonl: line 5: Expected `bool | int | float | null`, got `str` - "
                                          "at `$.metrics[...]`"), result.output
