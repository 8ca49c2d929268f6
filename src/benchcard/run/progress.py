"""Progress of a run on the terminal: a rich bar, or nothing (`--json`, benchmarks, tests of the core)."""

from __future__ import annotations

import sys
from typing import IO, Any, Protocol

from benchcard.records import OutputRow


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


class RichProgress:
    """A bar on stderr: done/total, failures, truncations, cost so far, ETA."""

    def __init__(self, stream: IO[str] | None = None):
        from rich.console import Console

        self.console = Console(file=stream or sys.stderr, highlight=False)
        self._progress: Any = None
        self._task: Any = None
        self.failed = self.truncated = 0
        self.cost = 0.0
        self.priced = False  # no cell has had a known cost yet (this session)

    def start(self, label: str, total: int, completed: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.console.print(label, soft_wrap=True)
        self._progress = Progress(
            TextColumn("[progress.description]{task.description}"),
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
        self._progress.update(self._task, advance=1, failed=self.failed, truncated=self.truncated,
                              cost=f"${self.cost:.4f}" if self.priced else "cost n/a")

    def update(self, completed: int, label: str) -> None:
        """Cells done as a batch reports them (recorded or answered remotely), and the batch's state."""
        self._progress.update(self._task, completed=completed, description=label)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
