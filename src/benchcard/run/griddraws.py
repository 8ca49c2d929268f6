"""The per-block draws of a run's plan (`grid._planned`), made again as arrays for the verdict's check.

`grid._planned` shuffles the blocks with `random.Random`, then, block by block, shuffles the variants and draws
a 40-bit id per cell: Python work per cell, which the verdict repeats over 10⁵ cells on the thread that competes
with reading the run. `random.Random` is the Mersenne Twister, and numpy's `MT19937` gives the same 32-bit
words from the same state; so the words after the block shuffle are drawn in one call and walked the way
`random` would use them: `_randbelow(n)` takes the top k bits of a word (k = n.bit_length()) and draws again
while they are ≥ n, and `getrandbits(40)` is one word and the top 8 bits of the next. The rejections make a
block's first word depend on every block before it; "the block after the one starting at word p" is a
function of p, found for every p at once; the walk from the first word is then a few list look-ups a block.

A repeated id makes `grid._planned` draw again, which this walk does not follow: then `grid_columns` says so
(None), and the caller uses `grid._planned`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class GridColumns:
    """A plan in call order: each cell's 40-bit id, its variant (index into the card's variant names) and its
    block (index into `blocks`, the shuffled (fixture, repetition) pairs)."""

    ids: npt.NDArray[np.uint64]
    variant: IntArray
    block: IntArray
    blocks: list[tuple[str, int]]


def _next_accepted(words: npt.NDArray[np.uint32], n: int) -> IntArray:
    """For each position p (and one past the end), the first position q ≥ p whose word `_randbelow(n)` accepts
    (its top n.bit_length() bits < n); len(words) where there is none."""
    k = n.bit_length()
    size = words.size
    accepted = (words >> np.uint32(32 - k)) < n
    where = np.where(accepted, np.arange(size, dtype=np.int64), size)
    out = np.empty(size + 1, dtype=np.int64)
    out[:size] = np.minimum.accumulate(where[::-1])[::-1]
    out[size] = size
    return out


def grid_columns(rng: random.Random, blocks: list[tuple[str, int]], n_variants: int) -> GridColumns | None:
    """The rest of `grid._planned` after its block shuffle, from `rng`'s state then: None if a cell id repeats
    (the Python walk then draws again and this one would differ)."""
    state = rng.getstate()[1]
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": np.array(state[:624], dtype=np.uint32),
                                                         "pos": state[624]}}
    n_blocks = len(blocks)
    steps = list(range(n_variants, 1, -1))  # the bounds of the shuffle's _randbelow calls, in order
    per_block = 2 * n_variants + sum(2 * (1 << s.bit_length()) // s for s in steps) + 8  # ample on average
    words = np.empty(0, dtype=np.uint32)
    while True:
        more = max(1024, n_blocks * per_block - words.size)
        words = np.concatenate((words, bits.random_raw(more).astype(np.uint32)))
        size = words.size
        nexts = {s: _next_accepted(words, s) for s in set(steps)}
        walk = [nexts[s].tolist() for s in steps]
        starts_list, p = [], 0
        for _ in range(n_blocks):  # a few list look-ups per block
            starts_list.append(p)
            for step in walk:
                p = step[p] + 1
                if p > size:
                    break
            p += 2 * n_variants
            if p > size:
                break
        if p <= size:
            break  # every block's words are inside the buffer
    starts = np.asarray(starts_list, dtype=np.int64)
    order = np.tile(np.arange(n_variants, dtype=np.int64), (n_blocks, 1))
    rows = np.arange(n_blocks)
    at = starts
    for s in steps:  # random.shuffle: for i from n-1 down to 1, swap x[i] and x[_randbelow(i + 1)]
        at = nexts[s][at]
        j = (words[at] >> np.uint32(32 - s.bit_length())).astype(np.int64)
        i = s - 1
        held = order[rows, i].copy()
        order[rows, i] = order[rows, j]
        order[rows, j] = held
        at = at + 1
    first = at[:, None] + 2 * np.arange(n_variants, dtype=np.int64)[None, :]  # each cell's two id words
    low = words[first].astype(np.uint64)
    high = (words[first + 1] >> np.uint32(24)).astype(np.uint64)
    ids = (low | (high << np.uint64(32))).ravel()
    ordered = np.sort(ids)
    if ordered.size and (ordered[1:] == ordered[:-1]).any():
        return None
    return GridColumns(ids=ids, variant=order.ravel(), block=np.repeat(rows.astype(np.int64), n_variants),
                       blocks=blocks)


def hex_ids(ids: npt.NDArray[np.uint64], head: bytes = b"") -> list[bytes]:
    """Each 40-bit id as `grid._planned` writes it after its `c` (ten lowercase hex digits), after `head`."""
    shifts = np.arange(36, -1, -4, dtype=np.uint64)
    digits = ((ids[:, None] >> shifts[None, :]) & np.uint64(15)).astype(np.uint8)
    text = np.empty((ids.size, len(head) + 10), dtype=np.uint8)
    text[:, : len(head)] = np.frombuffer(head, dtype=np.uint8)
    text[:, len(head) :] = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[digits]
    out: list[bytes] = text.view(f"S{len(head) + 10}").ravel().tolist()
    return out


def cell_names(ids: npt.NDArray[np.uint64]) -> list[str]:
    """Each 40-bit id as its cell name (`c` and ten lowercase hex digits), as str: one array of code points,
    no object per digit."""
    shifts = np.arange(36, -1, -4, dtype=np.uint64)
    digits = ((ids[:, None] >> shifts[None, :]) & np.uint64(15)).astype(np.intp)
    points = np.empty((ids.size, 11), dtype=np.uint32)
    points[:, 0] = ord("c")
    points[:, 1:] = np.frombuffer(b"0123456789abcdef", dtype=np.uint8).astype(np.uint32)[digits]
    out: list[str] = points.view("<U11").ravel().tolist()
    return out
