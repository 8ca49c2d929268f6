"""The calls of one run (`benchcard.run._calls`): what can be tested without a server. The retries, timeouts, rate
limit and pool are tested end to end over sockets in test_runner.py."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http.client
import http.server
import json
import random
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import certifi
import httpx
import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.run import _calls as calls
from benchcard.run.options import backoff_delay
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import (
    RED_REPLY,
    ab_project,
    ok,
    only_run,
    read_head,
    read_jsonl,
    read_request_body,
    recorded_sleeps,
    run_on_raw_server,
    send_json,
    serve_raw,
    summary,
)


def test_backoff_is_full_jitter_and_honours_retry_after() -> None:

    rng = random.Random(1)
    draws = [backoff_delay(3, None, 0.5, 30, rng) for _ in range(200)]
    assert min(draws) >= 0 and max(draws) <= 2.0 and max(draws) > 1.5
    assert max(backoff_delay(20, None, 0.5, 30, rng) for _ in range(50)) <= 30
    waits = [backoff_delay(1, 7.0, 0.5, 30, rng) for _ in range(50)]  # at least what Retry-After asks, jittered
    assert min(waits) >= 7.0 and max(waits) <= 7.5 and len(set(waits)) == 50
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


# ----------------------------------------------------------------------------------- proxies ($HTTP_PROXY and kin)

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
              "no_proxy")


class _Forwarder(http.server.BaseHTTPRequestHandler):
    """A plain forwarding proxy: records each request line and its Proxy-Authorization, sends the request on to
    the fake server whatever host the URL names (a name only this proxy can resolve), returns the answer."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str | None]]
    upstream: int

    def do_POST(self) -> None:
        self.seen.append((self.path, self.headers.get("Proxy-Authorization")))
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in {"proxy-authorization", "connection"}}
        conn.request("POST", urllib.parse.urlsplit(self.path).path, body=body, headers=headers)
        answer = conn.getresponse()
        content = answer.read()
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.getheader("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)
        conn.close()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def proxy(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, list[tuple[str, str | None]]]]:
    """A forwarding proxy on 127.0.0.1 (its port, and what passed through it), with no proxy variable set."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    seen: list[tuple[str, str | None]] = []
    handler = type("Forwarder", (_Forwarder,), {"seen": seen, "upstream": server.port})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1], seen
    httpd.shutdown()
    httpd.server_close()


def _files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_a_run_goes_through_the_proxy_the_environment_names(tmp_path: Path, server: FakeServer, key: str,
                                                           proxy: tuple[int, list[tuple[str, str | None]]],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit 11: $HTTP_PROXY was ignored. The endpoint's name resolves only at the proxy, so every call
    answered went through it, with the proxy's credentials, which no file of the project holds."""
    port, seen = proxy
    server.configure({"default_reply": "red"})
    monkeypatch.setenv("HTTP_PROXY", f"http://puser:pr0xy-s3cret@127.0.0.1:{port}")
    upstream = f"http://upstream.invalid:{server.port}/v1"
    project = ab_project(tmp_path, upstream, fixtures=2, repetitions=1)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--json"])
    assert result.exit_code == 0, result.output
    assert len(seen) == 4 and {path for path, _ in seen} == {upstream + "/chat/completions"}
    assert {auth for _, auth in seen} == {"Basic " + base64.b64encode(b"puser:pr0xy-s3cret").decode()}
    assert [r["status"] for r in read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")] == ["ok"] * 4
    assert "pr0xy-s3cret" not in result.output and _files_holding(project.root, "pr0xy-s3cret") == []


def test_no_proxy_and_loopback_go_direct(tmp_path: Path, server: FakeServer, key: str,
                                         proxy: tuple[int, list[tuple[str, str | None]]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A local server is never sent to the proxy (which could not reach it), and $NO_PROXY's hosts are not
    either: the name only the proxy resolves then fails to connect, and the proxy saw nothing."""
    port, seen = proxy
    server.configure({"default_reply": "red"})
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    direct = ab_project(tmp_path / "direct", server.base_url, fixtures=2, repetitions=1)
    assert CliRunner().invoke(cli, ["-C", str(direct.root), "run", "colour-ab", "--json"]).exit_code == 0
    monkeypatch.delenv("NO_PROXY")
    assert CliRunner().invoke(cli, ["-C", str(direct.root), "run", "colour-ab", "--json"]).exit_code == 0
    assert seen == []
    monkeypatch.setenv("NO_PROXY", "example.org,upstream.invalid")
    named = ab_project(tmp_path / "named", f"http://upstream.invalid:{server.port}/v1", fixtures=4, repetitions=1)
    result = CliRunner().invoke(cli, ["-C", str(named.root), "run", "colour-ab", "--attempts", "1",
                                      "--concurrency", "1"])
    assert result.exit_code != 0 and "upstream.invalid" in result.output
    assert seen == []


@pytest.mark.parametrize(("listens", "written"), [("127.0.0.2", "127.0.0.2"), ("127.0.0.1", "0x7f.1")])
def test_every_loopback_address_goes_direct_past_a_dead_proxy(tmp_path: Path, key: str, listens: str, written: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Only 127.0.0.1, localhost and [::1] were exempt from a proxy: a local server on 127.0.0.2 (Linux answers
    all of 127.0.0.0/8 on `lo`) was sent to $HTTP_PROXY, here a port nothing listens on, and every cell failed
    with `cannot reach the proxy`, whatever $NO_PROXY's 127.0.0.1 said; so was 127.0.0.1 written `0x7f.1`, as
    the resolver reads it. Every loopback host goes direct."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{closed}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeServer({"default_reply": "red"}, host=listens) as there:
        assert there.base_url.startswith(f"http://{listens}:")
        project = ab_project(tmp_path, there.base_url.replace(listens, written), fixtures=2, repetitions=1)
        result = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--attempts", "1", "--json"])
        assert result.exit_code == 0, result.output
        assert there.stats()["calls"] == 4
    assert [r["status"] for r in read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")] == ["ok"] * 4


@pytest.mark.parametrize(("host", "direct"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("127.255.255.254", True), ("localhost", True), ("LOCALHOST", True),
    ("127.1", True), ("2130706433", True), ("0x7f000001", True), ("0x7f.1", True), ("10.1", False), ("1", False),
    ("app.localhost", True), ("[::1]", True), ("[0:0:0:0:0:0:0:1]", True), ("[::ffff:127.0.0.2]", True),
    ("128.0.0.1", False), ("10.0.0.1", False), ("localhost.example.com", False), ("notlocalhost", False),
    ("[::2]", False), ("upstream.invalid", False), ("localhost.localdomain", True),
    ("app.localhost.localdomain", True), ("host.localdomain", False), ("localhost4", False),
])
def test_a_loopback_host_is_called_directly_and_any_other_through_the_proxy(host: str, direct: bool,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client = calls.make_client(2, 5.0)
    try:
        chosen = client._transport_for_url(httpx.URL(f"http://{host}:8000/v1"))
        assert (chosen is client._transport) is direct
    finally:
        asyncio.run(client.aclose())


def test_an_unreachable_proxy_is_one_line_without_its_password(tmp_path: Path, server: FakeServer, key: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("HTTPS_PROXY", f"http://puser:pr0xy-s3cret@127.0.0.1:{closed}")
    monkeypatch.setenv("HTTP_PROXY", f"http://puser:pr0xy-s3cret@127.0.0.1:{closed}")
    project = ab_project(tmp_path, f"http://upstream.invalid:{server.port}/v1", fixtures=4, repetitions=1)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--attempts", "1",
                                      "--concurrency", "1"])
    assert result.exit_code != 0, (result.output, result.stderr)
    assert f"proxy 127.0.0.1:{closed}" in result.output, result.output
    assert "pr0xy-s3cret" not in result.output + result.stderr
    assert _files_holding(project.root, "pr0xy-s3cret") == []


class _Connects(http.server.BaseHTTPRequestHandler):
    """A proxy that records each CONNECT (the tunnel an https:// call asks for) with its headers and refuses it."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, dict[str, str]]]

    def do_CONNECT(self) -> None:
        self.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_https_call_sends_the_proxy_credentials_on_the_connect_only(tmp_path: Path, key: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The credentials are handed to aiohttp as the proxy's `Authorization`, which aiohttp moves to the CONNECT's
    `Proxy-Authorization` (connector._update_proxy_auth_header_and_build_proxy_req, not a public promise): an
    aiohttp that stopped moving it would send the proxy no credentials here, and this fails rather than the
    users' runs going on with a 407."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    seen: list[tuple[str, dict[str, str]]] = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("Connects", (_Connects,), {"seen": seen}))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HTTPS_PROXY", f"http://puser:pr0xy-s3cret@127.0.0.1:{httpd.server_address[1]}")
        project = ab_project(tmp_path, "https://upstream.invalid:8443/v1", fixtures=2, repetitions=1)
        result = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--attempts", "1",
                                          "--concurrency", "1"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert [r["status"] for r in read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")] == ["failed"] * 4
    basic = "Basic " + base64.b64encode(b"puser:pr0xy-s3cret").decode()
    assert {(path, headers.get("proxy-authorization")) for path, headers in seen} == {("upstream.invalid:8443", basic)}
    assert all("authorization" not in headers for _, headers in seen)
    assert "pr0xy-s3cret" not in result.output and _files_holding(project.root, "pr0xy-s3cret") == []


# ------------------------------------------------------------------------------------ keep-alive closed unsaid

_LINGER_0 = b"\x01\x00\x00\x00\x00\x00\x00\x00"  # SO_LINGER on, 0 s: close() sends a reset, not a FIN


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_keep_alive_connection_the_server_closed_is_sent_again_at_once_and_counted(
        tmp_path: Path, key: str, reset: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit (wire20): a server that keeps each connection open after its answer, saying nothing of closing
    it, then drops it unanswered when the next request comes (as one closing idle connections does, the request
    crossing the close). Each such call spent one of its cell's attempts and its backoff (48 cells at 4 in flight:
    44 recorded with 2 to 4 attempts, one attempt from failing). Now it is sent again at once on a new connection,
    with no backoff and no narrowing; but the server read it before dropping it (it may have billed it), so the
    cell's row counts it (wire21: it was recorded as 1 attempt): every call the server took is in `attempts`."""
    lock = threading.Lock()
    seen = {"answered": 0, "dropped": 0}
    asked = recorded_sleeps(monkeypatch)

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            time.sleep(0.02)
            send_json(conn, RED_REPLY, close=False)
            with lock:
                seen["answered"] += 1
            if conn.recv(65536):  # the next request on this connection: read, then dropped unanswered
                with lock:
                    seen["dropped"] += 1
            if reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_0)

    project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "4", "--timeout", "30",
                                        fixtures=6, repetitions=4)
    out = summary(ok(result))
    rows = read_jsonl(project.root / out["runs"][0]["folder"] / "outputs.jsonl")
    assert [(r["status"], r["error"]) for r in rows] == [("ok", None)] * 48
    assert seen["answered"] == 48 and seen["dropped"] >= 40, seen  # the connections were reused, then dropped
    assert sum(r["attempts"] for r in rows) == 48 + seen["dropped"], (seen, [r["attempts"] for r in rows])
    assert asked == [] and out["runs"][0]["narrowed"] is None  # no backoff, the calls in flight kept


def test_a_request_that_never_left_a_closed_connection_is_sent_again_not_counted(
        tmp_path: Path, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection the server closed right after its answer (no `Connection: close`), handed out again before
    the client saw the close (aiohttp's pool takes it for open here, a race made certain): aiohttp finds it
    closed as it writes and writes nothing, so the request provably never reached the server. It is sent again
    at once on a new connection and not counted: each cell's row says 1 attempt, the server took one request a
    cell, and nothing waited."""
    from aiohttp.client_proto import ResponseHandler

    monkeypatch.setattr(ResponseHandler, "is_connected", lambda self: True)
    requests: list[int] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            requests.append(1)
            send_json(conn, RED_REPLY, close=False)

    asked = recorded_sleeps(monkeypatch)
    project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "1", "--timeout", "30",
                                        "--rpm", "300", fixtures=3, repetitions=1)
    out = summary(ok(result))
    rows = read_jsonl(project.root / out["runs"][0]["folder"] / "outputs.jsonl")
    assert [(r["status"], r["attempts"], r["error"]) for r in rows] == [("ok", 1, None)] * 6
    assert len(requests) == 6
    assert all(wait <= 0.25 for wait in asked), asked  # the rate limit's spacing only, never a backoff


def test_every_route_of_the_run_s_client_resends_on_a_stale_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resend on a keep-alive connection found closed is the aiohttp transport's: the client a run makes takes
    it for a direct host, a loopback one and one behind $HTTPS_PROXY or $HTTP_PROXY alike, so that no call a user
    makes goes through a transport without it (only a transport a test passes in, a mock with no connections)."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client = calls.make_client(2, 5.0)
    try:
        routes = [client._transport_for_url(httpx.URL(url)) for url in
                  ("https://api.openai.com/v1", "http://gpu1:8000/v1", "http://127.0.0.1:8000/v1")]
    finally:
        asyncio.run(client.aclose())
    assert len({id(route) for route in routes}) == 3  # two proxies and the direct one: three transports
    assert all(isinstance(route, calls._transport_class()) for route in routes), routes


def test_a_stale_connection_is_told_on_an_aiohttp_without_its_reset_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """`aiohttp.ClientConnectionResetError` came in aiohttp 3.10.6, and benchcard takes 3.10.0 (httpx-aiohttp's
    floor): on those, telling a stale connection raised AttributeError for every error on a reused connection,
    in place of the call's own. A reset is told by Python's ConnectionResetError, which that error is."""
    import aiohttp

    def failed(cause: BaseException) -> httpx.HTTPError:
        exc = httpx.ReadError("failed")
        exc.__cause__ = cause
        return exc

    monkeypatch.delattr(aiohttp, "ClientConnectionResetError", raising=False)
    assert calls._stale(failed(ConnectionResetError(104, "Connection reset by peer")))
    assert calls._stale(failed(aiohttp.ClientOSError(104, "Connection reset by peer")))
    key: Any = SimpleNamespace(ssl=None, host="h", port=1)  # what aiohttp reads of a connection's key
    refused = aiohttp.ClientConnectorError(key, OSError(111, "refused"))
    assert not calls._stale(failed(refused))
    assert not calls._stale(failed(TimeoutError()))


def test_a_request_aiohttp_could_not_write_is_told_as_never_sent() -> None:
    """What aiohttp raises when it finds the connection closed as it writes (the body's write since aiohttp 3.11,
    wrapping its "Cannot write to closing transport"; the headers' write raises that itself in 3.10) is a request
    that never left: not counted. A disconnect or a reset after the write is a request the server may have read."""
    import aiohttp

    def failed(cause: BaseException) -> httpx.HTTPError:
        exc = httpx.ReadError("failed")
        exc.__cause__ = cause
        return exc

    wrapped = aiohttp.ClientOSError(None, "Can not write request body for http://127.0.0.1/v1/chat/completions")
    wrapped.__cause__ = ConnectionResetError("Cannot write to closing transport")
    fresh = calls._Sending(reused=True)
    assert calls._unsent(failed(wrapped), fresh)
    assert calls._unsent(failed(ConnectionResetError("Cannot write to closing transport")), fresh)
    assert not calls._unsent(failed(aiohttp.ServerDisconnectedError()), fresh)
    assert not calls._unsent(failed(aiohttp.ClientOSError(104, "Connection reset by peer")), fresh)
    assert calls._unsent(failed(aiohttp.ServerDisconnectedError()), calls._Sending(reused=True, closed=True))


def test_a_server_dropping_every_request_is_not_sent_them_again_at_once(tmp_path: Path, key: str) -> None:
    """Only a request on a reused connection is sent again at once: a server that drops every request on a new
    connection too gets one request per attempt, and each cell fails with the line of a dropped connection."""
    lock = threading.Lock()
    requests: list[int] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            with lock:
                requests.append(1)

    project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "2", "--timeout", "30",
                                        "--attempts", "2", fixtures=1, repetitions=1)
    rows = read_jsonl(project.root / summary(result)["runs"][0]["folder"] / "outputs.jsonl")
    assert len(rows) == 2 and len(requests) == 4, (rows, requests)
    assert all(r["status"] == "failed" and r["attempts"] == 2 and r["error"].startswith(
        "connection error: ServerDisconnectedError: Server disconnected (gave up after 2 attempts)") for r in rows)


def test_a_body_sent_as_a_stream_is_never_sent_again_half_read(key: str) -> None:
    """A body sent as a stream (as httpx sends a file's upload) is read as it goes: sent again on another connection
    it could go out empty or cut. Only a body held whole is sent again at once; a stream's call fails as before, and
    its caller's own retry reads the file again."""
    bodies: list[bytes] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            bodies.append(read_request_body(conn, read_head(conn)))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            conn.recv(65536)  # the next request on this connection: dropped unanswered

    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    serve_raw(listener, answer, done)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/files"

    async def stream() -> AsyncIterator[bytes]:
        yield b'{"a": '
        yield b"1}"

    async def go() -> tuple[int, str]:
        client = calls.make_client(1, 10.0)
        try:
            first = await client.post(url, content=b'{"a": 0}', headers={"Content-Length": "8"})
            with pytest.raises(httpx.HTTPError) as raised:
                await client.post(url, content=stream(), headers={"Content-Length": "8"})
            return first.status_code, repr(raised.value.__cause__)
        finally:
            await client.aclose()

    try:
        status, cause = asyncio.run(go())
    finally:
        done.set()
    # the server closes with the second request unread or half read: a disconnect or a reset, as the bytes fall
    assert status == 200 and cause.startswith(("ServerDisconnectedError", "ClientOSError(104"))
    assert bodies == [b'{"a": 0}']  # the stream went out once, on the stale connection, and was not sent again


def test_huge_answers_read_at_once_are_few_whatever_the_calls_in_flight(tmp_path: Path, key: str) -> None:
    """Hostile audit (wire20): the cap of an answer is per call, so 64 calls in flight with answers near it held
    3.8 GB (benchmarks/huge_answers.py). A server holding the last KiB of each of 16 answers of 4 MiB until all
    16 are nearly sent (or a second went by): the run reads at most LARGE_ANSWERS_AT_ONCE of them at a time, the
    others wait their turn, and every answer is recorded whole."""
    import tracemalloc

    from benchcard.run.providers.base import LARGE_ANSWER_BYTES, LARGE_ANSWERS_AT_ONCE

    text = "red " + "x" * (4 * 2**20)
    reply = json.dumps({"choices": [{"message": {"content": text}, "finish_reason": "stop"}]}).encode()
    sent = memoryview(reply)
    together = threading.Barrier(16, timeout=1.0)

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(reply))
            conn.sendall(sent[:-1024])  # a view: this server, in the test's process, holds one copy of the answer
            with contextlib.suppress(threading.BrokenBarrierError):
                together.wait()
            conn.sendall(sent[-1024:])

    tracemalloc.start()
    try:
        project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "16", "--timeout", "30",
                                            fixtures=8, repetitions=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rows = read_jsonl(project.root / summary(ok(result))["runs"][0]["folder"] / "outputs.jsonl")
    assert [(r["status"], len(r["text"])) for r in rows] == [("ok", len(text))] * 16
    # the answers read in turn, twice each at most (their bytes, then their text), and the others' first MiB:
    # 36 MiB measured; the 16 read together took 76 MiB
    assert peak < LARGE_ANSWERS_AT_ONCE * 2 * len(reply) + 16 * LARGE_ANSWER_BYTES, peak / 2**20


def test_an_answer_is_let_go_once_recorded_not_when_the_collector_runs(tmp_path: Path, key: str) -> None:
    """Each answer's body was kept on its response, which reference cycles hold until Python's collector runs:
    64 answers of 30 MiB one at a time took 969 MB. Read one at a time, 8 answers of 4 MiB take the memory of
    one or two (the collector held off, as between its runs)."""
    import gc
    import tracemalloc

    reply = json.dumps({"choices": [{"message": {"content": "x" * (4 * 2**20)}, "finish_reason": "stop"}]}).encode()

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(reply))
            conn.sendall(reply)

    gc.disable()
    tracemalloc.start()
    try:
        _, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "1", fixtures=4, repetitions=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gc.enable()
    assert summary(ok(result))["runs"][0]["counts"]["ok"] == 8
    # the server's copy, and one answer's blocks, bytes, text and row: 18 MiB measured; kept on responses, 52 MiB
    assert peak < 6 * len(reply), peak / 2**20


def test_a_connection_error_breaks_the_timeouts_in_a_row_but_not_the_time_with_no_answer() -> None:
    """The silence rule stops on calls "in a row" timed out: a connection refused between them (no answer, no
    timeout) starts that row again, so the run does not stop on timeouts that were not in a row; no answer came
    either, so the time with no answer runs on, and the next timeouts in a row stop the run as before."""
    import aiohttp

    key: Any = SimpleNamespace(ssl=None, host="h", port=1)
    refused = aiohttp.ClientConnectorError(key, OSError(111, "refused"))
    outcomes: list[BaseException | None] = []

    async def complete(body: dict[str, Any]) -> Any:
        error = outcomes.pop(0)
        if error is None:
            await asyncio.sleep(1)  # past the timeout
        raise error or AssertionError("timed out first")

    provider = SimpleNamespace(complete=complete, should_retry=lambda exc: True)
    s: Any = SimpleNamespace(heard_at=time.monotonic() - 60, options=SimpleNamespace(timeout=0.01), provider=provider,
                             silent=set(), silent_calls=0, workers=1, stopped=None, secret_env=None, hidden=(),
                             longer_answers="raise --timeout", silent_stop=None, answered=True)
    s.stop = lambda why: setattr(s, "stopped", s.stopped or why)  # as Session.stop, with no cell to wake
    heard = s.heard_at

    async def calls_(pattern: str) -> None:
        for i, what in enumerate(pattern):
            outcomes.append(None if what == "t" else refused)
            await calls._attempt(s, calls.Job(cell=f"c{i}", fixture="f", body={}), 1, time.monotonic())

    asyncio.run(calls_("tttt" + "c" + "tttt"))
    assert s.stopped is None and s.silent_calls == 4 and s.heard_at == heard  # 4 in a row, no answer since
    asyncio.run(calls_("t"))
    assert s.stopped is not None and s.stopped.startswith("5 calls in a row over 5 cells timed out"), s.stopped
