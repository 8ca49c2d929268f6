"""`benchcard compare` with its plots: the same per-sample paired-difference figures a run's page shows.

The comparison itself is `benchcard.compare`'s; the figures are drawn here because plots
belong to the publishing stage. A figure has one row per sample, so above `MAX_PLOTTED_SAMPLES` samples none is
drawn and the comparison says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchcard.compare import Comparison, RuleOptions, compare
from benchcard.project import Project
from benchcard.publish._plots import draw_plots
from benchcard.publish._runs import Run
from benchcard.verdict.table import TABLE_FILE

__all__ = ["MAX_PLOTTED_SAMPLES", "RuleOptions", "compare_and_plot"]  # RuleOptions: the command's one import

MAX_PLOTTED_SAMPLES = 100


def compare_and_plot(a: Path, b: Path, rule: RuleOptions, *, project: Project | None = None,
                     out: Path | str | None = None, enter_ledger: bool = False,
                     names: Sequence[str] = (), gate: bool = False) -> Comparison:
    """`compare`, then one SVG per (variant, gap clause) into the comparison's folder; with `gate`, the comparison
    reports its gate's decision too (`Comparison.with_gate`)."""
    done = replace(compare(a, b, rule, project=project, out=Path(out) if out else None, enter_ledger=enter_ledger,
                           names=names), with_gate=gate)
    if done.samples > MAX_PLOTTED_SAMPLES:
        return replace(done, plot_note=f"no plots: {done.samples:,} samples are more than a per-sample figure "
                                       f"shows ({MAX_PLOTTED_SAMPLES} at most)")
    import pandas as pd

    run = Run(card="compare", version=0, run_id=done.file.run, folder=done.out_dir, verdict_file=done.file,
              table=pd.read_csv(done.out_dir / TABLE_FILE))
    drawn = draw_plots(run, None, done.out_dir, "")
    return replace(done, plots=tuple(done.out_dir / str(p["src"]) for p in drawn))
