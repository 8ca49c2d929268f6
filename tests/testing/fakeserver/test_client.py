"""`FakeServer`, the fake server in a child process: started with its config and keywords, stopped on exit."""

from __future__ import annotations

import time

import httpx
import pytest

from benchcard.testing.fakeserver import FakeServer, FakeServerError

from ...helpers_fakeserver import chat, content


def test_latency_keyword_survives_the_initial_config() -> None:
    with (
        FakeServer({"default_reply": "slow"}, latency_ms=150) as srv,
        httpx.Client(base_url=srv.base_url, trust_env=False, timeout=5) as c,
    ):
        started = time.monotonic()
        assert content(c.post("/chat/completions", json=chat("x"))) == "slow"
        assert time.monotonic() - started >= 0.15
        port = srv.port
    with pytest.raises(httpx.ConnectError):  # stopped on exit
        httpx.get(f"http://127.0.0.1:{port}/_control/stats", trust_env=False)


def test_a_server_not_started_says_so_and_a_bad_config_never_starts_one() -> None:
    srv = FakeServer({"default_reply": "x"})
    with pytest.raises(FakeServerError, match=r"^fake server is not running$"):
        _ = srv.base_url
    with pytest.raises(FakeServerError, match=r"config\.replies: expected a list"):
        FakeServer({"replies": {}})


def test_reset_zeroes_the_counters_and_keeps_the_config(fake: FakeServer) -> None:
    fake.configure({"default_reply": "kept"})
    with httpx.Client(base_url=fake.base_url, trust_env=False, timeout=5) as c:
        assert content(c.post("/chat/completions", json=chat("x"))) == "kept"
        assert fake.stats(by_request=False)["calls"] == 1 and "by_request" not in fake.stats(by_request=False)
        fake.reset()
        assert fake.stats()["calls"] == 0 and fake.stats()["by_request"] == {}
        assert content(c.post("/chat/completions", json=chat("x"))) == "kept"
