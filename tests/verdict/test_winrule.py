"""The win rule's words and its `holds` clauses (verdict/_winrule.py): figures to three places with a true minus,
p values, intervals and levels, each clause in words, and a holds clause counted repetition by repetition."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchcard._util.numfmt import interval
from benchcard.card.model import Clause
from benchcard.project import Project
from benchcard.records.verdictfigures import HoldsFigures
from benchcard.stats import paired as stats
from benchcard.verdict._winrule import holds_clause
from benchcard.verdict.give import give_verdict
from benchcard.verdict.runfolder import read_run_data

from ..helpers_verdict import (
    AB_CARD,
    BASE_A,
    FIXTURES10,
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    cli_run,
    make_project,
    make_run,
    the_card,
)


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


@pytest.mark.parametrize(("clause", "text"), [
    (Clause("field_recall", "rises"), "field_recall rises"),
    (Clause("unsupported_values", "not_rises", margin=0.25), "unsupported_values does not rise (margin 0.25)"),
    (Clause("score", "falls", fixture="ex-02"), "score falls on ex-02"),
    (Clause("acc", "not_falls", fixture="ex-01", margin=0.1), "acc does not fall on ex-01 (margin 0.1)"),
    (Clause("abstains", "holds", fixture="ex-06"), "abstains = 1 on ex-06 in every repetition"),
    (Clause("abstains", "holds", fixture="ex-06", equals=0.0), "abstains = 0 on ex-06 in every repetition"),
])
def test_a_clause_in_words(clause: Clause, text: str) -> None:
    assert clause.text == text


def test_a_holds_clause_counts_the_variants_repetitions_against_the_baselines(project: Project) -> None:
    abstains_var = np.ones((6, 3))
    abstains_var[5, 1] = 0.0  # ex-06, repetition 1: the variant did not abstain
    run_dir = make_run(project, the_card(project), ab_metrics(abstains_var=abstains_var))
    data = read_run_data(run_dir, baseline="baseline")
    clause = Clause("abstains", "holds", fixture="ex-06")
    held = holds_clause(clause, data, "A", "baseline", 0.05)
    assert not held.holds and held.cause == "2 of 3 repetitions"
    assert held.figures == HoldsFigures(k=2, n=3, planned=3, rate=2 / 3, wilson=list(stats.wilson(2, 3, 0.05)),
                                        baseline_k=3, baseline_n=3)
    assert held.why.startswith("abstains = 1 on ex-06 in every repetition (A): does not hold — 2 of 3 scored "
                               "repetitions (Wilson 95% [")
    assert held.why.endswith("]; baseline 3 of 3).")
    base = holds_clause(clause, data, "baseline", "baseline", 0.05)
    assert base.holds and base.why.endswith(f"holds — 3 of 3 repetitions (Wilson 95% {interval(*stats.wilson(3, 3))}; "
                                            "baseline 3 of 3).")


def test_a_holds_clause_on_a_fixture_or_metric_the_run_lacks_cannot_be_judged(project: Project) -> None:
    data = read_run_data(make_run(project, the_card(project), ab_metrics()), baseline="baseline")
    for clause in (Clause("abstains", "holds", fixture="ex-99"), Clause("refusals", "holds", fixture="ex-06")):
        got = holds_clause(clause, data, "A", "baseline", 0.05)
        assert not got.holds and got.why == (f"{clause.text} (A): cannot be judged — no scored value of "
                                             f"{clause.metric} on {clause.fixture}.")
        assert got.figures == HoldsFigures(k=0, n=0, planned=0 if clause.fixture == "ex-99" else 3)


def test_no_effect_without_spread_says_the_gap_was_the_same_on_every_fixture(tmp_path: Path) -> None:
    """Both arms score alike on every fixture in every repetition: no interval exists (zero spread), and the
    finding's reason says so instead of "CI n/a lies inside ±0.05"."""
    project = make_project(tmp_path)
    same = STRONG_BASE
    run = make_run(project, the_card(project), ab_metrics(same, same.copy()))
    verdict = give_verdict(project, run)
    why = verdict.to_json()["why"]
    assert verdict.to_json()["finding"] == "no-effect" and "n/a" not in why
    assert why.startswith("the field_recall gap, the same on every fixture (no spread, so no interval), lies "
                              "inside ±")


