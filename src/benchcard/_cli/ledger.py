"""`benchcard ledger`: the rows as a table (results bold, non-results dim), the runs left unfinished below it,
`--verify`'s report and the line `--repair` prints."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from benchcard._cli.common import emit_json, project_of, report, say_line, terminal
from benchcard._util.text import terminal_line
from benchcard.project import Project

if TYPE_CHECKING:
    from benchcard.records.ledgerrow import LedgerRow
    from benchcard.verdict.audit import LedgerView


@click.command("ledger")
@click.option("--verify", "do_verify", is_flag=True, help="Check the hash chain and every judged run's files "
              "against its row; name each problem.")
@click.option("--repair", "do_repair", is_flag=True, help="Move a torn last line (a write cut short) to a dated "
              "side file, so that verdicts can be appended again.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.pass_context
def ledger_cmd(ctx: click.Context, do_verify: bool, do_repair: bool, as_json: bool) -> None:
    """Show the ledger of verdicts (results and non-results); --verify checks the chain and the evidence."""
    project = project_of(ctx)
    if do_repair:
        from benchcard.records.ledger import repair

        say_line(repair_line(project, repair(project)))
        return
    if do_verify:
        from benchcard.verdict.audit import audit

        verified = audit(project)
        report(verified, as_json)
        sys.exit(0 if verified.ok else 1)
    from benchcard.verdict.audit import ledger_view

    view = ledger_view(project, unfinished=not as_json)
    emit_json(view.to_json()) if as_json else print_view(view)


COLUMNS = ("seq", "date", "card", "version", "rig", "finding", "outcome", "run")
NO_WRAP = frozenset({"seq", "date", "version", "run", "finding", "outcome"})
NARROW = 120
"""Below this width (an 80-column terminal) the table drops the date and puts the rig under the card name, so
that card names stay whole."""


def print_view(view: LedgerView) -> None:
    """The rows as a rich table on stdout (results bold, non-results dim), or a line saying there are none; the
    runs left unfinished under it."""
    console = terminal()
    try:
        _print_table(console, view.where, view.rows)
    finally:
        for u in view.unfinished:  # a stopped run is no verdict waiting: say so, and how to finish it
            # soft_wrap: the command stays on one line at any terminal width, so it can be copied whole
            console.print(terminal_line(u.line), highlight=False, markup=False, soft_wrap=True)


def _print_table(console: Any, where: str, rows: Sequence[LedgerRow]) -> None:
    from rich.table import Table

    if not rows:
        console.print(f"{where}: no verdicts yet", highlight=False, markup=False)
        return
    from rich.text import Text

    narrow = console.width < NARROW
    if narrow:  # the run id starts with its date; the rig goes under the card name, the outcome under the finding
        from rich import box

        table = Table(title="benchcard ledger", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("seq", no_wrap=True)
        table.add_column("card · rig", min_width=_longest(rows, "card"))
        table.add_column("v", no_wrap=True)
        table.add_column("finding", no_wrap=True)
        table.add_column("run", no_wrap=True)
    else:
        table = Table(title="benchcard ledger", title_justify="left")
        for col in COLUMNS:
            table.add_column(col, no_wrap=col in NO_WRAP)
    t = terminal_line  # a row edited by hand may hold escapes or a newline: shown, never sent to the terminal raw
    for r in rows:
        style = {"result": "bold", "non-result": "dim"}.get(r.outcome, "")
        version = "unsealed" if r.kind == "compare" else f"v{r.version}"
        if narrow:
            card = Text(t(r.card))
            card.append("\n" + t(r.rig), style="dim")
            cells: list[Text | str] = [str(r.seq), card, version, f"{t(r.finding)}\n{t(r.outcome)}", _run_cell(r)]
        else:
            cells = [str(r.seq), t(r.date), t(r.card), version, t(r.rig), t(r.finding), t(r.outcome), _run_cell(r)]
        # as Text, never markup: a `[/red]` in a rig raised rich's MarkupError, a `[link=…]` made a hyperlink
        table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells), style=style)
    console.print(table)


def _run_cell(row: LedgerRow) -> str:
    """The run, and for a replication (or a transfer) the run it replicates and what it showed against it, each
    one visible line."""
    from msgspec import UnsetType

    link, judged = row.replicates, row.replication
    if isinstance(link, UnsetType):
        return terminal_line(row.run)
    said = "" if isinstance(judged, UnsetType) else f": {judged.finding}"
    return f"{terminal_line(row.run)}\n{terminal_line(f'{link.kind} of {link.run}{said}')}"


def _longest(rows: Sequence[LedgerRow], key: str) -> int:
    return max((len(terminal_line(str(getattr(r, key)))) for r in rows), default=4)


def repair_line(project: Project, side: Path | None) -> str:
    if side is None:
        return "nothing to repair: the ledger's last line is whole"
    return f"moved the torn last line to {project.relative(side)}; the ledger ends at its last whole row"
