"""The "Run it yourself" command: the exact request a card sends, with the key as a shell variable."""

from __future__ import annotations

import json
from typing import Any

from benchcard.card.model import Card
from benchcard.errors import CardError
from benchcard.run.providers import build_body, endpoint, provider_config
from benchcard.run.providers.base import ProviderConfig


def request_for(
    card: Card, cfg: ProviderConfig, model: str, variant: str | None, fixture: str | None
) -> dict[str, Any]:
    """The body for one (variant, fixture) of a card; a probe takes neither."""
    if card.is_ab:
        variant = variant or card.baseline
        if variant not in card.variants:
            raise CardError(f"{card.id}: no variant '{variant}'; expected one of {', '.join(card.variant_names())}")
        fixture = fixture or card.fixture_ids()[0]
        if fixture not in card.fixtures:
            raise CardError(f"{card.id}: no fixture '{fixture}'; expected one of {', '.join(card.fixture_ids())}")
        messages = card.messages(variant, card.fixture_text(fixture))
    else:
        if variant or fixture:
            raise CardError(f"{card.id}: a probe has no variants or fixtures; drop --variant and --fixture")
        messages = card.messages()
    return build_body(cfg, model, messages, card.params, card.rig.effort)


def shell_quote(text: str) -> str:
    """Single-quote for POSIX shells: nothing inside is expanded, and `'` becomes `'\\''`."""
    return "'" + text.replace("'", "'\\''") + "'"


def curl_command(card: Card, config: dict[str, Any], variant: str | None = None, fixture: str | None = None,
                 provider: str | None = None, model: str | None = None, base_url: str | None = None) -> str:
    cfg = provider_config(provider or card.rig.provider, config, base_url)
    body = request_for(card, cfg, model or card.rig.model, variant, fixture)
    if cfg.type == "local":  # the first repetition's body as a local run seals it, seed included
        from benchcard.run.providers.local import planned_body

        body = planned_body(body, 0)
    lines = [f"curl {endpoint(cfg)} \\"]
    if cfg.type == "anthropic":
        lines.append(f'  -H "x-api-key: ${cfg.api_key_env}" \\')
        lines.append('  -H "anthropic-version: 2023-06-01" \\')
    elif cfg.api_key_env:
        lines.append(f'  -H "Authorization: Bearer ${cfg.api_key_env}" \\')
    lines.append('  -H "Content-Type: application/json" \\')
    lines.append("  -d " + shell_quote(json.dumps(body, indent=2, ensure_ascii=False)))
    return "\n".join(lines)
