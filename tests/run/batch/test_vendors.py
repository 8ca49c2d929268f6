"""The two vendors' batch services over a mock transport: each upload line around the sealed body's own bytes,
polls read into one shape, control calls retried on 429/5xx and refused in one line otherwise, the key kept
from any host but the API's own."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import socket
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from benchcard.errors import ProviderError
from benchcard.run.batch._vendors import (
    MAX_PAGES,
    AnthropicBatches,
    Claim,
    Found,
    OpenAIBatches,
    Poll,
    Vendor,
    vendor_for,
)
from benchcard.run.providers.anthropic import API_VERSION, AnthropicProvider
from benchcard.run.providers.base import ProviderConfig
from benchcard.run.providers.openai import OpenAIProvider

from ...helpers_providers import CLAUDE, OPENAI, SEEN, client_for

pytestmark = pytest.mark.usefixtures("provider_keys")  # each test gets the test keys and an empty SEEN

Handler = Callable[[httpx.Request], httpx.Response]
V = TypeVar("V", bound=Vendor)
BODY = b'{"model":"m","messages":[{"role":"user","content":"say \\"red\\""}],"max_tokens":5}'


def openai(handler: Handler, attempts: int = 3) -> OpenAIBatches:
    vendor = vendor_for(OpenAIProvider(OPENAI, client_for(handler)), attempts, (0.0, 0.0))
    assert isinstance(vendor, OpenAIBatches)
    return vendor


def anthropic(handler: Handler, attempts: int = 3) -> AnthropicBatches:
    vendor = vendor_for(AnthropicProvider(CLAUDE, client_for(handler)), attempts, (0.0, 0.0))
    assert isinstance(vendor, AnthropicBatches)
    return vendor


def ask(vendor: V, call: Callable[[V], Awaitable[Any]]) -> Any:
    """One control call of `vendor`, its client closed after."""
    async def go() -> Any:
        try:
            return await call(vendor)
        finally:
            await vendor.client.aclose()

    return asyncio.run(go())


def test_each_upload_line_wraps_the_sealed_body_byte_for_byte() -> None:
    line = openai(lambda r: httpx.Response(200)).line("c0000000001", BODY)
    assert line == b'{"custom_id":"c0000000001","method":"POST","url":"/v1/chat/completions","body":' + BODY + b"}\n"
    assert json.loads(line)["body"] == json.loads(BODY)
    line = anthropic(lambda r: httpx.Response(200)).line("c0000000001", BODY)
    assert line == b'{"custom_id":"c0000000001","params":' + BODY + b"}\n"
    assert (OpenAIBatches.limits.requests, AnthropicBatches.limits.requests) == (50_000, 100_000)


def test_an_openai_poll_counts_done_and_failed_and_names_its_result_files() -> None:
    answer = {"id": "batch_1", "status": "completed", "output_file_id": "file-out", "error_file_id": "file-err",
              "request_counts": {"total": 10, "completed": 7, "failed": 3}}
    poll = ask(openai(lambda r: httpx.Response(200, json=answer)), lambda v: v.poll("batch_1"))
    assert poll == Poll("completed", 10, 3, 10, True, None, ("file-out", "file-err"))
    assert str(SEEN[0].url) == "https://api.example/v1/batches/batch_1"
    assert SEEN[0].headers["authorization"] == "Bearer sk-openai-test"
    failed = {"status": "failed", "errors": {"data": [{"message": "line 3: bad model"}, {"message": "line 9"}]}}
    poll = ask(openai(lambda r: httpx.Response(200, json=failed)), lambda v: v.poll("batch_2"))
    assert poll.ended and poll.error == "line 3: bad model; line 9" and poll.sources == ()
    poll = ask(openai(lambda r: httpx.Response(200, json={"status": "failed"})), lambda v: v.poll("batch_3"))
    assert poll.error == "the vendor gave no reason"
    poll = ask(openai(lambda r: httpx.Response(200, json={"status": "in_progress"})), lambda v: v.poll("batch_4"))
    assert not poll.ended and (poll.done, poll.total) == (0, 0)


def test_an_anthropic_poll_reads_its_counts_and_keeps_the_key_at_home() -> None:
    answer = {"id": "msgbatch_1", "processing_status": "ended", "results_url": "https://api.example/v1/r/1",
              "request_counts": {"processing": 0, "succeeded": 5, "errored": 1, "canceled": 1, "expired": 1}}
    poll = ask(anthropic(lambda r: httpx.Response(200, json=answer)), lambda v: v.poll("msgbatch_1"))
    assert poll == Poll("ended", 8, 3, 8, True, None, ("https://api.example/v1/r/1",))
    assert SEEN[0].headers["x-api-key"] == "sk-ant-test"
    running = {**answer, "processing_status": "in_progress", "request_counts": {"processing": 4, "succeeded": 4}}
    poll = ask(anthropic(lambda r: httpx.Response(200, json=running)), lambda v: v.poll("msgbatch_1"))
    assert (poll.status, poll.done, poll.total, poll.ended, poll.sources) == ("in_progress", 4, 8, False, ())
    elsewhere = {**answer, "results_url": "https://evil.example/r/1"}
    with pytest.raises(ProviderError) as info:
        ask(anthropic(lambda r: httpx.Response(200, json=elsewhere)), lambda v: v.poll("msgbatch_1"))
    assert str(info.value) == ("batch msgbatch_1: its results_url https://evil.example/r/1 is not on "
                               "https://api.example/v1; refusing to send the key there")


@pytest.mark.parametrize(("counts", "errors"), [
    ([7, 3, 10], [{"message": "line 3: bad model"}]),  # a list where an object is documented, and the reverse
    ({"total": "ten", "completed": 1e400, "failed": True}, {"data": {"message": "line 3: bad model"}}),
    ({"total": -4, "completed": 10**40, "failed": None}, {"data": [None, 5, {"message": ["line", 3]}]}),
])
def test_a_poll_in_another_shape_is_read_without_what_is_not_there(counts: Any, errors: Any) -> None:
    """Hostile audit (round 12b): a poll was read by indexing whatever JSON came, so counts as a list or as words,
    an infinite count, or errors as a list ended `run --batch` and `status` in a traceback. A count that is no
    whole number of requests is none (0), a reason that is not text is quoted as JSON, in one short line."""
    openai_answer = json.dumps({"status": "failed", "request_counts": counts, "errors": errors}).encode()
    poll = ask(openai(lambda r: httpx.Response(200, content=openai_answer)), lambda v: v.poll("batch_1"))
    assert (poll.status, poll.done, poll.failed, poll.total, poll.ended) == ("failed", 0, 0, 0, True)
    assert poll.error in ("line 3: bad model", "the vendor gave no reason", '["line", 3]')
    claude = json.dumps({"processing_status": {"state": "ended"}, "request_counts": counts}).encode()
    poll = ask(anthropic(lambda r: httpx.Response(200, content=claude)), lambda v: v.poll("msgbatch_1"))
    assert (poll.status, poll.done, poll.total, poll.ended) == ('{"state": "ended"}', 0, 0, False)


@pytest.mark.parametrize(("answer", "said"), [
    (None, "GET https://api.example/v1/batches/batch_1: the answer is JSON but not an object (null); nothing of it "
           "is kept"),
    ([{"id": "batch_1"}], "GET https://api.example/v1/batches/batch_1: the answer is JSON but not an object (a "
                          "list); nothing of it is kept"),
    ({"status": "completed", "output_file_id": "../../organization/keys"}, "the openai batch API's answer names "
     "output_file_id '../../organization/keys', which is not an id; nothing was sent with it, resume the run later"),
    # dots alone are a path's own segments: /v1/files/../content is /v1/content to every HTTP client
    ({"status": "completed", "output_file_id": ".."}, "the openai batch API's answer names output_file_id '..', "
     "which is not an id; nothing was sent with it, resume the run later"),
    ({"status": "completed", "output_file_id": "."}, "the openai batch API's answer names output_file_id '.', "
     "which is not an id; nothing was sent with it, resume the run later"),
    ({"status": "completed", "output_file_id": {"id": "file-1"}}, "the openai batch API's answer gives "
     "output_file_id as an object, which is not an id; nothing was sent with it, resume the run later"),
])
def test_a_control_answer_that_is_not_what_the_api_gives_is_one_line(answer: Any, said: str) -> None:
    """Hostile audit (round 12b): a poll answered with JSON that is not an object (a gateway's `null`, a list)
    ended in an AttributeError traceback, and a file id was put into the path of the next call, the key with it,
    whatever it held (`../..`, an object's repr). Each is one line, and nothing is sent with such an id."""
    with pytest.raises(ProviderError) as info:
        ask(openai(lambda r: httpx.Response(200, content=json.dumps(answer).encode())), lambda v: v.poll("batch_1"))
    assert str(info.value) == said and len(SEEN) == 1
    SEEN.clear()
    with pytest.raises(ProviderError, match=r"^the openai batch API's answer gives id as a number, which is not"):
        ask(openai(lambda r: httpx.Response(200, json={"id": 5})), lambda v: v.upload(Path(__file__), "R1"))
    with pytest.raises(ProviderError, match=re.escape("its results_url 'http://[x is not on https://api.example/v1")):
        ask(anthropic(lambda r: httpx.Response(200, json={"processing_status": "ended", "results_url": "'http://[x"})),
            lambda v: v.poll("msgbatch_1"))


def test_a_list_that_says_it_has_more_forever_is_read_to_its_end_or_to_max_pages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit (round 12b): the look for a lost batch read pages while the vendor said `has_more`, so one
    answering the same page again (or pages of batches whose time cannot be read) held `run --resume` forever.
    It stops at a page that repeats the last, and after MAX_PAGES (1,000 in use, 20 here) in any case."""
    from benchcard.run.batch import _vendors

    assert MAX_PAGES == 1000
    monkeypatch.setattr(_vendors, "MAX_PAGES", 20)
    same = {"data": [{"id": "batch_9", "created_at": "never"}], "has_more": True}
    found = ask(openai(lambda r: httpx.Response(200, json=same)), lambda v: v.listed("/batches", "after", EPOCH))
    assert [b["id"] for b in found] == ["batch_9", "batch_9"] and len(SEEN) == 2  # the second page was the first
    SEEN.clear()
    pages = iter(range(10**6))
    endless = ask(openai(lambda r: httpx.Response(200, json={"data": [{"id": f"b{next(pages)}"}], "has_more": True})),
                  lambda v: v.listed("/batches", "after", EPOCH))
    assert len(endless) == len(SEEN) == 20


def test_a_control_call_is_retried_on_429_and_5xx_then_gives_up_in_one_line() -> None:
    answers = iter([httpx.Response(429), httpx.Response(503), httpx.Response(200, json={"status": "validating"})])
    poll = ask(openai(lambda r: next(answers)), lambda v: v.poll("batch_1"))
    assert poll.status == "validating" and len(SEEN) == 3
    SEEN.clear()
    down = httpx.Response(500, json={"error": {"message": "down, key sk-openai-test"}})
    with pytest.raises(ProviderError) as info:
        ask(openai(lambda r: down, attempts=2), lambda v: v.poll("batch_1"))
    assert len(SEEN) == 2
    assert str(info.value) == ("GET https://api.example/v1/batches/batch_1: HTTP 500: down, key [redacted] "
                               "(gave up after 2 attempts); nothing is lost, resume the run later")


def test_a_control_calls_error_status_is_read_whatever_its_body() -> None:
    """Hostile audit (round 13e): a 429 whose body a proxy compressed as `br` ended the run ("compressed as 'br',
    which benchcard does not ask for"), the status unread; it is retried as any 429 is."""
    async def two_bytes() -> Any:
        yield b"xx"

    answers = iter([httpx.Response(429, headers={"content-encoding": "br"}, content=two_bytes()),
                    httpx.Response(200, json={"status": "validating"})])
    poll = ask(openai(lambda r: next(answers)), lambda v: v.poll("batch_1"))
    assert poll.status == "validating" and len(SEEN) == 2


def test_a_control_call_is_named_without_its_query(tmp_path: Path) -> None:
    """A results_url is the vendor's, and may be signed (`?sig=…`, a token of its own): a line naming the call
    quotes its URL without the query, as every line quoting a URL does (`urls.shown_url`)."""
    signed = "https://api.example/v1/r/1?sig=tok-0a1b2c3d"
    with pytest.raises(ProviderError) as info:
        ask(anthropic(lambda r: httpx.Response(503), attempts=2),
            lambda v: v.download(signed, tmp_path / "results.jsonl", 3))
    assert str(info.value) == ("GET https://api.example/v1/r/1?…: HTTP 503 (gave up after 2 attempts); nothing is "
                               "lost, resume the run later")
    assert SEEN[0].url == signed and not (tmp_path / "results.jsonl").exists()


def test_a_refused_control_call_is_not_retried_and_says_what_to_do() -> None:
    refused = httpx.Response(400, json={"error": {"message": "input file\nis invalid"}})
    with pytest.raises(ProviderError) as info:
        ask(openai(lambda r: refused), lambda v: v.submit(Path("chunk-000.jsonl"), Claim(
            "R1", "sha256:d1", 3, frozenset(), file_id="file-1")))
    assert len(SEEN) == 1
    assert str(info.value) == ("POST https://api.example/v1/batches: HTTP 400: input file is invalid; nothing is "
                               "lost, fix the cause and resume the run")
    with pytest.raises(ProviderError, match="the answer is not JSON"):
        ask(openai(lambda r: httpx.Response(200, content=b"<html>")), lambda v: v.poll("batch_1"))


MADE = "2026-03-01T12:00:00+00:00"  # when the lost create was about to be sent
EPOCH = "1970-01-01T00:02:00+00:00"  # a create that any batch may have made (since 0)


def claim(tmp_path: Path, **fields: Any) -> Claim:
    ids = frozenset(f"c000000000{i}-tag0" for i in range(3))
    return Claim(**{"run": "R1", "digest": "sha256:d1", "cells": 3, "ids": ids, "since": MADE,
                    "scratch": tmp_path / "chunk-000.seen", **fields})


def test_a_lost_openai_batch_is_taken_only_from_this_runs_file_and_metadata(tmp_path: Path) -> None:
    ours = {"benchcard_run": "R1", "benchcard_chunk": "sha256:d1"}
    pages = {None: {"data": [{"id": "batch_9", "input_file_id": "file-9", "created_at": 1772366500},
                             {"id": "batch_1", "input_file_id": "file-1", "created_at": 1772366450,
                              "metadata": {**ours, "benchcard_run": "R2"}}],
                    "has_more": True},
             "batch_1": {"data": [{"id": "batch_0", "input_file_id": "file-1", "created_at": 1772366420,
                                   "metadata": ours}], "has_more": False}}

    def listing(r: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=pages[r.url.params.get("after")])

    found = ask(openai(listing), lambda v: v.find(claim(tmp_path, file_id="file-1")))
    assert found == Found(batch="batch_0")  # on the second page; batch_1 has this file but another run's mark
    assert [r.url.params.get("after") for r in SEEN] == [None, "batch_1"] and SEEN[0].url.params["limit"] == "100"
    assert ask(openai(listing), lambda v: v.find(claim(tmp_path, file_id="file-1", passed=frozenset({"batch_0"})))
               ) == Found()  # already another chunk's


def test_a_lost_anthropic_batch_is_taken_only_when_its_results_carry_this_runs_ids(tmp_path: Path) -> None:
    """No metadata on a Message Batch: a batch of the chunk's size made since is looked at once it has ended,
    and taken only when its results answer this run's own custom_ids; one still running is waited for."""
    url = "https://api.example/v1/messages/batches"
    def batch(name: str, created: str, ended: bool = True, **counts: int) -> dict[str, Any]:
        return {"id": name, "created_at": created, "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts or {"succeeded": 3}, "results_url": f"{url}/{name}/results" if ended else None}
    listed = [batch("msgbatch_run", "2026-03-01T12:01:00+00:00", ended=False, processing=3),
              batch("msgbatch_theirs", "2026-03-01T12:00:40+00:00"),
              batch("msgbatch_small", "2026-03-01T12:00:35+00:00", succeeded=2),
              batch("msgbatch_ours", "2026-03-01T12:00:30+00:00"),
              batch("msgbatch_old", "2026-02-01T12:00:00+00:00")]
    results = {"msgbatch_theirs": [f"c000000000{i}-tagX" for i in range(3)],  # the same cells, another run's tag
               "msgbatch_ours": [f"c000000000{i}-tag0" for i in (2, 0, 1)]}

    def vendor_side(data: list[dict[str, Any]]) -> Callable[[httpx.Request], httpx.Response]:
        def answer(r: httpx.Request) -> httpx.Response:
            if r.url.path.endswith("/results"):
                ids = results[r.url.path.split("/")[-2]]
                return httpx.Response(200, content="".join(json.dumps({"custom_id": i, "result": {
                    "type": "succeeded"}}) + "\n" for i in ids).encode())
            return httpx.Response(200, json={"data": data, "has_more": False})
        return answer

    found = ask(anthropic(vendor_side(listed)), lambda v: v.find(claim(tmp_path)))
    assert found == Found(batch="msgbatch_ours", foreign=("msgbatch_theirs",))
    assert not (tmp_path / "chunk-000.seen").exists()  # what was fetched to be looked at is not kept
    without = [b for b in listed if b["id"] != "msgbatch_ours"]
    found = ask(anthropic(vendor_side(without)), lambda v: v.find(claim(tmp_path)))
    assert found == Found(foreign=("msgbatch_theirs",), waiting=("msgbatch_run",))
    passed = frozenset({"msgbatch_theirs", "msgbatch_run"})
    assert ask(anthropic(vendor_side(without)), lambda v: v.find(claim(tmp_path, passed=passed))) == Found()


@pytest.mark.parametrize("ahead_min", [0, 10, 600])
def test_a_lost_anthropic_batch_is_found_when_our_clock_runs_ahead_of_the_vendors(tmp_path: Path,
                                                                                   ahead_min: int) -> None:
    """Hostile audit (hostile23b): `creating` is stamped by our clock, a batch's `created_at` by the vendor's, and a
    batch dated more than two minutes before the create was passed by. With our clock ten minutes fast (or a machine
    keeping local time as UTC, hours off), the batch a create whose answer was lost had made was never looked at,
    and the chunk's requests were sent, and paid for, a second time. The vendor's `Date` says how far behind it is."""
    from email.utils import format_datetime

    url = "https://api.example/v1/messages/batches"
    made = datetime.fromisoformat(MADE)  # the create, by our clock
    vendor_now = datetime.now(UTC) - timedelta(minutes=ahead_min)
    ours = {"id": "msgbatch_ours", "created_at": (made - timedelta(minutes=ahead_min)).isoformat(),
            "processing_status": "ended", "request_counts": {"succeeded": 3}, "results_url": f"{url}/ours/results"}

    def answer(r: httpx.Request) -> httpx.Response:
        date = {"date": format_datetime(vendor_now, usegmt=True)}
        if r.url.path.endswith("/results"):
            return httpx.Response(200, headers=date, content="".join(json.dumps({"custom_id": f"c000000000{i}-tag0",
                                  "result": {"type": "succeeded"}}) + "\n" for i in range(3)).encode())
        return httpx.Response(200, headers=date, json={"data": [ours], "has_more": False})

    assert ask(anthropic(answer), lambda v: v.find(claim(tmp_path))) == Found(batch="msgbatch_ours")


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirected_control_call_is_refused_not_followed_nor_read(status: int) -> None:
    """Hostile audit: a 3xx whose body held a batch object was taken as the API's answer; it is refused in one
    line naming where it points (its password left out), after one request: nothing followed it with the key."""
    moved = httpx.Response(status, json={"id": "batch_evil", "status": "completed"},
                           headers={"location": "http://user:pw@elsewhere.example/v1/batches/batch_1"})
    with pytest.raises(ProviderError) as info:
        ask(openai(lambda r: moved), lambda v: v.poll("batch_1"))
    assert len(SEEN) == 1
    assert str(info.value) == (f"GET https://api.example/v1/batches/batch_1: HTTP {status}: the server redirects "
                               "the call to http://elsewhere.example/v1/batches/batch_1; benchcard does not follow "
                               "redirects, which would send the key and the request elsewhere: if that address is "
                               "the API's, set it as the provider's base_url")


def test_a_control_call_redirected_to_an_address_that_is_not_a_url_is_refused_not_retried() -> None:
    """Hostile audit: a 3xx whose Location is not a URL was retried as a connection error ('Invalid URL in location
    header') until the attempts ran out; it is refused at once as any redirect is, its password never shown."""
    moved = httpx.Response(307, json={}, headers={"location": "http://user:hunter2@elsewhere.example:x/v1"})
    with pytest.raises(ProviderError) as info:
        ask(openai(lambda r: moved), lambda v: v.poll("batch_1"))
    assert len(SEEN) == 1
    assert str(info.value) == ("GET https://api.example/v1/batches/batch_1: HTTP 3xx: the server redirects the call "
                               "to an address that is not a URL (Invalid port: 'x'); benchcard does not follow "
                               "redirects, which would send the key and the request elsewhere: if the API has "
                               "moved, set its address as the provider's base_url")


def test_a_control_call_that_gets_no_answer_is_told_as_a_models_call_is(tmp_path: Path) -> None:
    """A timeout, a dropped or refused connection: the batch API's calls read them as a model's call does
    (`providers.base.no_answer`), naming aiohttp's error underneath httpx-aiohttp's ConnectTimeout, which the
    batch API's lines named for every failed connection; each is worth another attempt."""
    from benchcard.run._calls import make_client

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out")

    with pytest.raises(ProviderError) as info:
        ask(openai(slow, attempts=2), lambda v: v.poll("batch_1"))
    assert len(SEEN) == 2
    assert str(info.value) == ("GET https://api.example/v1/batches/batch_1: timed out waiting for the server (gave "
                               "up after 2 attempts); nothing is lost, resume the run later")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    config = ProviderConfig("down", "openai", f"http://127.0.0.1:{port}/v1", "BC_TEST_OPENAI_KEY")
    with pytest.raises(ProviderError) as info:
        ask(vendor_for(OpenAIProvider(config, make_client(2, 10.0)), 2, (0.0, 0.0)), lambda v: v.poll("batch_1"))
    assert str(info.value).startswith(f"GET http://127.0.0.1:{port}/v1/batches/batch_1: connection error: "
                                      "ClientConnectorError: Cannot connect to host 127.0.0.1:")
    assert "ConnectTimeout" not in str(info.value) and "(gave up after 2 attempts)" in str(info.value)


def test_a_certificate_that_cannot_be_verified_is_one_line_at_once(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit (round 12b): a batch API's certificate that cannot be verified was retried as a dropped
    connection, then "resume the run later", which would meet the same certificate. It is one line at the first
    attempt, saying why and how to trust the authority that signed it (a real TLS handshake on 127.0.0.1)."""
    from benchcard.run._calls import make_client

    from ...helpers_run import tls_server

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    url, _, seen, done = tls_server(tmp_path)
    try:
        config = ProviderConfig("tls", "openai", url, "BC_TEST_OPENAI_KEY")
        vendor = vendor_for(OpenAIProvider(config, make_client(2, 10.0)), 3, (0.0, 0.0))
        with pytest.raises(ProviderError) as info:
            ask(vendor, lambda v: v.poll("batch_1"))
        assert str(info.value).startswith(f"GET {url}/batches/batch_1: TLS: the certificate of "
                                          f"{url[8:-3]} cannot be verified (self-signed certificate): set "
                                          "$SSL_CERT_FILE to the certificate of the authority that signed it")
        assert len(seen) == 1
    finally:
        done.set()


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "America/Adak"])
def test_a_batch_time_without_an_offset_is_utc_whatever_the_local_zone(tmp_path: Path, zone: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A vendor's `created_at` without an offset, and a `since` without one, are UTC: read as local time under
    UTC+14 the batch made 30 s after the create was 14 hours too old, and was never looked at (its cells would
    have been sent and paid for again); under UTC-10 the create was 10 hours after the batch it made."""
    import time

    url = "https://api.example/v1/messages/batches"
    ours = {"id": "msgbatch_ours", "created_at": "2026-03-01T12:00:30", "processing_status": "ended",
            "request_counts": {"succeeded": 3}, "results_url": f"{url}/msgbatch_ours/results"}
    old = {**ours, "id": "msgbatch_old", "created_at": "2026-03-01T02:00:00Z", "results_url": f"{url}/old/results"}

    def answer(r: httpx.Request) -> httpx.Response:
        if r.url.path.endswith("/results"):
            return httpx.Response(200, content="".join(json.dumps({"custom_id": f"c000000000{i}-tag0", "result": {
                "type": "succeeded"}}) + "\n" for i in range(3)).encode())
        return httpx.Response(200, json={"data": [ours, old], "has_more": False})

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        for since in (MADE, MADE.removesuffix("+00:00")):
            for created in ("2026-03-01T12:00:30", "2026-03-01T12:00:30Z"):
                ours["created_at"] = created
                found = ask(anthropic(answer), lambda v, s=since: v.find(claim(tmp_path, since=s)))  # type: ignore[misc]
                assert found == Found(batch="msgbatch_ours"), (zone, since, created)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_create_on_a_keep_alive_connection_found_closed_is_not_sent_again(tmp_path: Path) -> None:
    """A call on a keep-alive connection the server closed unsaid is sent again at once (`run/_calls`), but not a
    batch's create: it may have been made though no answer came, and two batches would bill the grid twice. Its
    RetryableError goes to the driver, which looks for the batch before making another; the poll before it, on
    the same kind of connection, is sent again and answered."""
    from benchcard.errors import RetryableError
    from benchcard.run._calls import make_client

    from ...helpers_run import read_head, read_request_body, serve_raw

    seen: list[bytes] = []  # the requests answered
    dropped: list[bytes] = []  # those sent on a connection after its first, dropped

    def answer(conn: socket.socket) -> None:
        with conn:
            head = read_head(conn)
            read_request_body(conn, head) if b"content-length" in head.lower() else None
            seen.append(head.split(b" ")[1])
            body = b'{"id": "batch_1", "status": "in_progress", "request_counts": {"total": 1}}'
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            if after := conn.recv(65536):  # the next request on this connection: dropped unanswered
                dropped.append(after.split(b" ")[1])

    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    serve_raw(listener, answer, done)
    config = ProviderConfig("raw", "openai", f"http://127.0.0.1:{listener.getsockname()[1]}/v1", "BC_TEST_OPENAI_KEY")
    vendor = vendor_for(OpenAIProvider(config, make_client(1, 10.0)), 3, (0.0, 0.0))
    claim = Claim("run", "digest", 1, frozenset({"c"}), file_id="file_1")

    async def go() -> None:
        await vendor.poll("batch_1")
        await vendor.poll("batch_1")  # on the kept connection, dropped: sent again on a new one
        with pytest.raises(RetryableError, match="Server disconnected"):
            await vendor.submit(tmp_path / "chunk.jsonl", claim)

    try:
        ask(vendor, lambda v: go())
    finally:
        done.set()
    assert seen == [b"/v1/batches/batch_1"] * 2  # the poll dropped was sent again, the create was not
    assert dropped == [b"/v1/batches/batch_1", b"/v1/batches"]


def test_a_control_call_sends_each_header_once_whatever_its_case_in_benchcard_yaml() -> None:
    """A header of benchcard.yaml named as one of the vendor's but for its case (`Anthropic-Version`) is replaced
    by the vendor's, as on a run's call (`base.sent_headers`): before (review21), a control call sent both, two
    versions of the API."""
    config = dataclasses.replace(CLAUDE, headers={"Anthropic-Version": "2099-01-01", "X-Title": "bench"})
    answer = {"id": "msgbatch_1", "processing_status": "in_progress", "request_counts": {"processing": 1}}
    vendor = vendor_for(AnthropicProvider(config, client_for(lambda r: httpx.Response(200, json=answer))), 3,
                        (0.0, 0.0))
    ask(vendor, lambda v: v.poll("msgbatch_1"))
    assert SEEN[0].headers.get_list("anthropic-version") == [API_VERSION]
    assert SEEN[0].headers.get_list("x-title") == ["bench"] and SEEN[0].headers["x-api-key"] == "sk-ant-test"
