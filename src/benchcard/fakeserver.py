"""A fake OpenAI- and Anthropic-compatible LLM server on 127.0.0.1, for tests and throughput benchmarks.

Why it exists: the runner must be proven against real sockets — retries on 429/5xx, ``Retry-After``,
dropped connections, hung servers, truncated and malformed answers — without spending money or waiting on
a real provider, and the throughput benchmark (10,000 calls at 100 ms, 64 in flight) must measure the
client, not the server. So the server:

* runs in its **own process** (``python -m benchcard.fakeserver``, or :class:`FakeServer` from Python), so
  the runner under test and the server never share an event loop or a CPU;
* is built on ``aiohttp.web`` with no access log and no per-request output;
* keeps memory flat: only counters, the per-body-hash counter dict and (opt-in) the recorded bodies grow;
* is driven by a JSON config (canned replies, reply cycles, faults, latency) that can be replaced at any time
  through ``POST /_control/config`` and observed through ``GET /_control/stats``.

Endpoints: ``POST /v1/chat/completions`` (OpenAI shape, with OpenRouter's ``usage.cost``),
``POST /v1/messages`` (Anthropic Messages shape), ``GET /v1/models``, and the control endpoints
``POST /_control/config``, ``GET /_control/stats``, ``POST /_control/reset``.

Config keys (all optional), see :func:`parse_config`::

    {
      "latency_ms": 0, "latency_jitter_ms": 0, "seed": null,
      "default_reply": "ok", "record_bodies": false, "require_key": false,
      "replies": [{"match": "capital", "reply": "Paris", "finish_reason": "stop",
                   "reasoning_tokens": 0, "cost": 0.0012},
                  {"match": "noisy", "replies_cycle": ["a", "b"]}],
      "faults":  [{"match": "", "kind": "429", "times": 1, "retry_after": 0}]
    }

Fault kinds: ``429`` (with ``Retry-After``), ``500``, ``503``, ``drop`` (connection closed, no response),
``hang`` (sleep ``hang_s`` seconds, default 30, then answer), ``truncate`` (200, cut reply, ``length`` /
``max_tokens``), ``malformed`` (200 whose body is not JSON). A fault hits the first ``times`` calls of *each
distinct request body* (by hash) it matches; faults are tried in list order, so ``[429 ×1, 500 ×1]`` gives
429, then 500, then success for every body.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

from aiohttp import web

from benchcard.hashing import digest

__all__ = [
    "FAULT_KINDS",
    "Config",
    "FakeServer",
    "FakeServerError",
    "FaultRule",
    "ReplyRule",
    "build_app",
    "main",
    "parse_config",
]

HOST: Final = "127.0.0.1"
FAULT_KINDS: Final = ("429", "500", "503", "drop", "hang", "truncate", "malformed")
FaultKind = Literal["429", "500", "503", "drop", "hang", "truncate", "malformed"]
FinishReason = Literal["stop", "length"]

#: Prompts with long fixtures exceed aiohttp's default 1 MiB body limit; real providers accept far more.
MAX_BODY_BYTES: Final = 64 * 1024 * 1024
#: A body that is valid JSON up to the cut, then stops: what a proxy that dies mid-response delivers.
MALFORMED_BODY: Final = (
    b'{"id": "fake-malformed", "object": "chat.completion", "choices": [{"index": 0, "mess'
)


class FakeServerError(Exception):
    """The fake server could not start, or rejected a config; the message says why."""


# --------------------------------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class ReplyRule:
    """A canned answer for requests whose last user message contains ``match`` (empty matches everything)."""

    match: str
    replies: tuple[str, ...]
    finish_reason: FinishReason = "stop"
    reasoning_tokens: int = 0
    cost: float | None = None

    @property
    def cycles(self) -> bool:
        """True when successive calls of one body should walk through ``replies`` (run-to-run noise)."""
        return len(self.replies) > 1


@dataclass(frozen=True, slots=True)
class FaultRule:
    """An injected failure for the first ``times`` calls of each distinct matching request body."""

    match: str
    kind: FaultKind
    times: int = 1
    retry_after: float | None = None
    hang_s: float = 30.0


@dataclass(frozen=True, slots=True)
class Config:
    """The server's whole behaviour; immutable so a swap through the control endpoint is one assignment."""

    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    seed: int | None = None
    default_reply: str = "ok"
    record_bodies: bool = False
    require_key: bool = False
    replies: tuple[ReplyRule, ...] = ()
    faults: tuple[FaultRule, ...] = ()


