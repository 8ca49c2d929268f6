"""The grid of a run, fixed before the first call: cells, their opaque ids, and the order they are called in.

A cell is one (variant, fixture, repetition); a probe has one variant (`probe`) and one fixture (its own id), so
its cells are its repetitions. Cell ids are `c` + 10 hex digits drawn from the run's seeded RNG and say nothing
about what the cell holds.

The order is a seeded *blocked* shuffle: every (fixture, repetition) is a block holding one cell of each
variant, the blocks are shuffled, and so are the variants inside each block. Variants therefore interleave in
time — after any number of calls their counts differ by at most one block — so a drift during the run (a
provider's load, a silent model update) lands on every variant alike and cannot favour one.

The sealed request of a cell is the exact body its call sends. A provider that settles something per call
beyond the card (the local model's sampling seed) has a `planned_body(body, occurrence)`, given how many cells
before this one, in call order, hold the same body; what it returns is what is sealed, and then sent as it is.
Counting here, not at call time, makes a resumed run (which reads the bodies back) call with the same values.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from benchcard._util.hashing import canonical_json, seed_from
from benchcard.card.model import Card, FixtureValue
from benchcard.records.rows import AssignmentRow, RequestRow
from benchcard.run.providers.base import Provider

if TYPE_CHECKING:
    from benchcard.run.griddraws import GridColumns

CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text; only `estimate` uses it


@dataclass(frozen=True, slots=True)
class PlannedCell:
    cell: str
    variant: str
    fixture: str
    repetition: int  # 0-based
    order: int  # 0-based position in the call order


def grid_size(card: Card) -> int:
    """variants × fixtures × repetitions (a probe: repetitions)."""
    return len(card.variant_names()) * len(card.fixture_ids()) * card.repetitions


def default_seed(seal_root: str, started: datetime) -> int:
    """`seed_from(seal_root)` (fixed before any data exist) xor the run's start second: recorded in
    the manifest, different for every run of the same version."""
    return seed_from(seal_root) ^ int(started.timestamp())


def plan_cells(card: Card, seed: int) -> list[PlannedCell]:
    """Every cell of the grid, with its opaque id, in call order."""
    return [PlannedCell(cell, variant, fixture, rep, order)
            for order, (cell, variant, fixture, rep) in enumerate(_planned(card, seed))]


def _shuffled_blocks(card: Card, seed: int) -> tuple[random.Random, list[tuple[str, int]]]:
    """The run's RNG and its (fixture, repetition) blocks in call order: the first draws of every plan. A
    sequential card's blocks are shuffled within each stretch between two looks, so that every look sees whole
    repetitions of every fixture and variant, and nothing of the repetitions after it."""
    rng = random.Random(seed)
    fixtures = card.fixture_ids()
    if card.sequential is None:
        blocks = [(fixture, rep) for fixture in fixtures for rep in range(card.repetitions)]
        rng.shuffle(blocks)
        return rng, blocks
    blocks, start = [], 0
    for end in card.sequential.looks:
        stretch = [(fixture, rep) for fixture in fixtures for rep in range(start, end)]
        rng.shuffle(stretch)
        blocks += stretch
        start = end
    return rng, blocks


def _planned(card: Card, seed: int) -> list[tuple[str, str, str, int]]:
    """(cell, variant, fixture, repetition) in call order: the seeded draws every plan is made of, kept in one
    place (the verdict re-derives 10⁵ of them, so no object is built per cell here)."""
    rng, blocks = _shuffled_blocks(card, seed)
    shuffle, bits = rng.shuffle, rng.getrandbits
    variants = card.variant_names()
    seen: set[str] = set()
    cells: list[tuple[str, str, str, int]] = []
    for fixture, rep in blocks:
        order = list(variants)
        shuffle(order)
        for variant in order:
            cell = f"c{bits(40):010x}"
            while cell in seen:
                cell = f"c{bits(40):010x}"
            seen.add(cell)
            cells.append((cell, variant, fixture, rep))
    return cells


def planned_assignment(card: Card, seed: int) -> Iterator[AssignmentRow]:
    """The rows `sealed/assignment.jsonl` must hold for this card and seed, in call order: what the verdict
    re-derives, so that an assignment edited after the run (variant labels swapped) cannot be judged."""
    for c in plan_cells(card, seed):
        yield AssignmentRow(cell=c.cell, variant=c.variant, fixture=c.fixture, repetition=c.repetition, order=c.order)


def assignment_digest(card: Card, seed: int) -> str:
    """`file_digest` of the `sealed/assignment.jsonl` the runner writes for this card and seed (rows as
    `dumps_line` writes them), computed without building a row object per cell: the verdict's cheap check.
    The draws after the block shuffle are made as arrays (`griddraws`) unless a cell id repeats."""
    return assignment_digest_and_columns(card, seed)[0]


def assignment_digest_and_columns(card: Card, seed: int) -> tuple[str, GridColumns | None]:
    """`assignment_digest`, and the plan's columns it was computed from (None when a cell id repeated and the
    Python walk made them): a file with this digest holds exactly this plan, so the verdict need not decode it."""
    columns = assignment_columns(card, seed)
    return assignment_digest_of(card, seed, columns), columns


def assignment_columns(card: Card, seed: int) -> GridColumns | None:
    """The plan's columns, drawn as arrays (`griddraws`); None when a cell id repeated (the Python walk then
    draws again, and only it gives the plan)."""
    from benchcard.run.griddraws import grid_columns  # numpy: the verdict's, never the runner's import

    rng, blocks = _shuffled_blocks(card, seed)
    return grid_columns(rng, blocks, len(card.variant_names()))


def assignment_digest_of(card: Card, seed: int, columns: GridColumns | None) -> str:
    """`assignment_digest` from `assignment_columns(card, seed)`'s result: from the columns when there are
    some, else from the Python walk's rows."""
    if columns is not None:
        return _columns_digest(card, columns)
    variants = {v: msgspec.json.encode(v).decode() for v in card.variant_names()}
    fixtures = {f: msgspec.json.encode(f).decode() for f in card.fixture_ids()}
    h = hashlib.sha256()
    lines: list[str] = []
    for order, (cell, variant, fixture, rep) in enumerate(_planned(card, seed)):
        lines.append(f'{{"cell":"{cell}","variant":{variants[variant]},"fixture":{fixtures[fixture]},'
                     f'"repetition":{rep},"order":{order}}}\n')
        if len(lines) == 4096:
            h.update("".join(lines).encode("utf-8"))
            lines.clear()
    h.update("".join(lines).encode("utf-8"))
    return "sha256:" + h.hexdigest()


