"""The OpenAI chat completions API (and OpenRouter through it): exact bodies, reasoning settings, parsing."""

from __future__ import annotations

import json
from typing import Any

import httpx
import msgspec
import pytest

from benchcard.errors import CallError, RetryableError
from benchcard.run.providers.base import encode_body
from benchcard.run.providers.openai import OpenAIProvider, parse_chat_completion

from ...helpers_providers import OPENAI, ROUTER, SEEN, chat_reply, client_for, complete, probe_card

pytestmark = pytest.mark.usefixtures("provider_keys")  # each test gets the test keys and an empty SEEN


def test_openai_sends_exactly_the_cards_messages_and_params() -> None:
    card = probe_card()
    provider = OpenAIProvider(OPENAI, client_for(lambda r: httpx.Response(200, json=chat_reply())))
    body = provider.build_body("m-1", card.messages(), card.params, None)
    assert body == {"model": "m-1", "messages": card.messages(), **card.params}
    out = complete(provider, body)
    [request] = SEEN
    assert str(request.url) == "https://api.example/v1/chat/completions"
    assert request.content == encode_body(body)  # the stored body, byte for byte
    assert json.loads(request.content) == body
    assert request.headers["authorization"] == "Bearer sk-openai-test"
    assert out.text == "negative" and out.status == "ok" and out.finish_reason == "stop"
    assert (out.usage.input, out.usage.output, out.usage.reasoning) == (12, 7, 0)
    assert out.cost is None


def test_effort_maps_to_each_endpoints_reasoning_setting() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    client = client_for(lambda r: httpx.Response(200))
    params = {"max_tokens": 9}
    assert OpenAIProvider(OPENAI, client).build_body("m", msgs, params, "high")["reasoning_effort"] == "high"
    assert OpenAIProvider(ROUTER, client).build_body("m", msgs, params, "low")["reasoning"] == {"effort": "low"}
    assert "reasoning_effort" not in OpenAIProvider(OPENAI, client).build_body("m", msgs, params, None)


def test_openrouter_cost_and_reasoning_tokens_are_read() -> None:
    reply = chat_reply(completion_tokens=40, cost=0.00123, completion_tokens_details={"reasoning_tokens": 33})
    out = parse_chat_completion(reply)
    assert out.cost == pytest.approx(0.00123)
    assert (out.usage.output, out.usage.reasoning) == (40, 33)


@pytest.mark.parametrize(("sent", "read"), [(5.0, 5), (5, 5), (5.5, 0), (-1.0, 0), (1e30, 0), (float("nan"), 0),
                                             (True, 0), ("5", 0)])
def test_a_token_count_is_read_as_the_whole_number_it_says(sent: Any, read: int) -> None:
    """A server that does its sums in floats writes `"prompt_tokens": 5.0`: that is 5 tokens, not none (it was
    read as 0, so the cost from the price table counted nothing for it). A count that is no whole number stays 0."""
    out = parse_chat_completion(chat_reply(prompt_tokens=sent, completion_tokens=sent))
    assert (out.usage.input, out.usage.output) == (read, read)


def test_length_is_truncated_and_a_content_filter_is_a_refusal() -> None:
    assert parse_chat_completion(chat_reply("negat", "length")).status == "truncated"
    refused = parse_chat_completion(chat_reply("", "content_filter"))
    assert refused.status == "failed" and "content_filter" in (refused.error or "")
    msg = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "I can't help"},
                        "finish_reason": "stop"}]}
    out = parse_chat_completion(msg)
    assert out.status == "failed" and out.error == "refused: I can't help"


