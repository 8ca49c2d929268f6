"""A verdict in words for the terminal: what `benchcard verdict` prints, built from verdict.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UnsetType

from benchcard._util.numfmt import UNMEASURED, fixed, level, p_value, written_halfwidth, written_interval
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.rows import Look, gate_side
from benchcard.records.verdictfigures import MetricFigures, VariantFigures, known, measured_bootstrap
from benchcard.records.verdictfile import AbVerdict, ProbeVerdict, VerdictFile
from benchcard.verdict.judgefigures import judge_lines


def ci(pair: Any) -> str:
    """An interval as verdict.json holds it, `[lo, hi]` (an end null where nothing bounds it: `∓∞`); n/a for
    none."""
    return written_interval(pair)


def pairing_text(g: VariantFigures | MetricFigures) -> str | None:
    """"paired over 7 of 8 fixtures; r5 left out: no scored cell in A", or None for a verdict without it."""
    paired = known(g.paired)
    if paired is None:
        paired = known(g.n_fixtures)
    total = known(g.of)
    if paired is None:
        return None
    text = f"paired over {paired} fixtures" if total is None else f"paired over {paired} of {total} fixtures"
    left = known(g.left_out) or {}
    if left:
        text += "; " + ", ".join(f"{f} left out: {why}" for f, why in left.items())
    return text


def effect_lines(v: VerdictFile, as_ab: bool = False) -> list[str]:
    """The verdict's lead, in words: what each variant did to the first clause's metric, from which mean to
    which (over the paired fixtures only, so that the means and the gap agree), with its interval and which
    fixtures were paired, then whether every clause holds. The terminal and the page both show these lines
    (a comparison's only when `as_ab`)."""
    if not isinstance(v, AbVerdict) or not (v.kind == "ab" or as_ab):
        return []
    return lead_lines(v.baseline, v.confidence, [(c.variant, c.finding, c.outcome) for c in v.comparisons],
                      [(c.variant, c.metric, c.fixture, c.holds) for c in v.clauses], v.metrics)


def row_lead_lines(row: LedgerRow, baseline: str, confidence: float) -> list[str]:
    """The lead from a ledger row's figures: what a page shows for a verdict.json edited after its row."""
    if isinstance(row.comparisons, UnsetType) or isinstance(row.clauses, UnsetType):
        return []
    metrics = msgspec.convert(msgspec.to_builtins(known(row.metrics) or {}), dict[str, MetricFigures])
    return lead_lines(baseline, confidence, [(c.variant, c.finding, c.outcome) for c in row.comparisons],
                      [(c.variant, c.metric, c.fixture, c.holds) for c in row.clauses], metrics)


def lead_lines(baseline: str, confidence: float, comparisons: Sequence[tuple[str, str, str]],
               clauses: Sequence[tuple[str, str, str | None, bool]], metrics: Mapping[str, MetricFigures]) -> list[str]:
    """`effect_lines` from its parts: each variant's finding and outcome, each clause's (variant, metric, fixture,
    holds), and the metrics' figures. Every clause holding yet no result (an incomplete grid, a sequential run's
    look) names the finding, so the line never reads 'every clause holds → non-result' unexplained."""
    out = []
    for variant, finding, outcome in comparisons:
        mine = [c for c in clauses if c[0] == variant]
        if not mine:
            continue
        metric = mine[0][1] if not mine[0][2] else f"{mine[0][1]} on {mine[0][2]}"
        m = metrics.get(metric)
        g: VariantFigures | MetricFigures | None = m
        if m is not None and not isinstance(m.by_variant, UnsetType):
            g = m.by_variant.get(variant) or m
        means = (known(g.means) if g is not None else None) or (m.means if m is not None else {})
        gap = known(g.gap) if g is not None else None
        verb = "left" if not isinstance(gap, int | float) or gap == 0 else ("raised" if gap > 0 else "lowered")
        held = all(c[3] for c in mine)
        pairing = pairing_text(g) if g is not None else None
        out.append(f"{variant} {verb} {metric} from {fixed(means.get(baseline))} to {fixed(means.get(variant))} "
                   f"({fixed(gap, signed=True)}, {round(100 * confidence)} % CI {ci(known(g.ci) if g else None)})"
                   + (f", {pairing}" if pairing else "")
                   + f"; {'every clause holds' if held else 'not every clause holds'}"
                   + (f", but {finding}" if held and outcome != "result" else "") + f" → {outcome}")
    return out


def _ab_lines(v: AbVerdict) -> list[str]:
    lines = []
    for comp in v.comparisons:
        lines.append(f"{comp.variant} vs {v.baseline}: {comp.finding} → {comp.outcome}")
        for c in v.clauses:
            if c.variant == comp.variant:
                lines.append(f"  {'holds' if c.holds else 'FAILS'}  {c.why}")
    lines.append(f"metrics ({round(100 * v.confidence)}% intervals; bootstrap: "
                 f"{v.bootstrap.resamples:,} fixture resamples seeded from {_seeded_from(v)}):")
    for name, m in v.metrics.items():
        means = " · ".join(f"{k} {fixed(x)}" for k, x in m.means.items())
        for variant, g in m.per_variant(v.variants[0]).items():
            boot = measured_bootstrap(g.ci_bootstrap)
            lines.append(f"  {name} ({variant} − {v.baseline}): means {means}; gap {fixed(known(g.gap), signed=True)} "
                         f"CI {ci(known(g.ci))} bootstrap {ci(boot)} p {p_value(known(g.p))} "
                         f"sign-flip p {p_value(known(g.p_signflip))}; run term {_run_term(g, m)} "
                         "(the interval's run-to-run part)")
    return lines


def _seeded_from(v: AbVerdict) -> str:
    """The root the bootstrap's seed was drawn from: the seal's, or for a scratch run of a version not sealed (a
    trial's `sealed: false`) the root its material would be sealed with, which the run recorded."""
    if known(v.scratch) and v.sealed is False:
        return f"the root v{v.version} would be sealed with: v{v.version} was not sealed"
    return "the seal root"


def _run_term(g: VariantFigures | MetricFigures, m: MetricFigures) -> str:
    """The clause's run term as written_halfwidth reads it (null: unmeasured, `±∞`); n/a only where the metric has
    no gap, or an older file no run term."""
    if known(g.gap) is None:
        return "n/a"
    floor = m.noise_floor if isinstance(g.noise_floor, UnsetType) else g.noise_floor
    return "n/a" if isinstance(floor, UnsetType) else written_halfwidth(floor)


def changed_lines(v: VerdictFile, row: LedgerRow | None, changed: Sequence[str]) -> list[str]:
    """`verdict --show` for a run whose record changed since its verdict: what changed, then what its ledger
    row says in place of the file (the file's figures and prose are not shown: nothing vouches for them)."""
    head = f"ledger row (seq {row.seq})" if row is not None else "no ledger row"
    lines = [f"warning: run {v.run}'s record changed after its verdict; shown from its {head}, not verdict.json:",
             *(f"  {c}" for c in changed)]
    if row is None:
        return [*lines, "finding: none entered (benchcard ledger --verify)"]
    return [*lines, f"{row.card} v{row.version} · run {row.run} · {row.rig}",
            f"finding: {row.finding} → {row.outcome} (as the ledger row says)",
            *(f"  clause {c.metric} {c.test} ({c.variant}): {'holds' if c.holds else 'does not hold'}"
              for c in known(row.clauses) or ()),
            f"ledger: seq {row.seq} · {row.at[:19]}Z · {row.hash[:19]}…"]


def judgement_line(v: VerdictFile) -> list[str]:
    """A replication's judgement against its original (verdict/_replication.py); none for any other run."""
    j = known(v.replication)
    if j is None:
        return []
    kind = "transfer" if j.transfer else "replication"
    return [f"{kind} of run {j.original}: {j.text}",
            f"  rule fixed before the run: {j.rule} ({j.rule_digest[:19]}…)"]


def _probe_look_line(lk: Look) -> str:
    """A probe's look in words: its statistic is the mean score, its `boundary` the least mean that passes the
    gate there and `lower` the greatest that fails it, either out of reach with too few cells at that look's
    level. `boundary n/a` said none of this, and the failing side was not shown at all."""
    return (f"  look {lk.look}: {lk.cells:,} cells · mean score {fixed(lk.statistic, missing=UNMEASURED)} · "
            f"{gate_side('pass', lk.boundary, '≥', lk.cells)}, {gate_side('fail', lk.lower, '≤', lk.cells)} · "
            f"{lk.decision}")


def verdict_lines(v: VerdictFile, as_ab: bool = False) -> list[str]:
    """The verdict as the terminal shows it, line by line (the CLI only prints them); a comparison's as an ab
    run's when `as_ab` (`benchcard compare`)."""
    lines = [f"{v.card} v{v.version} · run {v.run} · {v.rig}", *effect_lines(v, as_ab),
             f"finding: {v.finding} → {v.outcome}", f"  {v.why}"]
    lines.append("cells: " + " · ".join(f"{k} {n}" for k, n in msgspec.structs.asdict(v.counts).items()))
    looks = known(v.sequential)
    if looks:
        lines.append(f"looks: {looks.line}")
        lines.extend(_probe_look_line(lk) if isinstance(v, ProbeVerdict) else
                     f"  look {lk.look}: {lk.cells:,} cells · statistic {fixed(lk.statistic, missing=UNMEASURED)} · "
                     f"boundary {fixed(lk.boundary)} · {lk.decision}" for lk in looks.taken)
    if isinstance(v, AbVerdict):
        for note in v.notes:
            lines.append(f"  note: {note}")
    if isinstance(v, AbVerdict) and (v.kind == "ab" or as_ab):
        lines.extend(_ab_lines(v))
    elif isinstance(v, ProbeVerdict):
        lines.append(f"score {fixed(v.score)} · {v.passes} pass · Wilson {level(float(v.alpha))} {ci(v.score_ci)}")
        lines.extend(f"  {line}" for line in v.rule_lines)
    human = known(v.human)
    if human:
        kappa = human.kappa
        lines.append(f"human grades: {human.graded} graded · agreement {fixed(human.agreement)} · Cohen's kappa "
                     f"{fixed(kappa) if kappa is not None else 'undefined (one category only)'} · "
                     f"{len(human.disagreements)} disagreement(s)")
        for d in human.disagreements:
            note = f" — {d.note}" if d.note else ""
            lines.append(f"  {d.cell} {d.fixture} ({d.variant}): auto {fixed(d.auto_score)}, "
                         f"human {d.human_grade}{note}")
    lines.extend(judge_lines(known(v.judge)))
    lines.extend(judgement_line(v))
    if known(v.scratch):
        lines.append("scratch: a trial verdict, not entered in the ledger")
    else:
        led = known(v.ledger)
        at, digest = (str(led.at)[:19], str(led.hash)[:19]) if led else ("", "")
        lines.append(f"ledger: seq {led.seq if led else None} · {at}Z · {digest}…")
    return lines

