"""The fake server's batch APIs: OpenAI's Files + Batches and Anthropic's Message Batches, over real sockets.

OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/batches``. Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``, ``GET /v1/messages/batches``
(lists newest first, paged by ``limit`` and ``after`` / ``after_id`` as the vendors page them).

A batch's status follows the clock from its creation (``config.batch``: seconds validating, in progress and
finalizing; or, with ``in_progress_polls`` N, ``in_progress`` with nothing done for its first N retrievals by id,
whatever the clock, so that a test need not outrun a timer), then it ends as configured: ``completed``,
``expired`` or ``cancelled`` (only ``done_fraction`` of its requests ran; the rest come back expired or
cancelled) or ``failed`` (OpenAI: the whole batch, no files).
Each request is answered as the interactive endpoints would answer it (replies, cycles, ``truncate``, ``null``); a fault
that fails a call (429, 5xx, drop, hang, malformed) fails that request inside the batch (a partial failure).
Every submitted ``custom_id`` is counted, so a test can prove no cell was submitted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from aiohttp import web

from benchcard._util.hashing import digest
from benchcard.testing.fakeserver._config import Config
from benchcard.testing.fakeserver._replies import (
    answered_by,
    anthropic_body,
    choose_answer,
    echoed,
    last_user_message,
    openai_body,
    sent_key,
    spoiled,
    truncated,
)

Vendor = Literal["openai", "anthropic"]
#: The padding of a `huge` result line, and how many bytes a `trickled` poll sends a byte at a time.
HUGE_BYTES = 2 * 2**20
#: How deep a `nested` result line's lists go: past any JSON reader's stack (json's and msgspec's recurse).
NESTED_DEPTH = 100_000
_NESTED = "@@nested@@"  # where a `nested` line's lists go, once the line is written (`_line`)
TRICKLE_BYTES = 300
#: What a trickled download sends every 0.1 s.
TRICKLE_BLOCK = 16
FAILING = frozenset({"400", "429", "500", "503", "drop", "hang", "malformed", "shapeless", "error200"})


@dataclass
class _Batch:
    id: str
    vendor: Vendor
    started: float  # monotonic
    created_at: float  # unix
    input_file_id: str | None
    metadata: dict[str, Any]
    results: list[tuple[str, bool, Any]]  # custom_id, answered ok, answer body or error message
    output_file_id: str | None = None
    error_file_id: str | None = None
    polls: int = 0  # retrievals by id so far (config.batch.in_progress_polls)
    echo: str = ""  # the key the create carried, quoted in every answer and error when config.echo_key is set


@dataclass
class BatchStore:
    """Everything the batch endpoints remember, reset with the server's counters."""

    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, _Batch] = field(default_factory=dict)
    submitted: Counter[str] = field(default_factory=Counter)
    uploads: int = 0
    downloads: int = 0
    held: Counter[str] = field(default_factory=Counter)  # answers held so far, by step (config.batch.delay_times)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def stats(self) -> dict[str, Any]:
        return {"files": self.uploads, "batches": len(self.batches), "submitted": sum(self.submitted.values()),
                "distinct_submitted": len(self.submitted), "downloads": self.downloads,
                "submitted_twice": sorted(c for c, n in self.submitted.items() if n > 1)[:20]}


def _answer(config: Config, cycles: dict[str, int], body: Any, vendor: Vendor, n: int,
            echo: str) -> tuple[bool, Any]:
    """One request of a batch answered as the interactive endpoint would: (ok, response body or error); with
    `echo` (the create's key, `echo_key`), quoting it."""
    if not isinstance(body, dict):
        return False, "request body is not a JSON object"
    user = last_user_message(body)
    fault = next((f for f in config.faults if f.match in user), None)
    if fault is not None and fault.kind in FAILING:
        return False, echoed(f"injected fault {fault.kind}", echo) if echo else f"injected fault {fault.kind}"
    answer = choose_answer(config, cycles, body, user, digest(body))
    if fault is not None and fault.kind == "truncate":
        answer = truncated(answer)
    if echo:
        answer = replace(answer, text=echoed(answer.text, echo))
    reply = answered_by(anthropic_body(n, body, answer) if vendor == "anthropic" else openai_body(n, body, answer),
                        config.reply_model)
    return True, spoiled(reply, fault.kind if fault is not None else None)


def _phase(config: Config, batch: _Batch) -> tuple[str, int]:
    """(status, requests done) now: validating, in_progress, finalizing, then the configured end."""
    c = config.batch
    if batch.polls < c.in_progress_polls:
        return "in_progress", 0
    t = time.monotonic() - batch.started
    n = len(batch.results)
    ran = n if c.end in ("completed",) else int(n * c.done_fraction) if c.end != "failed" else 0
    if t < c.validating_s:
        return "validating", 0
    if t < c.validating_s + c.in_progress_s:
        return "in_progress", int(ran * (t - c.validating_s) / c.in_progress_s)
    if t < c.validating_s + c.in_progress_s + c.finalizing_s:
        return ("cancelling" if c.end == "cancelled" else "finalizing"), ran
    return c.end, ran


