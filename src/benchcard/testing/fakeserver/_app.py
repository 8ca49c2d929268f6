"""The fake server itself: an aiohttp application on 127.0.0.1 with its counters, handlers and control endpoints,
and `main`, what `python -m benchcard.testing.fakeserver` runs. See the package docstring for the endpoints."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import ipaddress
import json
import random
import signal
import socket
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from benchcard._util.hashing import digest
from benchcard.errors import FakeServerError
from benchcard.testing.fakeserver._batches import BatchStore, add_routes
from benchcard.testing.fakeserver._config import ANSWERED_FAULTS, Config, FaultRule, parse_config
from benchcard.testing.fakeserver._replies import (
    Answer,
    answered_by,
    anthropic_body,
    choose_answer,
    echoed,
    error_in_200,
    last_user_message,
    openai_body,
    responses_body,
    sent_key,
    spoiled,
    truncated,
)

HOST: Final = "127.0.0.1"
#: Prompts with long fixtures exceed aiohttp's default 1 MiB body limit; real providers accept far more.
MAX_BODY_BYTES: Final = 64 * 1024 * 1024
#: A body that is valid JSON up to the cut, then stops: what a proxy that dies mid-response delivers.
MALFORMED_BODY: Final = (
    b'{"id": "fake-malformed", "object": "chat.completion", "choices": [{"index": 0, "mess'
)

#: What a proxy or captive portal sends in the API's place: a 200 that is an HTML page.
PROXY_PAGE: Final = b"<!doctype html><html><body><h1>Please sign in to continue</h1></body></html>"

#: Where a `redirect` fault points: another host, over plain http, with a password in the URL.
REDIRECT_TO: Final = "http://mirror:hunter2@elsewhere.invalid/v1/chat/completions"
#: Where a `bad_redirect` fault points: an address no URL parser reads (its port is not a number).
BAD_REDIRECT_TO: Final = "http://mirror:hunter2@elsewhere.invalid:x/v1/chat/completions"
#: How far a `zstd_bomb` inflates: far past any cap, from a body of about 8 KiB.
BOMB_MIB: Final = 256


def zstd_bomb(mib: int) -> bytes:
    """A zstd frame that inflates to `mib` MiB of spaces: RLE blocks of 128 KiB, four bytes each (RFC 8878)."""
    blocks = mib * 8
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic; no dictionary, size or checksum; a 128 KiB window
    for index in range(blocks):
        header = (index == blocks - 1) | 1 << 1 | 131072 << 3  # last block?, type RLE, 128 KiB
        frame += header.to_bytes(3, "little") + b" "
    return bytes(frame)


# ---------------------------------------------------------------------------------------------------- state


@dataclass(slots=True)
class _State:
    """Counters and per-body progress; everything here is reset together so tests start from a clean slate.

    Only ``by_request`` grows with the number of distinct bodies (plus ``fault_hits`` / ``cycle_pos`` for
    bodies that actually match a fault or a reply cycle); ``bodies`` grows only when ``record_bodies`` is on,
    ``headers`` when ``record_headers`` is.
    """

    config: Config
    rng: random.Random
    calls: int = 0
    with_key: int = 0
    without_key: int = 0
    max_in_flight: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    first_of: dict[str, int] = field(default_factory=dict)  # each status's first call, by its number
    by_endpoint: Counter[str] = field(default_factory=Counter)
    by_fault: Counter[str] = field(default_factory=Counter)
    by_request: dict[str, int] = field(default_factory=dict)
    fault_hits: dict[tuple[int, str], int] = field(default_factory=dict)
    cycle_pos: dict[str, int] = field(default_factory=dict)
    bodies: list[Any] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    batch: BatchStore = field(default_factory=BatchStore)

    @classmethod
    def fresh(cls, config: Config) -> _State:
        return cls(config=config, rng=random.Random(config.seed))

    def stats(self, *, by_request: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "calls": self.calls,
            "distinct_requests": len(self.by_request),
            "by_status": dict(self.by_status),
            # the calls received after the first that got each status (after a 401: calls a stopped client sent)
            "after_first": {status: self.calls - first for status, first in self.first_of.items()},
            "by_endpoint": dict(self.by_endpoint),
            "by_fault": dict(self.by_fault),
            "with_key": self.with_key,
            "without_key": self.without_key,
            "max_in_flight": self.max_in_flight,
        }
        if self.config.record_bodies:
            out["bodies"] = list(self.bodies)
        if self.config.record_headers:
            out["headers"] = list(self.headers)
        if by_request:
            out["by_request"] = dict(self.by_request)
        if self.batch.uploads or self.batch.batches:
            out["batch"] = self.batch.stats()
        return out


@dataclass(slots=True)
class _Server:
    """The app's one mutable slot: aiohttp freezes app state once started, so resets swap ``state`` here.

    ``in_flight`` is a gauge, not a counter: it lives outside :class:`_State` so that calls still running
    when a reset arrives are neither forgotten nor decremented below zero.
    """

    state: _State
    in_flight: int = 0
    held: int = 0  # calls of a `held` fault waiting for a release now (a gauge, as in_flight)
    release: asyncio.Event = field(default_factory=asyncio.Event)  # set and replaced by each release

    def replace(self, config: Config) -> None:
        self.state = _State.fresh(config)
        self.state.max_in_flight = self.in_flight

    def stats(self, *, by_request: bool = True) -> dict[str, Any]:
        return {**self.state.stats(by_request=by_request), "in_flight": self.in_flight, "held": self.held}

    async def hold(self) -> None:
        """Wait for the next release (`POST /_control/release`): a held call's answer goes when the test says."""
        self.held += 1
        try:
            await self.release.wait()
        finally:
            self.held -= 1

    def let_go(self) -> int:
        """Release the calls held now (a call held later waits for the next release); how many."""
        released, old, self.release = self.held, self.release, asyncio.Event()
        old.set()
        return released


