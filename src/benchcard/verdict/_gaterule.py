"""The gate's rule: a verdict turned into the decision and exit code of `--gate` (docs/ci.md), and the figures a
gated probe's verdict.json and ledger row record of it, so that the ledger and the pages say pass or below beside
the score without the card. `gate.py` applies it in the commands; the verdict records it when given (`give.py`),
which is why it lives below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard.card.model import Card
from benchcard.errors import VerdictError
from benchcard.records.ledgerrow import GateFigures, RowCounts
from benchcard.records.verdictfile import ProbeVerdict, VerdictFile

# Exit codes of `--gate`. 1 is every command's user error; 2 and up are findings that are not a win.
EXIT_CODES: Mapping[str, int] = {"win": 0, "pass": 0, "loss": 2, "below": 2, "no-effect": 3, "inconclusive": 4,
                                 "incomplete": 5}
TOLERANCE = 1e-9  # a mean score equal to the threshold up to float rounding passes


@dataclass(frozen=True)
class Gate:
    """What the gate decided for one run: the finding it read, the exit code, and a line saying why."""

    run: str
    finding: str
    code: int
    line: str
    held: float | None = None  # a probe's mean score held to min_score (cut-off repetitions counted as failing)

    @property
    def passed(self) -> bool:
        return self.code == 0

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "finding": self.finding, "code": self.code, "passed": self.passed,
                "why": self.line}


def gate_of(card: Card, verdict: VerdictFile) -> Gate:
    """The gate's decision from a verdict (its typed verdict.json) and the run's card."""
    run, finding = verdict.run, verdict.finding
    if card.is_ab:
        code = EXIT_CODES.get(finding)
        if code is None:
            raise VerdictError(f"run {run}: finding {finding!r} has no gate exit code")
        line = f"gate: {finding} → exit {code}" + ("" if code == 0 else " (only a win passes)")
        return Gate(run, finding, code, line)
    threshold = card.gate
    assert threshold is not None  # check_gate_field refused a probe without one
    score = verdict.score if isinstance(verdict, ProbeVerdict) else None
    if finding != "scored" or not isinstance(score, int | float):
        code = EXIT_CODES["incomplete"]
        return Gate(run, "incomplete", code, f"gate: {finding}, no score to hold to min_score {threshold:g} → "
                                             f"exit {code}")
    held, said = _held_score(verdict.counts, float(score))
    looked = _looked(verdict, threshold, held)
    if looked is not None:
        return looked
    if held >= threshold - TOLERANCE:
        return Gate(run, "pass", 0, f"gate: {said} ≥ min_score {threshold:g} → pass, exit 0", held)
    code = EXIT_CODES["below"]
    return Gate(run, "below", code, f"gate: {said} < min_score {threshold:g} → below, exit {code}", held)


def _held_score(counts: RowCounts, score: float) -> tuple[float, str]:
    """The mean score the gate holds to min_score, and its words: the verdict's mean over the scored repetitions,
    with each repetition cut off at max_tokens counted as failing (score 0). The verdict reports the score apart
    from them (a cut-off answer is not scored as wrong); the gate claims the probe passes, and is judged at the
    worst case for that claim, as an ab clause bounds truncated cells and a sequential probe's looks count them:
    under min_score 1, four passes and one cut-off answer are not a pass (hostile audit 13)."""
    scored, cut = counts.scored, counts.truncated
    if not cut:
        return score, f"score {score:.3f}"
    held = score * scored / (scored + cut)
    return held, (f"score {score:.3f} over {scored} scored, {held:.3f} with the {cut} cut off at max_tokens "
                  "counted as failing")


def _looked(verdict: VerdictFile, threshold: float, held: float) -> Gate | None:
    """A sequential probe's gate, when a look decided it at the sealed confidence (else the score decides)."""
    looks = verdict.sequential
    if isinstance(looks, UnsetType) or looks.decision not in ("pass", "fail"):
        return None
    code = 0 if looks.decision == "pass" else EXIT_CODES["below"]
    word = "pass" if looks.decision == "pass" else "below"
    return Gate(verdict.run, word, code, f"gate: {looks.line} (min_score {threshold:g}) → {word}, exit {code}",
                held)




def gate_figures(card: Card, verdict: VerdictFile) -> GateFigures | None:
    """What a probe's sealed gate decides of its verdict (min_score, the decision, the score held), the card being
    the run's version; None for an ab card or a probe without a gate."""
    if card.is_ab or card.gate is None or not isinstance(verdict, ProbeVerdict):
        return None
    decided = gate_of(card, verdict)
    return GateFigures(min_score=card.gate, decision=decided.finding, held=decided.held)


def with_gate(card: Card, verdict: VerdictFile) -> VerdictFile:
    """A probe's verdict with what its sealed gate decides (`gate_figures`); any other verdict as it is. Recorded
    when the verdict is given, so that its ledger row says it too."""
    figures = gate_figures(card, verdict)
    return verdict if figures is None else msgspec.structs.replace(verdict, sealed_gate=figures)


def recorded_gate(verdict: VerdictFile) -> GateFigures | None:
    """The gate a probe's verdict.json recorded; None for an ab verdict, an ungated probe or an older file."""
    gate = verdict.sealed_gate if isinstance(verdict, ProbeVerdict) else UNSET
    return None if isinstance(gate, UnsetType) else gate
