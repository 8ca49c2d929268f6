"""The local model's preflight for `benchcard check`: start the worker, load the model, make a one-token call.

A card whose rig is the embedded model is only useful if that model runs on this machine; a build that dies of
an illegal instruction should be found by `check`, not half-way through a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from benchcard.card.model import Card
from benchcard.errors import BenchcardError
from benchcard.project import Project
from benchcard.run.providers import make_provider, provider_config
from benchcard.run.providers.base import ProviderConfig


@dataclass(frozen=True)
class Preflight:
    """One local model tried: `problem` is None when it answered."""

    provider: str
    model: str
    problem: str | None


def local_rigs(project: Project, cards: Iterable[Card]) -> list[tuple[str, str]]:
    """Each distinct (provider, model) of the cards' rigs that is a local model, in the cards' order."""
    return list(_local_configs(project, cards))


def preflight_local(project: Project, cards: Iterable[Card]) -> list[Preflight]:
    """Try each distinct local model the cards' rigs name, once; other providers are not called by `check`."""
    return [Preflight(name, model, _try(cfg, model)) for (name, model), cfg in _local_configs(project, cards).items()]


def _local_configs(project: Project, cards: Iterable[Card]) -> dict[tuple[str, str], ProviderConfig]:
    config = project.config()
    seen: dict[tuple[str, str], ProviderConfig] = {}
    for card in cards:
        try:
            cfg = provider_config(card.rig.provider, config)
        except BenchcardError:
            continue  # an unknown provider is the run's error to report, with its own line
        if cfg.type == "local":
            seen.setdefault((cfg.name, card.rig.model), cfg)
    return seen


def _try(cfg: ProviderConfig, model: str) -> str | None:
    async def go() -> None:
        provider = make_provider(cfg, None, model)  # type: ignore[arg-type]  # the local provider makes no HTTP
        try:
            await provider.prepare()
        finally:
            await provider.aclose()

    try:
        asyncio.run(go())
    except BenchcardError as exc:
        return str(exc)
    return None
