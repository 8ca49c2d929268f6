"""Replications on the pages: a run card's original run beside each of its replications (date, rig, finding, the
gap with its interval, on one axis), a probe rerun's drift against the original, and the ledger's replication
rows marked.

A replication run names its original in its manifest (`replicates`, `records.replication.ReplicaLink`: the run,
the hash of its ledger row, whether the rerun went to another rig, a *transfer*); its verdict records the
judgement under the rule fixed before the rerun (`replication`), which the pages show as written. The figure's
prediction interval is the default rule's (`stats.replication`) over the two verdict files
(`records/replicationinput.run_gap`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec import UnsetType

from benchcard._util.names import visible
from benchcard._util.numfmt import DASH, fixed, written_interval
from benchcard.publish._plots import NARROW_FONT, NARROW_IN, WIDE_IN, figure_rc
from benchcard.publish._runs import Run
from benchcard.records.replication import SEQUENTIAL_RULE_NAME, ReplicaLink, ReplicationJudgement
from benchcard.records.replicationinput import run_gap
from benchcard.stats.replication import (
    DEFAULT_RULE,
    NOT_REPLICATED,
    REPLICATED,
    ReplicationFinding,
    replication_finding,
)


def link_of(run: Run) -> ReplicaLink | None:
    """The original a run replicates (its manifest's `replicates`), None for a run that replicates none."""
    return run.manifest.replicates if run.manifest is not None else None


def links(runs: Sequence[Run]) -> dict[str, ReplicaLink]:
    """Each replication run's id → its link."""
    return {r.run_id: link for r in runs if (link := link_of(r)) is not None}


def recorded(run: Run) -> ReplicationJudgement | None:
    """The judgement a replication's verdict recorded against its original, None when it has none."""
    judged = run.verdict_file.replication if run.verdict_file is not None else None
    return None if judged is None or isinstance(judged, UnsetType) else judged


def is_transfer(replica: Run) -> bool:
    """Sent to another rig than the original's (the link says so): a transfer, not a rerun on the same rig."""
    link = link_of(replica)
    return link is not None and link.transfer


def _role(replica: Run) -> str:
    return "transfer" if is_transfer(replica) else "rerun"


def _judgement(original: Run, replica: Run) -> ReplicationFinding | None:
    """The default rule over the two verdicts: the prediction interval the figure draws behind the rerun."""
    if original.verdict_file is None or replica.verdict_file is None:
        return None
    written = recorded(replica)
    if written is not None and written.rule == SEQUENTIAL_RULE_NAME:  # judged on the decisions: no gap interval
        return None
    return replication_finding(run_gap(original.verdict_file), run_gap(replica.verdict_file), DEFAULT_RULE)


def replication_line(replica: Run) -> tuple[str, str]:
    """The replication's finding against its original and its line, as its verdict recorded it; else why there
    is none yet."""
    written = recorded(replica)
    if written is not None:
        return written.finding, written.text  # recorded as "finding: why." (verdict/_replication.py)
    return "", "Not judged against the original yet: the rerun has no verdict."


def _ab_row(run: Run, role: str, original: Run | None) -> dict[str, Any]:
    gap = run_gap(run.verdict_file) if run.verdict_file is not None else None
    ci = _written_ci(run)
    ci_text = written_interval(ci, missing=DASH) if isinstance(ci, list) else "no interval"
    finding, text = replication_line(run) if original is not None else ("", "")
    return {"role": role, "run_id": run.run_id, "date": run.date or "undated", "rig": run.rig_line,
            "finding": run.finding or "awaiting its verdict", "gap": fixed(gap.gap if gap else None, missing=DASH),
            "ci": ci_text, "metric": gap.metric if gap else "",
            "replication": finding, "text": text if finding else "",
            "class": {REPLICATED: "holds", NOT_REPLICATED: "broken"}.get(finding, "")}


def ab_replications(original: Run, replicas: Sequence[Run], folder: Path, prefix: str) -> dict[str, Any] | None:
    """The original run beside its replications: a table row each and one figure (None without replications)."""
    if not replicas:
        return None
    rows = [_ab_row(original, "original", None)]
    judged = []
    for rep in sorted(replicas, key=lambda r: r.started):
        judged.append(_judgement(original, rep))
        rows.append(_ab_row(rep, _role(rep), original))
    name = f"{original.run_id}-replications.svg"
    narrow = name.removesuffix(".svg") + "-narrow.svg"
    drawn = draw_replications(folder / name, original, replicas, judged)
    draw_replications(folder / narrow, original, replicas, judged, narrow=True)
    return {"rows": rows, "src": prefix + name if drawn else None, "src_narrow": prefix + narrow if drawn else None,
            "rule": DEFAULT_RULE.name,
            "rule_digest": DEFAULT_RULE.digest(), "level": f"{DEFAULT_RULE.level:.0%}",
            "alt": "; ".join(f"{r['role']} {r['date']} ({r['rig']}): {r['finding']}, gap {r['gap']} {r['ci']}"
                             for r in rows)}


def draw_replications(path: Path, original: Run, replicas: Sequence[Run],
                      judged: Sequence[ReplicationFinding | None], *, narrow: bool = False) -> bool:
    """The gaps on one axis: a row per run (the original on top), its gap and verdict interval; behind each
    replication, the original's prediction interval for a rerun. False when no run has a gap to draw. `narrow`:
    the phone's figure, its labels at least 11 px as shown (plots.NARROW_FONT)."""
    runs = [original, *sorted(replicas, key=lambda r: r.started)]
    gaps = [run_gap(r.verdict_file) if r.verdict_file is not None else None for r in runs]
    if not any(g is not None and g.gap is not None for g in gaps):
        return False
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    font = NARROW_FONT if narrow else 10.5
    with matplotlib.rc_context(figure_rc(font)):
        fig = Figure(figsize=(NARROW_IN if narrow else WIDE_IN, 1.8 + 0.5 * len(runs)), layout="constrained")
        ax = fig.add_subplot()
        labels = []
        intervals = [None, *(j.interval if j is not None else None for j in judged)]
        for y, (run, gap, pi) in enumerate(zip(runs, gaps, intervals, strict=True)):
            labels.append(f"{'original' if y == 0 else _role(run)} {run.date}")
            if pi is not None and math.isfinite(pi.low) and math.isfinite(pi.high):
                ax.fill_betweenx([y - 0.3, y + 0.3], pi.low, pi.high, color="#9a9a9a", alpha=0.3, lw=0)
            ci = _ci(run)
            if ci is not None:
                ax.plot(ci, [y, y], color="#3b6fd8", lw=2.2)
            if gap is not None and gap.gap is not None:
                ax.scatter([gap.gap], [y], color="#1f4bb0", s=30, zorder=3)
        ax.axvline(0.0, color="#222222", lw=0.8)
        ax.set_yticks(list(range(len(runs))), labels)
        ax.invert_yaxis()
        metric = visible(gaps[0].metric) if gaps[0] is not None and gaps[0].metric else "first clause"
        ax.set_xlabel(f"gap of {metric}" if narrow else f"gap of {metric}, with each verdict's interval")
        ax.set_title("The original and its reruns", loc="left", fontsize=font + 1.0)
        ax.grid(axis="x", color="#dddddd", lw=0.6)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.savefig(path, format="svg", metadata={"Date": None})
    return True


def _written_ci(run: Run) -> object:
    """The first clause's interval as the run's verdict.json writes it: an end null where nothing bounds it (∓∞),
    None for no interval or no verdict; the table shows it so, the plot draws only a finite one (`_ci`)."""
    clauses = getattr(run.verdict_file, "clauses", None)
    return getattr(clauses[0], "ci", None) if clauses else None


def _ci(run: Run) -> list[float] | None:
    ci = _written_ci(run)
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, int | float) and math.isfinite(x) for x in ci):
        return [float(ci[0]), float(ci[1])]
    return None