def test_a_gap_no_spread_was_measured_for_is_cut_to_its_metrics_range_not_left_infinite(tmp_path: Path) -> None:
    """One repetition measures no run-to-run spread, so the interval is everything the gap can be: a 0–1 metric's
    [−1, 1] (written and printed so), a count's unbounded (null in verdict.json). It read [−∞, ∞] for both, and
    the 0–1 metric's range is known (hostile audit 13b: an interval beyond it is never right)."""
    project = make_project(tmp_path, AB_CARD.replace("repetitions: 3", "repetitions: 1"))
    metrics = {"field_recall": {"baseline": STRONG_BASE[:, :1], "A": STRONG_VAR[:, :1]},
               "unsupported_values": {"baseline": np.zeros((6, 1)), "A": np.ones((6, 1))},
               "abstains": {"baseline": np.ones((6, 1)), "A": np.ones((6, 1))}}
    run = make_run(project, the_card(project), metrics)
    result = cli_run(project, "verdict", run.name)
    assert result.exit_code == 0, result.output
    written = json.loads((run / "verdict.json").read_text(encoding="utf-8"))
    recall = written["metrics"]["field_recall"]
    assert recall["ci"] == [-1.0, 1.0] and (recall["lower_one_sided"], recall["upper_one_sided"]) == (-1.0, 1.0)
    assert written["metrics"]["unsupported_values"]["ci"] == [None, None]
    assert "the 90% CI of the field_recall gap [−1.000, 1.000] is not inside ±0.05" in result.output
    assert "gap +0.333, 95% CI [−1.000, 1.000], p = 1.0000" in result.output
    assert not [line for line in result.output.splitlines()  # the run term, unmeasured, reads ±∞ (20f4e5c)
                if "field_recall" in line and "∞" in line.replace("run term ±∞", "")]
    assert "unsupported_values (A − baseline): means baseline 0.000 · A 1.000; gap +1.000 CI [−∞, ∞]" in result.output


@pytest.mark.parametrize(("moved", "says"), [
    (0, "the sign-flip p 1.000 is above α (the gap is 0 on every fixture: no fixture's mean moved)"),
    (2, "is above α (the 2 of 6 fixtures that moved can never reach α 0.05)"),
])
def test_a_gap_of_0_on_some_or_every_fixture_is_said_as_it_is(tmp_path: Path, moved: int, says: str) -> None:
    """Each fixture's mean the same in both arms (the repetitions in another order): the reason is that nothing
    moved, not that "0 fixtures can never reach α"; with a few fixtures moved, it counts those."""
    project = make_project(tmp_path)
    base = np.array(BASE_A)
    var = base[:, ::-1].copy()
    var[:moved] += 0.25
    run = make_run(project, the_card(project), ab_metrics(base, var))
    result = cli_run(project, "verdict", run.name)
    assert result.exit_code == 0, result.output
    assert says in result.output and "0 fixtures" not in result.output


def test_zero_spread_on_few_fixtures_says_the_gap_is_on_its_side_and_why_it_cannot_count(tmp_path: Path) -> None:
    """Four fixtures, each answered alike in every repetition, the variant ahead by 0.01 on every one and no
    unsupported value in either arm (hostile round 12c): every figure is on the side its clause wants, and only
    the sign-flip's smallest p over four fixtures (2⁻⁴ one-sided, 2⁻³ two-sided) stands in the way. The words
    said the opposite: "the gap is not above 0" of a gap of +0.010, "the gap (no spread at all) is not below
    0.250" of a gap of 0, and "the field_recall gap ... is not inside ±0.05" of a gap of 0.010."""
    fixtures = ["ex-01", "ex-02", "ex-03", "ex-06"]  # the card's holds clause names ex-06
    project = make_project(tmp_path / "p", fixtures=fixtures)
    base = np.repeat(np.array([[0.2], [0.4], [0.6], [0.8]]), 3, 1)
    run_dir = make_run(project, the_card(project), ab_metrics(base, base + 0.01, shape=(4, 3)))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "finding: inconclusive → non-result" in out
    [rises] = [x for x in out.splitlines() if x.startswith("  FAILS  field_recall rises")]
    assert rises.endswith("gap +0.010, no spread at all (every fixture moved alike, so no t interval), p = 0.1250, "
                          "sign-flip p = 0.1250: the sign-flip p 0.125 is above α (4 fixtures can never reach α "
                          "0.05).")
    [guard] = [x for x in out.splitlines() if x.startswith("  FAILS  unsupported_values")]
    assert ("does not hold — the gap (no spread at all) is below 0.250, but the one-sided sign-flip p 0.062 is "
            "above α (4 fixtures can never reach α 0.05) (gap +0.000, p = 1.0000)") in guard
    assert ("the field_recall gap, the same on every fixture (no spread, so no interval), lies inside ±0.05, but "
            "the sign-flip p 0.062 is above α (4 fixtures can never reach α 0.05; TOST p = 0.0625), so no effect "
            "is not shown either") in out
    assert "not above 0" not in out and "is not below" not in out and "is not inside" not in out