async def _hold(config: Config, store: BatchStore, step: str) -> None:
    """The step's `delay_s`, unless `delay_times` answers of that step were held already."""
    seconds, times = config.batch.delay(step), config.batch.delay_times
    if seconds > 0 and (not times or store.held[step] < times):
        store.held[step] += 1
        await asyncio.sleep(seconds)


async def _lost(request: web.Request, config: Config, store: BatchStore) -> bool:
    """A create held back before any work (`delay_s.receive`) whose client is gone by then: never made."""
    await _hold(config, store, "receive")
    transport = request.transport
    return transport is None or transport.is_closing()


def _line(row: dict[str, Any]) -> str:
    """One line of a result file; a `nested` line's lists written in as text (json.dumps would recurse too)."""
    return json.dumps(row).replace(f'"{_NESTED}"', "[" * NESTED_DEPTH + "]" * NESTED_DEPTH) + "\n"


def _spoiled(config: Config, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A result file as `bad_results` spoils it: each line twice, one more line for an id nobody sent, the first
    line left out, the lines in reverse order."""
    if config.batch.bad_results == "duplicate":
        return rows + rows
    if config.batch.bad_results == "unknown" and rows:
        return [*rows, {**rows[-1], "custom_id": "never-sent"}]
    if config.batch.bad_results == "huge" and rows:
        return [*rows, {**rows[-1], "custom_id": "never-sent", "pad": "x" * HUGE_BYTES}]
    if config.batch.bad_results == "nested" and rows:
        return [*rows, {"custom_id": "never-sent", "pad": _NESTED}]
    if config.batch.bad_results == "nested_twice" and rows:
        return [*rows, {**rows[0], "pad": _NESTED}]
    if config.batch.bad_results == "missing":
        return rows[1:]
    if config.batch.bad_results == "shuffled":
        return rows[::-1]
    return rows


async def _poll_answer(request: web.Request, config: Config, view: dict[str, Any]) -> web.StreamResponse:
    """A poll's answer, or as `bad_poll` spoils it: trickled a byte at a time, padded past any poll's size, with
    its counts as a list of numbers (JSON, but not the shape either vendor documents), or refused with a 429 that
    asks to be called again in a day."""
    if config.batch.bad_poll == "huge":
        return web.json_response({**view, "pad": "x" * (8 * 2**20)})
    if config.batch.bad_poll == "throttled":
        return web.json_response({"error": {"type": "rate_limit_error", "message": "slow down"}}, status=429,
                                 headers={"Retry-After": "86400"})
    if config.batch.bad_poll == "mistyped":
        return web.json_response({**view, "request_counts": list(view["request_counts"].values())})
    if config.batch.bad_poll != "trickled":
        return web.json_response(view)
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    for _ in range(TRICKLE_BYTES):
        await response.write(b" ")
        await asyncio.sleep(0.2)
    await response.write(json.dumps(view).encode())
    await response.write_eof()
    return response


def _page(request: web.Request, views: list[dict[str, Any]], after: str) -> dict[str, Any]:
    """One page of a list, newest first, as both vendors page theirs: `limit`, and a cursor (`after` for
    OpenAI, `after_id` for Anthropic) naming the last object of the page before."""
    limit = int(request.query.get("limit", "20"))
    start = 0
    if cursor := request.query.get(after):
        start = next((i + 1 for i, v in enumerate(views) if v["id"] == cursor), len(views))
    page = views[start:start + limit]
    return {"data": page, "has_more": start + limit < len(views),
            "first_id": page[0]["id"] if page else None, "last_id": page[-1]["id"] if page else None}


def _iso(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class BatchApi:
    """The handlers; `store()` and `config()` reach the server's current state (swapped on reset)."""

    def __init__(self, state: Any):
        self._state = state  # a callable giving (Config, BatchStore)

    # ------------------------------------------------------------------------------------------- OpenAI

    async def upload(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "expected purpose=batch and a file"}}, status=400)
        data = upload.file.read()
        file_id = f"file-{next(store.ids)}"
        store.files[file_id] = data
        store.uploads += 1
        await _hold(config, store, "upload")
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "purpose": "batch",
                                  "filename": upload.filename, "created_at": int(time.time())})

    async def create(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        if await _lost(request, config, store):
            return web.Response(status=499)
        payload = await request.json()
        data = store.files.get(str(payload.get("input_file_id")))
        if data is None:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        lines = [json.loads(line) for line in data.splitlines() if line.strip()]
        batch = self._register(config, store, "openai", [(r["custom_id"], r["body"]) for r in lines],
                               payload.get("input_file_id"), payload.get("metadata") or {}, sent_key(request.headers))
        await _hold(config, store, "create")
        return web.json_response(self._openai_view(config, store, batch))

    async def retrieve(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        batch = store.batches.get(request.match_info["id"])
        if batch is None or batch.vendor != "openai":
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        view = self._openai_view(config, store, batch)
        batch.polls += 1
        return await _poll_answer(request, config, view)

    async def list_openai(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        data = [self._openai_view(config, store, b) for b in reversed(store.batches.values()) if b.vendor == "openai"]
        return web.json_response({"object": "list", **_page(request, data, "after")})

    async def content(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        data = store.files.get(request.match_info["id"])
        if data is None:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        return await self._send(request, config, data)

    def _openai_view(self, config: Config, store: BatchStore, batch: _Batch) -> dict[str, Any]:
        status, ran = _phase(config, batch)
        done = batch.results[:ran]
        failed = sum(not ok for _, ok, _ in done)
        view: dict[str, Any] = {
            "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "completion_window": "24h",
            "input_file_id": batch.input_file_id, "status": status, "created_at": int(batch.created_at),
            "output_file_id": None, "error_file_id": None, "metadata": batch.metadata, "errors": None,
            "request_counts": {"total": len(batch.results), "completed": ran - failed, "failed": failed},
        }
        if status == "failed":
            view["errors"] = {"object": "list", "data": [{"code": "invalid_request", "line": 1,
                                                          "message": self._said(batch, "injected batch failure")}]}
            view["request_counts"] = {"total": len(batch.results), "completed": 0, "failed": 0}
        elif status in ("completed", "expired", "cancelled"):
            self._openai_files(config, store, batch, ran, status)
            view["output_file_id"], view["error_file_id"] = batch.output_file_id, batch.error_file_id
        return view

    def _openai_files(self, config: Config, store: BatchStore, batch: _Batch, ran: int, status: str) -> None:
        if batch.output_file_id is not None or batch.error_file_id is not None:
            return
        out, err = [], []
        code = {"expired": "batch_expired", "cancelled": "batch_cancelled"}.get(status, "")
        for i, (cell, ok, body) in enumerate(batch.results):
            if i >= ran:
                err.append({"id": f"batch_req_{i}", "custom_id": cell, "response": None,
                            "error": {"code": code, "message": self._said(batch, f"This request was not run: the "
                                                                                  f"batch {status}.")}})
            elif ok:
                out.append({"id": f"batch_req_{i}", "custom_id": cell, "error": None,
                            "response": {"status_code": 200, "request_id": f"req_{i}", "body": body}})
            else:
                out.append({"id": f"batch_req_{i}", "custom_id": cell, "error": None,
                            "response": {"status_code": 500, "request_id": f"req_{i}",
                                         "body": {"error": {"message": body, "type": "server_error"}}}})
        for rows, attr in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                rows = _spoiled(config, rows)
                file_id = f"file-{next(store.ids)}"
                store.files[file_id] = "".join(_line(r) for r in rows).encode("utf-8")
                setattr(batch, attr, file_id)

    @staticmethod
    def _said(batch: _Batch, message: str) -> str:
        return echoed(message, batch.echo) if batch.echo else message

    # ---------------------------------------------------------------------------------------- Anthropic

    async def create_anthropic(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        if await _lost(request, config, store):
            return web.Response(status=499)
        payload = await request.json()
        requests = payload.get("requests")
        if not isinstance(requests, list) or not requests:
            return web.json_response({"type": "error", "error": {"type": "invalid_request_error",
                                                                 "message": "requests: expected a list"}}, status=400)
        batch = self._register(config, store, "anthropic", [(r["custom_id"], r["params"]) for r in requests],
                               None, {}, sent_key(request.headers))
        await _hold(config, store, "create")
        return web.json_response(self._anthropic_view(request, config, batch))

    async def retrieve_anthropic(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        batch = store.batches.get(request.match_info["id"])
        if batch is None or batch.vendor != "anthropic":
            return web.json_response({"type": "error", "error": {"type": "not_found_error",
                                                                 "message": "no such batch"}}, status=404)
        view = self._anthropic_view(request, config, batch)
        batch.polls += 1
        return await _poll_answer(request, config, view)

    async def list_anthropic(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        data = [self._anthropic_view(request, config, b) for b in reversed(store.batches.values())
                if b.vendor == "anthropic"]
        return web.json_response(_page(request, data, "after_id"))

    async def results_anthropic(self, request: web.Request) -> web.StreamResponse:
        config, store = self._state(request)
        batch = store.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"type": "error", "error": {"type": "not_found_error",
                                                                 "message": "no such batch"}}, status=404)
        status, ran = _phase(config, batch)
        if status not in ("completed", "expired", "cancelled", "failed"):
            return web.json_response({"type": "error", "error": {"type": "invalid_request_error",
                                                                 "message": "batch still processing"}}, status=400)
        lines = []
        for i, (cell, ok, body) in enumerate(batch.results):
            if i >= ran:
                result: dict[str, Any] = {"type": "canceled" if status == "cancelled" else "expired"}
            elif ok:
                result = {"type": "succeeded", "message": body}
            else:
                result = {"type": "errored", "error": {"type": "error", "error": {"type": "api_error",
                                                                                  "message": body}}}
            lines.append(json.dumps({"custom_id": cell, "result": result}) + "\n")
        lines = [_line(r) for r in _spoiled(config, [json.loads(line) for line in lines])]
        return await self._send(request, config, "".join(lines).encode("utf-8"))

    def _anthropic_view(self, request: web.Request, config: Config, batch: _Batch) -> dict[str, Any]:
        status, ran = _phase(config, batch)
        ended = status in ("completed", "expired", "cancelled", "failed")
        done = batch.results[:ran]
        errored = sum(not ok for _, ok, _ in done)
        rest = len(batch.results) - ran
        counts = {"processing": 0 if ended else rest, "succeeded": ran - errored, "errored": errored,
                  "canceled": rest if ended and status == "cancelled" else 0,
                  "expired": rest if ended and status in ("expired", "failed") else 0}
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if ended else "canceling" if status == "cancelling" else "in_progress",
                "request_counts": counts, "created_at": _iso(batch.created_at), "ended_at": None,
                "expires_at": _iso(batch.created_at + 86400), "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{request.url.origin()}/v1/messages/batches/{batch.id}/results" if ended else None}

    # ----------------------------------------------------------------------------------------- shared

    def _register(self, config: Config, store: BatchStore, vendor: Vendor, requests: list[tuple[str, Any]],
                  input_file_id: str | None, metadata: dict[str, Any], key: str) -> _Batch:
        cycles: dict[str, int] = {}
        results = []
        echo = key if config.echo_key else ""
        for n, (cell, body) in enumerate(requests):
            store.submitted[cell] += 1
            ok, answer = _answer(config, cycles, body, vendor, n, echo)
            results.append((cell, ok, answer))
        prefix = "msgbatch_" if vendor == "anthropic" else "batch_"
        batch = _Batch(f"{prefix}{next(store.ids)}", vendor, time.monotonic(), time.time(), input_file_id,
                       metadata, results, echo=echo)
        store.batches[batch.id] = batch
        return batch

    async def _send(self, request: web.Request, config: Config, data: bytes) -> web.StreamResponse:
        """The file's bytes; with a download delay, half of them, the pause, then the rest (a slow download); a
        trickled download (`trickle_after`, `trickle_times`), 16 bytes every 0.1 s until the client hangs up."""
        _, store = self._state(request)
        store.downloads += 1
        headers = {"Content-Type": "application/jsonl"}
        if config.batch.bad_results == "cut_gzip" and store.downloads == 1:
            squeeze = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
            kept = data[:data.rstrip(b"\n").rfind(b"\n") + 1]  # every line but the last
            data = squeeze.compress(kept) + squeeze.flush(zlib.Z_FULL_FLUSH)  # never Z_FINISH: no trailer
            headers["Content-Encoding"] = "gzip"
        response = web.StreamResponse(headers=headers)
        response.content_length = len(data)
        await response.prepare(request)
        if config.batch.trickles(store.downloads):
            with contextlib.suppress(ConnectionError):
                for k in range(0, len(data), TRICKLE_BLOCK):
                    await response.write(data[k:k + TRICKLE_BLOCK])
                    await asyncio.sleep(0.1)
                await response.write_eof()
            return response
        half = len(data) // 2
        await response.write(data[:half])
        await _hold(config, store, "download")
        await response.write(data[half:])
        await response.write_eof()
        return response


def add_routes(app: web.Application, state: Any) -> None:
    """Mount both batch APIs; `state(request)` gives the server's current (Config, BatchStore)."""
    api = BatchApi(state)
    app.router.add_post("/v1/files", api.upload)
    app.router.add_get("/v1/files/{id}/content", api.content)
    app.router.add_post("/v1/batches", api.create)
    app.router.add_get("/v1/batches", api.list_openai)
    app.router.add_get("/v1/batches/{id}", api.retrieve)
    app.router.add_post("/v1/messages/batches", api.create_anthropic)
    app.router.add_get("/v1/messages/batches", api.list_anthropic)
    app.router.add_get("/v1/messages/batches/{id}", api.retrieve_anthropic)
    app.router.add_get("/v1/messages/batches/{id}/results", api.results_anthropic)
