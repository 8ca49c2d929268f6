"""The verdict's seeded resampling (stats/resample.py): bootstrap intervals that are deterministic, the same
on a pool as one after another, and close to the t interval on many fixtures; the sign patterns' hit counts."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from benchcard.stats import paired as stats
from benchcard.stats.resample import bootstrap_intervals, signflip_hits, signflip_window_hits

from ..helpers_verdict import BASE_A as CASE_A_BASE
from ..helpers_verdict import VAR_A as CASE_A_VAR

BASE_A, VAR_A = np.array(CASE_A_BASE, dtype=float), np.array(CASE_A_VAR, dtype=float)


def cluster_bootstrap(baseline: np.ndarray, variant: np.ndarray, n_resamples: int = 10_000, *,
                      seed: int) -> tuple[float, float]:
    """The verdict's fixture bootstrap (resample.Resamples through clausestats) of one pair, at α = 0.05."""
    interval = bootstrap_intervals([stats.fixture_differences(baseline, variant)], n_resamples, seed, 0.05)[0]
    assert interval is not None
    return interval


def test_equal_differences_give_no_bootstrap_interval() -> None:
    """Every fixture moved by +0.25 (or one fixture): each resample's mean is 0.25, a zero-width interval that
    measures nothing; it is None, as the t gives none without spread, and never [0.25, 0.25]."""
    equal = np.full(6, 0.25)
    assert bootstrap_intervals([equal, np.array([0.5]), np.array([0.0, 0.5])], 2000, 7, 0.05)[:2] == [None, None]
    assert bootstrap_intervals([np.array([0.0, 0.5])], 2000, 7, 0.05)[0] == (0.0, 0.5)


def test_bootstrap_bounds_are_means_of_the_differences_as_written() -> None:
    """Each bound is the float64 mean of some resample of the differences, as the gap is: gathered as float32, a
    bound read 0.0958333358168602 where the resample's mean is 0.09583333333333335 (verdict.json wrote bounds
    such as 0.66666669 beside a gap of 0.66666667). 41 resamples put the 2.5 % and 97.5 % quantiles on draws."""
    diffs = np.array([0.1, 0.7, 2 / 3])
    means = {float(np.array([a, b, c]).mean()) for a in diffs for b in diffs for c in diffs}
    interval = bootstrap_intervals([diffs], 41, 7, 0.05)[0]
    assert interval is not None
    assert set(interval) <= means, (interval, sorted(means))


def test_bootstrap_is_deterministic_and_brackets_the_gap() -> None:
    a = cluster_bootstrap(BASE_A, VAR_A, seed=42)
    b = cluster_bootstrap(BASE_A, VAR_A, seed=42)
    gap = stats.paired_gap(BASE_A, VAR_A).gap
    assert a == b
    # Case A's resampled means take a few discrete values, so another seed may land on the same quantiles;
    # on continuous differences it does not.
    rng = np.random.default_rng(0)
    base, var = rng.random((40, 3)), rng.random((40, 3))
    assert cluster_bootstrap(base, var, seed=42) != cluster_bootstrap(base, var, seed=43)
    assert a[0] < gap < a[1]
    # d takes only the values 1/12 and 1/6: every resampled mean lies between them.
    assert a[0] >= 1 / 12 - 1e-12
    assert a[1] <= 1 / 6 + 1e-12


def test_bootstrap_on_a_pool_draws_the_same_chunks() -> None:
    """Chunks run side by side on threads give exactly the intervals of chunks run one after another."""

    from benchcard.stats.resample import CHUNK_ELEMENTS, Resamples

    rng = np.random.default_rng(9)
    diffs = [rng.normal(0.02, 0.2, 3000), rng.normal(0.0, 0.5, 3000), rng.normal(0.1, 0.1, 17)]
    resamples = 5000
    assert resamples > CHUNK_ELEMENTS // 3000  # several chunks
    alone = Resamples(diffs, resamples, 7).intervals(0.05)
    with ThreadPoolExecutor(max_workers=3) as pool:
        side_by_side = Resamples(diffs, resamples, 7, pool).intervals(0.05)
    assert alone == side_by_side
    # the first array alone, as the verdict's paired differences of a variant against a zero baseline
    assert alone[0] == cluster_bootstrap(np.zeros((3000, 1)), diffs[0][:, None], resamples, seed=7)