_SERVER: Final = web.AppKey("server", _Server)


# -------------------------------------------------------------------------------------------- responses


def _has_key(request: web.Request) -> bool:
    auth = request.headers.get("Authorization", "")
    scheme, _, token = auth.partition(" ")
    return bool(request.headers.get("x-api-key")) or (scheme.lower() in ("bearer", "basic") and bool(token.strip()))


def _error(anthropic: bool, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """An error in the provider's own shape, so the runner's error parsing is exercised too."""
    if anthropic:
        kinds = {
            401: "authentication_error",
            429: "rate_limit_error",
            500: "api_error",
            503: "overloaded_error",
        }
        payload: dict[str, Any] = {
            "type": "error",
            "error": {"type": kinds.get(status, "invalid_request_error"), "message": message},
        }
    else:
        payload = {"error": {"message": message, "type": "fake_error", "code": status}}
    return web.json_response(payload, status=status, headers=headers)


def _retry_after_header(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


# ------------------------------------------------------------------------------------------------- handlers


async def _drop(request: web.Request) -> web.StreamResponse:
    """Close the socket without a byte of response, like a proxy or server that died mid-request."""
    transport = request.transport
    if transport is not None:
        transport.close()
    # Nothing can be sent any more. aiohttp treats a CancelledError from a handler as "client went away":
    # it drops the connection quietly, whereas returning a response would log a write-to-closed error.
    raise asyncio.CancelledError


Shape = Callable[[int, Any, Answer], dict[str, Any]]


async def _completion(request: web.Request, anthropic: bool, shape: Shape | None = None) -> web.StreamResponse:
    state = request.app[_SERVER].state
    loop = asyncio.get_running_loop()
    arrived = loop.time()  # the latency runs from here, so the server's own work is inside it, not added to it
    raw = await request.read()
    try:
        body: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        body, key = None, digest(raw)
    else:
        try:
            key = digest(body)
        except ValueError:  # JSON holding a lone surrogate (`"\ud800"`), which canonical JSON cannot encode
            key = digest(raw)

    # Bookkeeping first, synchronously, so counts never depend on how the call ends.
    state.calls += 1
    call_id = state.calls  # read now: after the sleep below, other calls will have moved the counter
    has_key = _count(state, request, body, raw, key)
    status, fault, answer = _decide(state, body, has_key, key)
    state.first_of.setdefault(status, call_id)
    await _wait(request, fault, arrived + _delay_ms(state, fault) / 1000.0)

    if status == "400":
        return _error(anthropic, 400, "request body is not a JSON object")
    if status == "401" and fault is None:
        return _error(anthropic, 401, "missing API key: send 'Authorization: Bearer ...', 'Basic ...' or 'x-api-key'")
    if fault is not None and fault.kind not in ANSWERED_FAULTS:
        return await _fault_response(request, anthropic, fault)
    assert answer is not None
    if fault is not None and fault.kind == "truncate":
        answer = truncated(answer)
    if state.config.echo_key:
        answer = dataclasses.replace(answer, text=echoed(answer.text, sent_key(request.headers)))
    shape = shape or (anthropic_body if anthropic else openai_body)
    payload = answered_by(shape(call_id, body, answer), state.config.reply_model)
    return web.json_response(spoiled(payload, fault.kind if fault is not None else None))


async def _wait(request: web.Request, fault: FaultRule | None, until: float) -> None:
    """The call's latency, to `until` on the loop's clock; then, for a held fault, the test's release."""
    delay = until - asyncio.get_running_loop().time()
    if delay > 0:
        await asyncio.sleep(delay)
    if fault is not None and fault.held:
        await request.app[_SERVER].hold()


def _count(state: _State, request: web.Request, body: Any, raw: bytes, key: str) -> bool:
    """A call counted by endpoint, body and key (and its body kept when the config records bodies); whether it
    carried a key."""
    state.by_endpoint[request.path] += 1
    state.by_request[key] = state.by_request.get(key, 0) + 1
    has_key = _has_key(request)
    if has_key:
        state.with_key += 1
    else:
        state.without_key += 1
    if state.config.record_bodies:
        state.bodies.append(body if body is not None else raw.decode("utf-8", "replace"))
    if state.config.record_headers:
        state.headers.append({k.lower(): v for k, v in request.headers.items()})
    return has_key


def _decide(state: _State, body: Any, has_key: bool, key: str) -> tuple[str, FaultRule | None, Answer | None]:
    """What the call gets: the status the client will see (HTTP codes as strings, "drop" for "no response at
    all"), the fault injected if any, and the answer (none for a call that gets no reply), counted."""
    config = state.config
    fault: FaultRule | None = None
    answer: Answer | None = None
    if body is None or not isinstance(body, dict):
        status = "400"
    elif config.require_key and not has_key:
        status = "401"
    else:
        user = last_user_message(body)
        fault = _fault_for(state, user, key)
        if fault is None or fault.kind in ANSWERED_FAULTS:
            answer = choose_answer(config, state.cycle_pos, body, user, key)
        refused = ("400", "401", "429", "500", "503", "drop")
        status = fault.kind if fault is not None and fault.kind in refused else "200"
    if fault is not None:
        state.by_fault[fault.kind] += 1
    state.by_status[status] += 1
    return status, fault, answer


def _fault_for(state: _State, user: str, key: str) -> FaultRule | None:
    """The first fault rule matching the user message that has hits left for this body (and in `total`)."""
    for index, rule in enumerate(state.config.faults):
        if rule.match in user:
            hits = state.fault_hits.get((index, key), 0)
            spent = state.fault_hits.get((index, ""), 0)  # hits over all bodies, for `total`
            if hits < rule.times and (rule.total is None or spent < rule.total):
                state.fault_hits[(index, "")] = spent + 1
                state.fault_hits[(index, key)] = hits + 1
                return rule
    return None


def _delay_ms(state: _State, fault: FaultRule | None) -> float:
    """The call's latency: the config's, its jitter, and a hang's seconds."""
    config = state.config
    delay = config.latency_ms
    if config.latency_jitter_ms:
        delay += state.rng.uniform(0.0, config.latency_jitter_ms)
    if fault is not None and fault.kind == "hang":
        delay += fault.hang_s * 1000.0
    return delay


async def _fault_response(request: web.Request, anthropic: bool, fault: FaultRule) -> web.StreamResponse:
    """The reply of a fault that replaces the answer: a dropped socket, a malformed body, an error in a 200, a
    proxy's page, or a 429/5xx in the provider's shape (with Retry-After on a 429 or when the rule sets it)."""
    if fault.kind == "drop":
        return await _drop(request)
    if fault.kind == "malformed":
        return web.Response(body=MALFORMED_BODY, status=200, content_type="application/json")
    if fault.kind == "shapeless":  # JSON whole, of another shape than any API's answer
        return web.Response(body=b"[]", status=200, content_type="application/json")
    if fault.kind == "error200":
        return web.json_response(error_in_200(anthropic, fault.code))
    if fault.kind == "html":  # a captive portal or proxy answering in the API's place
        return web.Response(body=PROXY_PAGE, status=200, content_type="text/html")
    if fault.kind == "redirect":  # with an answer in its body, as if the other host had already given it
        answer = openai_body(0, None, Answer("redirected", "stop", 0, None))
        return web.json_response(answer, status=307, headers={"Location": REDIRECT_TO})
    if fault.kind == "bad_redirect":
        return web.json_response({}, status=307, headers={"Location": BAD_REDIRECT_TO})
    if fault.kind == "zstd_bomb":
        return web.Response(body=zstd_bomb(BOMB_MIB), status=200, content_type="application/json",
                            headers={"Content-Encoding": "zstd"})
    headers: dict[str, str] = {}
    if fault.kind == "429" or fault.retry_after is not None:
        headers["Retry-After"] = _retry_after_header(1.0 if fault.retry_after is None else fault.retry_after)
    return _error(anthropic, int(fault.kind), f"injected fault {fault.kind}", headers)


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """``POST /v1/chat/completions`` in OpenAI's shape."""
    return await _completion(request, anthropic=False)


async def responses(request: web.Request) -> web.StreamResponse:
    """``POST /v1/responses`` in the Responses API's shape (errors as chat's), as inspect_ai's `openai/`
    provider calls it by default."""
    return await _completion(request, anthropic=False, shape=responses_body)


async def messages(request: web.Request) -> web.StreamResponse:
    """``POST /v1/messages`` in Anthropic's shape."""
    return await _completion(request, anthropic=True)


async def models(request: web.Request) -> web.StreamResponse:
    """``GET /v1/models``: some clients probe it before the first call."""
    models = request.app[_SERVER].state.config.models
    return web.json_response({"object": "list", "data": [{"id": m, "object": "model"} for m in models]})


async def control_config(request: web.Request) -> web.StreamResponse:
    """Replace the config and reset every counter, fault budget and reply cycle: a fresh, known start."""
    try:
        config = parse_config(await request.json())
    except (ValueError, FakeServerError) as exc:
        return web.json_response({"error": str(exc)}, status=400)
    request.app[_SERVER].replace(config)
    return web.json_response({"ok": True})


async def control_stats(request: web.Request) -> web.StreamResponse:
    """Counters since the last config/reset (see :meth:`FakeServer.stats` for the shape).

    ``?by_request=0`` leaves out the per-body counts, which are large after a 100,000-call benchmark.
    """
    by_request = request.query.get("by_request", "1") not in ("0", "false")
    return web.json_response(request.app[_SERVER].stats(by_request=by_request))


async def control_release(request: web.Request) -> web.StreamResponse:
    """Let the calls held now (a `held` fault's) be answered; how many."""
    return web.json_response({"released": request.app[_SERVER].let_go()})


async def control_reset(request: web.Request) -> web.StreamResponse:
    """Zero the counters, fault budgets and reply cycles; keep the config."""
    server = request.app[_SERVER]
    server.replace(server.state.config)
    return web.json_response({"ok": True})


@web.middleware
async def _track_in_flight(request: web.Request, handler: Any) -> web.StreamResponse:
    """Count concurrent model calls, so a benchmark can prove the client really kept N calls in flight."""
    if not request.path.startswith("/v1/"):
        result: web.StreamResponse = await handler(request)
        return result
    server = request.app[_SERVER]
    server.in_flight += 1
    server.state.max_in_flight = max(server.state.max_in_flight, server.in_flight)
    try:
        result = await handler(request)
        return result
    finally:
        server.in_flight -= 1


def build_app(config: Config | None = None) -> web.Application:
    """The aiohttp application; exposed so a test could mount it in-process if it ever needs to."""
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[_track_in_flight])
    app[_SERVER] = _Server(_State.fresh(config or Config()))
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/responses", responses)
    app.router.add_post("/v1/messages", messages)
    app.router.add_get("/v1/models", models)
    add_routes(app, lambda request: (request.app[_SERVER].state.config, request.app[_SERVER].state.batch))
    app.router.add_post("/_control/config", control_config)
    app.router.add_get("/_control/stats", control_stats)
    app.router.add_post("/_control/reset", control_reset)
    app.router.add_post("/_control/release", control_release)
    return app


# ------------------------------------------------------------------------------------------------------ CLI


def loopback_address(host: str) -> str:
    """The address `--host` names, refused unless it is this machine's own (a fake server answers no one else)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise FakeServerError(f"--host: expected a loopback address such as 127.0.0.2 or ::1, got {host!r}") from None
    if not address.is_loopback:
        raise FakeServerError(f"--host: {host} is not a loopback address; the fake server answers this machine only")
    return str(address)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`, or one line saying why not (a port in use, one out of range): `--port 8765`
    run twice, as docs/compare.md's two recipes do, gave a traceback ending in `Address already in use`."""
    if not 0 <= port <= 65535:
        raise FakeServerError(f"--port {port}: expected a port from 0 to 65535 (0 picks a free one)")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        shown = f"[{host}]" if ":" in host else host
        raise FakeServerError(f"--port {port}: cannot listen on {shown}:{port} ({exc.strerror}); stop the server "
                              "already there, or choose another port (--port 0 picks a free one)") from None
    return sock


async def _serve(config: Config, sock: socket.socket) -> None:
    host, ipv6 = sock.getsockname()[0], sock.family == socket.AF_INET6
    runner = web.AppRunner(build_app(config), access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.SockSite(runner, sock, backlog=1024)
    await site.start()
    origin = f"http://{f'[{host}]' if ipv6 else host}:{sock.getsockname()[1]}"
    sys.stdout.write(f"listening {origin} · base URL {origin}/v1 (OpenAI chat completions and responses, "
                     "Anthropic messages)\n")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # Windows: Ctrl-C still raises KeyboardInterrupt
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


#: `--help`'s last part: how to use the server and its config, for a user (the design notes are the package's).
USAGE = """\
Point benchcard at it in benchcard.yaml (no api_key_env: it takes no key unless require_key is set, and then
any of 8 characters or more, named by api_key_env), and run a card on it: benchcard run CARD --provider fake
(a scratch run, since the fake server is not the card's rig):
  providers:
    fake: {type: openai, base_url: "http://127.0.0.1:PORT/v1"}
Endpoints: POST /v1/chat/completions and /v1/responses (OpenAI), POST /v1/messages (Anthropic), GET /v1/models,
and the two vendors' batch endpoints; POST /_control/config replaces the config, GET /_control/stats counts the
calls, POST /_control/release lets the calls of a "held" fault be answered.

The config (JSON; every key optional):
  {"default_reply": "ok",
   "replies": [{"match": "capital", "reply": "Paris"}, {"match": "noisy", "replies_cycle": ["a", "b"]}],
   "faults": [{"match": "", "kind": "429", "times": 1, "retry_after": 0}],
   "latency_ms": 0, "latency_jitter_ms": 0, "seed": null, "models": ["fake-model"], "require_key": false,
   "echo_key": false, "reply_model": null}
A call is answered by the first reply whose "match" occurs in its user message, else by default_reply; a reply
may add "finish_reason", "reasoning_tokens" and "cost". "reply_model" names another model in every reply than the
one asked (a router's fallback); null names the model asked.

Fault kinds: 400 (a request refused), 401 (a key refused), 429 (with Retry-After), 500, 503, drop (connection
closed, no response), hang (hang_s seconds, default 30, then an answer), truncate (a cut reply, finish_reason
length), malformed (200, JSON cut off), shapeless (200, JSON of another shape: []),
html (200, a proxy's HTML page), error200 (200 holding an error object), null (200 whose message content is null:
chat's `content: null`, no text block, no Responses output; finish_reason stop), redirect (307 to another host,
an answer in its body),
bad_redirect (307 whose Location is not a URL), zstd_bomb (200, zstd that inflates to 256 MiB); shapes vendors
document: refusal, tool_call, blocks (text in two parts), no_usage, extras (fields not read), choices (a second
choice first). A fault hits the
first `times` calls of each distinct request body it matches, in list order; `total` caps its hits over all bodies.
A fault with "held": true holds its calls' answers until POST /_control/release.
"""


def main(argv: list[str] | None = None) -> int:
    """``python -m benchcard.testing.fakeserver --port 0 [--host 127.0.0.2] [--config F.json] [--latency-ms N]``; runs
    until SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m benchcard.fakeserver",
        description="Fake OpenAI/Anthropic-compatible server on 127.0.0.1, for tests and trying benchcard out "
                    "without a key. It prints its base URL (…/v1), then serves until stopped (Ctrl-C).",
        epilog=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--host", default=HOST, help="another loopback address to listen on (127.0.0.2, ::1)")
    parser.add_argument("--config", type=Path, help="JSON config file (its keys and fault kinds: below)")
    parser.add_argument("--latency-ms", type=float, help="overrides the config's latency_ms")
    args = parser.parse_args(argv)
    try:
        raw: dict[str, Any] = {}
        if args.config is not None:
            raw = json.loads(args.config.read_text(encoding="utf-8"))
        if args.latency_ms is not None:
            if not isinstance(raw, dict):
                raise FakeServerError("config: expected an object")
            raw = {**raw, "latency_ms": args.latency_ms}
        config = parse_config(raw)
        sock = listening_socket(loopback_address(args.host), args.port)
    except (OSError, ValueError, FakeServerError) as exc:
        sys.stderr.write(f"fakeserver: {exc}\n")
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config, sock))
    return 0