ALLOW_1 = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 1")


def test_a_guard_on_a_count_with_a_variant_cell_cut_off_cannot_hold(tmp_path: Path) -> None:
    """A cut-off answer could hold any number of invented values: filling it with the largest count seen (0 here)
    bounded nothing, and gave this run a win (hostile audit 12c, `countguard2`)."""
    project = make_project(tmp_path, ALLOW_1, fixtures=FIXTURES10)
    base = np.round(np.random.default_rng(3).random((10, 3)) * 2) / 4
    run_dir = make_run(project, the_card(project), ab_metrics(base, np.ones((10, 3)), shape=(10, 3)),
                       status={("A", "ex-03", 0): "truncated"})
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0
    assert "finding: inconclusive → non-result" in result.output
    assert ("unsupported_values does not rise (margin 0.25) (A − baseline): does not hold — 1 cell of A was cut off "
            "at max_tokens and unsupported_values has no upper bound: the guard cannot be shown to hold (gap +0.000, "
            "p = 1.0000; its 1 truncated cell(s) allow gaps from +0.000 to +∞)." in result.output)
    guard = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["clauses"][1]
    assert guard["holds"] is False and "broken" not in guard and guard["bounded_gaps"] == [0.0, None]
    recall = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["clauses"][0]
    assert recall["holds"] is True and "bounded at the worst case for the claim" in recall["why"]  # bounded: kept


def test_a_fall_of_a_count_with_a_variant_cell_cut_off_cannot_be_shown(tmp_path: Path) -> None:
    card = ALLOW_1.replace("- {metric: field_recall, test: rises}", "- {metric: unsupported_values, test: falls}")
    card = card.replace("    - {metric: unsupported_values, test: not_rises, margin: 0.25}\n", "")
    project = make_project(tmp_path, card, fixtures=FIXTURES10)
    metrics = ab_metrics(shape=(10, 3), recall_base=np.ones((10, 3)), recall_var=np.ones((10, 3)))
    metrics["unsupported_values"] = {"baseline": np.full((10, 3), 3.0), "A": np.zeros((10, 3))}
    run_dir = make_run(project, the_card(project), metrics, status={("A", "ex-03", 0): "truncated"})
    result = cli_run(project, "verdict", run_dir.name)
    assert "finding: inconclusive → non-result" in result.output
    assert "1 cell of A was cut off at max_tokens and unsupported_values has no upper bound: the fall cannot be " \
           "shown" in result.output


def test_a_clause_shown_without_an_interval_says_the_bounded_evidence_holds_it(tmp_path: Path) -> None:
    """Every cell of A's first repetition cut off: the figures shown leave them out, so no run spread can be
    measured (CI [−1, 1], all a score in [0, 1] can show; it read [−∞, ∞] until hostile audit 13b, p = 1), and the
    clause holds on the bounded evidence alone. Its line said "the calibrated interval puts the gap above 0" beside
    that interval (a guard: "the lower bound −∞ is above −0.250"); it now names the evidence that holds it."""
    card = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 10")
    card = card.replace("repetitions: 3", "repetitions: 6").replace(
        "{metric: unsupported_values, test: not_rises, margin: 0.25}",
        "{metric: field_recall, test: not_falls, margin: 0.25}")
    project = make_project(tmp_path, card, fixtures=FIXTURES10)
    base = np.zeros((10, 6))
    base[:5, 1] = 1.0  # a run-to-run spread in the baseline
    variant = np.ones((10, 6))
    variant[5:, 2] = 0.0
    card_read = the_card(project)
    status = {("A", fixture, 0): "truncated" for fixture in card_read.fixture_ids()}
    run_dir = make_run(project, card_read, ab_metrics(base, variant, shape=(10, 6)), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.output.splitlines() if x.startswith("  holds  field_recall rises")]
    assert "95% CI [−1.000, 1.000]" in line and "the calibrated interval puts" not in line, line
    assert "with truncated cells bounded, the evidence (p = " in line and ") puts the gap above 0; judged with its " \
        "10 truncated cell(s) bounded at the worst case for the claim" in line, line
    # a guard the same: "the one-sided 95% lower bound −∞ is above −0.250" read as the reason it held
    [guard] = [x for x in result.output.splitlines() if x.startswith("  holds  field_recall does not fall")]
    assert "bound −∞" not in guard and "holds — with truncated cells bounded, the evidence (p = " in guard, guard
    assert ") shows the gap is above −0.250 (gap +0.817, p = 1.0000); judged with its 10 truncated" in guard, guard
