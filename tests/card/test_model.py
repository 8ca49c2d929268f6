"""A card's model: the exact messages each (variant, fixture) sends, the variants and fixtures in their order, the
sealed protocol, and the rig line."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.card.model import PROSE_FIELDS, Rig
from benchcard.errors import CardError
from benchcard.project import Project

from ..helpers_judge import CARD_ID, judge_project
from ..helpers_project import AB_CARD, PROBES, REPO, make_ab_project, seed_body


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe_prompt_is_byte_for_byte_the_seed_request(name: str) -> None:
    card = load_card(REPO / "cards" / f"{name}.yaml", Project(REPO))
    body = seed_body(name)
    assert body["messages"] == card.messages()
    assert body["max_tokens"] == card.params["max_tokens"]
    assert body["temperature"] == card.params["temperature"]
    assert body["model"] == card.rig.model


def test_ab_card_renders_variants(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    card = load_card(project / "cards" / "tiny-ab.yaml", Project(project))
    assert card.variant_names() == ["baseline", "A"]
    assert card.fixture_ids() == ["item-01", "item-02", "item-03", "item-04"]
    base = card.messages("baseline", "X")
    variant = card.messages("A", "X")
    assert base[1]["content"] == "Name the colour.\n<item>X</item>"
    assert variant[1]["content"] == "Name the colour.\nPlease.\n<item>X</item>"
    assert "prompt" in card.protocol() and "title" not in card.protocol()


@pytest.mark.parametrize("fixture", ["{{variant}} and {{fixture}}", "{{fixture.x}}{{fixture}}{{variant}}"])
def test_text_put_in_by_a_substitution_is_never_expanded_again(tmp_path: Path, fixture: str) -> None:
    """One pass: a fixture holding the prompt's slots reaches the model as written, and so does a variant (which
    `check` refuses, tests/card/test_check.py); nothing is filled twice."""
    project = make_ab_project(tmp_path, AB_CARD.replace('A: "Please.\\n"', 'A: "See {{fixture}}. "'))
    card = load_card(project / "cards" / "tiny-ab.yaml", Project(project))
    assert card.messages("baseline", fixture)[1]["content"] == f"Name the colour.\n<item>{fixture}</item>"
    assert card.messages("A", "X")[1]["content"] == "Name the colour.\nSee {{fixture}}. <item>X</item>"
    assert card.messages("A", fixture)[1]["content"] == f"Name the colour.\nSee {{{{fixture}}}}. <item>{fixture}</item>"


def test_the_rig_line_names_model_effort_and_surface_or_provider() -> None:
    line = Rig("anthropic", "claude-fable-5-1", "high", "Claude API").line()
    assert line == "claude-fable-5-1 · effort high · Claude API"
    assert Rig("openrouter", "a/b").line() == "a/b · openrouter"


def test_a_probe_has_one_variant_one_fixture_and_its_prompt_as_written() -> None:
    card = load_card(REPO / "cards" / "one-word-sentiment.yaml", Project(REPO))
    assert card.variant_names() == ["probe"] and card.fixture_ids() == ["one-word-sentiment"]
    assert card.fixture_text("one-word-sentiment") == ""
    assert card.messages() == card.messages("ignored", "ignored")  # a probe's prompt has no slots to fill
    assert [m["role"] for m in card.messages()] == ["system", "user"]


def test_the_protocol_is_everything_but_the_prose_and_fixture_text_is_the_file(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    card = load_card(project / "cards" / "tiny-ab.yaml", Project(project))
    protocol = card.protocol()
    assert set(protocol) == set(card.raw) - PROSE_FIELDS
    assert {"prompt", "variants", "params", "scoring", "win", "rig"} <= set(protocol)
    assert not {"title", "examples", "history", "question"} & set(protocol)
    assert card.fixture_text("item-03") == "a ripe tomato, number 3\n"
    (project / "fixtures" / "tiny-ab" / "item-03.txt").unlink()
    with pytest.raises(CardError, match=r"item-03\.txt: cannot read: No such file or directory$"):
        card.fixture_text("item-03")


def test_a_judge_cards_spec_is_its_scorer_and_no_other_card_has_one(tmp_path: Path) -> None:
    project = judge_project(tmp_path / "judged", seal=False)
    card = load_card(project.card_path(CARD_ID), project)
    assert card.judge_spec is card.scoring and card.judge_spec is not None and card.judge_spec.judgements == 3
    ab = make_ab_project(tmp_path / "ab")
    assert load_card(ab / "cards" / "tiny-ab.yaml", Project(ab)).judge_spec is None
