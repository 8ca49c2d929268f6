"""A sequential card's looks: the sealed rule computed on the cells called so far, against that look's boundaries.

The runner takes a look after each block of repetitions the seal names (`card.sequential.looks`), and only
there; it hands the look to this module, which reads the run folder as the verdict does (`runfolder.read_run_data`,
kept to the first repetitions of the look) and asks `stats.sequential` for the decision. An ab card's look is
its first clause (the effect sought: the baseline's and the variant's (fixtures, repetitions) scores of its
metric, turned so that a win is always "up"); a probe's is its gate, the mean score against `min_score`, decided
by a bound at the look's boundary (`stats.sequential.gate_bounds`: Clopper–Pearson's, or Wilson's for a run
planned before 2026-12-08; a [0, 1] score of mean p varies at most as p(1 − p), so the bound holds for
fractional scores too). `benchcard verdict` on a run that stopped reads the decision recorded in the
manifest and checks it against the same computation at the same look, never at another.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import numpy as np

from benchcard._util.hashing import seed_from
from benchcard.card.model import Card
from benchcard.card.schedule import run_design
from benchcard.errors import VerdictError
from benchcard.records.rows import Look, Manifest, stop_line, utc_stamp
from benchcard.records.runreader import read_manifest
from benchcard.records.verdictfigures import VariantFindingFigures
from benchcard.records.verdictfile import AbVerdict, LooksFigures, ProbeVerdict, VerdictFile
from benchcard.stats import sequential as seq
from benchcard.verdict.clausestats import Gap, ab_stats
from benchcard.verdict.columns import OK
from benchcard.verdict.findings import rule_evidence
from benchcard.verdict.runfolder import RunData, read_run_data

BEYOND = 40.0  # a z the manifest writes as ±40: beyond every boundary (a p of 1, or under 1e-300)
LOOK_RESAMPLES = 200  # the bootstrap a look does not decide on (its interval is reported by the verdict alone)

__all__ = ["look_at", "looks_figures", "verify_look", "with_looks"]


def look_at(card: Card, run_dir: Path, look: int) -> Look:
    """Look `look` (1-based) of a sequential run whose cells up to it are called and scored: the statistic, the
    boundaries and the decision (win, loss, futility or continue before the last look, the rule's finding at
    it; a probe: pass, fail or continue). The boundaries are those of the schedule the run's manifest records
    (`card/schedule.run_design`), never of today's defaults."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    design = run_design(manifest)
    reps = design.looks[look - 1]
    data = read_run_data(run_dir, manifest=manifest, baseline=card.baseline, allow_incomplete=True, upto=reps)
    if card.is_ab:
        return _ab_look(card, data, look, reps, design)
    return _probe_look(card, data, look, reps, design)


def _ab_look(card: Card, data: RunData, look: int, reps: int, design: seq.Schedule) -> Look:
    """The sealed rule on the cells so far, every clause's evidence as the verdict computes it
    (`findings.rule_evidence`), decided at the look's level (`stats.sequential.look_decision`)."""
    win = card.win
    assert win is not None and card.baseline is not None
    others = [v for v in data.variants if v != card.baseline]
    with ThreadPoolExecutor(max_workers=1) as pool:
        figures = ab_stats(card, data, seed_from(data.manifest.seal_root), LOOK_RESAMPLES, pool).result()
    rule = rule_evidence(card, data, figures, others)
    first = win.clauses[0]
    effect = win.min_effect or float(win.equivalence_margin or 0.0)
    up = first.test == "rises"
    futile = []
    for variant in others:  # the bound most favourable to the effect: truncation never makes a run look futile
        g = figures.gaps[(variant, (first.metric, first.fixture))]
        c = (g.high if up else g.low) or g.obs
        unbounded = g.open_high if up else g.open_low  # a count's cut-off cells could hold any effect: not futile
        # a gap never measured (no fixture scored in both arms so far) rules nothing out: its p is 1, not 0
        futile.append(np.ones(1) if unbounded or c is None else seq.futility_p(c, effect, up))
    d = seq.look_decision(seq.boundaries(design), look, rule.evidence, rule.tost, rule.measurable, futile)
    gap_keys = {(c.metric, c.fixture) for c in win.clauses if c.test != "holds"}
    measured = any(_measured(g) for (_, key), g in figures.gaps.items() if key in gap_keys)
    fut = None if d.futility_statistic is None or not measured else float(d.futility_statistic[0])
    statistic = _finite(float(d.statistic[0])) if measured else None
    return Look(look=look, repetitions=reps, cells=len(data.cells), statistic=statistic,
                boundary=_finite(d.boundary), lower=_finite(-d.boundary), futility=_finite(d.futility_boundary),
                futility_statistic=_finite(fut), decision=seq.LOOK_CODES[int(d.codes[0])], at=utc_stamp())


