"""The sealed project a benchmark runs: one card, its fixtures, and the provider `bench` at the fake server.

Benchmarks build their projects here and never import the test suite, which keeps its own helpers (tests/).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchcard.card.load import load_card
from benchcard.card.seal import seal
from benchcard.project import Project


def sealed_project(root: Path, card_id: str, card_text: str, fixtures: Iterable[tuple[str, str]], base_url: str,
                   key_env: str) -> Project:
    """Write `cards/<card_id>.yaml`, each (name, text) fixture, and a `benchcard.yaml` whose provider `bench`
    is the OpenAI-compatible server at `base_url` (key in `key_env`); seal the card."""
    (root / "cards").mkdir(parents=True)
    (root / "cards" / f"{card_id}.yaml").write_text(card_text, encoding="utf-8")
    folder = root / "fixtures" / card_id
    folder.mkdir(parents=True)
    for name, text in fixtures:
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    (root / "benchcard.yaml").write_text(
        f"providers:\n  bench: {{type: openai, base_url: '{base_url}', api_key_env: {key_env}}}\n", encoding="utf-8")
    project = Project(root)
    seal(load_card(project.card_path(card_id), project), project)
    return project
