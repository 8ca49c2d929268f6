"""`benchcard ledger`: the rows as a table (results bold, non-results dim), the runs left unfinished below it,
`--verify`'s report and the line `--repair` prints."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from benchcard._cli.common import emit_json_items, project_of, report, say_line, terminal
from benchcard._util.text import terminal_line
from benchcard.project import Project

if TYPE_CHECKING:
    from rich.segment import Segment
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
"""A sequential run's stop ("stopped at look 1 of 3: win; …", as the ledger page says it under the row's outcome) is
said in the wide table under the outcome, which then wraps (only in a ledger holding a stop, so that a table of fixed
runs is drawn as it always was): the stop breaks between its words rather than pushing the run off the screen. The
narrow table says it under the card and the rig, the column that wraps there: under the finding, it left no room for
the run at 60 columns."""
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
        for line in view.skipped:
            console.print(terminal_line(f"skipped: {line}"), highlight=False, markup=False, soft_wrap=True)


CHUNK = 100
"""Rows written at a time: the table is drawn a row at a time and written in batches of this many rows, so that a
ledger of 200,000 rows is never held (drawn whole, it took 2.5 GB)."""


def _print_table(console: Any, where: str, rows: Callable[[], Iterable[LedgerRow]]) -> None:
    """The table, its ledger read once: each row kept as the texts it shows (`_kept`), each column's widest cell
    found among them (the widths rich gives the whole table), then each row drawn at those widths from the rows
    rich draws (`_Drawn`), written `CHUNK` rows at a time between the header and the bottom border rich draws for
    them. A row that does not read is the one error line before any output, as the read comes first."""
    from rich.segment import Segments

    narrow = console.width < NARROW
    kept = _Kept(rows())
    widest = _widest(kept, narrow)
    if widest is None:
        console.print(f"{where}: no verdicts yet", highlight=False, markup=False)
        return
    widths, span = _laid_out(console, narrow, *widest)
    if min(widths) < PAD:  # a column shrunk past its padding (a terminal far too narrow): no `width` says so
        whole = _table(narrow, widest[1], stops=widest[2])
        for cells, style in _pieces_of_all(kept, narrow):
            whole.add_row(*cells, style=style)
        console.print(whole)
        return
    drawn = _Drawn(console, console.options.update_width(span), narrow, widths, widest[2])
    for lines in drawn.batches(_pieces_of_all(kept, narrow)):
        # cropped at the terminal's width, as rich crops a table wider than it (cells that cannot wrap)
        console.print(Segments(drawn.cropped(lines)), end="", crop=False)


SHAPES_KEPT = 10_000
"""Rows' shapes kept drawn (a kept cell's text is part of its shape: a rig, a card name, few in a long ledger)."""


@dataclass(frozen=True)
class _Drawn:
    """The table's lines as rich draws them, made a row at a time without drawing the table: a row whose every
    line fits its column (no wrap, no ellipsis) is rich's own drawing of a row of the same shape (each line an
    `x`, the same styles) with each `x` replaced by the line it stands for and the spaces after it shortened to
    match; a cell too wide for a column that wraps (a card, a rig) is kept whole in the row drawn, its text part of
    the shape. The other rows (a cell cut by an ellipsis, or not drawn as written) are drawn by rich, those in a
    row together in a table of their own. Drawn by rich alone, 200,000 rows took 215 s. Rich is asked only
    through its public API (`Table`, `Console.render`, `Segment`), whatever its version."""

    console: Any
    room: Any  # the console's options at the whole table's width
    narrow: bool
    widths: list[int]
    stops: bool  # a row says a sequential run's stop: the wide table's outcome wraps (`NO_WRAP`)
    shapes: dict[tuple[Any, ...], list[list[Any]] | None] = field(default_factory=dict)

    def table(self) -> Table:
        """The table's frame at the whole table's widths, without rows."""
        return _table(self.narrow, 0, self.widths, stops=self.stops)

    def lines_of(self, table: Table) -> list[list[Segment]]:
        from rich.segment import Segment

        return list(Segment.split_lines(self.console.render(table, self.room)))

    @cached_property
    def frame(self) -> tuple[list[list[Segment]], list[list[Segment]]]:
        """The lines above the first row (the title, the top border, the header and the line under it) and below
        the last (the bottom border): a table without rows, drawn once."""
        lines = self.lines_of(self.table())
        return lines[:-1], lines[-1:]

    def batches(self, rows: Iterable[tuple[list[Text], str]]) -> Iterator[list[list[Segment]]]:
        """The table's lines, `CHUNK` rows at a time: the head with the first, the bottom border with the last.
        Rows that do not fit are drawn by rich together, as many in a row as come (at most `CHUNK`)."""
        batch: list[list[Segment]] = list(self.frame[0])
        slow: list[tuple[list[Text], str]] = []
        for n, (row, last) in enumerate(_with_last(rows), 1):
            lines = self.fitted(*row, last=last)
            if lines is None:
                slow.append(row)
            if slow and (lines is not None or last or n % CHUNK == 0):
                batch += self.by_rich(slow, last=last and lines is None)
                slow = []
            batch += lines or []
            if n % CHUNK == 0:
                yield batch
                batch = []
        yield batch + self.frame[1]

    def fitted(self, cells: list[Text], style: str, *, last: bool) -> list[list[Segment]] | None:
        """One row's lines, as rich draws it between the rows before and after it (the last row: before the
        bottom border), when every line fits its column or wraps in a column that wraps; else None."""
        shape = self.shape(cells)
        if shape is None:
            return None
        key = (style, last, *shape)
        if key not in self.shapes:
            if len(self.shapes) > SHAPES_KEPT:
                self.shapes.clear()
            self.shapes[key] = self.template(shape, style, last=last)
        template = self.shapes[key]
        return None if template is None else _filled(template, [text.plain.split("\n") for text in cells])

    @cached_property
    def wraps(self) -> list[bool]:
        """Which columns wrap a cell too wide for them."""
        return [not column.no_wrap for column in self.table().columns]

    def shape(self, cells: list[Text]) -> tuple[Any, ...] | None:
        """Each cell's text style and each line's styles, when every line fits its column and is drawn as
        written (not empty, no space at either end, every span over whole lines); a cell that does not fit in a
        column that wraps is kept whole (its text, drawn by rich with the row); else None."""
        from rich.cells import cell_len

        shape: list[Any] = []
        for text, width, wraps in zip(cells, self.widths, self.wraps, strict=True):
            if (text.justify, text.overflow, text.no_wrap, text.end) != (None, None, None, "\n"):
                return None
            lines = text.plain.split("\n")
            if any(not line or line != line.strip() or cell_len(line) > width - PAD for line in lines):
                if not wraps:
                    return None
                shape.append(("kept", text.plain, tuple(text.spans), text.style))
                continue
            styles = _line_styles(text, lines)
            if styles is None:
                return None
            shape.append((text.style, styles))
        return tuple(shape)

    def template(self, shape: tuple[Any, ...], style: str, *, last: bool) -> list[list[Any]] | None:
        """Rich's drawing of a row of `shape` in `style`, each line that fits a placeholder: its lines, each
        placeholder marked by which cell's line it stands for (told from the rest by drawing the row twice, with
        `x` and with `y`); None when the drawing is not of that form (a rich that draws otherwise)."""
        drawn = [self.by_rich([(_probe(shape, char), style)], last=last) for char in "xy"]
        marks = [[c for c, cell in enumerate(shape) if cell[0] != "kept" and len(cell[1]) > i]
                 for i in range(len(drawn[0]))]
        return _marked(drawn[0], drawn[1], marks)

    def by_rich(self, rows: list[tuple[list[Text], str]], *, last: bool) -> list[list[Segment]]:
        """Rows drawn by rich in a table of their own at the table's widths, followed by an empty row unless the
        last of them is the table's `last`, and taken out of it."""
        table = self.table()
        for cells, style in rows:
            table.add_row(*cells, style=style)
        if not last:
            table.add_row(*("" for _ in self.widths))
        return self.lines_of(table)[len(self.frame[0]):-1 if last else -2]

    def cropped(self, lines: list[list[Segment]]) -> Iterator[Segment]:
        """The lines' segments, each line cropped at the terminal's width and ended by a newline."""
        from rich.segment import Segment

        width = self.console.width
        wider = self.room.max_width > width  # else no line needs cropping
        for line in lines:
            if wider and sum(s.cell_length for s in line) > width:
                line = Segment.adjust_line_length(line, width)
            yield from line
            yield Segment.line()


