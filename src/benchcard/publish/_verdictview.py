"""The figures a run card's page tabulates under a verdict (its clauses, metrics, graders, judge, equivalence),
typed, from one of three sources: verdict.json as decoded (`verdictfile`); when the file was edited after its
ledger row, the row's judgement (its clauses, metrics, counts and cells; the finding and outcome are the row's
in `runs.Run`) over what the file still says, its prose (`why`, `notes`) left out; or the ledger row alone,
for a run whose verdict.json is not shown.
`runcard._verdict_view` renders a `VerdictView` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
from msgspec import UnsetType

from benchcard.publish._runs import Run
from benchcard.records.ledgerrow import ClauseOutcome, HumanAgreement, JudgeFigures, LedgerRow, RowCounts
from benchcard.records.verdictfigures import (
    ClauseFigures,
    Disagreement,
    Equivalence,
    HumanGrades,
    JudgeBlock,
    Number,
    known,
)
from benchcard.records.verdictfile import AbVerdict, VerdictFile, legacy_metric_order

#: A figure's name and value, in the order its file or row wrote it.
Figure = tuple[str, object]


@dataclass(frozen=True)
class ClauseLine:
    """One clause for one variant as the page shows it; a ledger row's clause has no text, why or figures."""

    variant: str
    metric: str
    test: str
    fixture: str | None
    margin: Number | None
    holds: bool
    text: str = ""
    why: str = ""
    broken: bool = False
    figures: tuple[Figure, ...] = ()


@dataclass(frozen=True)
class VerdictView:
    """What the page's verdict tables read; a field its source lacks is empty (shown as nothing)."""

    clauses: tuple[ClauseLine, ...] = ()
    metrics: tuple[tuple[str, tuple[Figure, ...]], ...] = ()
    counts: RowCounts | None = None
    cells: int | None = None
    alpha: Number | None = None
    equivalences: tuple[tuple[str, Equivalence], ...] = ()  # (variant, its TOST)
    human: HumanGrades | HumanAgreement | None = None  # a ledger row has only the headline
    disagreements: tuple[Disagreement, ...] = ()  # verdict.json's top-level list (grades without a summary)
    judge: JudgeBlock | JudgeFigures | None = None  # a ledger row has only the headline
    notes: tuple[str, ...] = ()
    summary: str = ""


def _clause_line(c: ClauseFigures | ClauseOutcome) -> ClauseLine:
    if isinstance(c, ClauseOutcome):
        return ClauseLine(c.variant, c.metric, c.test, c.fixture, c.margin, c.holds)
    figures: dict[str, object] = msgspec.to_builtins(c)
    return ClauseLine(c.variant, c.metric, c.test, c.fixture, c.margin, c.holds, c.text, c.why,
                      bool(known(c.broken)), tuple(figures.items()))


def _file_parts(v: VerdictFile) -> VerdictView:
    """Everything the page shows of a verdict.json, as written."""
    human = known(v.human)
    judge = known(v.judge)
    disagreements = tuple(known(v.disagreements) or ())
    if not isinstance(v, AbVerdict):
        return VerdictView(counts=v.counts, cells=v.cells, alpha=v.alpha, human=human, judge=judge,
                           disagreements=disagreements, summary=v.why or v.summary)
    metrics = tuple((name, tuple(legacy_metric_order(msgspec.to_builtins(m)).items()))
                    for name, m in v.metrics.items())
    return VerdictView(
        clauses=tuple(_clause_line(c) for c in v.clauses), metrics=metrics, counts=v.counts, cells=v.cells,
        alpha=v.alpha, equivalences=tuple((c.variant, c.equivalence) for c in v.comparisons),
        human=human, disagreements=disagreements, judge=judge, notes=tuple(v.notes), summary=v.why or v.summary)


def _row_metrics(row: LedgerRow) -> tuple[tuple[str, tuple[Figure, ...]], ...]:
    return tuple((name, tuple(msgspec.to_builtins(figures).items()))
                 for name, figures in (known(row.metrics) or {}).items())


def _with_row(file: VerdictFile, row: LedgerRow) -> VerdictView:
    """An edited verdict.json under its ledger row: the row's judgement wherever the row has one, the file's
    other figures, and none of the file's prose but its one-line summary."""
    view = _file_parts(file)
    clauses, comparisons = known(row.clauses), known(row.comparisons)
    return VerdictView(
        clauses=tuple(_clause_line(c) for c in clauses) if clauses is not None else view.clauses,
        metrics=_row_metrics(row) if not isinstance(row.metrics, UnsetType) else view.metrics,
        counts=view.counts if isinstance(row.counts, UnsetType) else row.counts, cells=row.cells, alpha=view.alpha,
        equivalences=() if comparisons is not None else view.equivalences,  # a row's comparison has no TOST
        human=view.human, disagreements=view.disagreements, judge=view.judge, summary=file.summary)


def _row_only(row: LedgerRow) -> VerdictView:
    """A run shown from its ledger row alone."""
    return VerdictView(clauses=tuple(_clause_line(c) for c in known(row.clauses) or ()), metrics=_row_metrics(row),
                       counts=known(row.counts), cells=row.cells, human=known(row.human), judge=known(row.judge))


def verdict_view(run: Run) -> VerdictView:
    """The run's verdict figures from verdict.json, or its ledger row's where the file was edited or is absent."""
    if run.verdict_file is not None:
        return _file_parts(run.verdict_file)
    if run.ledger_row is not None:
        if run.edited_file is not None:
            return _with_row(run.edited_file, run.ledger_row)
        return _row_only(run.ledger_row)
    return VerdictView()
