"""The provider interface and the HTTP call every vendor shares: errors classified, Retry-After read, the key
required, sent and scrubbed from anything a server echoes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchcard.errors import CallError, ProviderError, RetryableError
from benchcard.run.providers import (
    BUILTIN,
    require_key,
)
from benchcard.run.providers.base import (
    Completion,
    Provider,
    ProviderConfig,
    SecretFilter,
    encode_body,
    parse_retry_after,
    redact,
    without_secret_json,
)
from benchcard.run.providers.openai import OpenAIProvider
from benchcard.testing.fakeserver import FakeServer

from ...helpers_digits import THIRTY_DIGITS
from ...helpers_providers import OPENAI, SEEN, chat_reply, client_for, complete
from ...helpers_run import ab_project, bc, read_jsonl, write_config

pytestmark = pytest.mark.usefixtures("provider_keys")  # each test gets the test keys and an empty SEEN


@pytest.mark.parametrize(("status", "kind"), [(429, RetryableError), (500, RetryableError), (503, RetryableError),
                                              (529, RetryableError), (408, RetryableError), (400, CallError),
                                              (401, CallError), (404, CallError), (422, CallError)])
def test_http_errors_are_classified(status: int, kind: type[Exception]) -> None:
    reply = httpx.Response(status, json={"error": {"message": f"nope {status}"}}, headers={"Retry-After": "2"})
    provider = OpenAIProvider(OPENAI, client_for(lambda r: reply))
    with pytest.raises(kind) as info:
        complete(provider, {"model": "m", "messages": []})
    called = " (POST https://api.example/v1/chat/completions)" if status == 404 else ""
    assert str(info.value) == f"HTTP {status}: nope {status}{called}"
    assert provider.should_retry(info.value) is (kind is RetryableError)
    if isinstance(info.value, RetryableError):
        assert info.value.retry_after == 2.0


def test_connection_errors_and_timeouts_are_retryable() -> None:
    def boom(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(RetryableError, match="connection error"):
        complete(OpenAIProvider(OPENAI, client_for(boom)), {"model": "m"})

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out")

    with pytest.raises(RetryableError, match="timed out"):
        complete(OpenAIProvider(OPENAI, client_for(slow)), {"model": "m"})


def test_a_body_is_sent_in_utf_8_and_one_holding_a_lone_surrogate_in_its_json_escapes() -> None:
    """A judge's prompt quotes a model's reply, which may hold a lone surrogate (no UTF-8 form): that body goes as
    ASCII JSON, the same value, as `dumps_line` seals it; every other body keeps its UTF-8 bytes."""
    assert encode_body({"t": "é ✓", "n": 1}) == '{"t":"é ✓","n":1}'.encode()
    sent = encode_body({"t": "é \ud800"})
    assert sent == b'{"t":"\\u00e9 \\ud800"}' and json.loads(sent) == {"t": "é \ud800"}


def test_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after": "0.5"})) == 0.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert parse_retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # past
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None
    # float() read these as 10 s, 3 s and 1,000 s: a header's seconds are ASCII digits (RFC 9110's delay-seconds)
    for bad in ("1_0", "\u0663", "1e3", "-2", "inf", "nan"):
        assert parse_retry_after(httpx.Headers({b"retry-after": bad.encode()})) is None, bad
        assert parse_retry_after(httpx.Headers({b"retry-after-ms": bad.encode()})) is None, bad


@pytest.mark.parametrize("form", ["%a %b %d %H:%M:%S %Y", "%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                                  "%a, %d %b %Y %H:%M:%S -0000"])
def test_a_retry_after_date_is_read_in_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch,
                                                                   form: str) -> None:
    """Every HTTP-date is UTC (RFC 9110 §5.6.7), the asctime form too, which carries no zone: read as local time,
    a date 30 s ahead asked for 8 hours under TZ=America/Los_Angeles (the cell waited the 600 s cap, or gave up)."""
    import time
    from datetime import UTC, datetime, timedelta

    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        when = (datetime.now(UTC) + timedelta(seconds=30)).strftime(form)
        wait = parse_retry_after(httpx.Headers({"retry-after": when}))
        assert wait is not None and 25 <= wait <= 31, (when, wait)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_server_echo_of_the_key_is_redacted() -> None:
    reply = httpx.Response(401, json={"error": {"message": "Incorrect API key provided: sk-openai-test. Or "
                                                           "sk-open*******test"}})
    with pytest.raises(CallError) as info:
        complete(OpenAIProvider(OPENAI, client_for(lambda r: reply)), {"model": "m"})
    assert "sk-open" not in str(info.value) and "[redacted]" in str(info.value)
    assert redact("key sk-abc123 here", None) == "key [redacted] here"
    assert redact("value SECRETVALUE", "SECRETVALUE") == "value [redacted]"


KEY = "sk/pröj-0123456789"  # a '/' JSON may write as '\\/', and a letter it may write as '\\u00f6'


@pytest.mark.parametrize("written", [
    json.dumps({"text": f"you sent {KEY}"}, ensure_ascii=False),
    json.dumps({"text": f"you sent {KEY}"}),  # \u00f6
    json.dumps({"text": f"you sent {KEY}"}).replace("/", "\\/"),  # \/ as well
    json.dumps({"text": f"you sent {KEY}"}).replace("s", "\\u0073"),  # any character may be escaped
])
def test_a_key_in_a_vendors_json_is_replaced_however_it_is_escaped(written: str) -> None:
    """Every form a JSON string can give the key in is found: the line, decoded, holds `[redacted]` instead."""
    line = written.encode() + b"\n"
    scrubbed = without_secret_json(line, KEY)
    assert json.loads(scrubbed) == {"text": "you sent [redacted]"} and scrubbed.endswith(b"\n")
    assert without_secret_json(b'{"text": "no key, \\u00f6"}\n', KEY) == b'{"text": "no key, \\u00f6"}\n'
    assert without_secret_json(line, None) == line


def test_a_vendors_json_holding_a_lone_surrogate_beside_an_escaped_key_is_kept_without_the_key() -> None:
    """A reply may escape a lone surrogate (`"\\ud800"`, eeb5b58), which no UTF-8 text holds: a line holding one
    beside the key written escaped ended the download of a batch's results in a UnicodeEncodeError when the line
    was written again without the key. It is written in ASCII JSON then, the same value."""
    line = json.dumps({"text": f"you sent {KEY} \ud800"}).replace("s", "\\u0073").encode() + b"\n"
    scrubbed = without_secret_json(line, KEY)
    assert json.loads(scrubbed) == {"text": "you sent [redacted] \ud800"} and scrubbed.endswith(b"\n")


def test_a_vendors_json_nested_past_the_stack_is_refused_never_kept_with_an_escaped_key() -> None:
    """A result line holding the key only escaped ('\\u0073k…'), nested deeper than json.loads can read: the
    check for the key ended in a RecursionError (a traceback in the middle of a download). Unreadable here, it
    may still be read elsewhere, so it is never written as it came: one line says so, without the key."""
    escaped = json.dumps({"text": f"you sent {KEY}"}).replace("s", "\\u0073")[:-1]
    line = (escaped + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n").encode()
    with pytest.raises(ProviderError, match="nested too deeply to be checked for the key") as refused:
        SecretFilter(KEY).feed(line)
    assert KEY not in str(refused.value)


def test_a_stream_cut_inside_the_key_is_filtered_line_by_line() -> None:
    data = b"".join(json.dumps({"n": n, "text": f"you sent {KEY}"}).encode() + b"\n" for n in range(50))
    for size in (1, 7, 64):
        scrub = SecretFilter(KEY)
        out = b"".join(scrub.feed(data[i:i + size]) for i in range(0, len(data), size)) + scrub.end()
        assert [json.loads(line)["text"] for line in out.splitlines()] == ["you sent [redacted]"] * 50
    last = SecretFilter(KEY)
    assert last.feed(b'{"text": "' + KEY.encode()) + last.end() == b'{"text": "[redacted]'  # no newline at its end


def test_an_endpoint_without_a_key_sends_no_authorization() -> None:
    local = ProviderConfig("ollama", "openai", "http://127.0.0.1:11434/v1")
    require_key(local)
    complete(OpenAIProvider(local, client_for(lambda r: httpx.Response(200, json=chat_reply()))), {"model": "m"})
    assert "authorization" not in SEEN[0].headers


def test_missing_key_names_the_variable_and_suggests_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(ProviderError) as info:
        require_key(BUILTIN["openrouter"])
    assert str(info.value) == ("OPENROUTER_API_KEY is not set; export it, or run on the embedded model with "
                               "--provider local")
    monkeypatch.setenv("OPENROUTER_API_KEY", "")
    with pytest.raises(ProviderError, match="OPENROUTER_API_KEY"):
        require_key(BUILTIN["openrouter"])
    require_key(BUILTIN["local"])  # the embedded model needs no key


class _Echo(Provider):
    """The least a provider states: its body and its call; every other hook keeps the interface's default."""

    def __init__(self) -> None:
        self.config = ProviderConfig(name="echo", type="openai", base_url="http://x")

    def build_body(self, model: str, messages: list[dict[str, str]], params: Any, effort: str | None
                   ) -> dict[str, Any]:
        return {"model": model, "messages": messages}

    async def complete(self, body: Any) -> Completion:
        return Completion(text=str(body["messages"][-1]["content"]), finish_reason="stop", status="ok")