def _with_last(rows: Iterable[tuple[list[Text], str]]) -> Iterator[tuple[tuple[list[Text], str], bool]]:
    """Each row, and whether it is the last."""
    ahead: tuple[list[Text], str] | None = None
    for row in rows:
        if ahead is not None:
            yield ahead, False
        ahead = row
    if ahead is not None:
        yield ahead, True


def _line_styles(text: Text, lines: list[str]) -> tuple[tuple[Any, ...], ...] | None:
    """The styles of the spans over each of a text's lines, or None when a span covers part of a line."""
    styles: list[list[Any]] = [[] for _ in lines]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for span in text.spans:
        for i, line in enumerate(lines):
            if span.start < starts[i] + len(line) and span.end > starts[i]:
                if span.start > starts[i] or span.end < starts[i] + len(line):
                    return None
                styles[i].append(span.style)
    return tuple(tuple(s) for s in styles)


def _probe(shape: tuple[Any, ...], char: str) -> list[Text]:
    """A row of `shape`: each line that fits a `char` with its line's styles, each kept cell as it is."""
    from rich.text import Span
    from rich.text import Text as RichText

    probe = []
    for cell in shape:
        if cell[0] == "kept":
            _, plain, spans, text_style = cell
            probe.append(RichText(plain, style=text_style, spans=list(spans)))
            continue
        text_style, lines = cell
        text = RichText("\n".join(char for _ in lines), style=text_style)
        for i, styles in enumerate(lines):
            text.spans.extend(Span(2 * i, 2 * i + 1, s) for s in styles)
        probe.append(text)
    return probe


