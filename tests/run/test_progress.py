"""Progress on the terminal: a status on stderr while a run goes (plain lines when piped), nothing with --json."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

from benchcard.records.rows import OutputRow
from benchcard.run._progress import RichProgress
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project, bc, ok, summary
from ..helpers_wait import wait_until


def test_progress_goes_to_stderr_and_json_replaces_it(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "faults": [{"kind": "truncate", "times": 1, "match": "number 0"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    result = ok(bc(project, "run", "colour-ab"))
    assert "4/4" in result.stderr and "0 failed" in result.stderr and "2 truncated" in result.stderr
    assert "cost n/a" in result.stderr  # piped: plain status lines, no live bar (and no ETA)
    assert "→ results/colour-ab/v1/" in result.stdout and "scored blind" in result.stdout
    result = ok(bc(project, "run", "colour-ab", "--json"))
    assert result.stderr == ""
    assert set(summary(result)["runs"][0]) >= {"run", "folder", "counts", "cost", "wall_s"}


def test_piped_progress_is_a_plain_line_every_few_seconds(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Where stderr is not a terminal a live bar shows nothing until the end: plain status lines instead."""
    import io

    from benchcard.records.rows import OutputRow
    from benchcard.run._progress import PLAIN_EVERY_S, RichProgress

    assert PLAIN_EVERY_S <= 10
    stream = io.StringIO()
    progress = RichProgress(stream, every=0.05)
    progress.start("run X", 3, 0)
    row = OutputRow(cell="c0000000000", fixture="f", status="failed", attempts=1, error="x")
    progress.advance(row)
    wait_until(lambda: len(stream.getvalue().splitlines()) >= 2, 60, "a status line printed while the run goes on")
    progress.stop()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "run X" and len(lines) >= 3
    assert all(re.fullmatch(r"calls 1/3 · 1 failed · 0 truncated · cost n/a · \d+ s", line) for line in lines[1:])

    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    result = bc(project, "run", "colour-ab")  # CliRunner's stderr is not a terminal
    assert result.exit_code == 0
    assert re.search(r"^calls 4/4 · 0 failed · 0 truncated · cost \S+ · \d+ s$", result.stderr, re.M)


def test_the_last_piped_line_counts_costs_and_a_batchs_own_label() -> None:
    stream = StringIO()
    progress = RichProgress(stream, every=3600)  # no periodic line: only the one at the end
    progress.start("run colour-ab v1 · fake · test/model", 5, 1)
    progress.advance(OutputRow(cell="c1", fixture="f", status="truncated", cost=0.5))
    progress.advance(OutputRow(cell="c2", fixture="f", status="ok", cost=0.25))
    progress.update(4, "1 batch · in_progress")
    progress.stop()
    first, last = stream.getvalue().splitlines()
    assert first == "run colour-ab v1 · fake · test/model"
    assert re.fullmatch(r"1 batch · in_progress 4/5 · 0 failed · 1 truncated · \$0\.7500 · \d+ s", last), last
    progress.stop()  # stopping twice prints nothing more
    assert len(stream.getvalue().splitlines()) == 2


def test_a_cost_so_far_that_is_an_upper_bound_is_shown_so() -> None:
    """A cell whose cached input was priced in full (no `cached_input`) makes the total an upper bound: `≤ $…`."""
    stream = StringIO()
    progress = RichProgress(stream, every=3600)
    progress.start("run colour-ab v1 · fake · test/model", 2, 0)
    progress.advance(OutputRow(cell="c1", fixture="f", status="ok", cost=0.5))
    progress.advance(OutputRow(cell="c2", fixture="f", status="ok", cost=0.25, cost_upper_bound=True))
    progress.stop()
    assert re.fullmatch(r"calls 2/2 · 0 failed · 0 truncated · ≤ \$0\.7500 · \d+ s", stream.getvalue().splitlines()[-1])


def test_a_label_that_reads_as_rich_markup_or_holds_a_newline_is_printed_as_written(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """Review: the bar's label (the rig: a model name as typed) and a batch's state (the vendor's words) were rich
    markup, so a model named `m[/x]` stopped the run with rich's MarkupError once its sealed plan was written,
    and `[bold]` vanished; they are text, each one visible line, as every line printed for a person."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    result = bc(project, "run", "colour-ab", "--model", "test/m[/x][bold]", "--scratch")
    assert result.exit_code == 0, (result.output, result.exception)
    assert "test/m[/x][bold]" in result.stderr.splitlines()[0]
    stream = StringIO()
    progress = RichProgress(stream, every=3600)
    progress.start("run [/x]\nforged line", 2, 0)
    progress.update(1, "1 batch · [red]in_progress\x1b[2J")
    progress.stop()
    assert stream.getvalue().splitlines() == [
        "run [/x]\\nforged line", f"1 batch · [red]in_progress\\x1b[2J 1/2 · 0 failed · 0 truncated · cost n/a · "
        f"{stream.getvalue().rsplit(' · ', 1)[1].strip()}"]


def test_the_live_bars_label_is_shown_as_written_at_a_terminal() -> None:
    """Review of 5d688e7: at a terminal the bar's label went through rich's markup escaping, which writes a
    trailing backslash twice (so that it cannot escape a tag after it): a batch state ending in '\\' showed '\\\\'.
    The column takes the label as text, so it shows as written, `[/x]` included."""
    from rich.console import Console

    stream = StringIO()
    progress = RichProgress(stream)
    progress.console = Console(file=stream, force_terminal=True, width=120, color_system=None, highlight=False)
    progress.start("run", 2, 0)
    progress.update(1, "1 batch · [/x] state\\")
    progress.stop()
    shown = stream.getvalue()
    assert "1 batch · [/x] state\\ " in shown and "state\\\\" not in shown, shown