def _columns_digest(card: Card, plan: GridColumns) -> str:
    """`assignment_digest` from the plan's columns: each line's pieces laid side by side, one join."""
    import numpy as np

    from benchcard.run.griddraws import hex_ids

    n = plan.ids.size
    variants = np.empty(len(card.variant_names()), dtype=object)
    variants[:] = [b'","variant":' + msgspec.json.encode(v) + b',"fixture":' for v in card.variant_names()]
    fixtures = {f: msgspec.json.encode(f) for f in card.fixture_ids()}
    blocks = np.empty(len(plan.blocks), dtype=object)
    blocks[:] = [fixtures[f] + b',"repetition":%d,"order":' % rep for f, rep in plan.blocks]
    pieces = np.empty((n, 4), dtype=object)
    pieces[:, 0] = hex_ids(plan.ids, b'{"cell":"c')
    pieces[:, 1] = variants[plan.variant]
    pieces[:, 2] = blocks[plan.block]
    pieces[:, 3] = list(map(b"%d}\n".__mod__, range(n)))
    return "sha256:" + hashlib.sha256(b"".join(pieces.ravel().tolist())).hexdigest()


def messages_for(card: Card, variant: str, fixture_text: FixtureValue | None) -> list[dict[str, str]]:
    return card.messages(variant, fixture_text) if card.is_ab else card.messages()


def plan_rows(card: Card, cells: list[PlannedCell], provider: Provider, model: str, url: str
              ) -> Iterator[tuple[AssignmentRow, RequestRow]]:
    """The sealed rows of each cell, built one at a time: the exact body the provider will send (with what its
    `planned_body` adds, when it has one)."""
    texts: dict[str, FixtureValue] = {}
    seen: dict[bytes, int] = {}  # digest of a body → cells so far holding it (32 bytes a body, not its text)
    for c in cells:
        text = None
        if card.is_ab:
            text = texts.get(c.fixture)
            if text is None:
                text = texts[c.fixture] = card.fixture_value(c.fixture)
        body = provider.build_body(model, messages_for(card, c.variant, text), card.params, card.rig.effort)
        if provider.plans_bodies:
            key = hashlib.sha256(canonical_json(body)).digest()
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            body = provider.planned_body(body, occurrence)
        yield (
            AssignmentRow(cell=c.cell, variant=c.variant, fixture=c.fixture, repetition=c.repetition, order=c.order),
            RequestRow(cell=c.cell, provider=provider.config.name, url=url, body=body),
        )


# ---------------------------------------------------------------------------------------------------- estimate


@dataclass(frozen=True)
class Estimate:
    """What a run of a card will take: calls, tokens (input estimated from characters), and cost bounds."""

    calls: int
    input_tokens: int
    max_output_tokens: int
    max_cost: float | None  # every call using all of max_tokens; None without a configured price


def estimate(card: Card, model: str | None = None, prices: Mapping[str, Any] | None = None) -> Estimate:
    """A cheap, call-free estimate: input tokens ≈ characters / 4; output bounded by `max_tokens`.

    `prices` is `Project.config().prices` (benchcard.yaml); the model defaults to the card's rig.
    """
    model = model or card.rig.model
    chars = 0
    for variant in card.variant_names():
        for fixture in card.fixture_ids():
            text = card.fixture_value(fixture) if card.is_ab else None
            chars += sum(len(m["content"]) for m in messages_for(card, variant, text))
    calls = grid_size(card)
    input_tokens = -(-chars * card.repetitions // CHARS_PER_TOKEN)
    max_output = int(card.params["max_tokens"]) * calls
    price = (prices or {}).get(model)
    max_cost = None
    if price is not None:
        max_cost = (input_tokens * price.input + max_output * price.output) / 1_000_000
    return Estimate(calls, input_tokens, max_output, max_cost)
