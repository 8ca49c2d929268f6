"""One fake server per test module, reconfigured per test, and the request and reply helpers its tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchcard.testing.fakeserver import FakeServer

SRC = str(Path(__file__).resolve().parents[3] / "src")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def fake(server: FakeServer) -> FakeServer:
    """The shared server with the default config and zeroed counters (configure resets everything)."""
    server.configure({})
    return server


@pytest.fixture
def client(server: FakeServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=5.0, trust_env=False) as c:
        yield c


def chat(text: str, model: str = "m-1", **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}],
        **extra,
    }


def content(resp: httpx.Response) -> str:
    assert resp.status_code == 200, resp.text
    text: str = resp.json()["choices"][0]["message"]["content"]
    return text