@pytest.mark.parametrize(("message", "error"), [
    ({"content": None}, "not an answer: the message content is null"),
    ({"content": []}, "not an answer: the message content is a list without a text part"),
    # a refusal sent as a content part is named as the message's own refusal is, not called "null"
    ({"content": [{"type": "refusal", "refusal": "I  can't\nhelp"}]}, "refused: I can't help"),
    ({"content": None, "tool_calls": [{"id": "t", "type": "function"}]}, "not an answer: the model asked to call a "
     "tool (the card offers none); the message content is null"),
    ({"content": "", "refusal": "I won't"}, "refused: I won't"),
])
def test_a_message_without_text_is_no_answer_even_when_it_says_stop(message: dict[str, Any], error: str) -> None:
    """`content: null` with `finish_reason: stop` was an ok, empty answer, scored; an empty string still is one."""
    out = parse_chat_completion({"choices": [{"message": {"role": "assistant", **message}, "finish_reason": "stop"}]})
    assert out.status == "failed" and (out.error or "").startswith(error) and out.text == ""
    empty = parse_chat_completion(chat_reply("", "stop"))
    assert (empty.status, empty.text, empty.error) == ("ok", "", None)
    cut = parse_chat_completion({"choices": [{"message": {"content": None}, "finish_reason": "length"}]})
    assert cut.status == "truncated"  # reasoning spent every token: cut off, never scored wrong


@pytest.mark.parametrize(("parts", "text", "error"), [
    ([{"type": "text", "text": None}], "", "not an answer: the message content is a list whose text parts hold no "
     "text"),
    ([{"type": "text", "text": 5}, {"type": "text", "text": {"value": "red"}}], "", "not an answer: the message "
     "content is a list whose text parts hold no text"),
    ([{"type": "text", "text": None}, {"type": "text", "text": "red"}], "red", None),
])
def test_a_text_part_whose_text_is_not_text_brings_no_text(parts: list[Any], text: str, error: str | None) -> None:
    """Hostile audit (round 12b): a content part `{"type": "text", "text": null}` was read as the answer "None"
    and scored (and `5` as "5", an object as its Python repr), as a Messages-API text block's null text was
    before 196db44; a part's text is taken only when it is text."""
    out = parse_chat_completion({"choices": [{"message": {"content": parts}, "finish_reason": "stop"}]})
    assert out.text == text and out.status == ("failed" if error else "ok")
    assert out.error is None if error is None else (out.error or "").startswith(error)


@pytest.mark.parametrize("finish", [["length"], {"type": "length"}, 1, True])
def test_a_finish_reason_that_is_not_text_is_no_answer(finish: Any) -> None:
    """Hostile audit (round 12b): a finish_reason that was not text (a list, an object, a number) was read as no
    reason at all, as `null` is, so an answer it may say was cut off was scored as whole; it is recorded failed,
    never scored, as a reason benchcard does not know is."""
    out = parse_chat_completion(chat_reply("negat", finish))
    assert (out.status, out.text, out.finish_reason) == ("failed", "negat", None)
    assert (out.error or "").startswith("not an answer: the stop reason is not text (")


MALFORMED_CHATS: list[tuple[Any, str]] = [
    ([], "a 200 answer whose JSON is a list, not a chat completion (an object with `choices`)"),
    ("ok", "a 200 answer whose JSON is a string, not a chat completion"),
    (None, "a 200 answer whose JSON is null, not a chat completion"),
    (42, "a 200 answer whose JSON is a number, not a chat completion"),
    (True, "a 200 answer whose JSON is true, not a chat completion"),
    ({}, "a 200 answer with no `choices`, not a chat completion (a list of choices, each an object with a `message`)"),
    ({"choices": []}, "a 200 answer with `choices` empty, not a chat completion"),
    ({"choices": "red"}, "a 200 answer with `choices` a string, not a chat completion"),
    ({"choices": [None]}, "a 200 answer with `choices[0]` null, not a chat completion"),
    ({"choices": [{"finish_reason": "stop"}]}, "a 200 answer whose `choices[0].message` is null, not an object"),
    ({"choices": [{"message": "red"}]}, "a 200 answer whose `choices[0].message` is a string, not an object"),
    ({"choices": [{"message": {"content": 5}}]},
     "a 200 answer whose `choices[0].message.content` is a number, neither text nor a list of parts"),
    ({"choices": [{"message": {"content": {"text": "red"}}}]},
     "a 200 answer whose `choices[0].message.content` is an object, neither text nor a list of parts"),
]


