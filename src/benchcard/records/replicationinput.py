"""What a replication is judged on, read from a verdict.json: the run's finding and its first clause's gap and
run term (`stats.replication.RunGap`), for `benchcard replicate` and the pages alike."""

from __future__ import annotations

import math

from msgspec import UnsetType

from benchcard.records.verdictfile import AbVerdict, VerdictFile
from benchcard.stats.replication import RunGap


def _number(value: object) -> float | None:
    """A figure as a float, None where the file has none (unset, null, not finite)."""
    if isinstance(value, UnsetType) or value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def run_gap(verdict: VerdictFile) -> RunGap:
    """The first clause of the first variant (the claim the card makes) with the run's finding, its date (the
    verdict's `given_at`, its first ten characters) and its rig line. A probe's verdict, a clause without a gap
    (a `holds` clause first) or a verdict without clauses gives a RunGap with no gap: a replication of it is
    inconclusive, and a probe is compared by `stats.replication.probe_drift` instead."""
    date = "" if isinstance(verdict.given_at, UnsetType) else verdict.given_at[:10]
    if not isinstance(verdict, AbVerdict) or not verdict.clauses:
        return RunGap(verdict.finding, None, None, None, date=date, rig=verdict.rig)
    first = verdict.clauses[0]
    return RunGap(verdict.finding, _number(first.gap), _number(first.run_var), _number(first.df),
                  metric=first.metric, date=date, rig=verdict.rig)
