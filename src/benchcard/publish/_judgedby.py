"""What a run was judged by, as its pages draw it: the clauses of its rule and its baseline, read from its typed
verdict.json (the ledger row's clauses when the file was edited after the row), else from its card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchcard.card.model import Card
from benchcard.publish._runs import Run
from benchcard.records.ledgerrow import ClauseOutcome
from benchcard.records.verdictfigures import ClauseFigures, Number, known
from benchcard.records.verdictfile import AbVerdict


@dataclass(frozen=True)
class ClauseRef:
    """A clause of the rule a run was judged by, as its plots and tables need it; `variant` is the one variant a
    verdict's clause was judged for (None for the card's own clause, which holds for each)."""

    metric: str
    test: str
    fixture: str | None = None
    margin: Number | None = None
    variant: str | None = None


def clauses_for(run: Run, card: Card | None) -> list[ClauseRef]:
    """The win rule the run was judged by: as its verdict wrote it (its ledger row's clauses when the file was
    edited after the row), else the card's own."""
    judged: Sequence[ClauseFigures | ClauseOutcome] = run.verdict_file.clauses \
        if isinstance(run.verdict_file, AbVerdict) else ()
    if isinstance(run.edited_file, AbVerdict):
        row = known(run.ledger_row.clauses) if run.ledger_row else None
        judged = row if row is not None else run.edited_file.clauses
    if judged:
        return [ClauseRef(c.metric, c.test, c.fixture, c.margin, c.variant) for c in judged]
    if card is not None and card.win is not None and run.version == card.version:
        return [ClauseRef(c.metric, c.test, c.fixture, c.margin) for c in card.win.clauses]
    return []


def baseline_of(run: Run, card: Card | None) -> str | None:
    """The baseline a run was judged against: as its verdict or manifest names it, else the card's."""
    if isinstance(run.judged_file, AbVerdict):
        return run.judged_file.baseline
    if run.manifest is not None and run.manifest.baseline is not None:
        return run.manifest.baseline
    return card.baseline if card is not None else None
