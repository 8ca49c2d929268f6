"""What verdict.json says (verdict/findings.py): an ab run's overall finding across variants and its incomplete
grids, a probe's score and rule pass rates with their Wilson intervals, and what a probe with nothing scored says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.verdictfigures import known
from benchcard.stats import paired as stats
from benchcard.verdict.give import give_verdict

from ..helpers_verdict import (
    AB_CARD,
    FIXTURES,
    FIXTURES10,
    PROBE_CARD,
    STRONG10_BASE,
    STRONG10_VAR,
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    cli_run,
    grid,
    make_project,
    make_run,
    the_card,
)


def test_failed_cells_make_the_grid_incomplete(project: Project) -> None:
    status = {("A", "ex-02", 0): "failed", ("baseline", "ex-03", 2): "failed"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("incomplete", "non-result")
    data = v.to_json()
    assert data["counts"]["failed"] == 2
    assert "2 cell(s) failed in transport and the card allows 0" in data["why"]


def test_a_variant_that_would_win_in_an_incomplete_grid_is_no_result(project: Project) -> None:
    """The grid is not judged, so no line may read 'win → result' under 'finding: incomplete → non-result': the
    variant's line, its comparison in verdict.json and the ledger row read incomplete, and the lead says why
    every clause holding is no result."""
    status = {("A", "ex-02", 0): "failed", ("baseline", "ex-03", 2): "failed"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: incomplete → non-result" in result.output
    assert "A vs baseline: incomplete → non-result" in result.output and "→ result" not in result.output
    assert "every clause holds, but incomplete → non-result" in result.output
    [row] = ledger.read(project)
    assert [(c.variant, c.finding, c.outcome) for c in known(row.comparisons) or []] == [
        ("A", "incomplete", "non-result")]
    [comparison] = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["comparisons"]
    assert comparison["why"].startswith("With every cell scored this variant's gap would be a win, but the grid")


def test_truncated_cells_count_against_allow_failed(project: Project) -> None:
    status = {("A", "ex-04", 1): "truncated"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: incomplete → non-result" in result.output
    assert "1 cell(s) were cut off by the token limit and the card allows 0" in result.output



def test_a_grid_with_every_cell_cut_off_says_no_clause_is_judged(project: Project) -> None:
    """Every cell truncated: the grid is incomplete and judges nothing, so the note on the cut-off cells says so,
    never that every clause is judged with them bounded at the worst case."""
    metrics = ab_metrics(STRONG_BASE, STRONG_VAR)
    status = {(v, f, r): "truncated" for v in ("baseline", "A") for f in FIXTURES
              for r in range(STRONG_BASE.shape[1])}
    run_dir = make_run(project, the_card(project), metrics, status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: incomplete → non-result" in result.output
    summary = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["summary"]
    assert "bounded at the worst case" not in summary
    assert (f"{STRONG_BASE.size * 2} cell(s) were cut off by the token limit (baseline {STRONG_BASE.size}, A "
            f"{STRONG_BASE.size}); they are never scored as wrong, count against allow_failed, and no clause is "
            "judged: more cells have no score than the card allows.") in summary


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


def test_a_probe_with_nothing_scored_says_so_and_is_no_result(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", PROBE_CARD)
    card = the_card(project, "say-negative")
    ones = {"probe": np.ones((1, 5))}
    status = {("probe", "say-negative", r): "failed" for r in range(5)}
    run_dir = make_run(project, card, {"score": ones}, rules={"says-negative": ones, "no-period": ones},
                       status=status)
    data = give_verdict(project, run_dir).to_json()
    assert (data["finding"], data["outcome"], data["score"], data["passes"]) == ("incomplete", "non-result", None, 0)
    assert data["why"] == "no repetition could be scored. 5 failed in transport."
    assert data["score_ci"] == list(stats.wilson(0, 0)) and data["rule_lines"] == []  # no rule was ever scored
    assert data["summary"] == (f"say-negative v1, run {run_dir.name}, vendor/model-x: incomplete (non-result). "
                               "no repetition could be scored. 5 failed in transport.")


def test_a_probe_names_each_rules_pass_rate_in_a_line(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", PROBE_CARD)
    says = {"probe": np.array([[1, 1, 1, 0, 1]])}
    period = {"probe": np.ones((1, 5))}
    run_dir = make_run(project, the_card(project, "say-negative"), {"score": {"probe": (says["probe"] + 1) / 2}},
                       rules={"says-negative": says, "no-period": period})
    data = give_verdict(project, run_dir).to_json()
    assert data["rule_lines"] == [
        f"rule says-negative: 4 of 5 pass (Wilson 95% [{stats.wilson(4, 5)[0]:.3f}, {stats.wilson(4, 5)[1]:.3f}])",
        f"rule no-period: 5 of 5 pass (Wilson 95% [{stats.wilson(5, 5)[0]:.3f}, {stats.wilson(5, 5)[1]:.3f}])",
    ]
    assert data["why"] == "score 0.900 over 5 scored repetition(s); 4 of 5 pass (score 1)."


def test_a_probe_reports_its_intervals_at_the_alpha_its_gate_seals(tmp_path: Path) -> None:
    """`gate: {alpha: 0.1}` makes every Wilson interval of the probe's verdict a 90 % one, and says so."""
    card_text = PROBE_CARD.replace("repetitions: 5\n", "repetitions: 5\ngate: {min_score: 0.8, alpha: 0.1}\n")
    project = make_project(tmp_path / "p", card_text)
    says = {"probe": np.array([[1, 1, 1, 0, 1]])}
    period = {"probe": np.ones((1, 5))}
    run_dir = make_run(project, the_card(project, "say-negative"), {"score": {"probe": (says["probe"] + 1) / 2}},
                       rules={"says-negative": says, "no-period": period})
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    lo, hi = stats.wilson(4, 5, 0.1)
    assert f"  rule says-negative: 4 of 5 pass (Wilson 90% [{lo:.3f}, {hi:.3f}])" in result.output.splitlines()
    assert "· Wilson 90% [" in result.output and "95%" not in result.output
    data = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert data["alpha"] == 0.1 and data["rules"]["says-negative"]["wilson"] == pytest.approx([lo, hi])
