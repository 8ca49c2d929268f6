"""The provider interface: build the exact body, send it, and say which errors are worth another try.

A provider never decides what is sent beyond the card's messages and params; the runner stores the body it builds
before the first attempt and sends those same bytes (`encode_body`).

Keys: only the *name* of the environment variable is ever held; its value is read from the environment at call
time, put in one request header, and scrubbed (`redact`) from anything a server sends back.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import re
import time
import urllib.parse
import weakref
import zlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC
from typing import Any, ClassVar, Literal

import httpx

from benchcard._util.names import visible
from benchcard._util.text import ascii_decimal, ascii_int, squeezed
from benchcard._util.urls import basic_auth, secrets_of, shown_url, split_credentials
from benchcard.errors import CallError, ProviderError, RetryableError
from benchcard.project import CONFIG_FILE, Endpoint
from benchcard.records.rows import (
    Status,  # the one status vocabulary of a cell: ok, truncated, failed
    Usage,  # tokens as the provider bills them: the record outputs.jsonl keeps
)
from benchcard.run._proxies import refusal

# Why generation stopped, in every vendor's words (OpenAI's and OpenRouter's finish_reason, Anthropic's
# stop_reason, llama.cpp's), read by one function, `status_for`.
ANSWERED = frozenset({"stop", "end_turn", "stop_sequence", "eos"})  # the model finished its answer
CUT = frozenset({"length", "max_tokens", "model_context_window_exceeded"})  # the token limit cut it
WITHHELD = {"content_filter": "a content filter withheld the answer", "refusal": "the API declined to answer"}
NOT_AN_ANSWER = {
    "tool_calls": "the model asked to call a tool (the card offers none)",
    "function_call": "the model asked to call a function (the card offers none)",
    "tool_use": "the model asked to use a tool (the card offers none)",
    "pause_turn": "the API paused the turn before the answer was finished",
}
UPSTREAM_ERROR = "error"  # OpenRouter: the provider behind it failed mid-answer; worth another attempt


def status_for(reason: object) -> tuple[Status, str | None]:
    """The status of an answer that stopped for `reason` (as the reply's JSON gives it), and the error to record
    when it is not `ok`. A reason none of the vendors documents is not taken for an answer: it is recorded,
    failed, never scored; nor is one that is not text (a list, an object, a number), which may say the answer
    was cut off in a shape benchcard cannot read. Only a reason given as null, or none at all, is no reason."""
    if reason is not None and not isinstance(reason, str):
        said = json.dumps(reason, default=str)
        return "failed", (f"not an answer: the stop reason is not text ({said[:40]}), so whether the answer was "
                          "whole cannot be told")
    if reason is None or reason in ANSWERED:
        return "ok", None
    if reason in CUT:
        return "truncated", None
    if reason in WITHHELD:
        return "failed", f"refused by the API: {WITHHELD[reason]} (stop reason {reason})"
    if reason in NOT_AN_ANSWER:
        return "failed", f"not an answer: {NOT_AN_ANSWER[reason]} (stop reason {reason})"
    return "failed", f"not an answer: the stop reason {reason[:40]!r} is not one benchcard reads as an answer"

#: Where a body gives its token limit: chat's two fields, the Messages API's, the Responses API's.
LIMIT_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def cut_unsaid(completion: Completion, body: Mapping[str, Any]) -> Completion:
    """A reply that says no stop reason (`null`, or none at all) and whose output tokens reach the body's token
    limit, taken as cut off by it (`truncated`, never scored), not as a whole answer. OpenAI's chat completion and
    Anthropic's message always say why a reply that is not streamed stopped (`length`, `max_tokens`); a server that
    says nothing may have cut the reply at the limit all the same. Below the limit, or when the reply does not
    count its tokens, nothing tells it was cut: it stays an answer."""
    if completion.status != "ok" or completion.finish_reason is not None or not completion.counted:
        return completion
    limits = [v for name in LIMIT_FIELDS if type(v := body.get(name)) is int and v > 0]
    if not limits or completion.usage.output < min(limits):
        return completion
    return replace(completion, status="truncated",
                   error=f"no stop reason, and the reply's {completion.usage.output} output tokens reach its token "
                         f"limit ({min(limits)}): taken as cut off by it, not scored")


# What the official OpenAI and Anthropic SDKs retry: request timeout, lock conflict, rate limit, server errors.
RETRY_STATUSES = frozenset({408, 409, 429})
ERROR_DETAIL_CHARS = 200
#: The most bytes one answer is read to: a reply of max_tokens, reasoning included, is far below it.
MAX_REPLY_BYTES = 32 * 2**20
_TOO_LARGE = f"the reply is more than {MAX_REPLY_BYTES // 2**20} MiB, more than any answer takes: refused"
#: An answer past this many bytes is large (a chat completion of 32,000 tokens, reasoning included, is about 200 KB):
#: at most `LARGE_ANSWERS_AT_ONCE` of them are read and parsed at once in a process, the others wait their turn
#: (within their call's timeout), so that the memory a run takes does not grow with its calls in flight: 64 answers
#: of 30 MiB read together took 3.8 GB (docs/scale.md).
LARGE_ANSWER_BYTES = 2**20
LARGE_ANSWERS_AT_ONCE = 4
_LARGE_READS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Completion:
    """What came back for one call: the raw text unedited, why generation stopped, and what it cost.

    `status` comes from `status_for`: `truncated` when the token limit cut the answer, `failed` when the answer
    is none (a content filter, a refusal, a tool call, a paused turn, an unknown stop reason); `error` then says
    why. Neither is ever scored. An error reported inside a 200 answer never becomes a Completion: the parsers
    raise it as the HTTP error it reports.
    """

    text: str
    finish_reason: str | None
    status: Status
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # as reported by the provider; None when it reports none
    error: str | None = None
    endpoint: str | None = None  # which server of a pool answered (None: the provider's one base_url)
    model: str | None = None  # the model the reply names (`model` in its JSON): a router may answer with another
    counted: bool = True  # whether the reply said the tokens it used: without, its `usage` is 0s and no price fits


def counts_tokens(usage: Any, input_name: str, output_name: str) -> bool:
    """Whether a reply's `usage` says both token counts: a reply without one (some OpenAI-compatible servers and
    proxies leave it out) must not be priced as if it used none."""
    return isinstance(usage, Mapping) and input_name in usage and output_name in usage


@dataclass(frozen=True)
class ProviderConfig:
    """One named endpoint from the built-ins or `benchcard.yaml`; the key is named, never stored.

    A `user:password@` given in `base_url` is split off when the config is made: `base_url` is then the URL as
    it may be written or shown, and `credentials` (left out of `repr`) is the only place the password is held.
    """

    name: str
    type: Literal["openai", "anthropic", "local"]
    base_url: str | None = None
    api_key_env: str | None = None
    requests_per_minute: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    endpoints: tuple[Endpoint, ...] = ()  # a pool of servers of one model; base_url is then the first's
    pool: Mapping[str, float] = field(default_factory=dict)  # fail_after, out_for_s: when a server is taken out
    batch_limits: Mapping[str, int] = field(default_factory=dict)  # requests, bytes: lower than the vendor's
    credentials: tuple[str, str] | None = field(default=None, repr=False)  # a base URL's user and password

    def __post_init__(self) -> None:
        if self.base_url and "@" in self.base_url:
            url, found = split_credentials(self.base_url)
            object.__setattr__(self, "base_url", url)
            if found is not None:
                object.__setattr__(self, "credentials", found)


class Provider(ABC):
    """What the runner needs of a vendor: every hook declared here, with its default; a provider overrides what
    differs (the runner calls each directly, never looks one up).

    Required: `build_body` (the exact JSON body of one call) and `complete` (send a stored body). The rest:

    - `max_concurrency`: calls in flight at most (None: `--concurrency` alone); the local model takes 1, so that
      no cell's latency counts time spent queued behind another (`calls.workers_for`);
    - `model_name`: the model actually answering, when the provider decides it (the local model's file name);
      None: the card's or `--model`'s;
    - `plans_bodies` and `planned_body(body, occurrence)`: what plan time seals instead of the built body (the
      local model writes its seed in); only called when `plans_bodies` is true, since counting the occurrences
      of each body costs a digest per cell;
    - `prepare()`: run before a run plans or creates its folder (the local model loads there, so a bad file
      leaves nothing behind), and again before a resume calls;
    - `warm()`: before every attempt, outside its timeout (the local model restarts a lost worker there);
    - `place(within, halt)`: then, outside the timeout too, wait for a server to take the call (a pool: one with
      room, reserved for the `complete` that follows at once; while every server is out, the first back), unless
      `halt` is set; the seconds until the first server is back when that is past `within` (the cell's wait
      left), else None;
    - `should_retry(error)`: whether another attempt may cure it (default: a RetryableError);
    - `narrows_itself` and `narrowed()`: a provider keeping its own calls in flight per server (a pool: one
      server's 429 must not slow the others), whose refusals the runner's one width then leaves alone, and the
      calls it allows now once a refusal narrowed them (None: never); `width()` the calls it takes now (a pool:
      its servers that are in), which the runner's width then follows;
    - `aclose()`: release what the provider holds (HTTP providers hold nothing: the client is the runner's).
    """

    config: ProviderConfig
    max_concurrency: int | None = None
    model_name: str | None = None
    plans_bodies: ClassVar[bool] = False
    narrows_itself: ClassVar[bool] = False

    @abstractmethod
    def build_body(self, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
        """The exact JSON body for one call."""

    @abstractmethod
    async def complete(self, body: Mapping[str, Any]) -> Completion:
        """Send one stored body; raise RetryableError or CallError on failure."""

    def planned_body(self, body: dict[str, Any], occurrence: int) -> dict[str, Any]:
        """The body sealed for the `occurrence`-th cell (0, 1, …) whose built body is `body`."""
        return body

    async def prepare(self) -> None:
        """Get ready to call (load a model); raise ProviderError with one line when that cannot be done."""
        return None

    async def warm(self) -> None:
        """Before each attempt, outside its timeout."""
        return None

    async def place(self, within: float, halt: asyncio.Event) -> float | None:
        """Before each attempt, after `warm`: one server takes every call at once."""
        return None

    def should_retry(self, error: BaseException) -> bool:
        return isinstance(error, RetryableError)

    def narrowed(self) -> int | None:
        """The calls in flight it allows now, once a refusal narrowed them (`narrows_itself` only)."""
        return None

    def width(self) -> int | None:
        """The calls in flight it takes now, servers out or narrowed counted (`narrows_itself` only)."""
        return None

    async def aclose(self) -> None:
        """Release what the provider holds."""
        return None


# ----------------------------------------------------------------------------------------------------- keys


def missing_key_message(variable: str, batch: bool = False) -> str:
    """The way out a missing key leaves: the embedded model, unless the run is a batch, which it cannot take."""
    if batch:
        return f"{variable} is not set; export it (--batch goes to the vendor's batch API, which only its key opens)"
    return f"{variable} is not set; export it, or run on the embedded model with --provider local"


#: A key (or a base URL's password) shorter than this is refused before any call: finding it in a reply's text to
#: take it out would rewrite ordinary words, and leaving it would write the key to disk.
MIN_SECRET_CHARS = 8


def require_key(cfg: ProviderConfig, batch: bool = False) -> None:
    """Fail before anything is planned or sent when the provider's key variable is unset or empty, or its key (or
    its URL's password) is one no header can carry or no reply could be cleared of."""
    if cfg.type != "local" and cfg.api_key_env and not os.environ.get(cfg.api_key_env):
        raise ProviderError(missing_key_message(cfg.api_key_env, batch))
    value = os.environ.get(cfg.api_key_env) if cfg.type != "local" and cfg.api_key_env else None
    if value is not None and (value != value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value)):
        raise ProviderError(f"{cfg.api_key_env} holds spaces, a newline or control characters around or inside "
                            "the key; no HTTP header can carry it. Set it to the key alone")
    if value is not None and not value.isascii():  # httpx sends headers as ASCII: every call would fail
        raise ProviderError(f"{cfg.api_key_env} holds a character outside ASCII (a typographic dash or quote, or a "
                            "no-break space, pasted with it?); no HTTP header can carry it. Set it to the key alone")
    if value is not None and len(value) < MIN_SECRET_CHARS:
        raise ProviderError(f"{cfg.api_key_env} holds a key of {len(value)} character(s): one shorter than "
                            f"{MIN_SECRET_CHARS} cannot be told from a model's own words, so it could not be kept "
                            "out of a reply that quotes it; use a key of 8 characters or more (a server that takes "
                            f"none: declare it in {CONFIG_FILE} without api_key_env)")
    password = cfg.credentials[1] if cfg.type != "local" and cfg.credentials is not None else ""
    if password and len(password) < MIN_SECRET_CHARS:
        raise ProviderError(f"the base URL of provider '{cfg.name}' holds a password of {len(password)} "
                            f"character(s): one shorter than {MIN_SECRET_CHARS} cannot be told from a model's own "
                            "words, so it could not be kept out of a reply that quotes it; use a password of 8 "
                            "characters or more")


def read_key(cfg: ProviderConfig) -> str | None:
    """The key's value, read now from the environment; None for an endpoint that needs no key."""
    if not cfg.api_key_env:
        return None
    value = os.environ.get(cfg.api_key_env)
    if not value:
        raise CallError(missing_key_message(cfg.api_key_env))
    return value


# OpenAI, Anthropic and OpenRouter keys all start `sk-`; servers sometimes echo a masked copy in a 401.
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}")


#: A call's secrets as the helpers take them: the key alone, or the key and a base URL's password and Basic token.
Secrets = str | Sequence[str] | None


def each_secret(secret: Secrets) -> tuple[str, ...]:
    """`secret` as a tuple of the secrets it holds (none for None or empty ones)."""
    if not secret:
        return ()
    return (secret,) if isinstance(secret, str) else tuple(one for one in secret if one)


def redact(text: str, secret: Secrets) -> str:
    """Remove the key (each secret given, and anything shaped like a key, such as a server's masked echo of it)
    from a message."""
    for one in each_secret(secret):
        text = text.replace(one, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


def quoted(text: str, limit: int, secret: Secrets) -> str:
    """A server's words as a line quotes them: without the key, then one line of at most `limit` characters. In
    that order: cut first, a key the words held across the cut kept its first characters, which no replacement of
    the whole key then finds (a proxy quoting the key after 160 characters left 36 of its 40 in a cell's error)."""
    return squeezed(redact(text, secret), limit)


def without_secret(text: str, secret: str | None) -> str:
    """A reply's text with the key itself removed (a server that echoes the request's headers into its answer):
    the one edit ever made to a raw output, since a key must never reach disk. Unlike `redact`, text merely shaped
    like a key stays as the model wrote it."""
    if secret and len(secret) >= MIN_SECRET_CHARS and secret in text:
        return text.replace(secret, "[redacted]")
    return text


_ESCAPABLE = frozenset('"\\/')  # what a JSON string may write as a two-character escape beside `\uXXXX`


def without_secret_json(data: bytes, secret: str | Sequence[str] | None) -> bytes:
    """A JSON document (one line of a vendor's result file, or a control call's answer) with the key replaced by
    `[redacted]` in every string that holds it, however the vendor escaped it: the same edit `without_secret`
    makes to a reply's text, made to the bytes benchcard keeps. A line that held the key only escaped is written
    again; every other line keeps its bytes. Several secrets (a key and a URL's password): each in turn."""
    if secret is not None and not isinstance(secret, str):
        for one in secret:
            data = without_secret_json(data, one)
        return data
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return data
    data = data.replace(secret.encode(), b"[redacted]")
    if b"\\u" not in data and not (b"\\" in data and _ESCAPABLE & set(secret)):
        return data  # no escape that could hide it
    try:
        decoded = json.loads(data)
        scrubbed = _scrubbed(decoded, secret)
    except ValueError:
        return data  # not JSON: no reader takes an escaped key out of it
    except RecursionError:  # JSON all the same, which a reader with a deeper stack could take the key out of
        raise ProviderError("an answer of the API is JSON nested too deeply to be checked for the key; it is not "
                            "kept") from None
    if scrubbed == decoded:
        return data
    return encode_body(scrubbed) + data[len(data.rstrip()):]  # ASCII JSON when it holds a lone surrogate


def _scrubbed(value: Any, secret: str) -> Any:
    if isinstance(value, str):
        return value.replace(secret, "[redacted]")
    if isinstance(value, list):
        return [_scrubbed(v, secret) for v in value]
    if isinstance(value, dict):
        return {_scrubbed(k, secret): _scrubbed(v, secret) for k, v in value.items()}
    return value


class SecretFilter:
    """A vendor's JSON Lines stream, line by line through `without_secret_json`, so that a downloaded result file
    reaches the disk without the key even when a block of the download ends inside it."""

    def __init__(self, secret: str | Sequence[str] | None) -> None:
        self.secret = secret
        self._pending = b""

    def feed(self, block: bytes) -> bytes:
        """The whole lines the block completes, filtered; the rest is kept for the next block."""
        if not self.secret:
            return block
        data = self._pending + block
        cut = data.rfind(b"\n") + 1
        self._pending = data[cut:]
        return b"".join(without_secret_json(line, self.secret) for line in data[:cut].splitlines(keepends=True))

    def end(self) -> bytes:
        """The last line, when the stream does not end with a newline."""
        rest, self._pending = self._pending, b""
        return without_secret_json(rest, self.secret) if rest else b""


def error_detail(message: Any, secret: Secrets) -> str:
    """A server's error message as a short single line without the key: what a cell's error quotes of it."""
    return quoted(str(message or ""), ERROR_DETAIL_CHARS, secret)


def without_secrets(data: Any, content: bytes, secret: Secrets) -> Any:
    """A parsed answer (`content` decoded) with each secret replaced by `[redacted]` in every string that holds
    it, however the server escaped it: the edit `without_secret` makes to a reply's text, made before anything
    is read from the answer, so that no part of it (a stop reason, a refusal, an error's type) is quoted, or cut
    to a line's length, with the key in it. An answer that cannot hold one is returned as it is, unwalked."""
    for one in each_secret(secret):
        if len(one) >= MIN_SECRET_CHARS and (one.encode() in content or b"\\u" in content
                                             or (b"\\" in content and _ESCAPABLE & set(one))):
            data = _scrubbed(data, one)
    return data


#: How every answer that is not in the API's shape is told (a body that is not JSON, JSON of another shape).
MALFORMED = "malformed response: "


def malformed(what: str) -> RetryableError:
    """A 200 answer that is not in the API's shape (`what` says what came and what was expected): a flaky proxy's
    garbage, which says nothing about the model, so another attempt may get the answer, as after a 5xx (bounded by
    --attempts); the cell is then recorded failed with this line, never scored."""
    return RetryableError(MALFORMED + what, status=200)


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: `a list`, `a string`, `null`, … (for a line saying what came instead)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    kinds = {str: "a string", int: "a number", float: "a number", list: "a list"}
    return next((name for kind, name in kinds.items() if isinstance(value, kind)),
                "an object" if isinstance(value, Mapping) else type(value).__name__)


def answer_error(message: str, status: int | None, retry_after: float | None = None) -> RetryableError | CallError:
    """The error for a failed answer, by the HTTP status it stands for (an HTTP error, or an error object in a 200
    answer): another attempt may cure 408, 409, 429, 5xx and an error without a status; nothing cures the rest."""
    if status is None or status in RETRY_STATUSES or status >= 500:
        return RetryableError(message, retry_after=retry_after, status=status)
    return CallError(message, status=status)


# ------------------------------------------------------------------------------------------------- transport


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The bytes sent for a stored body: compact JSON, UTF-8, keys in the order they were built. A body holding a
    lone surrogate (a judge's prompt quoting a model's reply, which may escape one: `"\\ud800"`) has no UTF-8
    form: it is sent as JSON in ASCII with escapes, the same value, in the bytes `records.rows.dumps_line` sealed
    it as (before, every judge call of such a reply failed with a UnicodeEncodeError and the judging stopped)."""
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":")).encode("ascii")


#: A wait written in more digits than `ascii_decimal` reads (19 or more before the point): a number all the same.
_LONG_WAIT = re.compile(r"[0-9]{19,}(?:\.[0-9]*)?")


def _wait_of(text: str) -> float | None:
    """A number of seconds (or milliseconds) in ASCII digits, however many: not float()'s '٣', '1_0', 'inf' or
    '1e9'. One of 19 digits or more is read as what it says (past 308 digits, infinity), never as no number: read
    as none, a server asking for a wait past any a cell takes had its call retried at once, on the backoff."""
    text = text.strip()
    return float(text) if _LONG_WAIT.fullmatch(text) else ascii_decimal(text)


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from `retry-after-ms`, `Retry-After` in seconds, or `Retry-After` as an HTTP date."""
    millis = _wait_of(headers.get("retry-after-ms", ""))
    if millis is not None:
        return millis / 1000.0
    raw = headers.get("retry-after")
    if not raw:
        return None
    seconds = _wait_of(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # the asctime form, or "-0000": an HTTP-date is UTC, never the local zone
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - time.time())


#: What benchcard asks a reply to be compressed with (`Accept-Encoding`), and the only encodings it reads: each is
#: inflated here a block at a time, never past `MAX_REPLY_BYTES`, so that a small body (a zstd or gzip "bomb")
#: cannot inflate to gigabytes in memory before its size is known. zstd and br are not asked for, and refused.
ACCEPT_ENCODING = "gzip, deflate"
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class _Inflater:
    """A gzip or deflate body inflated block by block, each block to at most the room left under the cap (HTTP's
    `deflate` is meant to be zlib-wrapped, but some servers send it raw: read as httpx reads it, either way)."""

    def __init__(self, encoding: str) -> None:
        self.wbits = _WBITS[encoding]
        self.inflate = zlib.decompressobj(self.wbits)
        self.first = True

    def feed(self, raw: bytes, room: int) -> bytes:
        """What `raw` inflates to, cut at `room + 1` bytes: more than `room` means the reply is over the cap."""
        first, self.first = self.first, False
        try:
            return self.inflate.decompress(raw, room + 1)
        except zlib.error:
            if not (first and self.wbits == zlib.MAX_WBITS):
                raise RetryableError("malformed response: a compressed body that does not inflate") from None
            self.wbits = -zlib.MAX_WBITS
            self.inflate = zlib.decompressobj(self.wbits)
            return self.feed(raw, room)

    def end(self, room: int) -> bytes:
        """The rest of the body, once the last block is fed. A compressed stream that never reached its end (no
        final block, no gzip trailer with its CRC and length) is a body cut off or spoiled in transit: another
        attempt may get it whole. zlib inflates such a prefix without a word, and a JSON Lines result file cut at a
        line's end would read as a whole one with rows missing. No bytes at all is an empty body, as a proxy's
        error sends it."""
        rest = self.inflate.flush(room + 1)
        if len(rest) <= room and not self.inflate.eof and not self.first:
            raise RetryableError("malformed response: a compressed body whose compressed stream does not end (cut "
                                 "off or spoiled in transit)")
        return rest


def _inflater(headers: httpx.Headers) -> _Inflater | None:
    """The inflater a reply's `Content-Encoding` needs (None: not compressed); CallError for one benchcard did
    not ask for, which it will not inflate unbounded."""
    encoding = headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding not in _WBITS:
        raise CallError(f"the reply is compressed as {visible(encoding[:40])!r}, which benchcard does not ask for "
                        f"(it asks for {ACCEPT_ENCODING}): refused")
    return _Inflater(encoding)


async def _large(held: contextlib.AsyncExitStack | None) -> None:
    """A place among the large answers read at once, kept by `held` until it closes (the answer parsed)."""
    if held is not None:
        loop = asyncio.get_running_loop()
        gate = _LARGE_READS.get(loop)
        if gate is None:
            gate = _LARGE_READS[loop] = asyncio.Semaphore(LARGE_ANSWERS_AT_ONCE)
        await held.enter_async_context(gate)


async def capped_blocks(response: httpx.Response, cap: int, too_large: str,
                        held: contextlib.AsyncExitStack | None = None) -> AsyncIterator[bytes]:
    """A body's blocks as they arrive (inflated, when compressed, never past the cap), CallError(`too_large`) as
    soon as they pass `cap` bytes (declared, streamed or inflated): so that a reader may write them out or join
    them without a server's garbage filling the memory or the disk first. With `held`, a body held whole past
    `LARGE_ANSWER_BYTES` waits for its place among the large answers read at once (`_large`) before more is read."""
    try:
        whole = response.content  # already read (a response made in memory, as a test's transport makes one)
    except httpx.ResponseNotRead:
        pass
    else:
        if len(whole) > cap:
            raise CallError(too_large)
        yield whole
        return
    inflater = _inflater(response.headers)
    declared = ascii_int(response.headers.get("content-length", ""), digits=None)
    if inflater is None and declared is not None and declared > cap:
        raise CallError(too_large)
    size, waiting = 0, held is not None
    async for raw in response.aiter_raw():
        block = raw if inflater is None else inflater.feed(raw, cap - size)
        size += len(block)
        if size > cap:
            raise CallError(too_large)
        if waiting and size > LARGE_ANSWER_BYTES:
            waiting = False
            await _large(held)
        yield block
    if inflater is not None:
        rest = inflater.end(cap - size)
        if size + len(rest) > cap:
            raise CallError(too_large)
        yield rest


async def read_capped(response: httpx.Response, cap: int = MAX_REPLY_BYTES, too_large: str = _TOO_LARGE,
                      held: contextlib.AsyncExitStack | None = None) -> bytes:
    """The body of an answer, refused past `cap` (`MAX_REPLY_BYTES` for a call's reply) before more of it is held:
    a server's garbage must not fill the memory or outputs.jsonl. With `held`, a large answer is read in its turn
    (`capped_blocks`)."""
    declared = ascii_int(response.headers.get("content-length", ""), digits=None)
    if declared is not None and _inflater(response.headers) is None and declared <= cap:
        if declared > LARGE_ANSWER_BYTES:
            await _large(held)
        try:
            return response.content  # already read (a response made in memory, as a test's transport makes one)
        except httpx.ResponseNotRead:
            # not `aread`, which keeps the body on the response: a response sits in reference cycles until the
            # collector runs (64 answers of 30 MiB one at a time took 969 MB, now 249 MB); the bytes returned here
            # are freed as soon as the answer is parsed
            return b"".join([block async for block in response.aiter_raw()])
    return b"".join([block async for block in capped_blocks(response, cap, too_large, held)])


async def error_body(blocks: AsyncIterator[bytes]) -> bytes:
    """The body of an answer whose status is an error (3xx, 4xx, 5xx), as far as it can be read; none when it
    cannot (compressed as benchcard does not ask, spoiled, cut off, past its cap). The status says what happened:
    a body that cannot be read must never stand in its place. A 401 whose body a proxy sent as `br` failed every
    cell for its encoding instead of stopping the run on the refused key, and a 429 so sent was never retried."""
    parts: list[bytes] = []
    try:
        async for block in blocks:
            parts.append(block)
    except Exception:  # a transport's failure, CallError, RetryableError; never a cancellation (a deadline)
        return b""
    return b"".join(parts)


def redirected(status: int, location: str | None, url: httpx.URL | str, secret: Secrets) -> str:
    """What a 3xx answer to `url` is told as. A redirect is never read as an answer, whatever its body holds, and
    never followed: the key and the request would go to another address. The line names where the server points
    (as `shown_url` writes it: without a `user:password@`, a query or a fragment it holds, which may carry a key;
    without `secret`, taken out before the address is cut to 200 characters), so that the user can set it as
    base_url."""
    try:
        where = shown_url(urllib.parse.urljoin(str(url), location)) if location else None
    except ValueError:
        where = shown_url(location or "")
    said = f"to {visible(quoted(where, 200, secret))}" if where else "without saying where (no Location)"
    return (f"HTTP {status}: the server redirects the call {said}; benchcard does not follow redirects, which would "
            "send the key and the request elsewhere: if that address is the API's, set it as the provider's base_url")


#: How httpx says a 3xx's Location is not a URL: it raises this while the answer is received, before any is returned.
_BAD_LOCATION = "Invalid URL in location header:"
#: The status a redirect to an address that is not a URL is recorded with: one of 3xx (httpx does not say which).
BAD_LOCATION_STATUS = 300


def bad_location(exc: BaseException) -> str | None:
    """What a 3xx whose `Location` is not a URL is told as (None for any other error): a redirect like any other,
    never taken for a dropped connection and retried. httpx's reason names what it could not read, never the
    address itself, so no password in it is shown."""
    if not isinstance(exc, httpx.RemoteProtocolError) or not str(exc).startswith(_BAD_LOCATION):
        return None
    reason = visible(str(exc)[len(_BAD_LOCATION):].strip(" ."))[:100]
    return (f"HTTP 3xx: the server redirects the call to an address that is not a URL ({reason}); benchcard does not "
            "follow redirects, which would send the key and the request elsewhere: if the API has moved, set its "
            "address as the provider's base_url")


#: The status a TLS certificate that cannot be verified is recorded with (Cloudflare's 526, "invalid SSL certificate";
#: no server sends it to benchcard): no other attempt cures it and every cell would get the same, so the run stops at
#: the first (`run/_calls.FATAL_STATUSES`).
UNVERIFIED_STATUS = 526


def unverified(cause: BaseException) -> str | None:
    """What a server's TLS certificate that cannot be verified is told as (None for any other error): why, and how
    to trust a private authority. Verification is never turned off."""
    import aiohttp

    if not isinstance(cause, aiohttp.ClientConnectorCertificateError):
        return None
    error = cause.certificate_error
    reason = getattr(error, "verify_message", None) or getattr(error, "reason", None) or str(error)
    return (f"TLS: the certificate of {cause.host}:{cause.port} cannot be verified ({visible(str(reason))[:60]}): "
            "set $SSL_CERT_FILE to the certificate of the authority that signed it (checked against certifi's roots "
            "otherwise; never unchecked)")


def _error_message(response: httpx.Response, content: bytes) -> str:
    """The server's own error message (OpenAI and Anthropic both use `error.message`), else the HTTP reason."""
    try:
        data = json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        data = None
    message: Any = None
    if isinstance(data, Mapping):
        err = data.get("error")
        message = err.get("message") if isinstance(err, Mapping) else err
    if not isinstance(message, str) or not message:
        message = response.reason_phrase or ""
    return str(message)


def is_retryable(error: BaseException) -> bool:
    return isinstance(error, RetryableError)


class HttpProvider(Provider):
    """What every HTTP vendor shares: the injected client, the key read at call time, the POST, and the mapping
    of a failed answer to RetryableError (408, 409, 429, 5xx, timeouts, dropped connections) or CallError.

    A vendor states its URL `path`, the `vendor_headers` that carry the key, the `build_body` it sends and the
    `parse` of its answer; nothing else.
    """

    path: ClassVar[str]  # appended to the config's base_url

    def __init__(self, config: ProviderConfig, client: httpx.AsyncClient):
        if not config.base_url:
            raise ValueError(f"provider {config.name!r} has no base_url")
        self.config = config
        self.client = client
        # parsed once, not per call; a `user:password@` in the URL is sent as a header, never as part of the URL
        self.url = httpx.URL(f"{config.base_url}/{self.path}")
        if (refused := refusal(client, self.url)) is not None:  # before any call: each would fail alike
            raise ProviderError(refused)
        self._basic = basic_auth(config.credentials)
        self._headers: tuple[str | None, httpx.Headers] | None = None

    @classmethod
    def vendor_headers(cls, key: str | None) -> dict[str, str]:
        """The vendor's own headers for one call: its API version, and the key when there is one (a class's, so
        that `benchcard curl` prints them without a client)."""
        raise NotImplementedError

    def parse(self, data: Any, secret: Secrets) -> Completion:
        """The vendor's answer (parsed JSON) → Completion; `secret` is scrubbed from any message kept."""
        raise NotImplementedError

    async def complete(self, body: Mapping[str, Any]) -> Completion:
        key = read_key(self.config)
        secrets = (*each_secret(key), *secrets_of(self.config.credentials))  # the key and a URL's password
        data = await self._post(body, self._headers_for(key), secrets)
        try:
            return cut_unsaid(self.parse(data, secrets), body)
        except RetryableError as exc:  # an answer not in the API's shape: which endpoint gave it
            if not str(exc).startswith(MALFORMED):
                raise
            raise RetryableError(f"{exc} (POST {shown_url(str(self.url))})", exc.retry_after, exc.status) from None

    def _headers_for(self, key: str | None) -> httpx.Headers:
        """Every header of a call: the client's defaults, the config's, the vendor's. Built again only when
        the key in the environment changes: httpx spends more on merging headers than on the rest of a request."""
        cached = self._headers
        if cached is None or cached[0] != key:
            headers = httpx.Headers(self.client.headers)
            headers.update(call_headers(self.config, self.vendor_headers(key), self._basic))
            cached = self._headers = (key, headers)
        return cached[1]

    async def _post(self, body: Mapping[str, Any], headers: httpx.Headers, secret: Secrets) -> Any:
        """POST a body and return the parsed JSON answer without the key (`without_secrets`), or raise
        RetryableError / CallError (never with the key).

        The request is built here with its final headers and the client's timeouts, then sent by the client
        (`client.post` would merge the same headers again on every call). A large answer keeps its place among
        those read at once (`LARGE_ANSWERS_AT_ONCE`) until it is parsed."""
        async with contextlib.AsyncExitStack() as held:
            return await self._post_held(body, headers, secret, held)

    async def _post_held(self, body: Mapping[str, Any], headers: httpx.Headers, secret: Secrets,
                         held: contextlib.AsyncExitStack) -> Any:
        request = httpx.Request("POST", self.url, content=encode_body(body), headers=headers,
                                extensions={"timeout": self.client.timeout.as_dict()})
        try:
            response = await self.client.send(request, stream=True)
            try:
                content = await read_capped(response, held=held) if response.status_code < 300 else \
                    await error_body(capped_blocks(response, MAX_REPLY_BYTES, _TOO_LARGE, held))
            finally:
                await response.aclose()
        except Exception as exc:
            if (failure := no_answer(exc)) is None:
                raise
            if failure.status is not None:
                raise CallError(redact(failure.text, secret), status=failure.status) from None
            raise RetryableError(redact(failure.text, secret)) from None
        status = response.status_code
        if 300 <= status < 400:
            raise CallError(redirected(status, response.headers.get("location"), self.url, secret), status=status)
        if status >= 400:
            detail = error_detail(_error_message(response, content), secret)
            called = f" (POST {self.url})" if status == 404 else ""  # a base_url without /v1, or with it twice
            raise answer_error(f"HTTP {status}" + (f": {detail}" if detail else "") + called, status,
                               parse_retry_after(response.headers))
        try:
            return without_secrets(json.loads(content), content, secret)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            # A proxy's HTML page or a body cut off in transit says nothing about the model (`malformed`).
            kind = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
            why = f": not UTF-8 at byte {exc.start:,}" if isinstance(exc, UnicodeDecodeError) else \
                ": nested too deeply to read" if isinstance(exc, RecursionError) else ""
            raise RetryableError(f"{MALFORMED}HTTP {status} with a body that is not JSON ({len(content):,} bytes, "
                                 f"{visible(kind[:60])}{why}) (POST {shown_url(str(self.url))})",
                                 status=status) from None


def call_headers(config: ProviderConfig, vendor: Mapping[str, str], basic: str | None) -> httpx.Headers:
    """The headers benchcard sets on a call, beside the client's own (its user agent): `sent_headers`, the body's
    type and the encodings read. `benchcard curl` prints the same."""
    headers = sent_headers(config, vendor, basic)
    headers.update({"Content-Type": "application/json", "Accept-Encoding": ACCEPT_ENCODING})
    return headers


def sent_headers(config: ProviderConfig, vendor: Mapping[str, str], basic: str | None) -> httpx.Headers:
    """The headers every request to a provider carries (a call, a batch's control call, a pool's `GET /models`):
    the config's `headers`, a URL's user and password as `basic`, then the `vendor`'s (the key, an API version),
    each replacing an earlier one of its name, case aside (merged as a dict, `anthropic-version` and
    `Anthropic-Version` were both sent)."""
    headers = httpx.Headers(config.headers)
    headers.update({**({"Authorization": basic} if basic else {}), **vendor})
    return headers


@dataclass(frozen=True)
class NoAnswer:
    """Why a call got no answer, as one line (not yet redacted: the caller knows the key), and the status it is
    recorded with when no other attempt can cure it (a redirect, a certificate that cannot be verified); None
    when another attempt may get the answer (a timeout, a dropped or refused connection)."""

    text: str
    status: int | None = None


def no_answer(exc: BaseException) -> NoAnswer | None:
    """What a call that got no answer is told as, for a model's call and a batch API's alike (one reading of
    httpx's, the OS's and aiohttp's errors: a redirect to an address that is not a URL, a timeout, a certificate
    that cannot be verified, a connection that failed); None when `exc` is not a transport's failure, which is
    raised as it is."""
    if not isinstance(exc, httpx.HTTPError | OSError) and not _is_client_error(exc):
        return None
    if (moved := bad_location(exc)) is not None:
        return NoAnswer(moved, BAD_LOCATION_STATUS)
    # httpx-aiohttp maps every aiohttp connection error, a dropped connection included, to ConnectTimeout:
    # name what really happened, from the aiohttp error underneath.
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) and exc.__cause__ is not None else exc
    if isinstance(cause, TimeoutError | httpx.TimeoutException):
        return NoAnswer("timed out waiting for the server")
    if (tls := unverified(cause)) is not None:
        return NoAnswer(tls, UNVERIFIED_STATUS)
    return NoAnswer(_connection_error(cause))


def _connection_error(cause: BaseException) -> str:
    """What failed to connect: a proxy from the environment is named as such (its host and port; its user and
    password, held apart from its URL by httpx, never reach the message)."""
    import aiohttp

    if isinstance(cause, aiohttp.ClientPayloadError):  # its own words quote aiohttp's internal code, a "400"
        said = getattr(cause.__cause__, "message", None) or str(cause)
        return f"connection error: the answer was cut off before its end ({visible(str(said))[:120].rstrip('.')})"
    if isinstance(cause, aiohttp.ClientResponseError):  # the parser's own "400", never a status the server sent
        said = str(cause.message).split("\n\n")[0].split(" b'")[0].split(' b"')[0]
        return (f"connection error: the server's answer is not HTTP benchcard can read "
                f"({visible(squeezed(said, 120)).rstrip(' :.')})")
    if isinstance(cause, aiohttp.ClientProxyConnectionError):
        return (f"connection error: cannot reach the proxy {cause.host}:{cause.port} ($HTTPS_PROXY, $HTTP_PROXY "
                f"or $ALL_PROXY; $NO_PROXY lists the hosts called directly): {cause.os_error}")
    return f"connection error: {type(cause).__name__}: {cause}"


def _is_client_error(exc: BaseException) -> bool:
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - aiohttp is a dependency
        return False
    return isinstance(exc, aiohttp.ClientError)


def mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object from an answer, or an empty one when the field is missing or not an object."""
    return value if isinstance(value, Mapping) else {}


def replied_model(data: Mapping[str, Any]) -> str | None:
    """The model a reply says answered it (its `model`), on one line; None when the reply names none. A router
    may answer with another model than the one asked, which the manifest records (`kept_model_name`)."""
    name = data.get("model")
    if not isinstance(name, str) or not name.strip():
        return None
    return " ".join(name.split())


MODEL_NAME_KEPT = 200  # characters of a replied model's name the manifest keeps


def kept_model_name(name: str) -> str:
    """A replied model's name as the manifest keeps it and a terminal prints it, once the key is out of it: each
    character that does not show (a control, an escape sequence's ESC, a bidi override, a lone surrogate) as its
    escape (`names.visible`), then cut to 200 characters (after the key's removal, so no part of a key is kept)."""
    return visible(name)[:MODEL_NAME_KEPT]


#: No call is billed a trillion tokens or a billion dollars: a figure past these is a server's garbage, read as
#: none (as a negative one or a string is), so that no total overflows (three costs of 1.5e308 printed `Infinity`
#: in `run --json`) and no export's int64 column refuses it (10**30 tokens ended `export` in a traceback).
MAX_TOKENS_BILLED = 10**12
MAX_CALL_COST = 1e9


def number(value: Any) -> int:
    """A token count from a usage object: whole numbers from 0 to MAX_TOKENS_BILLED only, anything else is 0. A
    whole float (`5.0`, as a server that does its sums in floats writes it) is the count it says, not none."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS_BILLED:
        return value
    return 0


def money(value: Any) -> float | None:
    """A cost reported by the provider (at most MAX_CALL_COST), or None when there is none."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= MAX_CALL_COST:
        return float(value)
    return None
