"""Finding and loading card files: by id or by path, one or all, and a duplicate id refused naming both files."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.card.load import load_cards, resolve_card_path
from benchcard.errors import CardError
from benchcard.project import Project

from ..helpers_project import AB_CARD, make_ab_project


def test_duplicate_card_id(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    (project / "cards" / "copy.yaml").write_text(AB_CARD, encoding="utf-8")
    with pytest.raises(CardError) as info:
        load_cards(Project(project))
    assert str(info.value) == "cards/copy.yaml:1: field 'id': duplicate card id 'tiny-ab', also in cards/tiny-ab.yaml"


def test_a_card_is_found_by_id_or_by_path_and_a_missing_one_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_ab_project(tmp_path / "proj")
    project = Project(root)
    assert resolve_card_path(project, "tiny-ab") == root / "cards" / "tiny-ab.yaml"
    monkeypatch.chdir(root)
    assert resolve_card_path(project, "cards/tiny-ab.yaml") == root / "cards" / "tiny-ab.yaml"
    with pytest.raises(CardError, match=r"^tiny-abc: no such card \(looked for cards/tiny-abc\.yaml\)$"):
        resolve_card_path(project, "tiny-abc")
    with pytest.raises(CardError, match=r"^elsewhere/x\.yml: no such card"):
        resolve_card_path(project, "elsewhere/x.yml")


def test_named_cards_load_in_the_order_given_and_all_cards_in_file_order(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path)
    (root / "cards" / "another.yaml").write_text(AB_CARD.replace("id: tiny-ab", "id: another"), encoding="utf-8")
    project = Project(root)
    assert [c.id for c in load_cards(project)] == ["another", "tiny-ab"]
    assert [c.id for c in load_cards(project, ["tiny-ab", "another"])] == ["tiny-ab", "another"]
