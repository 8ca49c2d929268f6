"""Any OpenAI-compatible chat-completions endpoint: OpenAI, OpenRouter, vLLM, Ollama, llama.cpp's server.

Response shape read (the chat completion object): `choices[0].message.content`, `choices[0].finish_reason`
(`length` when the token limit cut the answer), `usage.prompt_tokens`, `usage.completion_tokens` (which
includes reasoning), `usage.completion_tokens_details.reasoning_tokens`, and OpenRouter's `usage.cost` (USD).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchcard.run.providers.base import (
    CallError,
    Completion,
    HttpProvider,
    ProviderConfig,
    RetryableError,
    Usage,
    mapping,
    money,
    number,
    redact,
)

# finish reasons by which the API, not the model, withheld the answer
REFUSED = frozenset({"content_filter"})


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


def is_openrouter(cfg: ProviderConfig) -> bool:
    return cfg.name == "openrouter" or "openrouter.ai" in (cfg.base_url or "")


class OpenAIProvider(HttpProvider):
    """Chat completions over an injected `httpx.AsyncClient` (the runner's, or a test's mock transport)."""

    path = "chat/completions"

    def build_body(self, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
        return openai_body(model, messages, params, effort, openrouter=is_openrouter(self.config))

    def vendor_headers(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    def parse(self, data: Any, secret: str | None) -> Completion:
        return parse_chat_completion(data, secret)


def parse_chat_completion(data: Any, secret: str | None = None) -> Completion:
    """A chat completion object → Completion; anything else is a malformed answer (CallError)."""
    if not isinstance(data, Mapping):
        raise CallError("malformed response: not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        err = data.get("error")
        if isinstance(err, Mapping):  # OpenRouter can answer 200 with an upstream error in the body
            code = err.get("code")
            detail = redact(" ".join(str(err.get("message", "")).split())[:200], secret)
            text = f"upstream error {code}: {detail}" if code is not None else f"upstream error: {detail}"
            if isinstance(code, int) and (code == 429 or code >= 500):
                raise RetryableError(text, status=code)
            raise CallError(text, status=code if isinstance(code, int) else None)
        raise CallError("malformed response: no choices")
    choice = choices[0]
    message = mapping(choice.get("message"))
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        text = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    elif isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:
        raise CallError("malformed response: message content is neither text nor a list of parts")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    usage_map = mapping(data.get("usage"))
    details = mapping(usage_map.get("completion_tokens_details"))
    usage = Usage(input=number(usage_map.get("prompt_tokens")), output=number(usage_map.get("completion_tokens")),
                  reasoning=number(details.get("reasoning_tokens")))
    cost = money(usage_map.get("cost"))
    refusal = message.get("refusal")
    if finish in REFUSED:
        return Completion(text, finish, "failed", usage, cost, error=f"refused by the API (finish_reason {finish})")
    if isinstance(refusal, str) and refusal and not text:
        return Completion(text, finish, "failed", usage, cost,
                          error="refused: " + redact(" ".join(refusal.split())[:200], secret))
    return Completion(text, finish, "truncated" if finish == "length" else "ok", usage, cost)
