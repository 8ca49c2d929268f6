"""Any OpenAI-compatible chat-completions endpoint: OpenAI, OpenRouter, vLLM, Ollama, llama.cpp's server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def openai_body(model: str, messages: list[dict[str, str]], params: Mapping[str, Any], effort: str | None,
                openrouter: bool = False) -> dict[str, Any]:
    """The card's messages and params, nothing else; `effort` maps to the endpoint's reasoning setting."""
    body: dict[str, Any] = {"model": model, "messages": messages, **params}
    if effort:
        if openrouter:
            body["reasoning"] = {"effort": effort}
        else:
            body["reasoning_effort"] = effort
    return body
