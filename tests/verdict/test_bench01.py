"""BENCH-01 end to end on the fake server's scripted outputs: run, blind scoring, verdict, ledger row.

The replies are scripted per (variant, fixture, repetition), so the finding is known in advance: a real gain
wins; the same data with excerpt 07 failing once is a non-result; a gap inside the baseline's run-to-run noise
is a non-result. With concurrency 1 the call order is the plan's seeded order, which tells which repetition
receives which reply of the server's per-request cycle.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonlines
import pytest

from benchcard.card import seal
from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.project import Project
from benchcard.records.ledger import read as read_ledger
from benchcard.run.grid import plan_cells
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.stats import paired as stats
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.give import give_verdict

from ..helpers_project import copy_project

SEED = 20261130
VARIANT_A_TAIL = "- bounded: no inferred terms\n<excerpt>"
BASELINE_TAIL = "Excerpt:\n<excerpt>"

Script = Callable[[str, str, int], str]  # (variant, fixture, repetition) -> reply


def answer(key: dict[str, Any], obligations: int | None = None, invent_termination: bool = False) -> str:
    """A markdown answer built from the key's verbatim values; fewer obligations lower the recall."""
    values = lambda field: [v["value"] for v in key[field]]  # noqa: E731
    lines = [f"- **Parties:** {'; '.join(values('parties'))}", f"- **Effective date:** {values('effective_date')[0]}"]
    rights = values("termination_rights")
    if invent_termination:
        rights = ["Either party may terminate on thirty days' notice for convenience"]
    if rights:
        lines.append("- **Termination rights:**")
        lines += [f"  - {r}" for r in rights]
    else:
        lines.append("- **Termination rights:** not stated in excerpt")
    kept = values("obligations")[: obligations if obligations is not None else None]
    if kept:
        lines.append("- **Obligations:**")
        lines += [f"  - {o}" for o in kept]
    else:
        lines.append("- **Obligations:** not stated in excerpt")
    return "\n".join(lines)


def scripted_config(card: Card, keys: dict[str, dict[str, Any]], script: Script) -> dict[str, Any]:
    """One reply rule per (variant, fixture), its cycle ordered as the plan will call the repetitions."""
    replies = []
    cells = plan_cells(card, SEED)
    for variant in card.variant_names():
        for fixture in card.fixture_ids():
            order = sorted((c for c in cells if c.variant == variant and c.fixture == fixture), key=lambda c: c.order)
            head = card.fixture_text(fixture)[:60]
            match = (VARIANT_A_TAIL if variant == "A" else BASELINE_TAIL) + head
            replies.append({"match": match, "replies_cycle": [script(variant, fixture, c.repetition) for c in order]})
    return {"replies": replies}


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Project, Card, dict[str, dict[str, Any]]]:
    root = copy_project(tmp_path / "proj", ("bench-01",))
    project = Project(root)
    card = load_card(root / "cards" / "bench-01.yaml", project)
    seal.seal(card, project)
    keys = {f: json.loads((root / "keys" / "bench-01" / f"{f}.json").read_text()) for f in card.fixture_ids()}
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    return project, card, keys


def run_scripted(project: Project, card: Card, keys: dict[str, dict[str, Any]], script: Script) -> Path:
    with FakeServer(scripted_config(card, keys, script)) as server:
        # the card's own provider, its endpoint configured as a user would (a --base-url would make it scratch)
        (project.root / "benchcard.yaml").write_text(
            f"providers:\n  anthropic: {{type: anthropic, base_url: '{server.base_url}', "
            "api_key_env: ANTHROPIC_API_KEY}\n", encoding="utf-8")
        summaries = run(project, "bench-01", RunOptions(provider="anthropic", concurrency=1, seed=SEED,
                                                         progress=False))
        assert server.stats()["calls"] == 120
    assert len(summaries) == 1 and summaries[0].finished
    return project.root / summaries[0].folder


