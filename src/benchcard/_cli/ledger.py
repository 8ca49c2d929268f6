"""`benchcard ledger`: the rows as a table (results bold, non-results dim), the runs left unfinished below it,
`--verify`'s report and the line `--repair` prints."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from benchcard._cli.common import emit_json_items, project_of, report, say_line, terminal
from benchcard._util.text import terminal_line
from benchcard.project import Project

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

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
    emit_json_items(view.json_rows()) if as_json else print_view(view)


COLUMNS = ("seq", "date", "card", "version", "rig", "finding", "outcome", "run")
NO_WRAP = frozenset({"seq", "date", "version", "run", "finding", "outcome"})
NARROW = 120
PAD = 2  # a column's padding, one space each side (rich's default for a table)
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


CHUNK = 100
"""Rows rendered at a time: the table is drawn in pieces of this many rows, joined without a seam, so that a
ledger of 200,000 rows is never held (drawn whole, it took 2.5 GB)."""


def _print_table(console: Any, where: str, rows: Callable[[], Iterable[LedgerRow]]) -> None:
    """The table, read twice: once for each column's widest cell (the widths rich gives the whole table), then a
    piece at a time, each piece drawn at those widths with the borders between pieces left out."""
    from rich.segment import Segment, Segments

    narrow = console.width < NARROW
    widest = _widest(rows(), narrow)
    if widest is None:
        console.print(f"{where}: no verdicts yet", highlight=False, markup=False)
        return
    widths, span = _laid_out(console, narrow, *widest)
    if min(widths) < PAD:  # a column shrunk past its padding (a terminal far too narrow): no `width` says so
        whole = _table(narrow, widest[1])
        for cells, style in _pieces_of_all(rows(), narrow):
            whole.add_row(*cells, style=style)
        console.print(whole)
        return
    room = console.options.update_width(span)  # the whole table's width: the widths set fit it, none shrinks
    held: list[list[Any]] | None = None
    for n, piece in enumerate(_pieces(rows(), narrow)):
        table = _table(narrow, 0, widths, header=n == 0)
        for cells, style in piece:
            table.add_row(*cells, style=style)
        # cropped at the terminal's width, as rich crops a table wider than it (cells that cannot wrap)
        lines = list(Segment.split_and_crop_lines(console.render(table, room), console.width, pad=False,
                                                  include_new_lines=True))
        if held is not None:  # the piece before ends at its last row, this one starts at its first
            console.print(Segments(seg for line in held[:-1] for seg in line), end="")
            lines = lines[1:]
        held = lines
    console.print(Segments(seg for line in held or [] for seg in line), end="")


def _laid_out(console: Any, narrow: bool, widest: list[Text], longest: int) -> tuple[list[int], int]:
    """Each column's width (padding included) as rich lays out the whole table, and the table's, read off its
    public output: the widest cells drawn once in a frame of ASCII2, whose top border marks where each column
    ends. The frame is the table's own but for its box (edges and dividers as wide, so the same widths) and its
    title (above the border); rich's private sizing, used before, may change in any release."""
    from rich import box

    probe = _table(narrow, longest)
    probe.box, probe.title = box.ASCII2, None
    probe.add_row(*widest)
    drawn = "".join(segment.text for segment in console.render(probe))  # uncropped: a row may be wider than the
    top = drawn.split("\n", 1)[0].strip()  # terminal (cells that cannot wrap), and rich crops it once laid out
    return [len(part) for part in top[1:-1].split("+")], len(top)


def _pieces_of_all(rows: Iterable[LedgerRow], narrow: bool) -> Iterator[tuple[list[Text], str]]:
    """Every row's cells and style, one after another, for the table drawn whole."""
    for piece in _pieces(rows, narrow):
        yield from piece


def _pieces(rows: Iterable[LedgerRow], narrow: bool) -> Iterator[list[tuple[list[Text], str]]]:
    """The rows' cells and styles, `CHUNK` rows at a time."""
    piece: list[tuple[list[Text], str]] = []
    for row in rows:
        piece.append(_cells(row, narrow))
        if len(piece) == CHUNK:
            yield piece
            piece = []
    if piece:
        yield piece


def _widest(rows: Iterable[LedgerRow], narrow: bool) -> tuple[list[Text], int] | None:
    """Each column's widest cell (rich sizes a column by its widest cell alone) and the longest card name, or None
    for a ledger without rows."""
    from rich.cells import cell_len

    def width(text: Text) -> int:
        return max((cell_len(line) for line in text.plain.splitlines()), default=0)

    widest: list[Text] | None = None
    longest = 0
    for row in rows:
        cells = _cells(row, narrow)[0]
        widest = cells if widest is None else [max(a, b, key=width) for a, b in zip(widest, cells, strict=True)]
        longest = max(longest, len(terminal_line(row.card)))
    return None if widest is None else (widest, longest)


def _table(narrow: bool, card_width: int, widths: list[int] | None = None, *, header: bool = True) -> Table:
    """The table's frame: its columns, at `widths` when given (each piece of a long ledger is drawn at the widths
    of the whole), its title and header only where `header` says."""
    from rich import box
    from rich.table import Table

    title = "benchcard ledger" if header else None
    if narrow:  # the run id starts with its date; the rig goes under the card name, the outcome under the finding
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_header=header)
        names: Sequence[str] = ("seq", "card · rig", "v", "finding", "run")
        wrapped = {"card · rig"}
    else:
        table = Table(title=title, title_justify="left", show_header=header)
        names, wrapped = COLUMNS, set(COLUMNS) - NO_WRAP
    for i, name in enumerate(names):
        table.add_column(name, no_wrap=name not in wrapped, min_width=card_width if name == "card · rig" else None,
                         width=None if widths is None else widths[i] - PAD)  # its text's, without the padding
    return table


def _cells(row: LedgerRow, narrow: bool) -> tuple[list[Text], str]:
    """A row's cells, as Text, never markup (a `[/red]` in a rig raised rich's MarkupError, a `[link=…]` made a
    hyperlink), each shown through `terminal_line` (a row edited by hand may hold escapes or a newline), and the
    row's style: results bold, non-results dim."""
    from rich.text import Text

    t = terminal_line
    style = {"result": "bold", "non-result": "dim"}.get(row.outcome, "")
    version = "unsealed" if row.kind == "compare" else f"v{row.version}"
    if narrow:
        card = Text(t(row.card))
        card.append("\n" + t(row.rig), style="dim")
        return [Text(str(row.seq)), card, Text(version), Text(f"{t(row.finding)}\n{t(row.outcome)}"),
                Text(_run_cell(row))], style
    return [Text(c) for c in (str(row.seq), t(row.date), t(row.card), version, t(row.rig), t(row.finding),
                              t(row.outcome), _run_cell(row))], style


def _run_cell(row: LedgerRow) -> str:
    """The run, and for a replication (or a transfer) the run it replicates and what it showed against it, each
    one visible line."""
    from msgspec import UnsetType

    link, judged = row.replicates, row.replication
    if isinstance(link, UnsetType):
        return terminal_line(row.run)
    said = "" if isinstance(judged, UnsetType) else f": {judged.finding}"
    return f"{terminal_line(row.run)}\n{terminal_line(f'{link.kind} of {link.run}{said}')}"


def repair_line(project: Project, side: Path | None) -> str:
    if side is None:
        return "nothing to repair: the ledger's last line is whole"
    return f"moved the torn last line to {project.relative(side)}; the ledger ends at its last whole row"
