"""Finding and loading card files: by id or path, one or all, with duplicate ids refused."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchcard._util.safeio import read_regular_text
from benchcard._util.yamlread import MAX_YAML_BYTES
from benchcard.card._names import check_names
from benchcard.card.model import Card
from benchcard.card.reader import read_card
from benchcard.errors import CardError
from benchcard.project import Project


def load_card(path: Path, project: Project) -> Card:
    """Read and validate one card file."""
    source = project.relative(path)
    text = read_regular_text(path, source, CardError, max_bytes=MAX_YAML_BYTES)
    return check_names(read_card(text, source, project, path), source)


def load_named(project: Project, name: str) -> Card:
    """One card named by id or path, as a command names it."""
    return load_card(resolve_card_path(project, name), project)


def load_cards(project: Project, names: Sequence[str] = ()) -> list[Card]:
    """Load the named cards (ids or paths), or every card; a duplicate id is an error naming both files."""
    paths = [resolve_card_path(project, n) for n in names] if names else sorted(project.cards_dir.glob("*.yaml"))
    cards = [load_card(p, project) for p in paths]
    if not names:
        check_unique_ids(cards, project)
    return cards


def check_unique_ids(cards: Sequence[Card], project: Project) -> None:
    seen: dict[str, Card] = {}
    for card in cards:
        if card.id in seen:
            raise CardError(
                f"{project.relative(card.path)}: field 'id': duplicate card id '{card.id}', "
                f"also in {project.relative(seen[card.id].path)}"
            )
        seen[card.id] = card


def resolve_card_path(project: Project, name: str) -> Path:
    """A card named by id (`one-word-sentiment`) or by path (`cards/one-word-sentiment.yaml`)."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml"):
        path = candidate if candidate.is_absolute() else Path.cwd() / candidate
    else:
        path = project.card_path(name)
    if not path.is_file():
        raise CardError(f"{name}: no such card (looked for {project.relative(path)})")
    return path