def _measured(g: Gap) -> bool:
    """Whether a gap clause's interval could be computed at this look: a fixture scored in both arms, two to
    spread over, and the run-to-run term measured (two repetitions). A look where no gap is measured has no
    statistic (null in the manifest, `none` where shown): its p of 1 would read as a measured z of 0."""
    c = g.obs
    return c is not None and bool(np.isfinite(c.var_run[0]) and np.isfinite(c.var_fixture[0]))


def _probe_look(card: Card, data: RunData, look: int, reps: int, design: seq.Schedule) -> Look:
    """A probe's gate at this look: pass when the lower bound of the mean score at the look's boundary reaches
    `min_score`, fail when the upper bound stays below it (`seq.gate_bounds`, by the run's recorded bound: exact,
    or Wilson's for a run planned before 2026-12-08). `boundary`/`lower`: the means that would."""
    assert card.gate is not None
    z = seq.boundaries(design).efficacy[look - 1]  # α/2 on each side: a pass and a fail alike
    scores = np.where(data.status == OK, data.score, 0.0)  # a cell without a score counts as failing the gate
    n = int(scores.size)
    mean = float(scores.mean()) if n else 0.0  # decides nothing at n = 0 (Wilson: [0, 1]); recorded as none
    low, high = seq.gate_bounds(mean, n, z, design.gate_bound)
    decision = "pass" if low >= card.gate else "fail" if high < card.gate else "continue"
    return Look(look=look, repetitions=reps, cells=n, statistic=mean if n else None,
                boundary=seq.passing_mean(card.gate, n, z, design.gate_bound),
                lower=seq.failing_mean(card.gate, n, z, design.gate_bound), decision=decision, at=utc_stamp())


def _finite(x: float | None) -> float | None:
    """A figure as the manifest holds it (strict JSON): a z beyond ±BEYOND (a p under 1e-300, or of 1) at ±BEYOND,
    farther than any boundary."""
    if x is None or math.isnan(x):
        return None
    return max(-BEYOND, min(BEYOND, x))


def verify_look(card: Card, run_dir: Path, recorded: Look) -> None:
    """The recorded look computed again at the same look, on the same cells: VerdictError when they differ
    (a manifest edited after the run, or a run whose scores changed)."""
    again = look_at(card, run_dir, recorded.look)
    if again.decision != recorded.decision or again.cells != recorded.cells:
        raise VerdictError(f"run {Path(run_dir).name}: its manifest records look {recorded.look} as "
                           f"{recorded.decision} on {recorded.cells} cells, but the cells called then give "
                           f"{again.decision} on {again.cells}; the record of the looks cannot be trusted")


def looks_figures(manifest: Manifest) -> LooksFigures:
    """The looks a finished sequential run took, as its verdict and ledger row report them."""
    schedule, taken = manifest.sequential, list(manifest.looks or [])
    assert schedule is not None and taken
    last = taken[-1]
    planned = schedule.cells[-1]
    return LooksFigures(line=stop_line(schedule, last), look=last.look, looks=len(schedule.looks),
                        decision=last.decision, stopped=last.look < len(schedule.looks), cells=last.cells,
                        planned=planned, saved=round(1 - last.cells / planned, 4) if planned else 0.0,
                        schedule=schedule, taken=taken)


