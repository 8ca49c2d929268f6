"""Any OpenAI-compatible chat-completions endpoint: OpenAI, OpenRouter, vLLM, Ollama, llama.cpp's server.

Response shape read (the chat completion object): the choice of `index` 0 (`choices[0]` unless the list puts
another first), its `message.content` and `finish_reason`
(`length` when the token limit cut the answer), `usage.prompt_tokens` (which includes the input tokens read from
the prompt cache), `usage.prompt_tokens_details.cached_tokens` (those), `usage.completion_tokens` (which
includes reasoning), `usage.completion_tokens_details.reasoning_tokens`, and OpenRouter's `usage.cost` (USD).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchcard.errors import RetryableError
from benchcard.records.rows import Usage
from benchcard.run.providers.base import (
    UPSTREAM_ERROR,
    Completion,
    HttpProvider,
    ProviderConfig,
    Secrets,
    answer_error,
    counts_tokens,
    error_detail,
    json_kind,
    malformed,
    mapping,
    money,
    number,
    quoted,
    replied_model,
    status_for,
)


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

    @classmethod
    def vendor_headers(cls, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    def parse(self, data: Any, secret: Secrets) -> Completion:
        return parse_chat_completion(data, secret)


def parse_chat_completion(data: Any, secret: Secrets = None) -> Completion:
    """A chat completion object → Completion; anything else is a malformed answer (`base.malformed`, retried).

    An error reported inside a 200 answer (OpenRouter: an `error` object beside or instead of the choices, or
    on the choice, or `finish_reason: "error"`) is raised like the HTTP error it stands for, so it is retried
    when that status would be and is never recorded as an answer.
    """
    if not isinstance(data, Mapping):
        raise malformed(f"a 200 answer whose JSON is {json_kind(data)}, not a chat completion (an object with "
                        "`choices`)")
    _raise_error_object(data.get("error"), secret)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        shape = "no `choices`" if choices is None else "`choices` empty" if choices == [] else \
            f"`choices` {json_kind(choices)}" if not isinstance(choices, list) else \
            f"`choices[0]` {json_kind(choices[0])}"
        raise malformed(f"a 200 answer with {shape}, not a chat completion (a list of choices, each an object with "
                        "a `message`)")
    choice = _first(choices)
    _raise_error_object(choice.get("error"), secret)
    said_finish = choice.get("finish_reason")
    finish = said_finish if isinstance(said_finish, str) else None
    if finish == UPSTREAM_ERROR:
        raise RetryableError("upstream error: a 200 answer with finish_reason error (the provider behind the "
                             "endpoint failed mid-answer)")
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise malformed(f"a 200 answer whose `choices[0].message` is {json_kind(message)}, not an object with "
                        "`content`")
    text, said = _text_of(message.get("content"))
    usage_map = mapping(data.get("usage"))
    details = mapping(usage_map.get("completion_tokens_details"))
    cached = mapping(usage_map.get("prompt_tokens_details")).get("cached_tokens")  # part of prompt_tokens
    usage = Usage.of(input=number(usage_map.get("prompt_tokens")), output=number(usage_map.get("completion_tokens")),
                     reasoning=number(details.get("reasoning_tokens")), cached=number(cached))
    cost = money(usage_map.get("cost"))
    status, error = status_for(said_finish)
    refusal = message.get("refusal")
    if status == "ok" and (not said or (isinstance(refusal, str) and refusal.strip() and not text)):
        status, error = "failed", _no_content(message, secret)
    return Completion(text, finish, status, usage, cost, error=error, model=replied_model(data),
                      counted=counts_tokens(data.get("usage"), "prompt_tokens", "completion_tokens"))


def _first(choices: list[Any]) -> Mapping[str, Any]:
    """The choice of `index` 0, wherever the list puts it (a server may list another first); the first listed when
    none says its index. A card asks for one answer: the others are not that answer, whatever they say."""
    indexed = [c for c in choices if isinstance(c, Mapping) and type(c.get("index")) is int and c["index"] == 0]
    first: Mapping[str, Any] = indexed[0] if indexed else choices[0]
    return first


def _text_of(content: Any) -> tuple[str, bool]:
    """A message's text, and whether it has any at all: `content: ""` is an empty answer, while null (or a list
    of parts none of which is text) is the API saying no text came back."""
    if isinstance(content, str):
        return content, True
    if content is None:
        return "", False
    if isinstance(content, list):  # some servers return content parts; a part's text that is not text brings none
        texts = [p["text"] for p in content
                 if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)]
        return "".join(texts), bool(texts)
    raise malformed(f"a 200 answer whose `choices[0].message.content` is {json_kind(content)}, neither text nor a "
                    "list of parts")


def _no_content(message: Mapping[str, Any], secret: Secrets) -> str:
    """Why a message without text is no answer: its refusal (the message's, or a `refusal` part of its content),
    its tool call, or nothing said at all (an empty answer is `content: ""`; null, or parts none of which is text,
    is the API saying there is no text, which must never be scored). The error says which it was."""
    content = message.get("content")
    parts = [p for p in content if isinstance(p, Mapping)] if isinstance(content, list) else []
    refusals = [message.get("refusal"), *(p.get("refusal") for p in parts if p.get("type") == "refusal")]
    refusal = next((r for r in refusals if isinstance(r, str) and r.strip()), None)
    if refusal is not None:
        return "refused: " + quoted(refusal, 200, secret)
    texts = [p for p in parts if p.get("type") == "text"]
    held = "null" if content is None else "a list whose text parts hold no text" if texts else \
        "a list without a text part"
    if message.get("tool_calls") or message.get("function_call"):
        return f"not an answer: the model asked to call a tool (the card offers none); the message content is {held}"
    return f"not an answer: the message content is {held} (no text came back: a refusal or a tool call without a word)"


#: OpenAI's error types (its `error.type`) and the HTTP status each comes with, for an error object whose `code`
#: is a word (`context_length_exceeded`), not a status, as a proxy passing OpenAI's error on in a 200 sends it.
ERROR_TYPES = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
               "not_found_error": 404, "rate_limit_error": 429, "server_error": 500}


def _raise_error_object(err: Any, secret: Secrets) -> None:
    """An OpenRouter-style `{code, message}` error object found in a 200 answer (or OpenAI's `{type, code,
    message}`, its code a word), raised as the HTTP error it reports: RetryableError for 408, 429 and 5xx (and no
    code nor known type), CallError otherwise."""
    if not (isinstance(err, Mapping) and err) and not (isinstance(err, str) and err.strip()):
        return
    err_map = mapping(err)
    code = err_map.get("code")
    kind = err_map.get("type")
    said = f"{kind}" + (f" ({code})" if isinstance(code, str) and code else "") if isinstance(kind, str) else None
    code = code if isinstance(code, int) and not isinstance(code, bool) else ERROR_TYPES.get(str(kind))
    message = err_map.get("message") if err_map else err
    detail = error_detail(message, secret)
    name = " ".join(str(x) for x in (code, said and quoted(said, 80, secret)) if x)
    text = f"upstream error {name}: {detail}" if name else f"upstream error: {detail}"
    raise answer_error(text + " (in a 200 answer)", code)
