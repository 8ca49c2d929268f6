"""The index (one line per card, its latest outcome) and the ledger page (every row, its chain checked and a broken
one reported)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from benchcard.card.load import load_cards
from benchcard.project import Project
from benchcard.publish._index import ledger_context
from benchcard.publish.build import build_site
from benchcard.records import ledger
from benchcard.records.ledgerrow import LedgerRow

from ..helpers_site import (
    _norm,
    make_project,
    page,
)


def test_ledger_and_index(built: tuple[Project, Path]) -> None:
    project, out = built
    rows = ledger.read(project)
    p = page(out, "ledger.html")
    text = _norm(p.text)
    source = (out / "ledger.html").read_text(encoding="utf-8")
    body = source.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr") == len(rows) == 5
    for row in rows:
        assert row.date in text
    assert "non-result · incomplete" in text and "result · scored" in text
    assert "Chain verified when this page was built: 5 rows" in text
    for href in p.links():
        if "runs/" in href:
            assert (out / href).is_file()
    idx = _norm(page(out, "index.html").text)
    assert "non-result · incomplete" in idx
    assert "Answer with exactly one word, and nothing else" in idx
    index_rows = (out / "index.html").read_text().split("<tbody>")[1].count("<tr>")
    assert index_rows == len(load_cards(project))


def test_broken_ledger_chain_is_reported(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    lines = project.ledger_path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["score"] = 1.0
    lines[1] = json.dumps(row)
    project.ledger_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_site(project, tmp_path / "site")
    assert "The chain does not verify" in page(tmp_path / "site", "ledger.html").text
    for rel in ("index.html", "cards/emit-terminator/index.html"):  # the edited row's finding is shown, warned
        assert "The ledger does not verify. The findings on this page come from its rows" in _norm(
            page(tmp_path / "site", rel).text), rel


def test_a_rows_cost_that_is_an_upper_bound_is_shown_so_on_the_ledger_page() -> None:
    """A verdict whose cost priced cached input at the full input price (`cost_upper_bound`) reads `≤ $…` on the
    ledger page; a row without the field (every row written before it) reads as it did."""
    base = {"card": "c", "version": 1, "kind": "probe", "rig": "m · api", "run": "r", "cells": 4,
            "outcome": "result", "finding": "scored", "cost": 0.0123, "seal_root": None, "evidence": "results/c"}
    upper = msgspec.convert({**base, "cost_upper_bound": True}, LedgerRow)
    plain = msgspec.convert(base, LedgerRow)
    rows = ledger_context([upper, plain], [], {}, None)["rows"]
    assert [r["cost"] for r in rows] == ["≤ $0.01", "$0.01"]