def test_a_provider_states_its_body_and_call_and_inherits_every_other_hook() -> None:
    from benchcard.run._calls import workers_for

    class Half(Provider):
        def build_body(self, model: str, messages: list[dict[str, str]], params: Any, effort: str | None
                       ) -> dict[str, Any]:
            return {}

    with pytest.raises(TypeError, match="complete"):
        Half()  # type: ignore[abstract]
    p = _Echo()
    assert workers_for(p, 16) == 16 and p.model_name is None and not p.plans_bodies
    assert p.planned_body({"a": 1}, 3) == {"a": 1}
    assert p.should_retry(RetryableError("503")) and not p.should_retry(CallError("400"))
    asyncio.run(p.prepare())
    asyncio.run(p.warm())
    asyncio.run(p.aclose())
    done = asyncio.run(p.complete(p.build_body("m", [{"role": "user", "content": "hi"}], {}, None)))
    assert done.text == "hi" and done.status == "ok"


def streamed(data: bytes) -> Any:
    """A body as a socket gives it, in blocks, unread (httpx reads and inflates a body given as bytes at once)."""
    async def blocks() -> Any:
        for k in range(0, len(data), 65536):
            yield data[k:k + 65536]
    return blocks()


@pytest.mark.parametrize("framing", ["content-length", "chunked", "gzip"])
def test_a_reply_larger_than_any_answer_is_refused_unread(framing: str) -> None:
    """A server sending hundreds of megabytes for one call (max_tokens 50 took 200 MB a cell, 800 MB for four in
    outputs.jsonl and 2 GB of memory): past MAX_REPLY_BYTES the call fails for good, whether the size is
    declared, streamed in chunks or inflated from a small compressed body; nothing of it is kept."""
    import gzip

    from benchcard.run.providers.base import MAX_REPLY_BYTES

    huge = json.dumps(chat_reply("red " + "x" * MAX_REPLY_BYTES)).encode()

    def reply(request: httpx.Request) -> httpx.Response:
        if framing == "gzip":  # streamed, as a socket gives it: httpx inflates a body given whole itself
            return httpx.Response(200, content=streamed(gzip.compress(huge, 1)), headers={"content-encoding": "gzip"})
        if framing == "chunked":
            async def blocks() -> Any:
                for k in range(0, len(huge), 65536):
                    yield huge[k:k + 65536]
            return httpx.Response(200, content=blocks())
        return httpx.Response(200, content=huge)

    with pytest.raises(CallError, match=r"^the reply is more than 32 MiB, more than any answer takes: refused$"):
        complete(OpenAIProvider(OPENAI, client_for(reply)), {"model": "m"})
    small = complete(OpenAIProvider(OPENAI, client_for(lambda r: httpx.Response(200, json=chat_reply("red")))),
                     {"model": "m"})
    assert small.text == "red"