def _marked(with_x: list[list[Segment]], with_y: list[list[Segment]], marks: list[list[int]]
            ) -> list[list[Any]] | None:
    """A probe row's lines with each placeholder (and the spaces after it, in its segment or the next) replaced by
    (cell, line, its segment, the spaces' segment or None): the segments where the drawings with `x` and with `y`
    differ. None if they differ otherwise, or not where `marks` expects."""
    if len(with_x) != len(with_y) or len(with_x) != len(marks):
        return None
    out: list[list[Any]] = []
    for i, (line, other, cells) in enumerate(zip(with_x, with_y, marks, strict=True)):
        if len(line) != len(other):
            return None
        items: list[Any] = []
        wanted = iter(cells)
        skip = False
        for j, (segment, twin) in enumerate(zip(line, other, strict=True)):
            if skip:
                skip = False
                continue
            if segment == twin:
                items.append(segment)
                continue
            cell = next(wanted, None)
            after = line[j + 1] if j + 1 < len(line) else None
            if cell is None or twin != segment._replace(text="y" + segment.text[1:]) or \
                    not segment.text.startswith("x") or segment.text[1:].strip(" "):
                return None
            if segment.text == "x" and after is not None and after.text and not after.text.strip(" "):
                items.append((cell, i, segment, after))
                skip = True
            else:
                items.append((cell, i, segment, None))
        if next(wanted, None) is not None:
            return None
        out.append(items)
    return out


def _filled(template: list[list[Any]], lines: list[list[str]]) -> list[list[Segment]]:
    """A template's lines with each mark replaced by its cell's line, the spaces after it shortened by as many
    columns as the line is wider than an `x`."""
    from rich.cells import cell_len
    from rich.segment import Segment

    out: list[list[Segment]] = []
    for items in template:
        line: list[Segment] = []
        for item in items:
            if isinstance(item, Segment):
                line.append(item)
                continue
            cell, i, marked, after = item
            text = lines[cell][i]
            extra = cell_len(text) - 1
            if after is None:
                line.append(Segment(text + marked.text[1 + extra:], marked.style))
            else:
                line.append(Segment(text, marked.style))
                line.append(Segment(after.text[extra:], after.style))
        out.append(line)
    return out


def _laid_out(console: Any, narrow: bool, widest: list[Text], longest: int, stops: bool) -> tuple[list[int], int]:
    """Each column's width (padding included) as rich lays out the whole table, and the table's, read off its
    public output: the widest cells drawn once in a frame of ASCII2, whose top border marks where each column
    ends. The frame is the table's own but for its box (edges and dividers as wide, so the same widths) and its
    title (above the border); rich's private sizing, used before, may change in any release."""
    from rich import box

    probe = _table(narrow, longest, stops=stops)
    probe.box, probe.title = box.ASCII2, None
    probe.add_row(*widest)
    drawn = "".join(segment.text for segment in console.render(probe))  # uncropped: a row may be wider than the
    top = drawn.split("\n", 1)[0].strip()  # terminal (cells that cannot wrap), and rich crops it once laid out
    return [len(part) for part in top[1:-1].split("+")], len(top)


def _pieces_of_all(kept: Iterable[str], narrow: bool) -> Iterator[tuple[list[Text], str]]:
    """Every row's cells and style, one after another, from the texts kept of it (`_kept`)."""
    return (_cells_of(k, narrow) for k in kept)


def _widest(kept: Iterable[str], narrow: bool) -> tuple[list[Text], int, bool] | None:
    """Each column's widest cell (rich sizes a column by its widest cell alone), the longest card name and whether a
    row says a sequential run's stop, or None for a ledger without rows."""
    from rich.cells import cell_len

    def width(text: Text) -> int:
        return max((cell_len(line) for line in text.plain.splitlines()), default=0)

    widest: list[Text] | None = None
    longest, stops = 0, False
    for k in kept:
        cells = _cells_of(k, narrow)[0]
        widest = cells if widest is None else [max(a, b, key=width) for a, b in zip(widest, cells, strict=True)]
        texts = k.split(_SEP)
        longest, stops = max(longest, len(texts[2])), stops or bool(texts[-2])
    return None if widest is None else (widest, longest, stops)


