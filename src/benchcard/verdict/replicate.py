"""`benchcard replicate`, from the original's checks to the judgement: the replication run (`run/replicate.py`:
the original checked, its sealed requests sent again, resumed like any run), then, once every cell has an
outcome, its verdict under the card's sealed rule with its judgement against the original (`_replication.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import httpx

from benchcard.project import Project
from benchcard.records.rows import VERDICT
from benchcard.records.verdictfile import VerdictFile
from benchcard.run.options import RunOptions
from benchcard.run.replicate import replicate_run
from benchcard.run.summary import RunSummary
from benchcard.verdict.give import give_verdict, load_verdict
from benchcard.verdict.integrity import evidence_problems
from benchcard.verdict.looks import look_at
from benchcard.verdict.report import verdict_lines


@dataclass(frozen=True)
class Replication:
    """What `benchcard replicate` did: the run, and its verdict once every cell had an outcome."""

    summary: RunSummary
    verdict: VerdictFile | None
    waiting: str = ""  # why no verdict was given yet, and the command that goes on

    def to_json(self) -> dict[str, Any]:
        return {"run": self.summary.to_json(), "verdict": self.verdict.fields() if self.verdict else None,
                "waiting": self.waiting or None}

    def lines(self) -> list[str]:
        if self.verdict is None:
            return [*self.summary.lines(), f"  not judged yet: {self.waiting}"]
        return [*self.summary.lines(), "", *verdict_lines(self.verdict)]


def replicate(project: Project, name: str | None, options: RunOptions, model: str | None = None, *,
              transport: httpx.AsyncBaseTransport | None = None, stream: IO[str] | None = None,
              stop_after: int | None = None, tell: Callable[[str], None] | None = None) -> Replication:
    """`benchcard replicate`: the replication run (`run/replicate.py`), then, once every cell has an outcome, its
    verdict with its judgement against the original (given once: a finished replication's is read back). `tell`
    takes the run's notes (`runner.run`'s)."""
    summary = replicate_run(project, name, options, model, transport=transport, stream=stream,
                            stop_after=stop_after, looker=look_at, tell=tell, evidence=evidence_problems)
    run = summary.run
    if not summary.finished:
        return Replication(summary, None, f"every cell needs an outcome; continue with `benchcard replicate --resume "
                                          f"{run}`")
    folder = project.root / summary.folder
    if (folder / VERDICT).is_file():
        return Replication(summary, load_verdict(project, folder).file)
    failed = summary.counts.get("failed", 0)
    if failed and not summary.looks:  # a verdict now would close the run to --retry-failed: the user chooses
        # (a finished sequential run's failed cells were read by its looks, which are final: nothing to retry)
        return Replication(summary, None, f"{failed} cell(s) failed in transport; `benchcard replicate --resume {run} "
                                          f"--retry-failed` calls them again, `benchcard verdict {run}` judges the "
                                          "run as it is")
    return Replication(summary, give_verdict(project, folder).file)