@pytest.mark.parametrize("declared", [b"\xb2", b"1_000", b"+1", THIRTY_DIGITS.encode()])
def test_a_declared_length_is_read_in_ascii_digits_only(declared: bytes) -> None:
    """A Content-Length is a number only in ASCII digits: '²' (which str.isdigit() takes; a header is read as
    Latin-1) made int() raise, and the cell failed with a ValueError instead of its answer. A length that is no
    number leaves the body to be read under the cap; 30 digits declare more than any answer: refused unread."""
    body = json.dumps(chat_reply("red")).encode()

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=[(b"content-length", declared)], content=streamed(body))

    if declared == THIRTY_DIGITS.encode():
        with pytest.raises(CallError, match="more than 32 MiB"):
            complete(OpenAIProvider(OPENAI, client_for(reply)), {"model": "m"})
    else:
        assert complete(OpenAIProvider(OPENAI, client_for(reply)), {"model": "m"}).text == "red"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw deflate"])
def test_a_compressed_answer_is_inflated_and_only_gzip_and_deflate_are_asked_for(encoding: str) -> None:
    """benchcard inflates replies itself, under the cap (hostile audit: a zstd bomb); the encodings it asks for
    read as the answer, HTTP's deflate both zlib-wrapped and raw, as servers send it."""
    import gzip
    import zlib

    body = json.dumps(chat_reply("red")).encode()
    packed = {"gzip": gzip.compress(body), "deflate": zlib.compress(body)}.get(encoding)
    if packed is None:
        squeeze = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        packed = squeeze.compress(body) + squeeze.flush()
    asked: list[str] = []

    def reply(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers["accept-encoding"])
        return httpx.Response(200, content=streamed(packed), headers={"content-encoding": encoding.split()[-1]})

    assert complete(OpenAIProvider(OPENAI, client_for(reply)), {"model": "m"}).text == "red"
    assert asked == ["gzip, deflate"]


