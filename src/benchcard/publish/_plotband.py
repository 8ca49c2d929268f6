"""Which interval a plot draws around the gap, and what it is called.

Where a run has a verdict, the band is the verdict's own: the calibrated interval of verdict.json (fixture
and run-to-run variance, crossed.py and worstcase.py), read through `verdictfile`'s structs, or the ledger
row's figures when the file was edited after its row. The plain paired t interval is narrower; drawn beside
a verdict it could exclude 0 where the verdict says "not shown". Only a run with no verdict yet gets the
paired t interval, and is labelled so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec

from benchcard.publish._judgedby import ClauseRef
from benchcard.publish._runs import Run
from benchcard.records.verdictfigures import MetricFigures, VariantFigures, known
from benchcard.records.verdictfile import AbVerdict

CALIBRATED = "calibrated"
PAIRED_T = "paired t"


@dataclass(frozen=True)
class Band:
    """The gap and the interval a plot draws, with where they come from (`kind`: CALIBRATED or PAIRED_T)."""

    kind: str
    gap: float
    ci_low: float
    ci_high: float
    alpha: float
    p_signflip: float
    no_interval: str | None = None  # why none is drawn (zero spread, one fixture)
    bound: tuple[str, float] | None = None  # a guard's one-sided bound the verdict compared with its margin
    truncated: int = 0
    bounded_gaps: tuple[float, float] | None = None  # the gap with truncated cells at the worst and best case

    @property
    def name(self) -> str:
        """The interval in words, as the caption and the alt text name it."""
        if self.kind == CALIBRATED:
            return "the verdict's calibrated interval (fixture and run-to-run variance)"
        return "the paired t interval, not the verdict's"


def paired_band(gap: Any) -> Band:
    """A run with no verdict: the plain paired t interval of `stats.paired_gap`."""
    return Band(PAIRED_T, float(gap.gap), float(gap.ci_low), float(gap.ci_high), float(gap.alpha),
                float(gap.p_signflip), gap.no_interval)


def _figures(run: Run, name: str, variant: str) -> tuple[VariantFigures | MetricFigures, float] | None:
    """The verdict's figures of `name` for `variant`, and its alpha: from verdict.json as typed, else from the
    ledger row (the judgement the chain anchors, when the file was edited after it)."""
    metric: MetricFigures | None = None
    first = variant
    alpha: float | int | None = None
    if isinstance(run.verdict_file, AbVerdict):
        metric = run.verdict_file.metrics.get(name)
        first, alpha = (run.verdict_file.variants or [variant])[0], run.verdict_file.alpha
    elif isinstance(run.edited_file, AbVerdict) and run.ledger_row is not None:
        row = (known(run.ledger_row.metrics) or {}).get(name)
        try:  # a row's figures read as the verdict's; a row without the means cannot be
            metric = msgspec.convert(msgspec.to_builtins(row), MetricFigures) if row is not None else None
        except msgspec.ValidationError:
            metric = None
        first, alpha = (run.edited_file.variants or [variant])[0], run.edited_file.alpha
    if metric is None:
        return None
    figures = metric.per_variant(first).get(variant)
    if figures is None or not isinstance(known(figures.gap), int | float):
        return None
    return figures, float(alpha) if isinstance(alpha, int | float) and 0 < alpha < 1 else 0.05


def verdict_band(run: Run, clause: ClauseRef, variant: str) -> Band | None:
    """The verdict's gap and calibrated interval for one clause and variant, or None without a verdict."""
    metric, fixture = clause.metric, clause.fixture
    found = _figures(run, metric if not fixture else f"{metric} on {fixture}", variant)
    if found is None:
        return None
    g, alpha = found
    gap_value = known(g.gap)
    gap = float(gap_value) if gap_value is not None else math.nan
    ci = known(g.ci)
    flip = known(g.p_signflip)
    no_interval = None
    if isinstance(ci, list) and len(ci) == 2:  # an end written null: nothing bounds it (one repetition, …)
        low, high = (-math.inf if ci[0] is None else ci[0]), (math.inf if ci[1] is None else ci[1])
    else:  # no interval at all: the standard error was zero
        low, high = math.nan, math.nan
        n = known(g.n_fixtures)
        no_interval = ("one fixture: no spread can be measured" if n is not None and n < 2
                       else "every fixture moved alike: zero spread is no measure of the uncertainty")
    bound = None
    test = clause.test
    if test in ("not_rises", "not_falls"):
        side, value = (("upper", known(g.upper_one_sided)) if test == "not_rises"
                       else ("lower", known(g.lower_one_sided)))
        bound = (side, float(value)) if isinstance(value, int | float) else None
    bounded = known(g.bounded_gaps) or []
    worst = [float(x) for x in bounded if x is not None]
    return Band(CALIBRATED, gap, float(low), float(high), alpha,
                float(flip) if isinstance(flip, int | float) else math.nan, no_interval, bound,
                int(known(g.truncated) or 0), (worst[0], worst[1]) if len(worst) == 2 else None)
