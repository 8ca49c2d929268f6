"""Progress of a run on the terminal: a rich bar, or nothing (`--json`, benchmarks, tests of the core)."""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any, Protocol

from benchcard._util.numfmt import dollars
from benchcard._util.text import terminal_line
from benchcard.records.rows import OutputRow


class Progress(Protocol):
    """What the runner tells a progress display: the start, every finished cell, the end."""

    def start(self, label: str, total: int, completed: int) -> None: ...
    def advance(self, row: OutputRow) -> None: ...
    def update(self, completed: int, label: str) -> None: ...
    def stop(self) -> None: ...


class NullProgress:
    """No output at all (`--json`, benchmarks, tests of the core)."""

    def start(self, label: str, total: int, completed: int) -> None:
        pass

    def advance(self, row: OutputRow) -> None:
        pass

    def update(self, completed: int, label: str) -> None:
        pass

    def stop(self) -> None:
        pass


PLAIN_EVERY_S = 10.0
"""With stderr not a terminal (piped, in CI), a plain line at least this often instead of the live bar."""


class RichProgress:
    """A bar on stderr: done/total, failures, truncations, cost so far, ETA. Piped, where a live bar shows
    nothing until the end, a plain line every PLAIN_EVERY_S seconds (and at the end) says how far the run is."""

    def __init__(self, stream: IO[str] | None = None, every: float = PLAIN_EVERY_S):
        from rich.console import Console

        self.console = Console(file=stream or sys.stderr, highlight=False)
        self.every = every
        self._plain: PlainLines | None = None
        self._progress: Any = None
        self._task: Any = None
        self.failed = self.truncated = 0
        self.cost = 0.0
        self.priced = False  # no cell has had a known cost yet (this session)
        self.upper = False  # a cell's cost was an upper bound (cached input priced in full): the total is shown ≤

    def start(self, label: str, total: int, completed: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.console.print(_text(label), soft_wrap=True)
        if not self.console.is_terminal:
            self._plain = PlainLines(self, total, completed)
            self._plain.begin()
            return
        self._progress = Progress(
            TextColumn("{task.description}", style="progress.description", markup=False),  # text, as written
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed · {task.fields[truncated]} truncated · {task.fields[cost]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            refresh_per_second=5,
        )
        self._progress.start()
        self._task = self._progress.add_task("calls", total=total, completed=completed, failed=0, truncated=0,
                                             cost="cost n/a")

    def advance(self, row: OutputRow) -> None:
        if row.status == "failed":
            self.failed += 1
        elif row.status == "truncated":
            self.truncated += 1
        if row.cost is not None:
            self.cost += row.cost
            self.priced = True
            self.upper = self.upper or row.cost_upper_bound is True
        if self._plain is not None:
            self._plain.done += 1
            return
        self._progress.update(self._task, advance=1, failed=self.failed, truncated=self.truncated,
                              cost=self._cost())

    def _cost(self) -> str:
        """The cost so far: `≤ $…` when it is an upper bound."""
        return ("≤ " if self.upper else "") + dollars(self.cost) if self.priced else "cost n/a"

    def update(self, completed: int, label: str) -> None:
        """Cells done as a batch reports them (recorded or answered remotely), and the batch's state."""
        if self._plain is not None:
            self._plain.done, self._plain.label = completed, label
            return
        self._progress.update(self._task, completed=completed, description=terminal_line(label))

    def stop(self) -> None:
        if self._plain is not None:
            self._plain.end()
            self._plain = None
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def status(self, label: str, done: int, total: int, started: float) -> str:
        cost = self._cost()
        return (f"{label} {done}/{total} · {self.failed} failed · {self.truncated} truncated · {cost} · "
                f"{time.monotonic() - started:.0f} s")


class PlainLines:
    """The piped form: a thread prints the status every `every` seconds until the run stops."""

    def __init__(self, owner: RichProgress, total: int, completed: int):
        self.owner, self.total, self.done, self.label = owner, total, completed, "calls"
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="benchcard-progress", daemon=True)

    def begin(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.owner.every):
            self._print()

    def _print(self) -> None:
        self.owner.console.print(_text(self.owner.status(self.label, self.done, self.total, self.started)),
                                 soft_wrap=True)

    def end(self) -> None:
        self._stop.set()
        self._thread.join()
        self._print()


def _text(line: str) -> Any:
    """A line for the terminal as written: one visible line, its controls shown, and never read as rich markup (a
    model named `m[/x]` stopped a run with rich's MarkupError; a batch's state is the vendor's words)."""
    from rich.text import Text

    return Text(terminal_line(line))
