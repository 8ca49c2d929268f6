"""`benchcard replicate`, from the original's checks to the judgement: the replication run (`run/replicate.py`:
the original checked, its sealed requests sent again, resumed like any run), then, once every cell has an
outcome, its verdict under the card's sealed rule with its judgement against the original (`_replication.py`),
and with `--gate` the exit code `verdict NEW --gate` gives (`gate.py`), so that CI needs no second command.
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
from benchcard.verdict.gate import EXIT_CODES, Gate, GatedVerdict, check_gate_field, verdict_and_gate
from benchcard.verdict.integrity import evidence_problems
from benchcard.verdict.looks import look_at


@dataclass(frozen=True)
class Replication:
    """What `benchcard replicate` did: the run, its verdict once every cell had an outcome (with `--gate`, the
    gate's decision), or why it has none yet (with `--gate`, the incomplete gate)."""

    summary: RunSummary
    judged: GatedVerdict | None
    waiting: str = ""  # why no verdict was given yet, and the command that goes on
    waiting_gate: Gate | None = None  # --gate on a replication not judged yet: incomplete

    @property
    def verdict(self) -> VerdictFile | None:
        return self.judged.verdict.file if self.judged else None

    @property
    def gate(self) -> Gate | None:
        return self.judged.gate if self.judged else self.waiting_gate

    @property
    def code(self) -> int:
        """The exit code: the gate's (as `verdict NEW --gate` exits), else 0."""
        return self.gate.code if self.gate else 0

    def to_json(self) -> dict[str, Any]:
        return {"run": self.summary.to_json(), "verdict": self.verdict.fields() if self.verdict else None,
                "waiting": self.waiting or None} | ({"gate": self.gate.to_json()} if self.gate else {})

    def lines(self) -> list[str]:
        if self.judged is None:
            gate = [self.waiting_gate.line] if self.waiting_gate else []
            return [*self.summary.lines(), f"  not judged yet: {self.waiting}", *gate]
        return [*self.summary.lines(), "", *self.judged.lines()]


def replicate(project: Project, name: str | None, options: RunOptions, model: str | None = None, *,
              transport: httpx.AsyncBaseTransport | None = None, stream: IO[str] | None = None,
              stop_after: int | None = None, tell: Callable[[str], None] | None = None,
              gate: bool = False) -> Replication:
    """`benchcard replicate`: the replication run (`run/replicate.py`), then, once every cell has an outcome, its
    verdict with its judgement against the original (given once: a finished replication's is read back, as
    `verdict --show` reads it). `tell` takes the run's notes (`runner.run`'s). With `gate`, a probe without a
    sealed threshold is refused before any call, and the verdict is gated as `verdict NEW --gate` gates it (read
    back: as `verdict NEW --show --gate`); a replication left without a verdict is incomplete (exit 5)."""
    summary = replicate_run(project, name, options, model, transport=transport, stream=stream,
                            stop_after=stop_after, looker=look_at, tell=tell, evidence=evidence_problems,
                            card_check=(lambda card: check_gate_field(card, project)) if gate else None)
    run = summary.run
    if not summary.finished:
        return _waiting(summary, gate, f"every cell needs an outcome; continue with `benchcard replicate --resume "
                                       f"{run}`")
    folder = project.root / summary.folder
    if (folder / VERDICT).is_file():
        return Replication(summary, verdict_and_gate(project, folder, show=True, gate=gate))
    failed = summary.counts.get("failed", 0)
    if failed and not summary.looks:  # a verdict now would close the run to --retry-failed: the user chooses
        # (a finished sequential run's failed cells were read by its looks, which are final: nothing to retry)
        return _waiting(summary, gate, f"{failed} cell(s) failed in transport; `benchcard replicate --resume {run} "
                                       f"--retry-failed` calls them again, `benchcard verdict {run}` judges the "
                                       "run as it is")
    return Replication(summary, verdict_and_gate(project, folder, gate=gate))


def _waiting(summary: RunSummary, gate: bool, why: str) -> Replication:
    """A replication not judged yet; under `--gate` incomplete, as `run --gate` holds a run that did not finish
    (no verdict is given for it: `--retry-failed` stays open)."""
    code = EXIT_CODES["incomplete"]
    gated = Gate(summary.run, "incomplete", code, f"gate: replication {summary.run} has no verdict yet → exit {code}")
    return Replication(summary, None, why, gated if gate else None)