@pytest.mark.parametrize("encoding", ["zstd", "br", "gzip, gzip", "compress"])
def test_an_encoding_not_asked_for_is_refused_uninflated(encoding: str) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=streamed(b"\x28\xb5\x2f\xfd"), headers={"content-encoding": encoding})

    with pytest.raises(CallError) as info:
        complete(OpenAIProvider(OPENAI, client_for(reply)), {"model": "m"})
    assert str(info.value) == (f"the reply is compressed as {encoding!r}, which benchcard does not ask for (it asks "
                               "for gzip, deflate): refused")


def test_a_compressed_body_that_does_not_inflate_is_malformed_and_retried() -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=streamed(b"\x1f\x8b not gzip"), headers={"content-encoding": "gzip"})

    with pytest.raises(RetryableError, match=r"^malformed response: a compressed body that does not inflate$"):
        complete(OpenAIProvider(OPENAI, client_for(reply)), {"model": "m"})


@pytest.mark.parametrize(("location", "where"), [
    ("https://user:pw@other.example/v1/chat/completions", "to https://other.example/v1/chat/completions"),
    ("/v2/chat/completions", "to https://api.example/v2/chat/completions"),
    ("https://other.example/v1?sig=sk-signed-77#t", "to https://other.example/v1?…"),  # a query may carry a key
    (None, "without saying where (no Location)"),
])
def test_a_redirect_is_an_error_that_names_where_it_points(location: str | None, where: str) -> None:
    """A 3xx is never followed and never read as an answer, whatever its body (hostile audit: a 307 holding a
    valid answer was scored)."""
    headers = {"location": location} if location else {}
    reply = httpx.Response(308, json=chat_reply("red"), headers=headers)
    with pytest.raises(CallError) as info:
        complete(OpenAIProvider(OPENAI, client_for(lambda r: reply)), {"model": "m"})
    assert str(info.value) == (f"HTTP 308: the server redirects the call {where}; benchcard does not follow "
                               "redirects, which would send the key and the request elsewhere: if that address is "
                               "the API's, set it as the provider's base_url")
    assert info.value.status == 308


def test_a_redirect_to_an_address_holding_the_key_leaves_no_part_of_it_where_the_address_is_cut(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The address a redirect names is cut to 200 characters; the key in it (a server pointing to a path that
    quotes it) was taken out after the cut, which left its first 13 characters (hostile audit, 2026-12-08)."""
    key = "gsk_REDIRECT4wQ2mZ9xV4bN8kL3pR6tY1uE"
    monkeypatch.setenv("BC_TEST_OPENAI_KEY", key)
    location = "https://other.example/" + "p" * 165 + key
    reply = httpx.Response(307, headers={"location": location})
    with pytest.raises(CallError) as info:
        complete(OpenAIProvider(OPENAI, client_for(lambda r: reply)), {"model": "m"})
    assert f"to https://other.example/{'p' * 165}[redacted]; benchcard" in str(info.value)
    assert not any(key[i:i + 8] in str(info.value) for i in range(len(key) - 7))


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_reply_with_no_stop_reason_that_reaches_max_tokens_is_truncated_not_scored(
        tmp_path: Path, server: FakeServer, key: str, api: str) -> None:
    """Hostile audit 2026-12-08 (second part, the brief's fourth): a server that says no stop reason (`null`) for a
    reply it cut at max_tokens gave a part of an answer taken as a whole one, and scored. OpenAI's and Anthropic's
    APIs always say why a reply that is not streamed stopped, so a reply without a reason whose output tokens reach
    the limit is recorded truncated (never scored); one below the limit stays an answer, over a real socket."""
    server.configure({"replies": [
        {"match": "number 0", "reply": "red " * 8, "finish_reason": None},  # cut by the server at 5 words, unsaid
        {"match": "number 1", "reply": "red", "finish_reason": None}]})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1, max_tokens=5)
    write_config(project.root, server.base_url, type_=api)
    ran = bc(project, "run", "colour-ab", "--json")
    assert ran.exit_code == 0, ran.output
    run = project.root / json.loads(ran.stdout)["runs"][0]["folder"]
    rows = {(o["fixture"], o["status"], o["finish_reason"], o["usage"]["output"]) for o in
            read_jsonl(run / "outputs.jsonl")}
    assert rows == {("item-000", "truncated", None, 5), ("item-001", "ok", None, 1)}
    cut = [o for o in read_jsonl(run / "outputs.jsonl") if o["status"] == "truncated"]
    assert all("no stop reason" in o["error"] and "token limit (5)" in o["error"] for o in cut)
    scores = {(s["fixture"], s["score"]) for s in read_jsonl(run / "scores.jsonl")}
    assert scores == {("item-000", None), ("item-001", 1.0)}
