"""`benchcard check`'s preflight of the embedded model: each distinct local model the cards name is started once,
and what stops it is said in one line; other providers are never called."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.project import Project
from benchcard.run._preflight import Preflight, preflight_local
from benchcard.run.providers.localmodel import EXTRA_HINT

from ..helpers_run import PROBE, probe_project


def cards_on(tmp_path: Path, *rigs: tuple[str, str]) -> tuple[Project, list[Card]]:
    """The probe card once per (provider, model), in a project that declares `mine` as a local provider."""
    project = probe_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text("providers:\n  mine: {type: local}\n  fake: {type: openai, base_url: "
                                             "'http://127.0.0.1:9/v1', api_key_env: null}\n", encoding="utf-8")
    card = load_card(tmp_path / "cards" / f"{PROBE}.yaml", project)
    return project, [replace(card, rig=replace(card.rig, provider=p, model=m)) for p, m in rigs]


def test_each_local_model_is_tried_once_and_other_providers_never(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if the local extra were not installed
    project, cards = cards_on(tmp_path, ("fake", "test/model"), ("local", "smollm2"), ("mine", "smollm2"),
                              ("local", "smollm2"), ("nowhere", "m"))
    assert preflight_local(project, cards) == [Preflight("local", "smollm2", EXTRA_HINT),
                                               Preflight("mine", "smollm2", EXTRA_HINT)]
    assert preflight_local(project, cards[:1]) == []


@pytest.mark.local_model
def test_a_model_file_that_is_not_there_is_named(tmp_path: Path) -> None:
    project, cards = cards_on(tmp_path, ("local", "models/missing.gguf"))
    assert preflight_local(project, cards) == [
        Preflight("local", "models/missing.gguf", "the local model file models/missing.gguf does not exist")]
