"""`benchcard seal`'s core, `seal_card`: check, refuse a design that cannot win unless the card accepts it, seal;
the command line and `benchcard.seal_card` both call it, so they refuse and write the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import benchcard
from benchcard.card.sealing import seal_card
from benchcard.errors import SealError
from benchcard.project import Project

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project

MUST_WIN = AB_CARD.replace("  accept_cannot_win: true  # a test card: four fixtures cannot win\n", "")


def test_a_card_that_accepts_it_is_sealed_once_and_then_found_unchanged(tmp_path: Path) -> None:
    project = Project(make_ab_project(tmp_path / "proj"))
    first = seal_card(project, "tiny-ab")
    assert (first.card, first.version, first.path, first.written) == ("tiny-ab", 1, "keys/tiny-ab/v1.seal.json", True)
    written = json.loads((project.root / first.path).read_text(encoding="utf-8"))
    assert first.to_json() == {**written, "written": True, "path": "keys/tiny-ab/v1.seal.json",
                               "warnings": []}
    assert first.lines() == ["sealed tiny-ab v1 → keys/tiny-ab/v1.seal.json", f"root {written['root']}"]
    again = seal_card(project, str(project.root / "cards" / "tiny-ab.yaml"))  # a card named by its path
    assert not again.written and again.seal == first.seal
    assert again.lines()[0] == "already sealed, unchanged: tiny-ab v1 → keys/tiny-ab/v1.seal.json"


def test_a_design_that_cannot_win_is_refused_by_the_api_as_by_the_command(tmp_path: Path) -> None:
    """The same one line from `benchcard seal` and `benchcard.seal_card`, and no seal written by either."""
    root = make_ab_project(tmp_path / "proj", MUST_WIN)
    with pytest.raises(SealError) as refused:
        benchcard.seal_card("tiny-ab", root)
    said = str(refused.value)
    assert said.startswith("refusing to seal cards/tiny-ab.yaml: 4 fixtures × 3 repetitions with 1 variant(s) can "
                           "never win at α = 0.05")
    assert said.endswith("(or, for an A/A or pilot card, say so: win: {accept_cannot_win: true})")
    assert one_line_error(bc(root, "seal", "tiny-ab")) == f"error: {said}"
    assert not (root / "keys" / "tiny-ab" / "v1.seal.json").exists()


def test_a_problem_check_finds_is_refused_before_the_design_is_looked_at(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj", MUST_WIN)
    (root / "fixtures" / "tiny-ab" / "item-02.txt").write_bytes(b"")
    with pytest.raises(SealError, match=r"^refusing to seal: fixtures/tiny-ab/item-02.txt: fixture 'item-02' holds "
                                        r"no text"):
        seal_card(Project(root), "tiny-ab")


def test_a_version_sealed_already_is_only_compared_with_its_seal(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: sealing a version sealed before ran the design search (up to ~21 s on a large design) and threw its
    answer away; a seal that exists is compared, never searched again."""
    from benchcard.card import sealing
    from benchcard.card.load import load_card
    from benchcard.card.seal import seal

    root = make_ab_project(tmp_path / "proj", MUST_WIN)
    project = Project(root)
    seal(load_card(root / "cards" / "tiny-ab.yaml", project), project)  # sealed before the design check existed

    def searched(*_: object) -> str:
        raise AssertionError("the design was searched for a version sealed already")

    monkeypatch.setattr(sealing, "cannot_win", searched)
    again = seal_card(project, "tiny-ab")
    assert not again.written and again.lines()[0] == "already sealed, unchanged: tiny-ab v1 → keys/tiny-ab/v1.seal.json"
