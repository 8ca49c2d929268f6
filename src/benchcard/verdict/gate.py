"""The CI gate: a verdict turned into a process exit code, so a pipeline can stop on anything but a win.

An ab card's gate is its sealed win rule: exit 0 on a win, and one code per other finding (`EXIT_CODES` of
`_gaterule.py`, where the decision is made; documented in docs/ci.md). A probe card's gate is its sealed pass
threshold (`gate: {min_score: …}`): exit 0 when the run's mean score reaches it (a repetition cut off at
max_tokens counted as failing), the loss code when it does not. Exit 1 stays what it is for every command: a user
error, a run that cannot be judged. A probe without a gate is refused before any verdict is given, so that
`--gate` never enters a run in the ledger and then fails for want of a threshold.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchcard.card import seal
from benchcard.card.load import card_of_run, check_seal_root, load_card, resolve_card_path
from benchcard.card.model import Card
from benchcard.errors import VerdictError
from benchcard.project import Project
from benchcard.records.cardruns import find_run
from benchcard.records.rows import Look, Manifest
from benchcard.records.runreader import read_manifest
from benchcard.records.verdictfigures import known
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.run.summary import RunSummary
from benchcard.verdict._gaterule import EXIT_CODES, Gate, gate_figures, gate_of, recorded_gate

__all__ = ["EXIT_CODES", "Gate", "GateReport", "GatedRuns", "GatedVerdict", "check_gate_field", "gate_figures",
           "gate_of", "gate_runs", "recorded_gate", "require_gate", "run_gated", "verdict_and_gate"]
from benchcard.verdict.report import changed_lines, verdict_lines

if TYPE_CHECKING:  # the verdict and the looks are imported where used: a plain `benchcard run` needs neither,
    # and with them the statistics and scipy.stats (about 0.9 CPU-s of a process's start)
    from benchcard.verdict.give import Verdict

def require_gate(project: Project, card_name: str) -> Card:
    """The card to be run under `--gate`; a probe without a sealed threshold is refused before any call."""
    card = load_card(resolve_card_path(project, card_name), project)
    check_gate_field(card, project)
    return card


def check_gate_field(card: Card, project: Project) -> None:
    if not card.is_ab and card.gate is None:
        raise VerdictError(f"{project.relative(card.path)}: field 'gate': missing; a probe needs a sealed pass "
                           "threshold for --gate, e.g. `gate: {min_score: 0.9}` (then reseal as a new version)")


@dataclass(frozen=True)
class GatedVerdict:
    """What `benchcard verdict` reports: the verdict and, with `--gate`, the gate's decision; the exit code."""

    verdict: Verdict
    gate: Gate | None = None
    unapplied: str = ""  # a gated probe judged without --gate: what its gate would decide, said, not exited by

    @property
    def code(self) -> int:
        """The gate's exit code, else 0."""
        return self.gate.code if self.gate else 0

    def to_json(self) -> dict[str, Any]:
        """The verdict's JSON (`Verdict.to_json`), the gate's decision beside it as `gate`."""
        return self.verdict.to_json() | ({"gate": self.gate.to_json()} if self.gate else {})

    def lines(self) -> list[str]:
        """The verdict's lines (or, for a record changed since the verdict, what changed and its ledger row's
        finding), then the gate's line."""
        v = self.verdict
        lines = changed_lines(v.file, v.ledger_row, v.changed) if v.changed else verdict_lines(v.file)
        return lines + ([self.gate.line] if self.gate else [self.unapplied] if self.unapplied else [])


def _unapplied(project: Project, run_dir: Path, verdict: Verdict) -> str:
    """What a probe's sealed gate makes of a verdict given without --gate. A probe's finding is `scored` whatever
    its score, so `benchcard verdict` on a gated probe said nothing of the threshold it was sealed with: a score
    under it read as a plain result. "" for an ab card (its finding is its gate's) or a probe without a gate."""
    card = card_of_run(project, run_dir.name, read_manifest(run_dir), VerdictError)
    if card.is_ab or card.gate is None:
        return ""
    head, _, code = gate_of(card, verdict.file).line.rpartition("exit ")
    return f"{head}--gate exits {code}"


def verdict_and_gate(project: Project, run: str | Path, *, allow_incomplete: bool = False, show: bool = False,
                     gate: bool = True, scratch: bool = False) -> GatedVerdict:
    """`benchcard verdict`: give (or, with `show`, read) a run's verdict and, with `gate`, judge it by its
    card's gate (checked before the verdict is given). `run` is its folder, its id, or a card's name: with
    `show` the card's result, else its newest run (`records/cardruns.py`)."""
    from benchcard.verdict.give import give_verdict, load_verdict

    run_dir = find_run(project, run, "result" if show else "newest")
    card = _card_to_gate(project, run_dir, read_manifest(run_dir), check_seal=show) if gate else None
    if show:
        verdict = load_verdict(project, run_dir)
        if card is not None and known(verdict.file.scratch):  # no ledger row vouches for a scratch verdict.json
            raise VerdictError(f"run {run_dir.name}: its verdict is a scratch verdict, which no ledger row vouches "
                               "for; --show --gate applies no gate to it (gate a scratch run as it is judged: "
                               "verdict RUN --scratch --gate, or run CARD --gate)")
        if card is not None and verdict.changed:  # a gate never passes, or fails, on a record edited since
            more = f" (and {len(verdict.changed) - 1} more)" if len(verdict.changed) > 1 else ""
            raise VerdictError(f"run {run_dir.name}: its record changed after the verdict: {verdict.changed[0]}"
                               f"{more}; the gate is not applied (benchcard ledger --verify names each change)")
    else:
        verdict = give_verdict(project, run_dir, allow_incomplete=allow_incomplete, scratch=scratch)
        if card is None:
            return GatedVerdict(verdict, unapplied=_unapplied(project, run_dir, verdict))
    return GatedVerdict(verdict, None if card is None else gate_of(card, verdict.file))


