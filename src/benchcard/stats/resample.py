"""Seeded random draws for the verdict's resampling statistics: sign patterns and bootstrap resamples.

Both are seeded PCG64 streams, so the same seed and data always give the same figures. Sign patterns are
raw 64-bit words of the generator, read as 16-bit words, one per sixteen fixtures (a fraction of the cost of
`Generator.integers`); bootstrap indices come from `Generator.integers`, whose bounded draws are as fast as
any multiply-shift written here (measured).

Work is chunked so that memory stays bounded (about 32 MB of float64) whatever the fixture and draw counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor, Future

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: Elements per chunk when resampling.
CHUNK_ELEMENTS = 1 << 22


def signflip_hits(diffs: FloatArray, total: float, threshold: float, n_draws: int, seed: int) -> int:
    """How many of `n_draws` seeded sign patterns give |Σ s_f d_f| ≥ threshold.

    A pattern keeps fixture f (s_f = +1) where its bit is set, so Σ s_f d_f = 2·(sum of the kept d) − total.
    The kept sum is read from one 65,536-entry table per group of sixteen fixtures, one random 16-bit word per
    group: few, large numpy calls, which matters because the verdict runs this beside Python work and every
    call must win the GIL back.
    """
    groups = -(-diffs.size // 16)
    padded = np.zeros(groups * 16, dtype=np.float64)
    padded[: diffs.size] = diffs
    bit_of = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)
    byte_sums = padded.reshape(groups, 2, 8) @ bit_of.T  # [g, half, b]: sum of the kept d of that byte
    bits = np.random.PCG64(seed)
    hits = 0
    per_chunk = max(1, min(n_draws, CHUNK_ELEMENTS // 8))
    groups_per_block = max(1, min(CHUNK_ELEMENTS // per_chunk, CHUNK_ELEMENTS // 65536))
    for start in range(0, n_draws, per_chunk):
        m = min(per_chunk, n_draws - start)
        kept = np.zeros(m, dtype=np.float64)
        for g0 in range(0, groups, groups_per_block):
            block = min(groups_per_block, groups - g0)
            # tables[j, hi·256 + lo] = kept sum of the high byte hi plus that of the low byte lo
            tables = (byte_sums[g0 : g0 + block, 1, :, None] + byte_sums[g0 : g0 + block, 0, None, :]).reshape(
                block, 65536)
            count = block * m
            words = np.asarray(bits.random_raw(-(-count // 4))).view(np.uint16)[:count].reshape(block, m)
            for j in range(block):
                kept += np.take(tables[j], words[j])
        hits += int(np.count_nonzero(np.abs(2.0 * kept - total) >= threshold))
    return hits


def signflip_window_hits(diffs: FloatArray, total: float, threshold: float, n_draws: int, seed: int,
                         needed: int, stop_before: float, first_window: int) -> tuple[int, int]:
    """(hits, draws): the patterns of `signflip_hits`, drawn in windows of doubling size, stopping at the draw
    that makes `needed` hits if that draw comes before `stop_before` (and before the last); else every draw.

    Each window reads exactly the random words `signflip_hits` gives those draws (PCG64 advanced to them) and
    adds each group's kept sum as its table would (high byte's sum plus low byte's, then into the total), so
    the hits of any prefix of draws are the ones the full run counts there, bit for bit.
    """
    per_chunk = max(1, min(n_draws, CHUNK_ELEMENTS // 8))
    if per_chunk < n_draws:  # several chunks: the layout below is one chunk's
        return signflip_hits(diffs, total, threshold, n_draws, seed), n_draws
    m = n_draws
    groups = -(-diffs.size // 16)
    padded = np.zeros(groups * 16, dtype=np.float64)
    padded[: diffs.size] = diffs
    bit_of = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)
    byte_sums = padded.reshape(groups, 2, 8) @ bit_of.T  # [g, half, b]
    groups_per_block = max(1, min(CHUNK_ELEMENTS // per_chunk, CHUNK_ELEMENTS // 65536))
    # where group g's words start in the stream, in 16-bit words: its block's first 64-bit word, then row j
    row_start = []
    block_start = 0
    for g0 in range(0, groups, groups_per_block):
        block = min(groups_per_block, groups - g0)
        row_start += [block_start * 4 + j * m for j in range(block)]
        block_start += -(-(block * m) // 4)
    bits = np.random.PCG64(seed)
    origin = bits.state
    hits = 0
    start, window = 0, first_window
    while start < m:
        w = min(window, m - start)
        kept = np.zeros(w, dtype=np.float64)
        pair = np.empty(w, dtype=np.float64)
        for g in range(groups):
            offset = row_start[g] + start
            bits.state = origin
            bits.advance(offset // 4)
            skip = offset % 4
            words = np.asarray(bits.random_raw(-(-(skip + w) // 4))).view(np.uint16)[skip : skip + w]
            np.add(np.take(byte_sums[g, 1], words >> 8), np.take(byte_sums[g, 0], words & 255), out=pair)
            kept += pair
        hit = np.abs(2.0 * kept - total) >= threshold
        count = int(np.count_nonzero(hit))
        if hits < needed <= hits + count:  # once only: a stop declined at or after stop_before stays declined
            at = start + int(np.flatnonzero(hit)[needed - hits - 1]) + 1  # the draw that makes `needed`
            if at < m and at < stop_before:
                return needed, at
        hits += count
        start += w
        window *= 2
    return hits, m


class Resamples:
    """Bootstrap means of several arrays, drawn in seeded chunks, possibly still running on a pool.

    Arrays of the same length share one draw of indices (the draws depend only on the seed and the length),
    so each gets exactly the interval it would get alone, for one draw's cost. Chunk k of the resamples is
    drawn from its own generator seeded with (seed, k): the same figures whether the chunks run one after
    another or side by side. Elements are gathered as float64, as every other figure is computed: float32 copies
    saved about a tenth of the gather (0.36–0.44 s against 0.39–0.52 s per 10⁸ indices, and nothing
    measurable once the indices' draw is counted), and wrote bounds such as 0.66666669 beside a gap of
    0.66666667.
    """

    def __init__(self, diffs: Sequence[FloatArray], n_resamples: int, seed: int, pool: Executor | None = None):
        self.rows: list[tuple[FloatArray, int]] = [(np.empty(0), 0)] * len(diffs)  # (means, row) per array
        self.jobs: list[Future[None]] = []
        by_size: dict[int, list[int]] = {}
        for i, d in enumerate(diffs):
            by_size.setdefault(int(d.size), []).append(i)
        for n, members in by_size.items():
            arrays = [np.asarray(diffs[i], dtype=np.float64) for i in members]
            means = np.empty((len(members), n_resamples))
            for j, i in enumerate(members):
                self.rows[i] = (means, j)
            per_chunk = max(1, CHUNK_ELEMENTS // n)
            for k, start in enumerate(range(0, n_resamples, per_chunk)):
                args = (np.random.default_rng([seed, k]), arrays, means, start, min(per_chunk, n_resamples - start))
                if pool is None:
                    _chunk(*args)
                else:
                    self.jobs.append(pool.submit(_chunk, *args))

    def intervals(self, alpha: float) -> list[tuple[float, float] | None]:
        """The percentile interval of every array's mean, once every chunk is drawn; None for one of no width
        (equal differences, or one: every resample is the same, which measures nothing and is no certainty)."""
        for job in self.jobs:
            job.result()
        out: list[tuple[float, float] | None] = []
        for means, j in self.rows:
            low, high = np.quantile(means[j], [alpha / 2.0, 1.0 - alpha / 2.0])
            out.append((float(low), float(high)) if low < high else None)
        return out


def _chunk(rng: np.random.Generator, arrays: list[FloatArray], means: FloatArray, start: int,
           m: int) -> None:
    n = arrays[0].size
    idx = rng.integers(0, n, size=(m, n))
    for j, values in enumerate(arrays):
        means[j, start : start + m] = np.take(values, idx).mean(axis=1)


def bootstrap_intervals(diffs: Sequence[FloatArray], n_resamples: int, seed: int,
                        alpha: float) -> list[tuple[float, float] | None]:
    """Percentile intervals of the mean of each array in `diffs`, resampling its elements with replacement (None
    where the interval has no width: see `Resamples.intervals`)."""
    return Resamples(diffs, n_resamples, seed).intervals(alpha)
