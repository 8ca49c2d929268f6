"""The fake server's own tests: the module's server (tests/conftest.py's `server`) reset for each test, and a client
of it; their request and reply helpers are in tests/helpers_fakeserver.py."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from benchcard.testing.fakeserver import FakeServer


@pytest.fixture
def fake(server: FakeServer) -> FakeServer:
    """The shared server with the default config and zeroed counters (configure resets everything)."""
    server.configure({})
    return server


@pytest.fixture
def client(server: FakeServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=5.0, trust_env=False) as c:
        yield c