def _table(narrow: bool, card_width: int, widths: list[int] | None = None, *, stops: bool = False,
           header: bool = True) -> Table:
    """The table's frame: its columns, at `widths` when given (each piece of a long ledger is drawn at the widths
    of the whole), the wide table's outcome wrapping where a row says a sequential run's stop under it (`stops`),
    its title and header only where `header` says."""
    from rich import box
    from rich.table import Table

    title = "benchcard ledger" if header else None
    if narrow:  # the run id starts with its date; the rig goes under the card name, the outcome under the finding
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_header=header)
        names: Sequence[str] = ("seq", "card · rig", "v", "finding", "run")
        wrapped = {"card · rig"}
    else:
        table = Table(title=title, title_justify="left", show_header=header)
        names, wrapped = COLUMNS, set(COLUMNS) - NO_WRAP | ({"outcome"} if stops else set())
    for i, name in enumerate(names):
        table.add_column(name, no_wrap=name not in wrapped, min_width=card_width if name == "card · rig" else None,
                         width=None if widths is None else widths[i] - PAD)  # its text's, without the padding
    return table


#: Between the texts `_kept` holds of a row, and after a row's in `_Kept`: never in one, as `terminal_line` writes
#: every control character as its escape.
_SEP = "\x00"
_END = b"\x01"


class _Kept:
    """Every row's `_kept` texts, in UTF-8 in one buffer, each row's ended by `_END`: what the table holds of the
    ledger between its one read and its drawing, a row's few short texts without an object each (66 bytes for a
    ledger line of 1.7 kB; kept as strings in a list, twice that), read back a row at a time."""

    def __init__(self, rows: Iterable[LedgerRow]):
        self.data = bytearray()
        for row in rows:
            self.data += _kept(row).encode("utf-8")
            self.data += _END

    def __iter__(self) -> Iterator[str]:
        start = 0
        while (end := self.data.find(_END, start)) != -1:
            yield self.data[start:end].decode("utf-8")
            start = end + 1


def _kept(row: LedgerRow) -> str:
    """What the table keeps of a row between its one read and its drawing: the texts its cells show, each through
    `terminal_line` (a row edited by hand may hold escapes or a newline), and its style (results bold, non-results
    dim), as one string (a tenth of the row's 1.7 kB line, where the row itself is many objects)."""
    t = terminal_line
    style = {"result": "bold", "non-result": "dim"}.get(row.outcome, "")
    version = "unsealed" if row.kind == "compare" else f"v{row.version}"
    return _SEP.join((str(row.seq), t(row.date), t(row.card), version, t(row.rig), _finding_cell(row),
                      t(row.outcome), _run_cell(row), _looks_of(row), style))


def _cells_of(kept: str, narrow: bool) -> tuple[list[Text], str]:
    """A row's cells from the texts kept of it, as Text, never markup (a `[/red]` in a rig raised rich's
    MarkupError, a `[link=…]` made a hyperlink), and the row's style."""
    from rich.text import Text

    seq, date, card, version, rig, finding, outcome, run, looks, style = kept.split(_SEP)
    stop = f"\n{looks}" if looks else ""  # a sequential run's: under its outcome, as on the ledger page
    if narrow:
        shown = Text(card)
        shown.append("\n" + rig, style="dim")
        shown.append(stop)  # under the card and the rig: the narrow table's one column that wraps
        return [Text(seq), shown, Text(version), Text(f"{finding}\n{outcome}"), Text(run)], style
    return [Text(c) for c in (seq, date, card, version, rig, finding, outcome + stop, run)], style


def _looks_of(row: LedgerRow) -> str:
    """Where a sequential run stopped, in the words of its verdict and of the ledger page (`RowLooks.line`:
    "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)", or that every look was taken); empty for a run of
    fixed design, whose row keeps no looks."""
    from msgspec import UnsetType

    return "" if isinstance(row.looks, UnsetType) else terminal_line(row.looks.line)


def _finding_cell(row: LedgerRow) -> str:
    """The finding, and under a probe's (`scored` whatever it scored) its score and, sealed with a gate, what the
    gate decided (`ledgerrow.GateFigures.words`), each one visible line. A row entered before verdicts recorded
    the gate shows the score alone."""
    from msgspec import UnsetType

    lines = [terminal_line(row.finding)]
    if row.kind == "probe" and isinstance(row.score, int | float):
        lines.append(f"score {row.score:.3f}")
    if not isinstance(row.sealed_gate, UnsetType):
        lines.append(terminal_line(row.sealed_gate.words))
    return "\n".join(lines)


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
