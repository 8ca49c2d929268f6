"""The calls of one run (`benchcard.run._calls`): what can be tested without a server. The retries, timeouts, rate
limit and pool are tested end to end over sockets in test_runner.py."""

from __future__ import annotations

import asyncio
import random
import ssl
from pathlib import Path
from types import SimpleNamespace

import certifi
import httpx
import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.run import _calls as calls
from benchcard.run._calls import backoff_delay
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project, only_run, read_jsonl, recorded_sleeps


def test_backoff_is_full_jitter_and_honours_retry_after() -> None:

    rng = random.Random(1)
    draws = [backoff_delay(3, None, 0.5, 30, rng) for _ in range(200)]
    assert min(draws) >= 0 and max(draws) <= 2.0 and max(draws) > 1.5
    assert max(backoff_delay(20, None, 0.5, 30, rng) for _ in range(50)) <= 30
    assert backoff_delay(1, 7.0, 0.5, 30, rng) == 7.0
    assert backoff_delay(1, 1e6, 0.5, 30, rng) == 600.0


def test_a_server_cannot_hold_a_cell_past_the_total_wait(tmp_path: Path, server: FakeServer, key: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry-After of 700 s on every call: no cell waits (600 s in all per cell), and each says why it gave up."""
    server.configure({"default_reply": "red", "faults": [{"kind": "429", "retry_after": 700, "times": 10}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    asked = recorded_sleeps(monkeypatch)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--json"])
    assert asked == []  # no cell waited at all: 700 s is past what one cell may wait
    assert result.exit_code == 0, result.output
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert len(rows) == 4 and {r["status"] for r in rows} == {"failed"}
    assert all("asked to wait 700 s more, past the 600 s one cell may wait in all" in r["error"] for r in rows)


def test_the_rate_limiter_sleeps_until_each_call_has_its_own_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    """rpm 600: one start every 0.1 s. With the clock held at 100 s, four calls ask to sleep 0, 0.1, 0.2, 0.3 s
    (the first starts at once), so the spacing comes from the limiter, not from how fast the machine is."""
    asked: list[float] = []

    async def sleep(delay: float) -> None:
        asked.append(round(delay, 9))

    clock = SimpleNamespace(time=lambda: 100.0)
    fake = SimpleNamespace(**{**vars(asyncio), "sleep": sleep, "get_running_loop": lambda: clock})
    monkeypatch.setattr(calls, "asyncio", fake)
    limiter = calls.RateLimiter(600)

    async def four() -> None:
        for _ in range(4):
            await limiter.wait()

    asyncio.run(four())
    assert asked == [0.1, 0.2, 0.3]
    assert calls.RateLimiter(None).interval == 0.0  # no limit: no slot, no sleep


def test_every_client_of_a_process_shares_one_tls_context_made_as_httpx_makes_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the trusted roots costs about 30 ms of CPU: a run, its judging and each `status` make a client, and
    each used to read them again. The shared context verifies as httpx's own would, and a process whose
    $SSL_CERT_FILE names another bundle gets a context of its own."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    clients = [calls.make_client(2, 5.0), calls.make_client(4, 60.0)]
    first, second = (c._transport.ssl_context for c in clients)  # type: ignore[attr-defined]
    assert first is second
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    assert len(first.get_ca_certs()) == len(httpx.create_ssl_context().get_ca_certs()) > 0
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    clients.append(calls.make_client(2, 5.0))
    assert clients[-1]._transport.ssl_context is not first  # type: ignore[attr-defined]
    for client in clients:
        asyncio.run(client.aclose())
