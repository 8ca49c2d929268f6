"""The SVG figure of a sequential run's looks (matplotlib): the statistic at each look against that look's
boundaries, on the run's evidence page once its verdict is given (before it, the looks would unblind the run).

An ab run's statistic is its first clause's, in the units of `stats.sequential` (a win always "up"); a probe's is
its mean score, drawn against the means that would have passed or failed its gate at each look and the gate.
A statistic beyond the frame (held as ±40 in the manifest: beyond every boundary), the futility test's too, is drawn
on its edge, marked. A look with no statistic (null in the manifest: no gap could be measured yet, e.g. after one
repetition) has no point, and its row says `none`; so does its futility statistic where the futility test was taken.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchcard._util.numfmt import DASH, UNMEASURED, fixed
from benchcard.publish._plots import figure_rc
from benchcard.publish._runs import Run
from benchcard.records.rows import Look, Manifest, stop_line

FILE = "looks.svg"
BEYOND = 40.0  # a z the manifest holds as ±40 is beyond every boundary (`verdict/looks.py`)


def draw_looks(run: Run, folder: Path, gate: float | None = None) -> dict[str, Any] | None:
    """Draw `looks.svg` into `folder` (the run's evidence folder of the site) and return what the page says of
    it; None for a run that is not sequential, took no look, or has no verdict yet. `incomplete`: the verdict is
    not the deciding look's (more cells unscored than the card allows), so the page must not say it is."""
    m = run.manifest
    if m is None or m.sequential is None or not m.looks or run.judged_file is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    probe = m.kind == "probe"
    _draw(folder / FILE, m, probe, gate)
    rows = [{"look": lk.look, "cells": f"{lk.cells:,}", "statistic": _shown(lk.statistic, UNMEASURED),
             "boundary": _shown(lk.boundary), "lower": _shown(lk.lower), "futility": _shown(lk.futility),
             "futility_statistic": _futility_shown(lk), "decision": lk.decision} for lk in m.looks]
    line = stop_line(m.sequential, m.looks[-1])
    what = "mean score" if probe else "statistic of the first clause"
    alt = (f"The {what} at each of {len(m.looks)} look(s) taken, against each look's boundaries: {line}.")
    return {"src": FILE, "alt": alt, "line": line, "rows": rows, "probe": probe,
            "spending": m.sequential.spending_text, "alpha": fixed(m.sequential.alpha, missing=DASH),
            "looks": len(m.sequential.looks), "incomplete": run.finding == "incomplete"}


def _futility_shown(lk: Look) -> str:
    """The futility statistic's cell: `none` where the look took the futility test (it has a boundary) but could
    measure no gap, as the statistic's; `—` only where the test was not taken at this look (the last look, or a
    card without futility). Both read `—` before, so an unmeasured test looked like one never taken."""
    return _shown(lk.futility_statistic, UNMEASURED if lk.futility is not None else DASH)


def _shown(x: float | None, missing: str = DASH) -> str:
    """A look's figure in the table: `missing` where the look has none (the statistic: `none`, unmeasured)."""
    if x is None:
        return missing
    return ("beyond +40" if x > 0 else "beyond −40") if abs(x) >= BEYOND else fixed(x, missing=DASH)


def _clipped(values: list[float | None], lo: float, hi: float) -> list[float]:
    """Each value inside the frame (drawn on its edge when beyond it), NaN where there is none."""
    return [math.nan if v is None else min(max(v, lo), hi) for v in values]


def _frame(looks: list[Look], probe: bool) -> tuple[float, float]:
    """The y range: every boundary and every statistic that is not "certain", with a margin."""
    if probe:
        return -0.05, 1.05
    values = [v for lk in looks for v in (lk.statistic, lk.boundary, lk.lower, lk.futility, lk.futility_statistic)
              if v is not None and abs(v) < BEYOND]
    lo, hi = min([*values, 0.0]), max([*values, 0.0])
    pad = max(0.5, (hi - lo) * 0.12)
    return lo - pad, hi + pad


def _draw(path: Path, m: Manifest, probe: bool, gate: float | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    assert m.sequential is not None and m.looks is not None
    looks, schedule = m.looks, m.sequential
    lo, hi = _frame(looks, probe)
    with matplotlib.rc_context(figure_rc(10.5)):
        fig = Figure(figsize=(5.6, 3.4), layout="constrained")
        ax = fig.add_subplot()
        xs = [lk.look for lk in looks]
        for values, label, style in ((
                [lk.boundary for lk in looks], "passes at or above" if probe else "win boundary", "#1f4bb0"),
                ([lk.lower for lk in looks], "fails below" if probe else "loss boundary", "#b3261e"),
                ([lk.futility for lk in looks], "futility boundary", "#8a6d00")):
            pts = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None and abs(v) < BEYOND]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=style, lw=1.2, ls="--", marker="_",
                        markersize=14, label=label)
        if probe and gate is not None:
            ax.axhline(gate, color="#555555", lw=0.8, label=f"gate min_score {gate:g}")
        ys = _clipped([lk.statistic for lk in looks], lo, hi)
        ax.plot(xs, ys, color="#222222", lw=1.6, marker="o", label="mean score" if probe else "statistic")
        fs = _clipped([lk.futility_statistic for lk in looks], lo, hi)
        if not all(math.isnan(y) for y in fs):
            ax.plot(xs, fs, color="#8a6d00", lw=1.2, marker="s", markersize=4, label="futility statistic")
        for raw, drawn in (([lk.statistic for lk in looks], ys), ([lk.futility_statistic for lk in looks], fs)):
            for x, v, y in zip(xs, raw, drawn, strict=True):  # each point drawn on the frame's edge says so
                if v is not None and abs(v) >= BEYOND:
                    ax.annotate("beyond", (x, y), textcoords="offset points", xytext=(6, -4), fontsize=9)
        ax.set_xticks(range(1, len(schedule.looks) + 1),
                      [f"{k}\n{c:,} calls" for k, c in enumerate(schedule.cells, 1)])
        ax.set_xlim(0.6, len(schedule.looks) + 0.4)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("look")
        ax.set_title(f"looks ({schedule.spending_text}, α = {schedule.alpha:g})", loc="left", fontsize=11.5)
        ax.grid(axis="y", color="#dddddd", lw=0.6)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.legend(loc="outside lower center", ncol=2, frameon=False, fontsize=9.5)
        fig.savefig(path, format="svg", metadata={"Date": None})