_TOP_KEYS: Final = frozenset(
    {
        "latency_ms",
        "latency_jitter_ms",
        "seed",
        "default_reply",
        "record_bodies",
        "require_key",
        "replies",
        "faults",
    }
)
_REPLY_KEYS: Final = frozenset(
    {"match", "reply", "replies_cycle", "finish_reason", "reasoning_tokens", "cost"}
)
_FAULT_KEYS: Final = frozenset({"match", "kind", "times", "retry_after", "hang_s"})


def _number(value: Any, where: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise FakeServerError(f"{where}: expected a number >= {minimum:g}, got {value!r}")
    return float(value)


def _integer(value: Any, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FakeServerError(f"{where}: expected an integer >= {minimum}, got {value!r}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise FakeServerError(f"{where}: expected a string, got {value!r}")
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise FakeServerError(f"{where}: expected true or false, got {value!r}")
    return value


def _check_keys(obj: Any, allowed: frozenset[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise FakeServerError(f"{where}: expected an object, got {obj!r}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise FakeServerError(
            f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )
    return obj


def _parse_reply(obj: Any, where: str) -> ReplyRule:
    raw = _check_keys(obj, _REPLY_KEYS, where)
    if ("reply" in raw) == ("replies_cycle" in raw):
        raise FakeServerError(f"{where}: give exactly one of 'reply' or 'replies_cycle'")
    if "reply" in raw:
        replies: tuple[str, ...] = (_string(raw["reply"], f"{where}.reply"),)
    else:
        cycle = raw["replies_cycle"]
        if not isinstance(cycle, list) or not cycle:
            raise FakeServerError(f"{where}.replies_cycle: expected a non-empty list of strings")
        replies = tuple(_string(r, f"{where}.replies_cycle[{i}]") for i, r in enumerate(cycle))
    finish = raw.get("finish_reason", "stop")
    if finish not in ("stop", "length"):
        raise FakeServerError(f"{where}.finish_reason: expected 'stop' or 'length', got {finish!r}")
    cost = raw.get("cost")
    return ReplyRule(
        match=_string(raw.get("match", ""), f"{where}.match"),
        replies=replies,
        finish_reason=finish,
        reasoning_tokens=_integer(raw.get("reasoning_tokens", 0), f"{where}.reasoning_tokens"),
        cost=None if cost is None else _number(cost, f"{where}.cost"),
    )


def _parse_fault(obj: Any, where: str) -> FaultRule:
    raw = _check_keys(obj, _FAULT_KEYS, where)
    kind = str(raw.get("kind", ""))  # accept 429 as well as "429"
    if kind not in FAULT_KINDS:
        raise FakeServerError(
            f"{where}.kind: expected one of {', '.join(FAULT_KINDS)}, got {raw.get('kind')!r}"
        )
    retry_after = raw.get("retry_after")
    return FaultRule(
        match=_string(raw.get("match", ""), f"{where}.match"),
        kind=kind,  # type: ignore[arg-type]  # narrowed by the membership test above
        times=_integer(raw.get("times", 1), f"{where}.times"),
        retry_after=None if retry_after is None else _number(retry_after, f"{where}.retry_after"),
        hang_s=_number(raw.get("hang_s", 30.0), f"{where}.hang_s"),
    )


def parse_config(obj: Any) -> Config:
    """Validate a JSON config strictly: a typo in a test's config must fail loudly, not do nothing."""
    raw = _check_keys({} if obj is None else obj, _TOP_KEYS, "config")
    replies = raw.get("replies", [])
    faults = raw.get("faults", [])
    if not isinstance(replies, list):
        raise FakeServerError("config.replies: expected a list")
    if not isinstance(faults, list):
        raise FakeServerError("config.faults: expected a list")
    seed = raw.get("seed")
    return Config(
        latency_ms=_number(raw.get("latency_ms", 0), "config.latency_ms"),
        latency_jitter_ms=_number(raw.get("latency_jitter_ms", 0), "config.latency_jitter_ms"),
        seed=None if seed is None else _integer(seed, "config.seed"),
        default_reply=_string(raw.get("default_reply", "ok"), "config.default_reply"),
        record_bodies=_boolean(raw.get("record_bodies", False), "config.record_bodies"),
        require_key=_boolean(raw.get("require_key", False), "config.require_key"),
        replies=tuple(_parse_reply(r, f"config.replies[{i}]") for i, r in enumerate(replies)),
        faults=tuple(_parse_fault(f, f"config.faults[{i}]") for i, f in enumerate(faults)),
    )


# ---------------------------------------------------------------------------------------------------- state


@dataclass(slots=True)
class _State:
    """Counters and per-body progress; everything here is reset together so tests start from a clean slate.

    Only ``by_request`` grows with the number of distinct bodies (plus ``fault_hits`` / ``cycle_pos`` for
    bodies that actually match a fault or a reply cycle); ``bodies`` grows only when ``record_bodies`` is on.
    """

    config: Config
    rng: random.Random
    calls: int = 0
    with_key: int = 0
    without_key: int = 0
    max_in_flight: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_endpoint: Counter[str] = field(default_factory=Counter)
    by_fault: Counter[str] = field(default_factory=Counter)
    by_request: dict[str, int] = field(default_factory=dict)
    fault_hits: dict[tuple[int, str], int] = field(default_factory=dict)
    cycle_pos: dict[str, int] = field(default_factory=dict)
    bodies: list[Any] = field(default_factory=list)

    @classmethod
    def fresh(cls, config: Config) -> _State:
        return cls(config=config, rng=random.Random(config.seed))

    def stats(self, *, by_request: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "calls": self.calls,
            "distinct_requests": len(self.by_request),
            "by_status": dict(self.by_status),
            "by_endpoint": dict(self.by_endpoint),
            "by_fault": dict(self.by_fault),
            "with_key": self.with_key,
            "without_key": self.without_key,
            "max_in_flight": self.max_in_flight,
        }
        if self.config.record_bodies:
            out["bodies"] = list(self.bodies)
        if by_request:
            out["by_request"] = dict(self.by_request)
        return out


@dataclass(slots=True)
class _Server:
    """The app's one mutable slot: aiohttp freezes app state once started, so resets swap ``state`` here.

    ``in_flight`` is a gauge, not a counter: it lives outside :class:`_State` so that calls still running
    when a reset arrives are neither forgotten nor decremented below zero.
    """

    state: _State
    in_flight: int = 0

    def replace(self, config: Config) -> None:
        self.state = _State.fresh(config)
        self.state.max_in_flight = self.in_flight

    def stats(self, *, by_request: bool = True) -> dict[str, Any]:
        return {**self.state.stats(by_request=by_request), "in_flight": self.in_flight}


_SERVER: Final = web.AppKey("server", _Server)


# -------------------------------------------------------------------------------------------- request model


def _text_of(content: Any) -> str:
    """Message text from either a plain string or a list of ``{"type": "text", "text": ...}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _last_user_message(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ""
    for message in reversed(body["messages"]):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _prompt_tokens(body: Any) -> int:
    """Whitespace-split word count of every message (and an Anthropic ``system``): cheap and deterministic."""
    if not isinstance(body, dict):
        return 0
    total = len(_text_of(body.get("system")).split())
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict):
                total += len(_text_of(message.get("content")).split())
    return total


def _max_tokens(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _has_key(request: web.Request) -> bool:
    auth = request.headers.get("Authorization", "")
    scheme, _, token = auth.partition(" ")
    return bool(request.headers.get("x-api-key")) or (scheme.lower() == "bearer" and bool(token.strip()))


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    finish: FinishReason
    reasoning_tokens: int
    cost: float | None


def _choose_answer(state: _State, body: Any, user: str, key: str) -> _Answer:
    """First matching reply rule wins; a cycle advances once per answered call of the same body."""
    for rule in state.config.replies:
        if rule.match in user:
            if rule.cycles:
                pos = state.cycle_pos.get(key, 0)
                state.cycle_pos[key] = pos + 1
                text = rule.replies[pos % len(rule.replies)]
            else:
                text = rule.replies[0]
            answer = _Answer(text, rule.finish_reason, rule.reasoning_tokens, rule.cost)
            break
    else:
        answer = _Answer(state.config.default_reply, "stop", 0, None)
    limit = _max_tokens(body)
    words = answer.text.split()
    if limit is not None and len(words) > limit:
        answer = _Answer(" ".join(words[:limit]), "length", answer.reasoning_tokens, answer.cost)
    return answer


def _truncated(answer: _Answer) -> _Answer:
    """The first half of the reply (by characters), as a ``length`` stop: what a hit token limit gives."""
    cut = answer.text[: len(answer.text) // 2]
    return _Answer(cut, "length", answer.reasoning_tokens, answer.cost)


def _model_of(body: Any) -> str:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else "fake-model"


def _openai_body(call_id: int, body: Any, answer: _Answer) -> dict[str, Any]:
    prompt = _prompt_tokens(body)
    completion = len(answer.text.split()) + answer.reasoning_tokens  # OpenAI counts reasoning as completion
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": answer.reasoning_tokens},
    }
    if answer.cost is not None:
        usage["cost"] = answer.cost  # OpenRouter's field: dollars charged for this call
    return {
        "id": f"chatcmpl-fake-{call_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": _model_of(body),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.text},
                "finish_reason": answer.finish,
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def _anthropic_body(call_id: int, body: Any, answer: _Answer) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    thinking_tokens = 0
    if isinstance(body, dict) and body.get("thinking"):
        thinking_tokens = max(answer.reasoning_tokens, 1)
        content.append(
            {"type": "thinking", "thinking": " ".join(["step"] * thinking_tokens), "signature": "fake"}
        )
    content.append({"type": "text", "text": answer.text})
    return {
        "id": f"msg_fake_{call_id}",
        "type": "message",
        "role": "assistant",
        "model": _model_of(body),
        "content": content,
        "stop_reason": "max_tokens" if answer.finish == "length" else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": _prompt_tokens(body),
            "output_tokens": len(answer.text.split()) + thinking_tokens,  # thinking is billed as output
        },
    }


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


async def _completion(request: web.Request, anthropic: bool) -> web.StreamResponse:
    state = request.app[_SERVER].state
    raw = await request.read()
    try:
        body: Any = json.loads(raw)
        key = digest(body)
    except (ValueError, UnicodeDecodeError):
        body, key = None, digest(raw)

    # Bookkeeping first, synchronously, so counts never depend on how the call ends.
    config = state.config
    state.calls += 1
    call_id = state.calls  # read now: after the sleep below, other calls will have moved the counter
    state.by_endpoint[request.path] += 1
    state.by_request[key] = state.by_request.get(key, 0) + 1
    has_key = _has_key(request)
    if has_key:
        state.with_key += 1
    else:
        state.without_key += 1
    if config.record_bodies:
        state.bodies.append(body if body is not None else raw.decode("utf-8", "replace"))

    status: str
    fault: FaultRule | None = None
    answer: _Answer | None = None
    if body is None or not isinstance(body, dict):
        status = "400"
    elif config.require_key and not has_key:
        status = "401"
    else:
        user = _last_user_message(body)
        for index, rule in enumerate(config.faults):
            if rule.match in user:
                hits = state.fault_hits.get((index, key), 0)
                if hits < rule.times:
                    state.fault_hits[(index, key)] = hits + 1
                    fault = rule
                    break
        if fault is None or fault.kind in ("hang", "truncate"):
            answer = _choose_answer(state, body, user, key)
        # The status the client will see: HTTP codes as strings, "drop" for "no response at all".
        status = fault.kind if fault is not None and fault.kind in ("429", "500", "503", "drop") else "200"
    if fault is not None:
        state.by_fault[fault.kind] += 1
    state.by_status[status] += 1

    delay = config.latency_ms
    if config.latency_jitter_ms:
        delay += state.rng.uniform(0.0, config.latency_jitter_ms)
    if fault is not None and fault.kind == "hang":
        delay += fault.hang_s * 1000.0
    if delay > 0:
        await asyncio.sleep(delay / 1000.0)

    if status == "400":
        return _error(anthropic, 400, "request body is not a JSON object")
    if status == "401":
        return _error(anthropic, 401, "missing API key: send 'Authorization: Bearer ...' or 'x-api-key'")
    if fault is not None:
        if fault.kind == "drop":
            return await _drop(request)
        if fault.kind == "malformed":
            return web.Response(body=MALFORMED_BODY, status=200, content_type="application/json")
        if fault.kind in ("429", "500", "503"):
            headers: dict[str, str] = {}
            if fault.kind == "429" or fault.retry_after is not None:
                headers["Retry-After"] = _retry_after_header(
                    1.0 if fault.retry_after is None else fault.retry_after
                )
            return _error(anthropic, int(fault.kind), f"injected fault {fault.kind}", headers)
    assert answer is not None
    if fault is not None and fault.kind == "truncate":
        answer = _truncated(answer)
    payload = _anthropic_body(call_id, body, answer) if anthropic else _openai_body(call_id, body, answer)
    return web.json_response(payload)


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """``POST /v1/chat/completions`` in OpenAI's shape."""
    return await _completion(request, anthropic=False)


async def messages(request: web.Request) -> web.StreamResponse:
    """``POST /v1/messages`` in Anthropic's shape."""
    return await _completion(request, anthropic=True)


async def models(request: web.Request) -> web.StreamResponse:
    """``GET /v1/models``: some clients probe it before the first call."""
    return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})


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
    app.router.add_post("/v1/messages", messages)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/_control/config", control_config)
    app.router.add_get("/_control/stats", control_stats)
    app.router.add_post("/_control/reset", control_reset)
    return app


# ------------------------------------------------------------------------------------------------------ CLI


async def _serve(config: Config, port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    runner = web.AppRunner(build_app(config), access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.SockSite(runner, sock, backlog=1024)
    await site.start()
    sys.stdout.write(f"listening http://{HOST}:{sock.getsockname()[1]}\n")
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


def main(argv: list[str] | None = None) -> int:
    """``python -m benchcard.fakeserver --port 0 [--config F.json] [--latency-ms N]``; runs until SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m benchcard.fakeserver",
        description="Fake OpenAI/Anthropic-compatible server on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--config", type=Path, help="JSON config file (see the module docstring)")
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
    except (OSError, ValueError, FakeServerError) as exc:
        sys.stderr.write(f"fakeserver: {exc}\n")
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config, args.port))
    return 0


# ---------------------------------------------------------------------------------------- Python controller


class FakeServer:
    """Runs the fake server in a child process for the duration of a ``with`` block.

    A separate process (not a thread) so the server's event loop and CPU never compete with the runner being
    tested or benchmarked. Control calls use ``urllib`` with proxies disabled: they are rare, synchronous and
    must not be routed through an ``HTTP_PROXY`` from the environment.

    >>> with FakeServer({"default_reply": "hi"}) as server:   # doctest: +SKIP
    ...     client = httpx.Client(base_url=server.base_url)
    ...     client.post("/chat/completions", json={...})
    ...     server.stats()["calls"]
    """

    def __init__(
        self,
        config: dict[str, Any] | None = None,
        *,
        latency_ms: float | None = None,
        startup_timeout: float = 15.0,
    ) -> None:
        if latency_ms is not None and config is not None:
            config = {**config, "latency_ms": latency_ms}  # the keyword wins, as --latency-ms does
        if config is not None:
            parse_config(config)  # fail in the caller, before a process is spawned
        self._config = config
        self._latency_ms = latency_ms
        self._startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._origin: str | None = None
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # -- lifecycle

    def start(self) -> FakeServer:
        """Spawn the process and wait for its ``listening`` line; idempotent."""
        if self._process is not None:
            return self
        cmd = [sys.executable, "-m", "benchcard.fakeserver", "--port", "0"]
        if self._latency_ms is not None:
            cmd += ["--latency-ms", str(self._latency_ms)]
        env = dict(os.environ)
        # The child must import this very copy of benchcard, even from a source checkout not installed.
        src = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
        self._process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        line = self._read_first_line(self._process)
        prefix = "listening "
        if not line.startswith(prefix):
            self.stop()
            raise FakeServerError(f"fake server did not start (first line {line!r})")
        self._origin = line[len(prefix) :].strip()
        if self._config is not None:
            self.configure(self._config)
        return self

    def _read_first_line(self, process: subprocess.Popen[bytes]) -> str:
        """Read one line with a deadline; a thread keeps this portable (no select() on Windows pipes)."""
        assert process.stdout is not None
        stdout = process.stdout
        result: list[bytes] = []
        reader = threading.Thread(target=lambda: result.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self._startup_timeout)
        if not result:
            self.stop()
            raise FakeServerError(f"fake server printed nothing within {self._startup_timeout:g} s")
        return result[0].decode("utf-8", "replace")

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 5 s); safe to call twice."""
        process, self._process = self._process, None
        self._origin = None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        if self._origin is None:
            raise FakeServerError("fake server is not running")
        return self._origin

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI or Anthropic client takes as its base URL."""
        return self.origin + "/v1"

    @property
    def port(self) -> int:
        """The port the server bound."""
        return int(self.origin.rsplit(":", 1)[1])

    # -- control

    def _control(self, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(
            self.origin + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with self._opener.open(req, timeout=30) as resp:
                result: dict[str, Any] = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise FakeServerError(f"{method} {path} -> {exc.code}: {detail}") from None
        return result

    def configure(self, config: dict[str, Any]) -> None:
        """Replace the whole config and reset all counters (raises :class:`FakeServerError` if invalid)."""
        self._control("POST", "/_control/config", config)

    def stats(self, *, by_request: bool = True) -> dict[str, Any]:
        """Counters since the last ``configure``/``reset``.

        Shape (status keys are strings; ``"drop"`` means the connection was closed without a response)::

            {"calls": int, "distinct_requests": int,
             "by_request": {"sha256:<hex of canonical JSON body>": int},   # unless by_request=False
             "by_status": {"200": int, "429": int, "drop": int, ...},
             "by_endpoint": {"/v1/chat/completions": int, "/v1/messages": int},
             "by_fault": {"429": int, "hang": int, ...},
             "with_key": int, "without_key": int,          # whether a key header was present, never its value
             "in_flight": int, "max_in_flight": int,
             "bodies": [<parsed JSON body>, ...]}          # only when record_bodies is true
        """
        return self._control("GET", "/_control/stats" + ("" if by_request else "?by_request=0"))

    def reset(self) -> None:
        """Zero counters, fault budgets and reply cycles; keep the config."""
        self._control("POST", "/_control/reset")


if __name__ == "__main__":
    raise SystemExit(main())
