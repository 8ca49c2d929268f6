"""A run's verdict as a run card's page shows it (`_abrun.html`): the finding and its lead, the clause table,
every metric's figures, the graders' and the judge's tables, rendered from the typed `VerdictView`.

Each part is a frozen dataclass the template reads by attribute; a note's table says its shape in `kind`
(never told apart by which keys exist: in Jinja2 a dict's missing `items` key is its `.items` method, which
is how a run with grades and no grader notes once crashed the site).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import msgspec
from msgspec import UnsetType

from benchcard._util.numfmt import DASH, p_value
from benchcard.publish._render import CLAUSE_KEYS, fmt_value, labelled_figures
from benchcard.publish._runs import Run
from benchcard.publish._verdictview import VerdictView, verdict_view
from benchcard.records.verdictfigures import HumanGrades, clause_words, known
from benchcard.records.verdictfile import AbVerdict
from benchcard.verdict.judgefigures import judge_table
from benchcard.verdict.report import effect_lines, row_lead_lines

# The columns of a grading disagreement worth a row on the page (the sheet and its row are in grades/).
_GRADE_COLUMNS = (("cell", "cell"), ("fixture", "fixture"), ("variant", "variant"), ("repetition", "rep"),
                  ("auto_score", "scorer"), ("human_grade", "human"), ("note", "note"))
# Figures worth a reader's eye on the clause line; the rest stay in verdict.json, which the page links.
_CLAUSE_FIGURES = {
    "rises": ("gap", "ci", "ci_bootstrap", "p", "p_signflip", "noise_floor", "n_fixtures"),
    "falls": ("gap", "ci", "ci_bootstrap", "p", "p_signflip", "noise_floor", "n_fixtures"),
    "not_rises": ("gap", "upper_one_sided", "ci", "p", "noise_floor", "n_fixtures"),
    "not_falls": ("gap", "lower_one_sided", "ci", "p", "noise_floor", "n_fixtures"),
    "holds": ("k", "n", "planned", "wilson", "baseline_k", "baseline_n"),
}

Labelled = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Table:
    """Notes as a template shows them: `kind` "table" (columns, rows), "list" (entries) or "text"."""

    kind: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    entries: tuple[str, ...] = ()
    text: str = ""


@dataclass(frozen=True)
class Note:
    title: str
    table: Table


@dataclass(frozen=True)
class ClauseShown:
    """A clause's line: its words, whether it held ("state" in words), its chosen figures and why."""

    text: str
    holds: bool
    state: str
    figures: Labelled
    why: str


@dataclass(frozen=True)
class MetricShown:
    name: str
    figures: Labelled


@dataclass(frozen=True)
class VerdictPage:
    """Everything `_abrun.html` shows of a run's verdict."""

    finding: str
    outcome: str
    clauses: tuple[ClauseShown, ...]
    metrics: tuple[MetricShown, ...]
    notes: tuple[Note, ...]
    other: tuple[tuple[str, str], ...]  # cells, α, each variant's equivalence
    run_notes: tuple[str, ...]
    lead: tuple[str, ...]
    summary: str


def _cell(value: object) -> str:
    return value if isinstance(value, str) else fmt_value(value)


def tabulate(obj: Sequence[Mapping[str, object]] | Mapping[str, object] | str) -> Table:
    """Rows of named values as a table (a column per name), one mapping as a two-column table, or text."""
    if isinstance(obj, str):
        return Table("text", text=obj)
    if isinstance(obj, Mapping):
        return Table("table", ("", ""), tuple((str(k).replace("_", " "), _cell(v)) for k, v in obj.items()))
    if not obj:
        return Table("list")
    columns = tuple(dict.fromkeys(k for r in obj for k in r))
    return Table("table", columns, tuple(tuple(_cell(r.get(c)) for c in columns) for r in obj))


def _grader_notes(view: VerdictView) -> list[Note]:
    """The human grades against the scorer (headline, disagreements, notes) and the judge's figures."""
    notes = []
    h = view.human
    if h is not None:
        summary: dict[str, object] = {"graded": h.graded, "agreement": h.agreement, "kappa": h.kappa}
        if isinstance(h, HumanGrades) and not isinstance(h.pass_rule, UnsetType):
            summary["pass_rule"] = h.pass_rule
        notes.append(Note("Agreement of the human grades with the blind scorer", tabulate(summary)))
        if isinstance(h, HumanGrades):  # a ledger row counts the disagreements, and lists none
            for title, rows in (("Disagreements", h.disagreements), ("Grader notes", known(h.notes))):
                if rows is not None:
                    picked = [{label: getattr(r, name) for name, label in _GRADE_COLUMNS} for r in rows]
                    notes.append(Note(title, tabulate(picked) if picked else tabulate("None.")))
    elif view.disagreements:
        notes.append(Note("Disagreements", tabulate([msgspec.to_builtins(d) for d in view.disagreements])))
    if view.judge is not None:
        notes.append(Note("The judge: its agreement with itself, its noise, length", tabulate(judge_table(view.judge))))
    return notes


def _lead(run: Run) -> list[str]:
    """The terminal's lead, word for word: the same paired means, and the fixtures left out of the pairing;
    for a file edited after its ledger row, from the row's figures."""
    if run.verdict_file is not None:
        return effect_lines(run.verdict_file)
    edited = run.edited_file
    if isinstance(edited, AbVerdict) and edited.kind == "ab" and run.ledger_row is not None:
        return row_lead_lines(run.ledger_row, edited.baseline, float(edited.confidence))
    return []


def verdict_page(run: Run) -> VerdictPage:
    """The run's verdict as its card's page shows it."""
    view = verdict_view(run)
    several = len({c.variant for c in view.clauses}) > 1
    clauses = []
    for c in view.clauses:
        text = c.text or clause_words(c.metric, c.test, c.fixture, c.margin)  # a ledger row's clause has no text
        state = "holds" if c.holds else ("significantly broken" if c.broken else "does not hold")
        figures = labelled_figures(dict(c.figures), skip=CLAUSE_KEYS, only=_CLAUSE_FIGURES.get(c.test))
        clauses.append(ClauseShown(f"{c.variant}: {text}" if several and c.variant else text, c.holds, state,
                                   tuple(figures), c.why))
    other = []
    if view.counts is not None:
        other.append(("cells", ", ".join(f"{v} {k}" for k, v in msgspec.to_builtins(view.counts).items())))
    elif view.cells is not None:
        other.append(("cells", fmt_value(view.cells)))
    if view.alpha is not None:
        other.append(("α", fmt_value(view.alpha)))
    for variant, eq in view.equivalences:
        if eq.tost_p is not None:
            label = "equivalence" if not several else f"equivalence ({variant})"
            other.append((label, f"TOST p {p_value(eq.tost_p, 3, missing=DASH)} against ±{fmt_value(eq.margin)}"))
    return VerdictPage(
        finding=run.finding, outcome=run.outcome, clauses=tuple(clauses),
        metrics=tuple(MetricShown(name, tuple(labelled_figures(dict(figs)))) for name, figs in view.metrics),
        notes=tuple(_grader_notes(view)), other=tuple(other), run_notes=view.notes, lead=tuple(_lead(run)),
        summary=view.summary)
