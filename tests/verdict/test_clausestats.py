"""The statistics a card's clauses need from one run (verdict/clausestats.py): one gap per variant and clause
metric, the baseline's noise floor, truncated cells bounded at the worst case, the seeded bootstrap, and a gap
that cannot be computed named with its reason."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from benchcard.card.model import Card
from benchcard.project import Project
from benchcard.stats import paired as stats
from benchcard.stats.crossed import crossed
from benchcard.stats.resample import bootstrap_intervals
from benchcard.verdict.clausestats import Figures, ab_stats
from benchcard.verdict.runfolder import read_run_data

from ..helpers_verdict import BASE_A, VAR_A, ab_metrics, make_run, the_card


def _figures(project: Project, card: Card, run_dir: Path, seed: int = 5, n_resamples: int = 2000) -> Figures:
    data = read_run_data(run_dir, baseline="baseline")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return ab_stats(card, data, seed, n_resamples, pool).result()


def test_one_gap_per_variant_and_compared_metric_with_the_verdicts_own_figures(project: Project) -> None:
    card = the_card(project)
    figures = _figures(project, card, make_run(project, card, ab_metrics()))
    # the holds clause (abstains on ex-06) needs no gap: it counts repetitions
    assert figures.gap_keys == [("field_recall", None), ("unsupported_values", None)]
    assert set(figures.gaps) == {("A", ("field_recall", None)), ("A", ("unsupported_values", None))}
    g = figures.gaps[("A", ("field_recall", None))]
    assert g.error is None and g.truncated == 0 and g.obs is g.low is g.high  # nothing to bound
    want = crossed(np.array(BASE_A), np.array(VAR_A))
    assert g.obs is not None and g.obs.gap[0] == pytest.approx(want.gap[0])
    assert g.flip_draws[id(g.obs)] is None  # six fixtures: the exact sign-flip
    assert g.flips[id(g.obs)] == pytest.approx(2 / 64)
    floor = figures.floors[("field_recall", None)]
    assert floor == stats.noise_floor(np.array(BASE_A), card.win.alpha)  # type: ignore[union-attr]
    d = stats.fixture_differences(np.array(BASE_A), np.array(VAR_A))
    assert g.boot == pytest.approx(bootstrap_intervals([d], 2000, 5, 0.05)[0])
    assert (figures.seed, figures.n_resamples) == (5, 2000)


def test_truncated_cells_are_bounded_at_the_metrics_ends_against_the_claim(project: Project) -> None:
    card = the_card(project)
    status = {("A", "ex-01", 0): "truncated", ("baseline", "ex-02", 1): "truncated"}
    g = _figures(project, card, make_run(project, card, ab_metrics(), status=status)).gaps[
        ("A", ("field_recall", None))]
    assert g.truncated == 2 and g.low is not None and g.high is not None and g.obs is not None
    # low: the variant's cut-off cell at the metric's lowest (0), the baseline's at its highest (1)
    assert g.var_low is not None and g.var_low[0, 0] == 0.0 and g.base_low is not None and g.base_low[1, 1] == 1.0
    assert g.var_high is not None and g.var_high[0, 0] == 1.0 and g.base_high is not None and g.base_high[1, 1] == 0.0
    assert g.low.gap[0] < g.obs.gap[0] < g.high.gap[0]
    assert {id(g.obs), id(g.low), id(g.high)} == set(g.flips)  # each bound has its own sign-flip


def test_a_metric_the_scorer_never_gave_is_a_gap_with_its_reason(project: Project) -> None:
    card = the_card(project)
    metrics = ab_metrics()
    del metrics["unsupported_values"]
    figures = _figures(project, card, make_run(project, card, metrics))
    g = figures.gaps[("A", ("unsupported_values", None))]
    assert g.error == "the scorer gave no 'unsupported_values' for any cell" and g.obs is None and g.boot is None
    assert figures.floors[("unsupported_values", None)] is None
    assert figures.gaps[("A", ("field_recall", None))].error is None  # the other clause is judged as ever


def test_no_fixture_scored_in_both_arms_is_a_gap_that_cannot_be_computed(project: Project) -> None:
    card = the_card(project)
    status = {("A", f, r): "failed" for f in ("ex-01", "ex-02", "ex-03", "ex-04", "ex-05", "ex-06") for r in range(3)}
    g = _figures(project, card, make_run(project, card, ab_metrics(), status=status)).gaps[
        ("A", ("field_recall", None))]
    assert g.obs is None and g.error is not None and "fixture" in g.error