def test_bootstrap_chunks_agree_with_t_interval_on_many_fixtures() -> None:
    rng = np.random.default_rng(5)
    base = rng.random((5000, 3))
    var = np.clip(base + rng.normal(0.02, 0.3, base.shape), 0, 1)
    lo, hi = cluster_bootstrap(base, var, n_resamples=3000, seed=1)  # several chunks
    g = stats.paired_gap(base, var)
    width = g.ci_high - g.ci_low
    assert lo == pytest.approx(g.ci_low, abs=0.05 * width)  # F = 5000: the two intervals nearly coincide
    assert hi == pytest.approx(g.ci_high, abs=0.05 * width)


# ------------------------------------------------------------------------------------------- sign patterns


def _pattern_sums(d: np.ndarray, n_draws: int, seed: int) -> np.ndarray:
    """|Σ s_f d_f| of each draw, from the layout the docstring states, written out plainly (one block of groups):
    group g's draw i is 16-bit word g·n + i of the PCG64 stream, and its bit k keeps fixture 16·g + k."""
    groups = -(-d.size // 16)
    words = np.random.PCG64(seed).random_raw(-(-groups * n_draws // 4)).view(np.uint16)[: groups * n_draws]
    bits = (words.reshape(groups, n_draws)[:, :, None] >> np.arange(16)) & 1
    padded = np.zeros(groups * 16)
    padded[: d.size] = d
    kept = np.einsum("gnk,gk->n", bits.astype(float), padded.reshape(groups, 16))
    sums: np.ndarray = np.abs(2.0 * kept - d.sum())
    return sums


@pytest.mark.parametrize(("fixtures", "n_draws"), [(3, 50), (16, 999), (17, 1000), (40, 4001)])
def test_signflip_hits_counts_the_patterns_the_stream_gives(fixtures: int, n_draws: int) -> None:
    d = np.random.default_rng(fixtures).normal(0.1, 0.3, fixtures)
    sums = _pattern_sums(d, n_draws, seed=11)
    ordered = np.unique(sums)
    threshold = float(ordered[ordered.size // 2 - 1] + ordered[ordered.size // 2]) / 2  # between two draws' sums
    want = int((sums >= threshold).sum())
    assert 0 < want < n_draws  # the threshold splits the draws, so a wrong pattern shows
    assert signflip_hits(d, float(d.sum()), threshold, n_draws, 11) == want
    assert signflip_hits(d, float(d.sum()), 0.0, n_draws, 11) == n_draws  # every pattern reaches 0
    assert signflip_hits(d, float(d.sum()), float(np.abs(d).sum()) + 1.0, n_draws, 11) == 0  # none beyond Σ|d|


def test_window_hits_stop_at_the_draw_that_makes_the_needed_count() -> None:
    d = np.random.default_rng(3).normal(0.0, 0.3, 37)
    threshold = 0.8 * abs(float(d.sum()))
    hit = _pattern_sums(d, 5000, seed=2) >= threshold
    total = int(hit.sum())
    assert total > 20
    at = int(np.flatnonzero(hit)[19]) + 1  # the draw that makes 20 hits
    assert signflip_window_hits(d, float(d.sum()), threshold, 5000, 2, 20, 5000, 64) == (20, at)
    # a stop only before `stop_before`; otherwise, and when the count is never reached, every draw
    assert signflip_window_hits(d, float(d.sum()), threshold, 5000, 2, 20, at, 64) == (total, 5000)
    assert signflip_window_hits(d, float(d.sum()), threshold, 5000, 2, total + 1, 5000, 7) == (total, 5000)