@pytest.mark.parametrize(("bad", "said"), MALFORMED_CHATS)
def test_an_answer_not_in_the_chat_shape_is_malformed_and_retried(bad: Any, said: str) -> None:
    """Hostile audit (wire20): JSON of another shape in a 200 (a list, a string, null, an object without choices,
    a content of another type) was a CallError, failed at once where a body that is not JSON is retried: a flaky
    proxy's garbage is the same either way. Each is retried, its line saying what came and what was expected, and
    the endpoint that sent it."""
    with pytest.raises(RetryableError) as raised:
        parse_chat_completion(bad)
    assert str(raised.value).startswith("malformed response: " + said), str(raised.value)
    provider = OpenAIProvider(OPENAI, client_for(lambda r: httpx.Response(200, content=json.dumps(bad).encode())))
    with pytest.raises(RetryableError) as sent:
        complete(provider, {"model": "m", "messages": []})
    assert str(sent.value) == f"{raised.value} (POST {OPENAI.base_url}/chat/completions)"


def test_malformed_answers_are_retried() -> None:
    # a body that is not JSON at all is transport (a proxy's page, a cut-off body): worth another attempt
    provider = OpenAIProvider(OPENAI, client_for(lambda r: httpx.Response(200, content=b'{"choices": [')))
    with pytest.raises(RetryableError, match=r"^malformed response: HTTP 200 with a body that is not JSON \(13 bytes, "
                       r"no content type\) \(POST http"):
        complete(provider, {"model": "m", "messages": []})


def test_an_upstream_error_inside_a_200_is_classified() -> None:
    with pytest.raises(RetryableError, match="upstream error 502"):
        parse_chat_completion({"error": {"code": 502, "message": "provider down"}})
    with pytest.raises(CallError, match="upstream error 400"):
        parse_chat_completion({"error": {"code": 400, "message": "bad"}})
    # OpenAI's own error object, passed on in a 200 by a proxy: its code a word, its type the status (was retried,
    # as an error without a code, and its type and code were lost)
    openai_error = {"message": "maximum context length is 128000 tokens", "type": "invalid_request_error",
                    "param": "messages", "code": "context_length_exceeded"}
    with pytest.raises(CallError, match=r"^upstream error 400 invalid_request_error \(context_length_exceeded\): "
                                        "maximum context length"):
        parse_chat_completion({"error": openai_error})
    with pytest.raises(RetryableError, match=r"^upstream error 500 server_error: oops"):
        parse_chat_completion({"error": {"message": "oops", "type": "server_error", "code": None}})
    with pytest.raises(RetryableError, match=r"^upstream error: down \(in a 200 answer\)"):
        parse_chat_completion({"error": {"message": "down"}})


def test_the_model_a_reply_names_is_kept_on_one_line() -> None:
    assert parse_chat_completion({**chat_reply(), "model": "openai/gpt-4o-2024-08-06"}).model == \
        "openai/gpt-4o-2024-08-06"
    assert parse_chat_completion({**chat_reply(), "model": " a\nb "}).model == "a b"
    assert parse_chat_completion({**chat_reply(), "model": 4}).model is None
    assert parse_chat_completion(chat_reply()).model is None


def test_input_read_from_the_prompt_cache_is_counted_inside_prompt_tokens() -> None:
    """OpenAI's `prompt_tokens` includes the tokens its prompt cache served, `prompt_tokens_details.cached_tokens`
    says how many: the usage keeps both as sent (cached a part of input), and a reply without them records none,
    the bytes of its row unchanged."""
    out = parse_chat_completion(chat_reply(prompt_tokens=2048, prompt_tokens_details={"cached_tokens": 1920,
                                                                                        "audio_tokens": 0}))
    assert (out.usage.input, out.usage.cached_tokens, out.usage.written_tokens) == (2048, 1920, 0)
    plain = parse_chat_completion(chat_reply(prompt_tokens_details={"cached_tokens": 0}))
    assert (plain.usage.input, plain.usage.cached_tokens) == (12, 0)
    assert msgspec.json.encode(plain.usage) == b'{"input":12,"output":7,"reasoning":0}'
