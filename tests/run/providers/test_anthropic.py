"""The Anthropic messages API: body and headers, effort as a thinking budget, stop reasons."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from benchcard.errors import ProviderError, RetryableError
from benchcard.run.providers.anthropic import AnthropicProvider, parse_message

from ...helpers_providers import CLAUDE, SEEN, anthropic_reply, client_for, complete, probe_card

pytestmark = pytest.mark.usefixtures("provider_keys")  # each test gets the test keys and an empty SEEN


def test_anthropic_sends_the_messages_api_body_and_headers() -> None:
    card = probe_card()
    reply = anthropic_reply({"type": "text", "text": "nega"}, {"type": "text", "text": "tive"})
    provider = AnthropicProvider(CLAUDE, client_for(lambda r: httpx.Response(200, json=reply)))
    body = provider.build_body("claude-x", card.messages(), card.params, None)
    assert body == {"model": "claude-x", "system": card.prompt.system,
                    "messages": [{"role": "user", "content": card.prompt.user}], **card.params}
    out = complete(provider, body)
    [request] = SEEN
    assert str(request.url) == "https://api.example/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert json.loads(request.content) == body
    assert out.text == "negative" and out.status == "ok"
    assert (out.usage.input, out.usage.output) == (20, 9)


def test_anthropic_effort_becomes_a_thinking_budget_and_thinking_is_not_text() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    body = AnthropicProvider(CLAUDE, client_for(lambda r: httpx.Response(200))).build_body(
        "c", msgs, {"max_tokens": 8000, "temperature": 0}, "medium")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000} and "temperature" not in body
    with pytest.raises(ProviderError, match="raise max_tokens"):
        AnthropicProvider(CLAUDE, client_for(lambda r: httpx.Response(200))).build_body(
            "c", msgs, {"max_tokens": 1000}, "high")
    out = parse_message(anthropic_reply({"type": "thinking", "thinking": "hmm", "signature": "s"},
                                        {"type": "text", "text": "red"}, thinking_tokens=5))
    assert out.text == "red" and out.usage.reasoning == 5


def test_anthropic_stop_reasons() -> None:
    assert parse_message(anthropic_reply({"type": "text", "text": "re"}, stop="max_tokens")).status == "truncated"
    refused = parse_message(anthropic_reply(stop="refusal"))
    assert refused.status == "failed" and "refusal" in (refused.error or "")
    with pytest.raises(RetryableError, match=r"^malformed response: a 200 answer with no `content`, not a Messages API "
                       r"message \(a list of content blocks\)$"):
        parse_message({"type": "message"})


_NOT_A_MESSAGE = "not a Messages API message (an object with `content`)"


@pytest.mark.parametrize(("bad", "said"), [
    ([], f"a 200 answer whose JSON is a list, {_NOT_A_MESSAGE}"),
    ("ok", f"a 200 answer whose JSON is a string, {_NOT_A_MESSAGE}"),
    (None, f"a 200 answer whose JSON is null, {_NOT_A_MESSAGE}"),
    (42, f"a 200 answer whose JSON is a number, {_NOT_A_MESSAGE}"),
    ({"type": "message", "content": "red"},
     "a 200 answer with `content` a string, not a Messages API message (a list of content blocks)"),
])
def test_an_answer_not_in_the_messages_shape_is_malformed_and_retried(bad: Any, said: str) -> None:
    """As for chat (test_openai): retried, one line saying what came, what was expected, and from where."""
    provider = AnthropicProvider(CLAUDE, client_for(lambda r: httpx.Response(200, content=json.dumps(bad).encode())))
    with pytest.raises(RetryableError) as sent:
        complete(provider, {"model": "c", "messages": []})
    assert str(sent.value) == f"malformed response: {said} (POST {CLAUDE.base_url}/messages)"


def test_the_model_a_message_names_is_kept() -> None:
    reply = {**anthropic_reply({"type": "text", "text": "ok"}), "model": "claude-3-5-sonnet-20241022"}
    assert parse_message(reply).model == "claude-3-5-sonnet-20241022"
    assert parse_message({**reply, "model": ""}).model is None


def test_a_text_block_whose_text_is_null_is_no_answer() -> None:
    """A proxy's `{"type": "text", "text": null}` was read as the answer "None" and scored."""
    empty = parse_message(anthropic_reply({"type": "text", "text": None}))
    assert (empty.status, empty.text) == ("failed", "") and "no text block" in (empty.error or "")
    both = parse_message(anthropic_reply({"type": "text", "text": None}, {"type": "text", "text": "ok"}))
    assert (both.status, both.text) == ("ok", "ok")


def test_a_stop_reason_that_is_not_text_is_no_answer() -> None:
    """Hostile audit (round 12b): a stop_reason that was not text (`["max_tokens"]`, an object) was read as none,
    so an answer it may say was cut off was scored as whole; it is recorded failed, never scored."""
    for stop in (["max_tokens"], {"type": "end_turn"}, 0):
        out = parse_message({**anthropic_reply({"type": "text", "text": "ok"}), "stop_reason": stop})
        assert (out.status, out.text, out.finish_reason) == ("failed", "ok", None)
        assert (out.error or "").startswith("not an answer: the stop reason is not text (")
    assert parse_message({**anthropic_reply({"type": "text", "text": "ok"}), "stop_reason": None}).status == "ok"


def test_the_prompt_caches_tokens_are_added_to_input_tokens_which_leaves_them_out() -> None:
    """The Messages API's `input_tokens` counts neither the tokens read from the prompt cache nor those written to
    it (each has its own field): the usage recorded adds them, so that `input` means every input token as
    OpenAI's `prompt_tokens` does, and says how many were read, written, and written to the 1-hour cache."""
    text = {"type": "text", "text": "negative"}
    out = parse_message(anthropic_reply(text, cache_read_input_tokens=3000, cache_creation_input_tokens=500,
                                        cache_creation={"ephemeral_5m_input_tokens": 400,
                                                        "ephemeral_1h_input_tokens": 100}))
    assert (out.usage.input, out.usage.output) == (20 + 3000 + 500, 9)
    assert (out.usage.cached_tokens, out.usage.written_tokens, out.usage.written_1h_tokens) == (3000, 500, 100)
    split_only = parse_message(anthropic_reply(text, cache_creation={"ephemeral_5m_input_tokens": 40,
                                                                     "ephemeral_1h_input_tokens": 60}))
    assert (split_only.usage.input, split_only.usage.written_tokens, split_only.usage.written_1h_tokens) == (
        120, 100, 60)
    none = parse_message(anthropic_reply(text, cache_read_input_tokens=0, cache_creation_input_tokens=0))
    assert (none.usage.input, none.usage.cached_tokens, none.usage.written_tokens) == (20, 0, 0)
    assert none.counted