def _card_to_gate(project: Project, run_dir: Path, manifest: Manifest, *, check_seal: bool) -> Card:
    """The run's card at the run's version (`card_of_run`, as the verdict checks it), its gate field checked before
    any verdict is given. Its seal is checked here for `--show` only: a verdict being given checks the seal itself,
    before anything is written, so the fixtures and keys are hashed once; either way the threshold read is the
    one that was sealed. A scratch run of a version not sealed yet is held to the root it ran on, as its verdict
    is, so that `--show` reaches the line saying a scratch verdict is not gated."""
    card = card_of_run(project, run_dir.name, manifest, VerdictError)
    check_gate_field(card, project)
    if check_seal:
        check_seal_root(project, run_dir.name, card, manifest,
                        lambda: seal.root_for_scratch(card, project, bool(manifest.scratch)), VerdictError)
    return card


@dataclass(frozen=True)
class GateReport:
    """`run --gate`: each run's verdict (None for a run that did not finish) and gate, and the exit code."""

    judged: tuple[tuple[Verdict | None, Gate], ...]

    @property
    def code(self) -> int:
        """The code of the first run that did not pass, else 0 (several models make several runs)."""
        return next((g.code for _, g in self.judged if g.code), 0)

    @property
    def lines(self) -> list[str]:
        out: list[str] = []
        for verdict, gate in self.judged:
            out.extend(verdict_lines(verdict.file) if verdict else [])
            out.append(gate.line)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"verdicts": [v.to_json() if v else None for v, _ in self.judged],
                "gates": [g.to_json() for _, g in self.judged], "code": self.code}


def gate_runs(project: Project, runs: Sequence[tuple[str, bool]]) -> GateReport:
    """`run --gate`: the verdict and gate of each run just made (its folder, relative to the project, and
    whether it finished); an unfinished run is incomplete and gets no verdict."""
    out: list[tuple[Verdict | None, Gate]] = []
    for folder, finished in runs:
        run_dir = project.root / folder
        if not finished:
            code = EXIT_CODES["incomplete"]
            out.append((None, Gate(run_dir.name, "incomplete", code,
                                   f"gate: run {run_dir.name} did not finish; no verdict → exit {code}")))
            continue
        judged = verdict_and_gate(project, run_dir)
        assert judged.gate is not None
        out.append((judged.verdict, judged.gate))
    return GateReport(tuple(out))


@dataclass(frozen=True)
class GatedRuns:
    """`benchcard run [--gate]` whole: the runs made, the runner's wall time, and with --gate their verdicts."""

    runs: tuple[RunSummary, ...]
    wall_s: float
    gated: GateReport | None

    @property
    def code(self) -> int:
        """The exit code: the gate's, else 0."""
        return self.gated.code if self.gated else 0

    def lines(self) -> list[str]:
        """What `benchcard run` prints: each run's lines, then under --gate each one's verdict and gate."""
        return [line for s in self.runs for line in s.lines()] + (self.gated.lines if self.gated else [])

    def to_json(self) -> dict[str, Any]:
        """`run --json`: the runs and the wall time, then the verdicts and gates under --gate."""
        return {"runs": [s.to_json() for s in self.runs], "wall_s": round(self.wall_s, 3),
                **(self.gated.to_json() if self.gated else {})}


def _look_at(card: Card, run_dir: Path, look: int) -> Look:
    """verdict.looks.look_at, imported at a sequential card's first look."""
    from benchcard.verdict.looks import look_at

    return look_at(card, run_dir, look)


def run_gated(project: Project, card_name: str, options: RunOptions, gate: bool,
              tell: Callable[[str], None] | None = None) -> GatedRuns:
    """The core of `benchcard run`: with `gate`, the card checked for it before any call (`require_gate`), then
    the runs (`runner.run`, its notes to `tell`) and each one's verdict and gate (`gate_runs`)."""
    if gate:
        require_gate(project, card_name)
    started = time.perf_counter()
    summaries = run(project, card_name, options, looker=_look_at, tell=tell)
    wall_s = time.perf_counter() - started
    gated = gate_runs(project, [(s.folder, s.finished) for s in summaries]) if gate else None
    return GatedRuns(tuple(summaries), wall_s, gated)
