"""Which reply the fake server gives: the first rule matching the last user message, cycling per distinct body,
cut at max_tokens; and the helpers that read a request body and build each vendor's reply."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from benchcard.testing.fakeserver import FakeServer, parse_config
from benchcard.testing.fakeserver._replies import (
    Answer,
    anthropic_body,
    choose_answer,
    error_in_200,
    last_user_message,
    max_tokens,
    openai_body,
    prompt_tokens,
    text_of,
    truncated,
)

from ...helpers_fakeserver import chat, content


def test_max_tokens_cuts_the_reply(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"default_reply": "w1 w2 w3 w4 w5"})
    data = client.post("/chat/completions", json=chat("x", max_tokens=2)).json()
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["choices"][0]["message"]["content"] == "w1 w2"


def test_replies_first_match_wins(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure(
        {
            "default_reply": "fallback",
            "replies": [
                {"match": "capital", "reply": "Paris", "reasoning_tokens": 7, "cost": 0.0012},
                {"match": "capital of Spain", "reply": "never reached"},
                {"match": "long", "reply": "cut", "finish_reason": "length"},
            ],
        }
    )
    resp = client.post("/chat/completions", json=chat("the capital of Spain?"))
    assert content(resp) == "Paris"
    usage = resp.json()["usage"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 7
    assert usage["completion_tokens"] == 1 + 7
    assert usage["cost"] == pytest.approx(0.0012)
    long = client.post("/chat/completions", json=chat("a long one")).json()
    assert long["choices"][0]["finish_reason"] == "length"
    assert content(client.post("/chat/completions", json=chat("nothing matches"))) == "fallback"


def test_match_reads_only_the_last_user_message(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"replies": [{"match": "needle", "reply": "found"}]})
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "needle"},
            {"role": "assistant", "content": "needle"},
            {"role": "user", "content": [{"type": "text", "text": "hay"}]},
        ],
    }
    assert content(client.post("/chat/completions", json=body)) == "ok"
    body["messages"][-1] = {"role": "user", "content": [{"type": "text", "text": "a needle"}]}
    assert content(client.post("/chat/completions", json=body)) == "found"


def test_replies_cycle_per_distinct_body(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"replies": [{"match": "noisy", "replies_cycle": ["a", "b", "c"]}]})
    first = [content(client.post("/chat/completions", json=chat("noisy 1"))) for _ in range(4)]
    other = [content(client.post("/chat/completions", json=chat("noisy 2"))) for _ in range(2)]
    assert first == ["a", "b", "c", "a"]
    assert other == ["a", "b"]
    fake.reset()
    assert content(client.post("/chat/completions", json=chat("noisy 1"))) == "a"


def test_a_request_body_is_read_in_either_vendors_shape() -> None:
    body = {"system": "be brief", "messages": [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "an answer"},
        {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "image"},
                                     {"type": "text", "text": "part"}]}], "max_tokens": 7}
    assert last_user_message(body) == "second\npart"
    assert prompt_tokens(body) == 2 + 2 + 2 + 2  # system, both user turns and the assistant turn, in words
    assert max_tokens(body) == 7 and max_tokens({"max_completion_tokens": 3, "max_tokens": 9}) == 3
    assert max_tokens({"max_tokens": True}) is None and max_tokens({"max_tokens": 0}) is None
    assert last_user_message({"messages": "nope"}) == "" and prompt_tokens([]) == 0 and text_of(5) == ""
    responses = {"instructions": "be brief", "max_output_tokens": 5, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what colour"}]}]}
    assert last_user_message(responses) == "what colour" and prompt_tokens(responses) == 4
    assert max_tokens(responses) == 5 and last_user_message({"input": "a plain question"}) == "a plain question"


def test_the_answer_is_the_first_matching_rule_cut_at_max_tokens_and_cycled_per_body() -> None:
    config = parse_config({"replies": [
        {"match": "sky", "replies_cycle": ["blue", "grey"]},
        {"match": "s", "reply": "one two three four", "finish_reason": "content_filter"}]})
    cycles: dict[str, int] = {}
    assert choose_answer(config, cycles, {}, "the sky", "k1").text == "blue"
    assert choose_answer(config, cycles, {}, "the sky", "k1").text == "grey"
    assert choose_answer(config, cycles, {}, "the sky", "k2").text == "blue"  # another body starts its own cycle
    cut = choose_answer(config, cycles, {"max_tokens": 2}, "sea", "k3")
    assert (cut.text, cut.finish) == ("one two", "length")
    assert choose_answer(config, cycles, {}, "sea", "k3").finish == "content_filter"
    assert choose_answer(config, cycles, {}, "tree", "k4") == Answer("ok", "stop", 0, None)
    assert truncated(Answer("abcdef", "stop", 3, None)) == Answer("abc", "length", 3, None)


def test_each_vendors_body_counts_tokens_and_says_why_it_stopped() -> None:
    answer = Answer("two words", "length", 5, 0.25)
    body = {"model": "m-9", "messages": [{"role": "user", "content": "a b c"}]}
    openai = openai_body(7, body, answer)
    assert openai["id"] == "chatcmpl-fake-7" and openai["model"] == "m-9"
    assert openai["choices"][0]["finish_reason"] == "length"
    assert openai["usage"] == {"prompt_tokens": 3, "completion_tokens": 7, "total_tokens": 10,
                               "completion_tokens_details": {"reasoning_tokens": 5}, "cost": 0.25}
    anthropic = anthropic_body(7, {**body, "thinking": {"type": "enabled"}}, answer)
    assert anthropic["stop_reason"] == "max_tokens"
    assert [c["type"] for c in anthropic["content"]] == ["thinking", "text"]
    assert anthropic["usage"] == {"input_tokens": 3, "output_tokens": 2 + 5}
    assert anthropic_body(1, [], Answer("x", "stop", 0, None))["model"] == "fake-model"
    assert error_in_200(True, 529) == {"type": "error", "error": {"type": "overloaded_error",
                                                                  "message": "injected upstream error 529"}}
    assert error_in_200(False, 502)["error"]["code"] == 502
