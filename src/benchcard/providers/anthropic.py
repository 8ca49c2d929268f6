"""Anthropic's Messages API: a separate system field, and `effort` mapped to an extended-thinking budget."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ProviderError

# Share of max_tokens given to thinking at each effort; the API needs at least 1,024 and less than max_tokens.
THINKING_SHARE = {"low": 0.25, "medium": 0.5, "high": 0.75}
MIN_THINKING_BUDGET = 1024


def thinking_budget(effort: str, max_tokens: int) -> int:
    """The thinking budget for an effort; a max_tokens too small to hold one is refused, not silently raised."""
    budget = int(max_tokens * THINKING_SHARE[effort])
    if budget < MIN_THINKING_BUDGET:
        need = int(MIN_THINKING_BUDGET / THINKING_SHARE[effort]) + 1
        raise ProviderError(
            f"params.max_tokens {max_tokens} leaves no room for a thinking budget at effort {effort}; "
            f"the Messages API needs at least {MIN_THINKING_BUDGET}, so raise max_tokens to {need} or more"
        )
    return budget


def anthropic_body(model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
    """Messages-API body: system moves to its own field; OpenAI-style `stop` becomes `stop_sequences`."""
    body: dict[str, Any] = {"model": model}
    system = [m["content"] for m in messages if m["role"] == "system"]
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = [m for m in messages if m["role"] != "system"]
    for name, value in params.items():
        if name == "stop":
            body["stop_sequences"] = value
        elif name != "seed":  # the Messages API has no seed
            body[name] = value
    if effort:
        budget = thinking_budget(effort, int(params["max_tokens"]))
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body.pop("temperature", None)  # extended thinking runs at the API's fixed temperature
        body.pop("top_p", None)
    return body
