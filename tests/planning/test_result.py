"""`benchcard plan --json` prints the typed plan (planning/result.py) in exactly the bytes, key order
included, that it printed when the plan was a dict: every kind of plan against a golden file captured from the
untyped code (tests/data/plan/; a pilot's run id is the one thing that differs between runs). pilot.json was
captured again on 2026-12-04, when a pilot's plan began drawing each simulated run's fixture spread from the
pilot's uncertainty (its figures moved by design; its keys and their order did not), and again later that day
with never-truncated.json, when the pilot's rate and run term were drawn too and the plan gained its
`assumption` (one key, after `method`). On 2026-12-05 the dead-design notes gained the combined change (more
fixtures and repetitions together) and a plan without a pilot its dead-design warning (none.json, prices.json);
later that day a pilot's run term was drawn whether its F test shows it or not, so never-truncated.json prints the
pilot's estimate of it (0.040) where it printed 0."""

from __future__ import annotations

import math
import os
from pathlib import Path

import msgspec
import numpy as np
import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.planning.result import ClausePlan, Plan, strict_plan
from benchcard.project import Price, Project

from ..helpers_verdict import (
    AB_CARD,
    FIXTURES10,
    PROBE_CARD,
    SHOCKED10,
    ab_metrics,
    make_project,
    make_run,
    the_card,
)

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "plan"
THREE_VARIANTS = AB_CARD.replace('A: "Score your own output before returning it.\\n"}',
                                 'A: "Score your own output before returning it.\\n", B: "Check it twice.\\n"}')


def _plan_json(project: Project, *args: str) -> str:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", *args, "--json"])
    assert result.exit_code == 0, result.output
    return result.output


def _golden(name: str, run: str | None = None, out: str | None = None) -> str:
    """The expected bytes; with BENCHCARD_WRITE_GOLDEN=1 and `out`, written again first (only ever from a plan
    known to be right)."""
    path = GOLDEN / f"{name}.json"
    if out is not None and os.environ.get("BENCHCARD_WRITE_GOLDEN"):
        written = out.replace(run, "RUNID") if run else out
        path.write_text(written.removesuffix("\n"), encoding="utf-8")
    text = path.read_text(encoding="utf-8") + "\n"
    return text.replace("RUNID", run) if run else text


@pytest.mark.parametrize(("name", "args"), [
    ("none", []),
    ("assumptions", ["--baseline-rate", "0.6", "--fixture-sd", "0.15", "--fixtures", "16", "--repetitions", "5"]),
])
def test_a_plan_without_a_pilot_prints_the_same_bytes(tmp_path: Path, name: str, args: list[str]) -> None:
    project = make_project(tmp_path / "proj")
    out = _plan_json(project, "extract-ab", *args)
    assert out == _golden(name, out=out)


def test_a_priced_plan_prints_the_same_bytes(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    (project.root / "benchcard.yaml").write_text("prices:\n  test/model-1: {input: 3, output: 15}\n")
    out = _plan_json(project, "extract-ab")
    assert out == _golden("prices", out=out)


@pytest.mark.parametrize(("name", "args"), [
    ("variants-never", ["--baseline-rate", "0.5"]),
    ("variants", ["--baseline-rate", "0.5", "--fixtures", "16", "--repetitions", "5"]),
])
def test_several_variants_print_the_same_bytes(tmp_path: Path, name: str, args: list[str]) -> None:
    project = make_project(tmp_path / "p", THREE_VARIANTS)
    out = _plan_json(project, "extract-ab", *args)
    assert out == _golden(name, out=out)


def test_a_probe_prints_the_same_bytes(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    make_project(project.root, PROBE_CARD)
    assert _plan_json(project, "say-negative", "--baseline-rate", "0.5") == _golden("probe")


def test_a_plan_from_a_pilot_with_a_guard_and_a_holds_clause_prints_the_same_bytes(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    base, var = SHOCKED10 - 0.1, SHOCKED10
    run_dir = make_run(project, the_card(project), ab_metrics(np.clip(base, 0, 1), var, shape=(10, 3)))
    out = _plan_json(project, "extract-ab", "--from", run_dir.name)
    assert out == _golden("pilot", run_dir.name, out)


def test_a_design_that_can_never_win_prints_the_same_bytes(tmp_path: Path) -> None:
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 5")
    project = make_project(tmp_path / "p", text)
    run_dir = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-02", 1): "truncated"})
    one = text.replace("repetitions: 3", "repetitions: 1").replace("version: 1", "version: 2").replace(
        "  - {version: 1, note: First version.}", "  - {version: 2, note: One repetition.}\n"
        "  - {version: 1, note: First version.}")
    (project.root / "cards" / "extract-ab.yaml").write_text(one)
    out = _plan_json(project, "extract-ab", "--from", run_dir.name)
    assert out == _golden("never-truncated", run_dir.name, out)
    assert '"needed_gap": null' in out  # infinite, printed as strict JSON


def test_strict_plan_makes_every_figure_strict_json() -> None:
    clause = ClausePlan(metric="m", test="rises", fixture=None, margin=None, variant="A", needed_gap=math.inf,
                        needed_gap_range=[np.float64(0.1), math.nan], pilot_df=np.int64(4))  # type: ignore[arg-type]
    plan = Plan(card="c", version=1, kind="ab", rig="r", model="m", variants=2, fixtures=1, repetitions=1, calls=2,
                input_tokens=1, input_tokens_method="x", max_output_tokens=1, max_tokens=1, price=Price(3, 15, 0.5),
                max_cost=math.inf, input_cost=None)
    from benchcard.planning.result import PilotPlan

    plan = msgspec.structs.replace(plan, pilot=PilotPlan(run="r", version=1, power=0.8, method="x", assumption="y",
                                                         clauses=[clause],
                                                         notes=[]))
    fields = strict_plan(plan).fields()
    assert fields["max_cost"] is None and fields["price"] == {"input": 3, "output": 15, "unit": "USD per 1M tokens"}
    assert list(fields["price"]) == ["input", "output", "unit"]  # the project's Price, printed without its discount
    [c] = fields["pilot"]["clauses"]
    assert c["needed_gap"] is None and c["needed_gap_range"] == [0.1, None] and c["pilot_df"] == 4
    assert "never" not in c and "note" not in c  # absent fields stay absent
