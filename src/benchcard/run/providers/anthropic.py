"""Anthropic's Messages API: a separate system field, and `effort` mapped to an extended-thinking budget.

Response shape read: `content` blocks (the text is every `text` block joined; `thinking` blocks are not part of
it), `stop_reason` (`max_tokens` when the token limit cut the answer, `refusal` when the API declined),
`usage.input_tokens` and `usage.output_tokens` (which bills thinking as output), and the prompt cache's
`usage.cache_read_input_tokens`, `usage.cache_creation_input_tokens` and its split by lifetime,
`usage.cache_creation.ephemeral_1h_input_tokens`. `input_tokens` counts neither cache's tokens (the docs: the
input is their sum), so the usage recorded adds them, as OpenAI's `prompt_tokens` counts its cached ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchcard.errors import ProviderError
from benchcard.records.rows import Usage
from benchcard.run.providers.base import (
    Completion,
    HttpProvider,
    Secrets,
    answer_error,
    counts_tokens,
    error_detail,
    json_kind,
    malformed,
    mapping,
    money,
    number,
    replied_model,
    status_for,
)

API_VERSION = "2023-06-01"
# Share of max_tokens given to thinking at each effort; the API needs at least 1,024 and less than max_tokens.
THINKING_SHARE = {"low": 0.25, "medium": 0.5, "high": 0.75}
MIN_THINKING_BUDGET = 1024
# The Messages API's error types and the HTTP status each stands for (docs.anthropic.com, "Errors").
ERROR_TYPES = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
               "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
               "overloaded_error": 529}


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


class AnthropicProvider(HttpProvider):
    """The Messages API over an injected `httpx.AsyncClient`."""

    path = "messages"

    def build_body(self, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
        return anthropic_body(model, messages, params, effort)

    @classmethod
    def vendor_headers(cls, key: str | None) -> dict[str, str]:
        return {"anthropic-version": API_VERSION, **({"x-api-key": key} if key else {})}

    def parse(self, data: Any, secret: Secrets) -> Completion:
        return parse_message(data, secret)


def cache_counts(usage: Mapping[str, Any]) -> tuple[int, int, int]:
    """Input tokens a message's `usage` says were read from the prompt cache, written to it, and of those written
    to its 1-hour cache. A usage that gives only the split by lifetime (`cache_creation`) is read from it."""
    split = mapping(usage.get("cache_creation"))
    written_1h = number(split.get("ephemeral_1h_input_tokens"))
    written = number(usage.get("cache_creation_input_tokens")) or (
        number(split.get("ephemeral_5m_input_tokens")) + written_1h)
    return number(usage.get("cache_read_input_tokens")), written, min(written_1h, written)


def parse_message(data: Any, secret: Secrets = None) -> Completion:
    """A Messages-API message → Completion; anything else is a malformed answer (`base.malformed`, retried).

    An error object in a 200 answer (`{"type": "error", "error": {"type": "overloaded_error", ...}}`, as a
    stream or a proxy delivers it) is raised as the HTTP error its type stands for, so it is retried when that
    status would be and never recorded as an answer; a stop reason that ends no answer fails the cell
    (`base.status_for`).
    """
    if isinstance(data, Mapping) and (data.get("type") == "error" or isinstance(data.get("error"), Mapping)):
        err = mapping(data.get("error"))
        kind = str(err.get("type") or "error")
        code = ERROR_TYPES.get(kind)
        detail = error_detail(err.get("message"), secret)
        raise answer_error(f"API error {kind}" + (f": {detail}" if detail else "") + " (in a 200 answer)", code)
    if not isinstance(data, Mapping):
        raise malformed(f"a 200 answer whose JSON is {json_kind(data)}, not a Messages API message (an object with "
                        "`content`)")
    if not isinstance(data.get("content"), list):
        shape = "no `content`" if data.get("content") is None else f"`content` {json_kind(data.get('content'))}"
        raise malformed(f"a 200 answer with {shape}, not a Messages API message (a list of content blocks)")
    # a text block's text that is not a string (null) brings no text: never the word "None" scored as an answer
    blocks = [b for b in data["content"] if isinstance(b, Mapping)]
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    text = "".join(texts)
    said_stop = data.get("stop_reason")
    stop = said_stop if isinstance(said_stop, str) else None
    usage_map = mapping(data.get("usage"))
    details = mapping(usage_map.get("output_tokens_details"))
    # The API bills thinking inside output_tokens and does not break it out today; count it when a usage does.
    reasoning = (number(usage_map.get("thinking_tokens")) or number(usage_map.get("reasoning_tokens"))
                 or number(details.get("thinking_tokens")) or number(details.get("reasoning_tokens")))
    read, written, written_1h = cache_counts(usage_map)
    usage = Usage.of(input=number(usage_map.get("input_tokens")) + read + written,
                     output=number(usage_map.get("output_tokens")), reasoning=reasoning, cached=read,
                     cache_write=written, cache_write_1h=written_1h)
    cost = money(usage_map.get("cost"))
    status, error = status_for(said_stop)
    if status == "ok" and not texts:
        # as a chat message whose content is null: no text came back, which must never be scored as an answer
        status, error = "failed", ("not an answer: the reply holds no text block (no text came back: a refusal, a "
                                   "tool call or thinking without a word)")
    return Completion(text, stop, status, usage, cost, error=error, model=replied_model(data),
                      counted=counts_tokens(data.get("usage"), "input_tokens", "output_tokens"))
