"""The gate's rule recorded with the verdict (verdict/_gaterule.py): a probe sealed with `gate: {min_score}` has
its min_score, its decision and the score it held in verdict.json and its ledger row (`sealed_gate`), so that the
ledger and the pages say pass or below beside the score; an ungated probe and an ab card record nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records import ledger

from ..helpers_verdict import PROBE_CARD, STRONG_BASE, STRONG_VAR, ab_metrics, make_project, make_run, the_card

GATED = PROBE_CARD.replace("repetitions: 5\n", "repetitions: 5\ngate: {min_score: 0.8}\n")


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def _probe_run(project: Project, says: list[int], status: dict[tuple[str, str, int], str] | None = None) -> Path:
    score = np.array([says], dtype=float)
    return make_run(project, the_card(project, "say-negative"), {"score": {"probe": score}},
                    rules={"says-negative": {"probe": score}, "no-period": {"probe": np.ones((1, 5))}}, status=status)


@pytest.mark.parametrize(("says", "status", "recorded"), [
    ([1, 1, 1, 1, 0], None, {"min_score": 0.8, "decision": "pass", "held": 0.8}),
    ([1, 1, 1, 0, 0], None, {"min_score": 0.8, "decision": "below", "held": 0.6}),
    ([1, 1, 1, 1, 1], {("probe", "say-negative", 4): "truncated"}, {"min_score": 0.8, "decision": "pass",
                                                                    "held": 0.8}),
    ([1, 1, 1, 0, 1], {("probe", "say-negative", 4): "truncated"}, {"min_score": 0.8, "decision": "below",
                                                                    "held": 0.6}),
    ([1, 1, 1, 1, 1], {("probe", "say-negative", 2): "failed"}, {"min_score": 0.8, "decision": "incomplete",
                                                                 "held": None}),
])
def test_a_gated_probes_verdict_and_row_record_what_its_gate_decided(
        tmp_path: Path, says: list[int], status: dict[tuple[str, str, int], str] | None,
        recorded: dict[str, object]) -> None:
    project = make_project(tmp_path / "p", GATED)
    run = _probe_run(project, says, status)
    given = bc(project, "verdict", run.name, "--json")
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout)["sealed_gate"] == pytest.approx(recorded)
    assert json.loads((run / "verdict.json").read_text(encoding="utf-8"))["sealed_gate"] == pytest.approx(recorded)
    row = ledger.read(project)[-1].fields()
    assert row["sealed_gate"] == pytest.approx(recorded)
    gated = bc(project, "verdict", run.name, "--show", "--gate", "--json")  # the exit decision beside it, not over it
    data = json.loads(gated.stdout)
    assert data["sealed_gate"]["decision"] == recorded["decision"] == data["gate"]["finding"]
    ledger.verify(project)


def test_an_ungated_probe_and_an_ab_card_record_no_gate(tmp_path: Path) -> None:
    plain = make_project(tmp_path / "p", PROBE_CARD)
    run = _probe_run(plain, [1, 1, 1, 0, 0])
    assert bc(plain, "verdict", run.name).exit_code == 0
    assert "sealed_gate" not in json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    assert "sealed_gate" not in ledger.read(plain)[-1].fields()
    ab = make_project(tmp_path / "ab")
    ab_run = make_run(ab, the_card(ab), ab_metrics(STRONG_BASE, STRONG_VAR))
    assert bc(ab, "verdict", ab_run.name).exit_code == 0
    assert "sealed_gate" not in json.loads((ab_run / "verdict.json").read_text(encoding="utf-8"))
    assert "sealed_gate" not in ledger.read(ab)[-1].fields()