def test_a_real_gain_wins(bench: tuple[Project, Card, dict[str, dict[str, Any]]]) -> None:
    project, card, keys = bench

    def script(variant: str, fixture: str, rep: int) -> str:
        if variant == "A":
            return answer(keys[fixture])
        return answer(keys[fixture], obligations=[1, 1, 0, 1, 1][rep])

    run_dir = run_scripted(project, card, keys, script)
    verdict = give_verdict(project, run_dir)
    assert (verdict.finding, verdict.outcome) == ("win", "result")
    clauses = verdict.to_json()["clauses"]
    assert [(c["metric"], c["test"], c["holds"]) for c in clauses] == [
        ("field_recall", "rises", True), ("unsupported_values", "not_rises", True), ("abstains", "holds", True)]
    assert clauses[0]["ci"][0] > 0 and clauses[0]["gap"] > clauses[0]["noise_floor"]
    row = read_ledger(project)[-1].fields()
    assert row["card"] == "bench-01" and row["outcome"] == "result" and row["finding"] == "win"
    assert row["rig"] == "claude-fable-5-1 · effort high · Claude API"
    assert row["run"] == run_dir.name and row["cells"] == 120

    # The 120 raw outputs are kept unedited, and the per-field table names fixture, variant, run index and rig.
    with jsonlines.open(run_dir / "outputs.jsonl") as reader:
        outputs = list(reader)
    assert len(outputs) == 120 and {o["status"] for o in outputs} == {"ok"}
    assert all("variant" not in o and "model" not in o for o in outputs)
    expected_texts = {script(v, f, r) for v in ("baseline", "A") for f in card.fixture_ids() for r in range(5)}
    assert {o["text"] for o in outputs} <= expected_texts
    with open(run_dir / "table.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0]) == ["fixture", "variant", "repetition", "metric", "value", "rig"]
    recall_rows = [t for t in table if t["metric"] == "field_recall"]
    assert len(recall_rows) == 120
    assert {t["rig"] for t in table} == {"claude-fable-5-1 · effort high · Claude API"}
    assert {t["repetition"] for t in recall_rows} == {"0", "1", "2", "3", "4"}
    assert {t["metric"] for t in table} >= {"field_recall.obligations", "unsupported_values", "abstains"}


def test_excerpt_07_failing_once_is_a_non_result(bench: tuple[Project, Card, dict[str, dict[str, Any]]]) -> None:
    project, card, keys = bench

    def script(variant: str, fixture: str, rep: int) -> str:
        if variant == "A":
            return answer(keys[fixture], invent_termination=fixture == "excerpt-07" and rep == 2)
        return answer(keys[fixture], obligations=[1, 1, 0, 1, 1][rep])

    verdict = give_verdict(project, run_scripted(project, card, keys, script))
    assert verdict.outcome == "non-result"
    assert verdict.finding == "inconclusive"
    rises, guard, holds = verdict.to_json()["clauses"]
    assert rises["holds"] and guard["holds"]  # two out of three...
    assert not holds["holds"] and (holds["k"], holds["n"]) == (4, 5)  # ...is a non-result
    assert read_ledger(project)[-1].outcome == "non-result"


def test_a_gap_inside_the_baselines_noise_is_a_non_result(
    bench: tuple[Project, Card, dict[str, dict[str, Any]]],
) -> None:
    """A run-wide shock: runs 2–4 of the baseline lose every obligation. The variant is ahead on average, and
    its lead is the same on every fixture (so the t interval alone would call it real), but it sits inside the
    baseline's own run-to-run spread."""
    project, card, keys = bench

    def script(variant: str, fixture: str, rep: int) -> str:
        good = rep < (3 if variant == "A" else 2)
        return answer(keys[fixture], obligations=None if good else 0)

    verdict = give_verdict(project, run_scripted(project, card, keys, script))
    assert verdict.outcome == "non-result"
    assert verdict.finding == "inconclusive"
    rises = verdict.to_json()["clauses"][0]
    assert not rises["holds"]
    paired_low = rises["gap"] - stats.t_ppf(0.975, rises["n_fixtures"] - 1) * rises["se_fixture"]
    assert paired_low > 0, "the paired t interval alone would call the gap real"
    assert rises["ci"][0] < 0 < rises["run_var"], "the run-level term, counted once, does not"
    assert rises["gap"] < rises["noise_floor"]
