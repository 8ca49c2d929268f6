"""Providers over an injected httpx client whose transport is a mock: exact bodies, headers, parsing, errors."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchcard.card.load import load_card
from benchcard.errors import ProviderError
from benchcard.project import Project
from benchcard.run.providers import (
    BUILTIN,
    Price,
    cost_of,
    make_provider,
    price_table,
    provider_config,
    require_key,
)
from benchcard.run.providers.anthropic import AnthropicProvider, parse_message
from benchcard.run.providers.base import (
    CallError,
    Completion,
    Provider,
    ProviderConfig,
    RetryableError,
    Usage,
    encode_body,
    parse_retry_after,
    redact,
)
from benchcard.run.providers.openai import OpenAIProvider, parse_chat_completion

from ..helpers_run import REPO

Handler = Callable[[httpx.Request], httpx.Response]
SEEN: list[httpx.Request] = []


def client_for(handler: Handler) -> httpx.AsyncClient:
    def record(request: httpx.Request) -> httpx.Response:
        SEEN.append(request)
        return handler(request)

    return httpx.AsyncClient(transport=httpx.MockTransport(record))


def complete(provider: Any, body: dict[str, Any]) -> Any:
    async def go() -> Any:
        try:
            return await provider.complete(body)
        finally:
            await provider.client.aclose()

    return asyncio.run(go())


def chat_reply(text: str = "negative", finish: str = "stop", **usage: Any) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19, **usage}}


OPENAI = ProviderConfig("openai", "openai", "https://api.example/v1", "BC_TEST_OPENAI_KEY")
ROUTER = ProviderConfig("openrouter", "openai", "https://openrouter.ai/api/v1", "BC_TEST_OPENAI_KEY")
CLAUDE = ProviderConfig("anthropic", "anthropic", "https://api.example/v1", "BC_TEST_ANTHROPIC_KEY")


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    monkeypatch.setenv("BC_TEST_OPENAI_KEY", "sk-openai-test")
    monkeypatch.setenv("BC_TEST_ANTHROPIC_KEY", "sk-ant-test")


def probe_card() -> Any:
    return load_card(REPO / "cards" / "one-word-sentiment.yaml", Project(REPO))


# ------------------------------------------------------------------------------------------------- openai


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


def test_length_is_truncated_and_a_content_filter_is_a_refusal() -> None:
    assert parse_chat_completion(chat_reply("negat", "length")).status == "truncated"
    refused = parse_chat_completion(chat_reply("", "content_filter"))
    assert refused.status == "failed" and "content_filter" in (refused.error or "")
    msg = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "I can't help"},
                        "finish_reason": "stop"}]}
    out = parse_chat_completion(msg)
    assert out.status == "failed" and out.error == "refused: I can't help"


def test_malformed_answers_are_call_errors() -> None:
    bads: list[Any] = [{}, {"choices": []}, [], {"choices": [{"message": {"content": 5}}]}]
    for bad in bads:
        with pytest.raises(CallError, match="malformed"):
            parse_chat_completion(bad)
    # a body that is not JSON at all is transport (a proxy's page, a cut-off body): worth another attempt
    provider = OpenAIProvider(OPENAI, client_for(lambda r: httpx.Response(200, content=b'{"choices": [')))
    with pytest.raises(RetryableError, match="malformed response: HTTP 200 with a body that is not JSON"):
        complete(provider, {"model": "m", "messages": []})


def test_an_upstream_error_inside_a_200_is_classified() -> None:
    with pytest.raises(RetryableError, match="upstream error 502"):
        parse_chat_completion({"error": {"code": 502, "message": "provider down"}})
    with pytest.raises(CallError, match="upstream error 400"):
        parse_chat_completion({"error": {"code": 400, "message": "bad"}})


@pytest.mark.parametrize(("status", "kind"), [(429, RetryableError), (500, RetryableError), (503, RetryableError),
                                              (529, RetryableError), (408, RetryableError), (400, CallError),
                                              (401, CallError), (404, CallError), (422, CallError)])
def test_http_errors_are_classified(status: int, kind: type[Exception]) -> None:
    reply = httpx.Response(status, json={"error": {"message": f"nope {status}"}}, headers={"Retry-After": "2"})
    provider = OpenAIProvider(OPENAI, client_for(lambda r: reply))
    with pytest.raises(kind) as info:
        complete(provider, {"model": "m", "messages": []})
    assert str(info.value) == f"HTTP {status}: nope {status}"
    assert provider.should_retry(info.value) is (kind is RetryableError)
    if isinstance(info.value, RetryableError):
        assert info.value.retry_after == 2.0


def test_connection_errors_and_timeouts_are_retryable() -> None:
    def boom(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(RetryableError, match="connection error"):
        complete(OpenAIProvider(OPENAI, client_for(boom)), {"model": "m"})

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out")

    with pytest.raises(RetryableError, match="timed out"):
        complete(OpenAIProvider(OPENAI, client_for(slow)), {"model": "m"})


def test_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after": "0.5"})) == 0.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert parse_retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # past
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


def test_a_server_echo_of_the_key_is_redacted() -> None:
    reply = httpx.Response(401, json={"error": {"message": "Incorrect API key provided: sk-openai-test. Or "
                                                           "sk-open*******test"}})
    with pytest.raises(CallError) as info:
        complete(OpenAIProvider(OPENAI, client_for(lambda r: reply)), {"model": "m"})
    assert "sk-open" not in str(info.value) and "[redacted]" in str(info.value)
    assert redact("key sk-abc123 here", None) == "key [redacted] here"
    assert redact("value SECRETVALUE", "SECRETVALUE") == "value [redacted]"


def test_an_endpoint_without_a_key_sends_no_authorization() -> None:
    local = ProviderConfig("ollama", "openai", "http://127.0.0.1:11434/v1")
    require_key(local)
    complete(OpenAIProvider(local, client_for(lambda r: httpx.Response(200, json=chat_reply()))), {"model": "m"})
    assert "authorization" not in SEEN[0].headers


# ---------------------------------------------------------------------------------------------- anthropic


def anthropic_reply(*blocks: dict[str, Any], stop: str = "end_turn", **usage: Any) -> dict[str, Any]:
    return {"id": "msg", "type": "message", "role": "assistant", "model": "c", "content": list(blocks),
            "stop_reason": stop, "usage": {"input_tokens": 20, "output_tokens": 9, **usage}}


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
    with pytest.raises(CallError, match="malformed"):
        parse_message({"type": "message"})


# ----------------------------------------------------------------------------------------- registry, keys


def test_missing_key_names_the_variable_and_suggests_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(ProviderError) as info:
        require_key(BUILTIN["openrouter"])
    assert str(info.value) == ("OPENROUTER_API_KEY is not set; export it, or run on the embedded model with "
                               "--provider local")
    monkeypatch.setenv("OPENROUTER_API_KEY", "")
    with pytest.raises(ProviderError, match="OPENROUTER_API_KEY"):
        require_key(BUILTIN["openrouter"])
    require_key(BUILTIN["local"])  # the embedded model needs no key


def test_make_provider_by_type() -> None:
    client = client_for(lambda r: httpx.Response(200))
    assert isinstance(make_provider(provider_config("openrouter", {}), client), OpenAIProvider)
    assert isinstance(make_provider(provider_config("anthropic", {}), client), AnthropicProvider)
    cfg = provider_config("mine", {"providers": {"mine": {"type": "openai", "base_url": "http://h/v1"}}},
                          base_url="http://other/v1/")
    assert make_provider(cfg, client).url == httpx.URL("http://other/v1/chat/completions")  # type: ignore[attr-defined]


def test_a_missing_local_extra_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry imports `local` lazily: whatever is missing surfaces as one ProviderError line."""
    monkeypatch.setitem(sys.modules, "benchcard.run.providers.local", None)  # as if the module could not be imported
    with pytest.raises(ProviderError, match="local"):
        make_provider(BUILTIN["local"], client_for(lambda r: httpx.Response(200)), None)


