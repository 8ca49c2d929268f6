"""Replications on the pages: a run card's original run beside each of its replications (date, rig, finding, the
gap with its interval, on one axis), a probe rerun's drift against the original, and the ledger's replication
rows marked.

A replication run names its original in its manifest (`replicates`: the original run's id, or an object with
its `run` and the original ledger row's `hash`); a replication on another rig than the original's is a
*transfer*, and said so. The judgement shown is `stats.replication`'s default rule applied to the two runs'
verdict files (`records/replicationinput.run_gap`), or, for a probe, `probe_drift` over the two runs' scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchcard.publish.plots import NARROW_FONT, NARROW_IN, WIDE_IN
from benchcard.publish.render import fmt_num
from benchcard.publish.runs import Run
from benchcard.records.replicationinput import run_gap
from benchcard.stats.replication import (
    DEFAULT_RULE,
    NOT_REPLICATED,
    REPLICATED,
    Drift,
    ReplicationFinding,
    probe_drift,
    replication_finding,
)


@dataclass(frozen=True)
class ReplicaLink:
    """What a replication run's manifest says of its original: the run, and the original ledger row's hash."""

    original: str
    original_hash: str | None = None


def link_of(run: Run) -> ReplicaLink | None:
    """The original a run replicates, from its manifest's `replicates` (None for a run that replicates none)."""
    if run.folder is None:
        return None
    try:
        data = json.loads((run.folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("replicates") if isinstance(data, dict) else None
    if isinstance(value, str) and value:
        return ReplicaLink(value)
    if isinstance(value, dict) and isinstance(value.get("run"), str):
        digest = value.get("hash") or value.get("ledger_hash") or value.get("row_hash")
        return ReplicaLink(value["run"], digest if isinstance(digest, str) else None)
    return None


def links(runs: Sequence[Run]) -> dict[str, ReplicaLink]:
    """Each replication run's id → its link."""
    return {r.run_id: link for r in runs if (link := link_of(r)) is not None}


def is_transfer(original: Run, replica: Run) -> bool:
    """Another provider or model than the original's: a transfer, not a replication on the same rig."""
    a, b = original.rig, replica.rig
    return a is not None and b is not None and (a.provider, a.model) != (b.provider, b.model)


def _role(original: Run, replica: Run) -> str:
    return "transfer" if is_transfer(original, replica) else "rerun"


def _judgement(original: Run, replica: Run) -> ReplicationFinding | None:
    if original.verdict_file is None or replica.verdict_file is None:
        return None
    return replication_finding(run_gap(original.verdict_file), run_gap(replica.verdict_file), DEFAULT_RULE)


def replication_text(original: Run, replica: Run) -> str:
    """The replication's line against its original, or why there is none yet."""
    judged = _judgement(original, replica)
    return judged.text if judged is not None else "Not judged against the original yet: both need a verdict."


def _ab_row(run: Run, role: str, judged: ReplicationFinding | None) -> dict[str, Any]:
    gap = run_gap(run.verdict_file) if run.verdict_file is not None else None
    ci = _ci(run)
    ci_text = f"[{fmt_num(ci[0], 3)}, {fmt_num(ci[1], 3)}]" if ci is not None else "no interval"
    finding = judged.finding if judged is not None else ""
    return {"role": role, "run_id": run.run_id, "date": run.date or "undated", "rig": run.rig_line,
            "finding": run.finding or "awaiting its verdict", "gap": fmt_num(gap.gap if gap else None, 3),
            "ci": ci_text, "metric": gap.metric if gap else "",
            "replication": finding, "text": judged.text if judged is not None else "",
            "class": {REPLICATED: "holds", NOT_REPLICATED: "broken"}.get(finding, "")}


def ab_replications(original: Run, replicas: Sequence[Run], folder: Path, prefix: str) -> dict[str, Any] | None:
    """The original run beside its replications: a table row each and one figure (None without replications)."""
    if not replicas:
        return None
    rows = [_ab_row(original, "original", None)]
    judged = []
    for rep in sorted(replicas, key=lambda r: r.started):
        j = _judgement(original, rep)
        judged.append(j)
        rows.append(_ab_row(rep, _role(original, rep), j))
    name = f"{original.run_id}-replications.svg"
    narrow = name.removesuffix(".svg") + "-narrow.svg"
    drawn = draw_replications(folder / name, original, replicas, judged)
    draw_replications(folder / narrow, original, replicas, judged, narrow=True)
    return {"rows": rows, "src": prefix + name if drawn else None, "src_narrow": prefix + narrow if drawn else None,
            "rule": DEFAULT_RULE.name,
            "rule_digest": DEFAULT_RULE.digest(), "level": f"{DEFAULT_RULE.level:.0%}",
            "alt": "; ".join(f"{r['role']} {r['date']} ({r['rig']}): {r['finding']}, gap {r['gap']} {r['ci']}"
                             for r in rows)}


def _scores(run: Run) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {}
    for row in run.scores:
        out.setdefault(row.fixture, []).append(row.score)
    return out


def probe_drift_of(original: Run, replica: Run) -> Drift | None:
    """A probe rerun against its original (None when either has no scored repetition)."""
    try:
        return probe_drift(_scores(original), _scores(replica), original_date=original.date,
                           new_date=replica.date)
    except ValueError:
        return None


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
    with matplotlib.rc_context({"svg.hashsalt": "benchcard", "svg.fonttype": "none", "font.size": font,
                                "font.family": ["DejaVu Sans", "sans-serif"]}):
        fig = Figure(figsize=(NARROW_IN if narrow else WIDE_IN, 1.8 + 0.5 * len(runs)), layout="constrained")
        ax = fig.add_subplot()
        labels = []
        intervals = [None, *(j.interval if j is not None else None for j in judged)]
        for y, (run, gap, pi) in enumerate(zip(runs, gaps, intervals, strict=True)):
            labels.append(f"{'original' if y == 0 else _role(original, run)} {run.date}")
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
        metric = gaps[0].metric if gaps[0] is not None and gaps[0].metric else "first clause"
        ax.set_xlabel(f"gap of {metric}" if narrow else f"gap of {metric}, with each verdict's interval")
        ax.set_title("The original and its reruns", loc="left", fontsize=font + 1.0)
        ax.grid(axis="x", color="#dddddd", lw=0.6)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.savefig(path, format="svg", metadata={"Date": None})
    return True


def _ci(run: Run) -> list[float] | None:
    verdict = run.verdict_file
    clauses = getattr(verdict, "clauses", None)
    ci = getattr(clauses[0], "ci", None) if clauses else None
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, int | float) and math.isfinite(x) for x in ci):
        return [float(ci[0]), float(ci[1])]
    return None
