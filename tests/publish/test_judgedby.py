"""What a run was judged by (`publish/_judgedby.py`): the clauses its plots and tables draw and its baseline, from
its typed verdict.json, from its ledger row when the file was edited after the row, else from its card."""

from __future__ import annotations

from pathlib import Path

import msgspec

from benchcard.card.load import load_card
from benchcard.publish._judgedby import ClauseRef, baseline_of, clauses_for
from benchcard.publish._runs import Run
from benchcard.records.ledgerrow import ClauseOutcome, LedgerRow, RowCounts
from benchcard.records.verdictfigures import Bootstrap, ClauseFigures, SignFlip
from benchcard.records.verdictfile import AbVerdict

from ..helpers_verdict import make_project


def _verdict(baseline: str = "base", clauses: tuple[tuple[str, str], ...] = (("field_recall", "rises"),)) -> AbVerdict:
    judged = [ClauseFigures(variant="A", metric=m, test=t, fixture=None, margin=None, text="", holds=True, why="")
              for m, t in clauses]
    return AbVerdict(run="r1", card="extract-ab", version=1, kind="ab", rig="", seal_root=None, evidence="",
                     finding="win", outcome="result", summary="", why="", baseline=baseline, variants=["A"],
                     alpha=0.05, confidence=0.95, equivalence_margin=None, allow_failed=0, cells=4,
                     counts=RowCounts(4, 4, 0, 0, 0), truncated_by_variant={}, failed_by_variant={}, notes=[],
                     bootstrap=Bootstrap(resamples=0, seed=0), signflip=SignFlip("exact"), comparisons=[],
                     clauses=judged, metrics={})


def _row(clauses: list[ClauseOutcome] | None) -> LedgerRow:
    row = LedgerRow(card="extract-ab", version=1, kind="ab", rig="", run="r1", cells=4, outcome="result",
                    finding="win", seal_root=None, evidence="")
    return row if clauses is None else msgspec.structs.replace(row, clauses=clauses)


def test_the_clauses_and_baseline_are_the_verdicts() -> None:
    run = Run(card="extract-ab", version=1, run_id="r1", folder=None, verdict_file=_verdict())
    assert clauses_for(run, None) == [ClauseRef("field_recall", "rises", None, None, "A")]
    assert baseline_of(run, None) == "base"


def test_an_edited_verdict_is_judged_by_its_ledger_rows_clauses() -> None:
    edited = _verdict(clauses=(("field_recall", "falls"),))  # the file now claims another test
    row = _row([ClauseOutcome("A", "field_recall", "rises", None, None, True)])
    run = Run(card="extract-ab", version=1, run_id="r1", folder=None, edited_file=edited, ledger_row=row)
    assert clauses_for(run, None) == [ClauseRef("field_recall", "rises", None, None, "A")]
    assert baseline_of(run, None) == "base"  # the row has none: the file's still counts
    # a row without clauses (entered before rows kept them): the file's
    assert clauses_for(Run(card="extract-ab", version=1, run_id="r1", folder=None, edited_file=edited,
                           ledger_row=_row(None)), None)[0].test == "falls"


def test_without_a_verdict_the_cards_rule_and_baseline(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    card = load_card(project.card_path("extract-ab"), project)
    run = Run(card="extract-ab", version=1, run_id="r1", folder=None)
    assert [(c.metric, c.test, c.fixture, c.margin, c.variant) for c in clauses_for(run, card)] == [
        ("field_recall", "rises", None, None, None), ("unsupported_values", "not_rises", None, 0.25, None),
        ("abstains", "holds", "ex-06", None, None)]
    assert baseline_of(run, card) == "baseline"
    assert clauses_for(Run(card="extract-ab", version=2, run_id="r1", folder=None), card) == []  # another version