def test_prices_come_from_the_config_only(tmp_path: Path) -> None:
    table = price_table({"prices": {"test/model": {"input": 3, "output": 15}}})
    assert table == {"test/model": Price(3.0, 15.0)}
    usage = Usage(input=1000, output=200, reasoning=50)
    assert cost_of(usage, None, "test/model", table) == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    assert cost_of(usage, 0.5, "test/model", table) == 0.5  # the provider's own figure wins
    assert cost_of(usage, 0.0, "test/model", table) == 0.0  # a free model costs 0, not "unknown"
    assert cost_of(usage, None, "other/model", table) is None
    assert price_table({}) == {}
    for bad in ({"prices": {"m": {"input": "cheap", "output": 1}}}, {"prices": {"m": 3}}, {"prices": [1]}):
        with pytest.raises(ProviderError, match="prices"):
            price_table(bad)


# ------------------------------------------------------------------------------------- the Provider interface


class _Echo(Provider):
    """The least a provider states: its body and its call; every other hook keeps the interface's default."""

    def __init__(self) -> None:
        self.config = ProviderConfig(name="echo", type="openai", base_url="http://x")

    def build_body(self, model: str, messages: list[dict[str, str]], params: Any, effort: str | None
                   ) -> dict[str, Any]:
        return {"model": model, "messages": messages}

    async def complete(self, body: Any) -> Completion:
        return Completion(text=str(body["messages"][-1]["content"]), finish_reason="stop", status="ok")


def test_a_provider_states_its_body_and_call_and_inherits_every_other_hook() -> None:
    from benchcard.run.calls import workers_for

    class Half(Provider):
        def build_body(self, model: str, messages: list[dict[str, str]], params: Any, effort: str | None
                       ) -> dict[str, Any]:
            return {}

    with pytest.raises(TypeError, match="complete"):
        Half()  # type: ignore[abstract]
    p = _Echo()
    assert workers_for(p, 16) == 16 and p.model_name is None and not p.plans_bodies
    assert p.planned_body({"a": 1}, 3) == {"a": 1}
    assert p.should_retry(RetryableError("503")) and not p.should_retry(CallError("400"))
    asyncio.run(p.prepare())
    asyncio.run(p.warm())
    asyncio.run(p.aclose())
    done = asyncio.run(p.complete(p.build_body("m", [{"role": "user", "content": "hi"}], {}, None)))
    assert done.text == "hi" and done.status == "ok"


def test_the_runner_finds_no_provider_hook_by_name() -> None:
    """Hooks are declared on `Provider` and called directly; a `getattr(provider, …)` would hide one again."""
    offenders = [f"{p.relative_to(REPO)}:{n}" for p in (REPO / "src" / "benchcard" / "run").rglob("*.py")
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "getattr(provider" in line or "getattr(s.provider" in line or "getattr(self.provider" in line]
    assert offenders == []
