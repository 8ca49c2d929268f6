"""The plan's draws made again as arrays (`run.griddraws`) are the draws `random.Random` makes in `grid._planned`,
word for word: the same cell ids, variant order and blocks, so the same assignment digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.records.rows import dumps_line
from benchcard.run.grid import _planned, _shuffled_blocks, assignment_digest, planned_assignment
from benchcard.run.griddraws import grid_columns, hex_ids

from ..helpers_verdict import AB_CARD, PROBE_CARD, make_project

VARIANTS = {
    2: 'variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
    3: 'variants: {baseline: "", A: "a\\n", B: "b\\n"}',
    5: 'variants: {baseline: "", A: "a\\n", B: "b\\n", "C, \\"quoted\\"": "c\\n", Ω: "d\\n"}',
}


@pytest.mark.parametrize("variants", [2, 3, 5])
@pytest.mark.parametrize("seed", [1, 7, 2**40 + 3])
def test_array_draws_are_the_python_draws(tmp_path: Path, variants: int, seed: int) -> None:
    text = AB_CARD.replace(VARIANTS[2], VARIANTS[variants]).replace("repetitions: 3", "repetitions: 4")
    fixtures = [f"ex-{i:02d}" for i in range(1, 30)] + ["ex,'30'", "ex-Ω"]
    project = make_project(tmp_path / "p", text, fixtures=fixtures)
    card = load_card(project.card_path("extract-ab"), project)
    rng, blocks = _shuffled_blocks(card, seed)
    columns = grid_columns(rng, blocks, len(card.variant_names()))
    assert columns is not None
    names = card.variant_names()
    got = [("c" + h.decode(), names[v], *blocks[b])
           for h, v, b in zip(hex_ids(columns.ids), columns.variant.tolist(), columns.block.tolist(), strict=True)]
    assert got == _planned(card, seed)
    written = b"".join(dumps_line(row) for row in planned_assignment(card, seed))
    assert assignment_digest(card, seed) == "sha256:" + hashlib.sha256(written).hexdigest()


def test_a_probe_has_no_variant_shuffle(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", PROBE_CARD.replace("repetitions: 5", "repetitions: 300"))
    card = load_card(project.card_path("say-negative"), project)
    written = b"".join(dumps_line(row) for row in planned_assignment(card, 3))
    assert assignment_digest(card, 3) == "sha256:" + hashlib.sha256(written).hexdigest()