def with_looks(card: Card, run_dir: Path, body: VerdictFile) -> VerdictFile:
    """A sequential run's verdict: its figures as computed on the cells called, its finding the decision of the
    look it stopped at (checked again at that look, never at another), and its looks."""
    manifest = read_manifest(run_dir)
    if manifest.sequential is None or not manifest.looks:
        raise VerdictError(f"run {run_dir.name}: {card.id} is a sequential card but its run records no looks; it "
                           "cannot be judged as one (start a new run)")
    verify_look(card, run_dir, manifest.looks[-1])
    figures = looks_figures(manifest)
    if isinstance(body, ProbeVerdict) or body.finding == "incomplete":
        return msgspec.structs.replace(body, sequential=figures)
    finding, why = _ab_finding(card, body, figures)
    outcome = "result" if finding in ("win", "loss") else "non-result"
    summary = f"{card.id} v{card.version}, run {run_dir.name}: {finding} ({outcome}). {why}"
    return msgspec.structs.replace(body, finding=finding, outcome=outcome, why=why, summary=summary,
                                   comparisons=_look_comparisons(card, body, figures), sequential=figures)


def _look_comparisons(card: Card, body: AbVerdict, looks: LooksFigures) -> list[VariantFindingFigures]:
    """Each variant's line as the look decided it: a futility stop needs every variant's futility test to rule
    the effect out at the look's level, so each is a no-effect; the fixed design's finding at α (often
    `inconclusive` on the cells of an early stop) would contradict the run's. Other decisions keep theirs."""
    if looks.decision in ("inconclusive", "no-effect"):
        return [_not_a_result_here(c, looks) for c in body.comparisons]
    if looks.decision != "futility":
        return body.comparisons
    why = (f"The effect that matters ({_futile(card)}) is ruled out for this variant at look {looks.look}'s "
           "level: the run stopped for futility.")
    return [msgspec.structs.replace(c, finding="no-effect", outcome="non-result", why=why)
            for c in body.comparisons]


def _not_a_result_here(comparison: VariantFindingFigures, looks: LooksFigures) -> VariantFindingFigures:
    """A variant's win or loss at α alone, where the look's stricter level showed none (the looks spent α): said
    as inconclusive, so no line reads `win → result` under a run's non-result."""
    if comparison.finding not in ("win", "loss"):
        return comparison
    why = (f"At α alone this variant's gap would be a {comparison.finding}, but the looks spent α: at look "
           f"{looks.look}'s level it is not a result.")
    return msgspec.structs.replace(comparison, finding="inconclusive", outcome="non-result", why=why)


def _ab_finding(card: Card, body: AbVerdict, looks: LooksFigures) -> tuple[str, str]:
    """The finding of a sequential ab run: its deciding look's, the sealed rule at that look's level (every
    clause, Holm included); never the fixed design's at α, which the looks have spent."""
    said = f"{looks.line[0].upper()}{looks.line[1:]}."
    if looks.decision == "futility":
        return "no-effect", (f"{said} The effect that matters ({_futile(card)}) is ruled out at this look: it "
                             "stopped for futility.")
    if looks.decision == "win":
        return "win", f"{said} Every clause of the rule holds at the look's level."
    if looks.decision == "loss":
        return "loss", f"{said} The rule shows a loss at the look's level."
    if looks.decision == "no-effect":
        return "no-effect", f"{said} The first metric's interval lies inside ±{_effect(body)} at the last look."
    return "inconclusive", f"{said} No look showed a win, a loss or no effect at its level."


def _futile(card: Card) -> str:
    """The effect a futility stop ruled out, as `_ab_look` tested it: `min_effect`, else the equivalence margin."""
    assert card.win is not None
    if card.win.min_effect:
        return f"a gap of {card.win.min_effect:g}, the card's min_effect"
    return f"a gap of {card.win.equivalence_margin or 0:g}, the card's equivalence margin"


def _effect(body: AbVerdict) -> str:
    return f"{body.equivalence_margin:g}" if body.equivalence_margin is not None else "the equivalence margin"
