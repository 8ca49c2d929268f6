"""What the fake server answers: the reply a request gets, and the response body in OpenAI's or Anthropic's shape.

Token counts are whitespace-split word counts: cheap, deterministic, and enough for the runner's bookkeeping.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchcard.testing.fakeserver._config import SHAPES, Config, FinishReason

#: Text parts of a message: chat and Messages (`text`), and the Responses API's input (`input_text`).
TEXT_PARTS = ("text", "input_text")


def text_of(content: Any) -> str:
    """Message text from either a plain string or a list of ``{"type": "text" | "input_text", "text": ...}``
    parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") in TEXT_PARTS
        )
    return ""


def _messages(body: dict[str, Any]) -> list[Any]:
    """The conversation: chat's and Messages' `messages`, or the Responses API's `input` (a string is one user
    message; a list holds messages, with or without `"type": "message"`, and other items, such as tool calls)."""
    if isinstance(body.get("input"), str):
        return [{"role": "user", "content": body["input"]}]
    given = body.get("input", body.get("messages"))
    return given if isinstance(given, list) else []


def last_user_message(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    for message in reversed(_messages(body)):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def prompt_tokens(body: Any) -> int:
    """Whitespace-split word count of every message (and an Anthropic ``system``, a Responses
    ``instructions``): cheap and deterministic."""
    if not isinstance(body, dict):
        return 0
    total = len(text_of(body.get("system")).split()) + len(text_of(body.get("instructions")).split())
    for message in _messages(body):
        if isinstance(message, dict):
            total += len(text_of(message.get("content")).split())
    return total


def max_tokens(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    for key in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


@dataclass(frozen=True, slots=True)
class Cache:
    """A prompt cache's tokens in front of the prompt's words (a reply rule's `cached_tokens`, …): read from the
    cache, written to it, and of those written to its 1-hour cache. Every shape describes the same call:
    OpenAI's `prompt_tokens` counts them all (its `cached_tokens` the read ones; it reports no writes), the
    Messages API's `input_tokens` none of them (each in its own field)."""

    read: int = 0
    written: int = 0
    written_1h: int = 0

    @property
    def tokens(self) -> int:
        return self.read + self.written


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    finish: FinishReason | None  # None: the reply says no reason (`null`)
    reasoning_tokens: int
    cost: float | None
    cache: Cache = Cache()


def sent_key(headers: Mapping[str, str]) -> str:
    """The credentials a request carried (its `x-api-key` and the token of its `Authorization`), for `echo_key`."""
    return " ".join(filter(None, (headers.get("x-api-key"), headers.get("Authorization", "").partition(" ")[2])))


def echoed(text: str, key: str) -> str:
    """A text as a server echoing the request's key (`echo_key`) gives it: the key quoted at its end."""
    return f"{text} (you sent {key})"


def choose_answer(config: Config, cycle_pos: dict[str, int], body: Any, user: str, key: str) -> Answer:
    """First matching reply rule wins; a cycle advances once per answered call of the same body (`key`)."""
    for rule in config.replies:
        if rule.match in user:
            if rule.cycles:
                pos = cycle_pos.get(key, 0)
                cycle_pos[key] = pos + 1
                text = rule.replies[pos % len(rule.replies)]
            else:
                text = rule.replies[0]
            answer = Answer(text, rule.finish_reason, rule.reasoning_tokens, rule.cost,
                            Cache(rule.cached_tokens, rule.cache_write_tokens, rule.cache_write_1h_tokens))
            break
    else:
        answer = Answer(config.default_reply, "stop", 0, None)
    limit = max_tokens(body)
    words = answer.text.split()
    if limit is not None and len(words) > limit:  # a rule saying no reason says none of the cut either
        answer = dataclasses.replace(answer, text=" ".join(words[:limit]),
                                     finish=None if answer.finish is None else "length")
    return answer


def truncated(answer: Answer) -> Answer:
    """The first half of the reply (by characters), as a ``length`` stop: what a hit token limit gives."""
    cut = answer.text[: len(answer.text) // 2]
    return dataclasses.replace(answer, text=cut, finish="length")


def model_of(body: Any) -> str:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else "fake-model"


def answered_by(payload: dict[str, Any], model: str | None) -> dict[str, Any]:
    """A reply naming `model` (config.reply_model) instead of the model asked, as a router's fallback does."""
    return payload if model is None else {**payload, "model": model}


def openai_body(call_id: int, body: Any, answer: Answer) -> dict[str, Any]:
    prompt = prompt_tokens(body) + answer.cache.tokens  # OpenAI counts the cached tokens in prompt_tokens
    completion = len(answer.text.split()) + answer.reasoning_tokens  # OpenAI counts reasoning as completion
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": answer.reasoning_tokens},
    }
    if answer.cache.read:
        usage["prompt_tokens_details"] = {"cached_tokens": answer.cache.read, "audio_tokens": 0}
    if answer.cost is not None:
        usage["cost"] = answer.cost  # OpenRouter's field: dollars charged for this call
    return {
        "id": f"chatcmpl-fake-{call_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_of(body),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.text},
                "finish_reason": answer.finish,
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def responses_body(call_id: int, body: Any, answer: Answer) -> dict[str, Any]:
    """The Responses API's shape (`POST /v1/responses`, what inspect_ai's and the OpenAI SDK's `openai/`
    provider call): one output message of one `output_text` part; a `length` stop is `incomplete` with reason
    `max_output_tokens`; other ends that are no answer are `incomplete` with their finish reason."""
    prompt = prompt_tokens(body) + answer.cache.tokens  # as chat's prompt_tokens, the cached tokens counted
    completion = len(answer.text.split()) + answer.reasoning_tokens
    ended = answer.finish in ("stop", None)
    settings = body if isinstance(body, dict) else {}
    return {
        "id": f"resp_fake_{call_id}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed" if ended else "incomplete",
        "incomplete_details": None if ended else {
            "reason": "max_output_tokens" if answer.finish == "length" else answer.finish},
        "error": None,
        "model": model_of(body),
        "instructions": settings.get("instructions"),
        "output": [{
            "type": "message", "id": f"msg_fake_{call_id}", "status": "completed" if ended else "incomplete",
            "role": "assistant", "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
        }],
        "parallel_tool_calls": True,
        "tool_choice": settings.get("tool_choice", "auto"),
        "tools": [],
        "temperature": settings.get("temperature"),
        "top_p": settings.get("top_p"),
        "max_output_tokens": settings.get("max_output_tokens"),
        "metadata": {},
        "usage": {
            "input_tokens": prompt, "input_tokens_details": {"cached_tokens": answer.cache.read},
            "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": answer.reasoning_tokens},
            "total_tokens": prompt + completion,
        },
    }


def anthropic_body(call_id: int, body: Any, answer: Answer) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    thinking_tokens = 0
    if isinstance(body, dict) and body.get("thinking"):
        thinking_tokens = max(answer.reasoning_tokens, 1)
        content.append(
            {"type": "thinking", "thinking": " ".join(["step"] * thinking_tokens), "signature": "fake"}
        )
    content.append({"type": "text", "text": answer.text})
    return {
        "id": f"msg_fake_{call_id}",
        "type": "message",
        "role": "assistant",
        "model": model_of(body),
        "content": content,
        "stop_reason": None if answer.finish is None else {"length": "max_tokens", "stop": "end_turn"}.get(
            answer.finish, answer.finish),
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt_tokens(body),  # the cache's tokens are not counted here, but in their own fields
            "output_tokens": len(answer.text.split()) + thinking_tokens,  # thinking is billed as output
            **cache_usage(answer.cache),
        },
    }


def cache_usage(cache: Cache) -> dict[str, Any]:
    """The Messages API's prompt-cache fields of a usage (none when the cache was not used): reads, writes, and
    the writes split by lifetime."""
    if not cache.tokens:
        return {}
    return {"cache_read_input_tokens": cache.read, "cache_creation_input_tokens": cache.written,
            "cache_creation": {"ephemeral_5m_input_tokens": cache.written - cache.written_1h,
                               "ephemeral_1h_input_tokens": cache.written_1h}}


def without_content(payload: dict[str, Any]) -> dict[str, Any]:
    """An answer in any shape with its text taken out, as a model that called a tool or declined without a word
    answers (the `null` fault): chat's `message.content` null, the Messages API's text blocks gone (a thinking
    block stays), the Responses API's output empty. The finish reason stays `stop`: nothing else tells."""
    if "choices" in payload:
        payload["choices"][0]["message"]["content"] = None
    elif payload.get("object") == "response":
        payload["output"] = []
    else:
        payload["content"] = [block for block in payload["content"] if block.get("type") != "text"]
    return payload


def mistyped(payload: dict[str, Any]) -> dict[str, Any]:
    """An answer in any shape with one field of another JSON type than its API documents, as a proxy translating
    between APIs may write it (the `mistyped` fault): chat's content as one text part whose text is null, the
    Messages API's `stop_reason` as a list holding it, the Responses API's output text null."""
    if "choices" in payload:
        payload["choices"][0]["message"]["content"] = [{"type": "text", "text": None}]
    elif payload.get("object") == "response":
        payload["output"][0]["content"][0]["text"] = None
    else:
        payload["stop_reason"] = [payload["stop_reason"]]
    return payload


#: What a model that declines says in the `refusal` shape (OpenAI's `message.refusal`).
REFUSAL = "I'm sorry, I can't help with that."


def _halves(text: str) -> list[dict[str, Any]]:
    """The text as two text blocks (or parts) that join back to it, as a reply with a citation is split."""
    half = len(text) // 2
    return [{"type": "text", "text": text[:half]}, {"type": "text", "text": text[half:]}]


def _chat_shaped(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    choice = payload["choices"][0]
    message = choice["message"]
    if kind == "refusal":  # structured outputs: no content, the reason in `refusal`, finish_reason still stop
        message.update(content=None, refusal=REFUSAL)
    elif kind == "tool_call":
        message.update(content=None, tool_calls=[{"id": "call_fake", "type": "function",
                                                  "function": {"name": "lookup", "arguments": "{}"}}])
        choice["finish_reason"] = "tool_calls"
    elif kind == "blocks":
        message["content"] = _halves(message["content"])
    elif kind == "extras":
        payload.update(system_fingerprint="fp_fake", service_tier="default", provider="fake-upstream",
                       x_unknown={"nested": [1, {"deeper": None}]})
        message.update(refusal=None, annotations=[])
        usage = payload["usage"]
        usage.setdefault("prompt_tokens_details", {"cached_tokens": usage["prompt_tokens"], "audio_tokens": 0})
        usage["completion_tokens_details"].update(audio_tokens=0, accepted_prediction_tokens=0,
                                                  rejected_prediction_tokens=0)
    elif kind == "choices":  # a second choice, listed first: only `index` says which is the first
        other = {"index": 1, "message": {"role": "assistant", "content": "another answer"}, "finish_reason": "length",
                 "logprobs": None}
        payload["choices"] = [other, choice]
    return payload


def _message_shaped(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    texts = [b for b in payload["content"] if b.get("type") == "text"]
    others = [b for b in payload["content"] if b.get("type") != "text"]
    text = "".join(b["text"] for b in texts)
    if kind == "refusal":  # the classifier stops the answer; what was written before it stays
        payload["stop_reason"] = "refusal"
    elif kind == "tool_call":
        payload["content"] = [*others, {"type": "tool_use", "id": "toolu_fake", "name": "lookup", "input": {}}]
        payload["stop_reason"] = "tool_use"
    elif kind == "blocks":
        payload["content"] = [*others, {"type": "redacted_thinking", "data": "ZmFrZQ=="}, *_halves(text)]
    elif kind == "extras":
        payload.update(container=None, x_unknown={"nested": [1, {"deeper": None}]})
        payload["usage"] = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                            **payload["usage"], "service_tier": "standard",
                            "server_tool_use": {"web_search_requests": 0}}
    return payload  # `choices`: the Messages API answers one message


def reshaped(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    """A well-formed answer in a shape a vendor's docs show (a `_config.SHAPES` fault): `refusal` (chat: content
    null and the reason in `message.refusal`; Messages: stop_reason `refusal`), `tool_call` (a tool call and no
    text), `blocks` (the text in two parts or blocks; Messages: after a `redacted_thinking` block), `no_usage`
    (no `usage`), `extras` (fields benchcard does not read: `system_fingerprint`, cached and other token details,
    unknown ones), `choices` (chat: a second choice, index 1, listed before the first). The Responses API's
    answer is sent as it is."""
    if payload.get("object") == "response":
        return payload
    if kind == "no_usage":
        payload.pop("usage", None)
        return payload
    return _chat_shaped(payload, kind) if "choices" in payload else _message_shaped(payload, kind)


def spoiled(payload: dict[str, Any], kind: str | None) -> dict[str, Any]:
    """An answer as the `null`, `mistyped` or a shape's fault (`kind`) sends it; any other as it is."""
    if kind is not None and kind in SHAPES:
        return reshaped(payload, kind)
    return without_content(payload) if kind == "null" else mistyped(payload) if kind == "mistyped" else payload


# The Messages API's error type for each HTTP status (docs.anthropic.com, "Errors").
ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                         404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                         529: "overloaded_error"}


def error_in_200(anthropic: bool, code: int) -> dict[str, Any]:
    """A 200 answer that carries an error instead of a reply: OpenRouter's `{"error": {code, message}}` (an
    upstream provider failed), or the Messages API's `{"type": "error", "error": {type, message}}` (as a stream
    or a proxy delivers it)."""
    message = f"injected upstream error {code}"
    if anthropic:
        kind = ANTHROPIC_ERROR_TYPES.get(code, "api_error" if code >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"code": code, "message": message, "metadata": {"provider_name": "fake-upstream"}}}
