"""The two vendors' batch services over the run's HTTP client: OpenAI's Files + Batches API and Anthropic's
Message Batches API. Each knows its limits, its upload line, how to submit, find, poll and download a batch,
and nothing about the run (the driver, `_driver.py`, owns the order of steps and the journal).

Limits (per batch; sources in docs/scale.md): OpenAI, 50,000 requests and a 200 MB input file; Anthropic,
100,000 requests or 256 MB, whichever comes first. A provider's `batch_limits` in benchcard.yaml may only lower
them (an organisation's own quota).
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import re
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchcard._util.files import AtomicFile, discard
from benchcard._util.names import visible
from benchcard._util.safeio import json_loads
from benchcard._util.urls import basic_auth, secrets_of, shown_url
from benchcard.errors import CallError, ProviderError, RetryableError, RunError
from benchcard.run._calls import SEND_ONCE
from benchcard.run.batch._results import result_ids, vendor_word
from benchcard.run.options import backoff_delay
from benchcard.run.providers.base import (
    MAX_REPLY_BYTES,
    UNVERIFIED_STATUS,
    HttpProvider,
    NoAnswer,
    SecretFilter,
    capped_blocks,
    error_body,
    mapping,
    no_answer,
    number,
    parse_retry_after,
    read_key,
    redact,
    redirected,
    sent_headers,
    without_secret_json,
)

#: A control call's answer (a batch or file object, a page of 100 batches, an error) is kilobytes: past this it is
#: refused, read no further.
ANSWER_BYTES = 4 * 2**20
_BIG = f"the answer is more than {ANSWER_BYTES // 2**20} MiB, more than any answer of a batch API takes: refused"
#: A control call is waited this many seconds in all, and 1 s more for each `MIN_RATE` bytes it sends (an upload)
#: or receives (a result file): the client's own timeout is per read, which a vendor trickling bytes never trips.
CONTROL_WAIT_S = 120.0
MIN_RATE = 100_000
#: What a control call waits between its attempts in all, a `Retry-After` included. A vendor asking for more is not
#: waited on: every step is resumable, so the call stops at once with a line saying what the vendor asked.
CONTROL_MAX_WAIT = 120.0
#: The most one line of a result file may hold: one reply, at most what an interactive call's may be, and its
#: envelope. A chunk's result files hold at most this times its cells (what the grid can need), in all.
RESULT_LINE_BYTES = MAX_REPLY_BYTES + 2**20

#: What an id a vendor gives (a file's, a batch's) may hold: both vendors write letters, digits, `_` and `-`. It goes
#: into the path of the next call, so an id of another shape (`../..`, a `?`, an object) is refused, never sent; it
#: begins with a letter or a digit, so `.` and `..` (a path's own segments, which every client resolves) are too.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
#: Pages of batches a look for a lost batch reads at most (100 a page): a vendor that says `has_more` forever, or
#: gives the same page again, is not followed further.
MAX_PAGES = 1000
#: The most a vendor's clock is taken to be behind ours (a machine set to local time as UTC is off by hours, never days)
_MOST_BEHIND = 86_400.0

OPENAI_ENDPOINT = "/v1/chat/completions"
OPENAI_TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})


@dataclass(frozen=True)
class Limits:
    requests: int
    bytes: int
    overhead: int = 0  # bytes per request besides its line (Anthropic: the comma of a JSON list)


@dataclass(frozen=True)
class Claim:
    """What only this run could have put into the batch of one chunk: the file it uploaded (OpenAI's
    `file_id`, an id the vendor gave this run alone), its run id and the chunk's digest (OpenAI's batch
    `metadata`), and its requests' custom_ids (`cell-tag`, the tag a random one of this run's plan). A batch is
    taken as the chunk's only on what it holds of these, never on its size or its time alone."""

    run: str
    digest: str
    cells: int
    ids: frozenset[str]  # the chunk's custom_ids
    since: str = ""  # when the create was about to be sent (`creating`); "" for a first submit
    file_id: str | None = None
    passed: frozenset[str] = frozenset()  # batches already this run's other chunks', or found another's
    scratch: Path | None = None  # where a candidate's results may be fetched to be looked at


@dataclass(frozen=True)
class Found:
    """What a look for the chunk's batch found: `batch` (its own), the batches looked at and found another
    run's (`foreign`), and those that cannot be told yet (`waiting`: still running, their requests unseen)."""

    batch: str | None = None
    foreign: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()


@dataclass(frozen=True)
class Poll:
    status: str
    done: int
    failed: int
    total: int
    ended: bool
    error: str | None = None
    sources: tuple[str, ...] = ()


class Vendor:
    """What the batch driver needs of a vendor; the HTTP plumbing shared by both."""

    name = ""
    limits = Limits(1, 1)
    PAGE = 100  # batches a list call asks for

    def __init__(self, provider: HttpProvider, attempts: int, backoff: tuple[float, float]):
        self.provider = provider
        self.config = provider.config
        self.client = provider.client
        self.base = str(provider.config.base_url)  # without a password: ProviderConfig holds it apart
        self.attempts = attempts
        self.backoff = backoff
        self.rng = random.Random()
        self.behind = 0.0  # seconds the vendor's clock is behind ours, as its answers' `Date` says (`_note_clock`)

    def line(self, cell: str, body: bytes) -> bytes:
        """One request of the upload, around the sealed body's own bytes."""
        raise NotImplementedError

    async def submit(self, path: Path, claim: Claim) -> str:
        """Create the batch, once: a RetryableError means it may or may not have been made (the driver looks)."""
        raise NotImplementedError

    async def find(self, claim: Claim) -> Found:
        """The chunk's batch, if a create sent before a kill made one (its id was never recorded)."""
        raise NotImplementedError

    async def listed(self, path: str, cursor: str, creating_at: str) -> list[dict[str, Any]]:
        """The vendor's batches, newest first, page after page until one older than a create sent at
        `creating_at` (our clock) could have made (`since`)."""
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": self.PAGE}
        for _ in range(MAX_PAGES):
            answer = await self.request("GET", f"{self.base}{path}", params=params)
            data = answer.get("data")
            page = [b for b in data if isinstance(b, dict)] if isinstance(data, list) else []
            found += page
            last = page[-1].get("id") if page else None
            if (answer.get("has_more") is not True or not isinstance(last, str) or last == params.get(cursor)
                    or _created(page[-1]) < self.since(creating_at)):
                return found
            params = {"limit": self.PAGE, cursor: last}
        return found

    def since(self, creating_at: str) -> float:
        """Unix seconds, on the vendor's clock, from which a batch may be the one a create sent at `creating_at`
        (our clock) made: two minutes before, and as much earlier as the vendor's clock was seen behind ours."""
        return _utc_seconds(creating_at) - self.behind - timedelta(minutes=2).total_seconds()

    def _note_clock(self, response: httpx.Response) -> None:
        """How far behind ours the vendor's clock is, from an answer's `Date` (up to a day; never ahead): with
        ours ten minutes fast, a batch a lost create made was dated before the create by ours, passed by as
        another's, and its requests sent and paid for a second time."""
        try:
            when = email.utils.parsedate_to_datetime(response.headers.get("date", ""))
        except (TypeError, ValueError, IndexError):
            return
        vendor = (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp()
        self.behind = min(max(0.0, time.time() - vendor), _MOST_BEHIND)

    async def poll(self, batch: str) -> Poll:
        raise NotImplementedError

    async def download(self, source: str, dest: Path, cells: int) -> None:
        """A result file of a chunk of `cells` cells, saved whole to `dest` or not at all."""
        raise NotImplementedError

    # -------------------------------------------------------------------------------------------- HTTP

    def _headers(self) -> httpx.Headers:
        key = read_key(self.config)
        return sent_headers(self.config, self.provider.vendor_headers(key), basic_auth(self.config.credentials))

    def _secret(self) -> str | None:
        env = self.config.api_key_env
        return os.environ.get(env) if env else None

    def _secrets(self) -> list[str]:
        """The key and the base URL's password (and its Basic token): what the vendor's answers are kept without."""
        return [s for s in (self._secret(), *secrets_of(self.config.credentials)) if s]

    def _scrub(self, text: str) -> str:
        for secret in self._secrets():
            text = text.replace(secret, "[redacted]")
        return redact(text, None)

    async def request(self, method: str, url: str, *, stream_to: Path | None = None, resend: bool = True,
                      **kwargs: Any) -> Any:
        """One control call with retries on 429/5xx/timeouts; the parsed JSON answer, or the body saved to
        `stream_to` (written to a `.part` name and renamed only when whole). With `resend` False (a create, which
        may have been made although its answer was lost) the first RetryableError is raised to the caller, and the
        client never sends it again itself (`SEND_ONCE`)."""
        if not resend:
            kwargs["extensions"] = {**kwargs.get("extensions", {}), SEND_ONCE: True}
        attempt, waited = 0, 0.0
        while True:
            attempt += 1
            try:
                return await self._once(method, url, stream_to, **kwargs)
            except RetryableError as exc:
                if not resend:
                    raise
                if attempt >= self.attempts:
                    raise ProviderError(self._scrub(f"{method} {shown_url(url)}: {exc} (gave up after {attempt} "
                                                    "attempts); nothing is lost, resume the run later")) from None
                delay = self.pause(exc, attempt, waited, f"{method} {shown_url(url)}")
                waited += delay
                await asyncio.sleep(delay)

    def pause(self, exc: RetryableError, attempt: int, waited: float, call: str) -> float:
        """Seconds to wait before attempt `attempt + 1` of a control call (`call`) that has waited `waited` so
        far: the backoff, or what the vendor's Retry-After asks; ProviderError, at once, when that would take the
        call past CONTROL_MAX_WAIT (a poll answered `Retry-After: 86400` was waited 600 s at a time, silently)."""
        delay = backoff_delay(attempt, exc.retry_after, *self.backoff, self.rng)
        asked = max(delay, exc.retry_after or 0.0)
        if waited + asked > CONTROL_MAX_WAIT:
            raise ProviderError(self._scrub(f"{call}: {exc}; the vendor asks to wait {asked:,.0f} s, more than a "
                                            f"control call waits ({CONTROL_MAX_WAIT:.0f} s in all); nothing is lost, "
                                            "resume the run later"))
        return delay

    async def _once(self, method: str, url: str, stream_to: Path | None, *, sent: int = 0, cells: int = 0,
                    **kwargs: Any) -> Any:
        """One control call, whole within its `_Clock` and its answer under its cap (`ANSWER_BYTES`, or for a
        result file `cells` lines of `RESULT_LINE_BYTES`): a vendor that trickles or floods is cut off."""
        headers = self._headers()
        headers.update(kwargs.pop("headers", {}))
        kwargs["headers"] = headers
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(None) as timeout:
            clock = _Clock(timeout, loop.time(), CONTROL_WAIT_S + sent / MIN_RATE)
            clock.more(0)
            try:
                return await self._exchange(method, url, stream_to, clock, cells, kwargs)
            except asyncio.CancelledError:
                if not timeout.expired():
                    raise
        raise RetryableError(f"no whole answer within {clock.allowed():.0f} s (a control call is waited "
                             f"{CONTROL_WAIT_S:.0f} s in all, and 1 s more for each {MIN_RATE:,} bytes it sends or "
                             "receives)")

    async def _exchange(self, method: str, url: str, stream_to: Path | None, clock: _Clock, cells: int,
                        kwargs: dict[str, Any]) -> Any:
        try:
            async with self.client.stream(method, url, **kwargs) as response:
                self._note_clock(response)
                if 300 <= response.status_code < 400:  # not an answer, and never followed: the key would go too
                    raise ProviderError(self._scrub(f"{method} {shown_url(url)}: " + redirected(
                        response.status_code, response.headers.get("location"), url, self._secrets())))
                if stream_to is not None and response.status_code < 400:
                    await self._save(clock.counted(capped_blocks(response, *_results_cap(cells))), stream_to)
                    return None
                if response.status_code >= 400:  # the status says what happened, whatever its body holds
                    self._raise(method, url, response,
                                await error_body(clock.counted(capped_blocks(response, ANSWER_BYTES, _BIG))))
                body = b"".join([b async for b in clock.counted(capped_blocks(response, ANSWER_BYTES, _BIG))])
                answer = json_loads(without_secret_json(body, self._secrets()))  # kept: never with the key
                if not isinstance(answer, dict):  # every answer of a batch API is an object (a batch, a list, a file)
                    raise ProviderError(self._scrub(f"{method} {shown_url(url)}: the answer is JSON but not an object "
                                                    f"({_kind(answer)}); nothing of it is kept"))
                return answer
        except CallError as exc:  # an answer past its cap, or compressed as benchcard does not read
            raise ProviderError(self._scrub(f"{method} {shown_url(url)}: {exc}; nothing of it is kept")) from None
        except Exception as exc:
            if (failure := no_answer(exc)) is not None:
                raise self._transport(method, url, stream_to, exc, failure) from None
            if isinstance(exc, ValueError):
                raise ProviderError(f"{method} {shown_url(url)}: the answer is not JSON") from None
            raise

    async def _save(self, blocks: AsyncIterator[bytes], dest: Path) -> None:
        """A result file written as it arrives, without the key, no line of it past `RESULT_LINE_BYTES`."""
        scrub = SecretFilter(self._secrets())  # a result file is stored without the key, as a reply's text
        line = _LineCap()
        with AtomicFile(dest, suffix=".part") as fh:
            async for block in blocks:
                line.feed(block)
                fh.write(scrub.feed(block))
            fh.write(scrub.end())

    def _transport(self, method: str, url: str, stream_to: Path | None, exc: BaseException,
                   failure: NoAnswer) -> Exception:
        """What a call that got no answer raises, as `no_answer` reads it for every call: a redirect to an address
        that is not a URL (refused as any redirect) or a certificate that cannot be verified stop the run; a
        result file that cannot be written names it; a timeout or a connection error is worth another attempt."""
        if failure.status == UNVERIFIED_STATUS:  # no other attempt cures it
            return ProviderError(self._scrub(f"{method} {shown_url(url)}: {failure.text}; nothing is lost, resume "
                                             "the run then"))
        if failure.status is not None:
            return ProviderError(self._scrub(f"{method} {shown_url(url)}: {failure.text}"))
        if isinstance(exc, OSError) and stream_to is not None and not isinstance(exc, ConnectionError):
            return RunError(f"{stream_to}: {exc}")
        return RetryableError(self._scrub(failure.text))

    def _id(self, answer: Mapping[str, Any], field: str) -> str:
        """An id the vendor gave in `answer` (`id`, `output_file_id`): text as `_ID` allows, else one line."""
        value = answer.get(field)
        if isinstance(value, str) and _ID.fullmatch(value):
            return value
        said = f"names {field} {visible(value[:60])!r}, which" if isinstance(value, str) else \
            f"gives {field} as {_kind(value)}, which"
        raise ProviderError(self._scrub(f"the {self.name} batch API's answer {said} is not an id; nothing was sent "
                                        "with it, resume the run later"))

    def _raise(self, method: str, url: str, response: httpx.Response, body: bytes) -> None:
        status = response.status_code
        try:  # the key taken out before the message is cut to a line (`base.quoted`), as it is of a control answer
            err = json_loads(without_secret_json(body, self._secrets())).get("error")
            detail = err.get("message") if isinstance(err, Mapping) else err
        except (ValueError, AttributeError):
            detail = None
        text = self._scrub(f"HTTP {status}" + (f": {vendor_word(detail, 200)}" if detail else ""))
        if status in (408, 409, 429) or status >= 500:  # `request` names the call when it gives up
            raise RetryableError(text, retry_after=parse_retry_after(response.headers), status=status)
        raise ProviderError(f"{method} {shown_url(url)}: {text}; nothing is lost, fix the cause and resume the run")


class OpenAIBatches(Vendor):
    """`POST /files` (purpose batch), `POST /batches`, `GET /batches/{id}`, `GET /files/{id}/content`."""

    name = "openai"
    limits = Limits(50_000, 200_000_000)

    def line(self, cell: str, body: bytes) -> bytes:
        return b'{"custom_id":"%s","method":"POST","url":"%s","body":%s}\n' % (cell.encode(), OPENAI_ENDPOINT.encode(),
                                                                              body)

    async def upload(self, path: Path, run: str) -> str:
        data = path.read_bytes()
        answer = await self.request("POST", f"{self.base}/files", data={"purpose": "batch"}, sent=len(data),
                                    files={"file": (f"benchcard-{run}-{path.name}", data, "application/jsonl")})
        return self._id(answer, "id")

    async def submit(self, path: Path, claim: Claim) -> str:
        assert claim.file_id is not None
        answer = await self.request("POST", f"{self.base}/batches", json={
            "input_file_id": claim.file_id, "endpoint": OPENAI_ENDPOINT, "completion_window": "24h",
            "metadata": {"benchcard": path.name, "benchcard_run": claim.run, "benchcard_chunk": claim.digest}},
            resend=False)
        return self._id(answer, "id")

    async def find(self, claim: Claim) -> Found:
        """The batch made from this run's uploaded file and carrying its run id and chunk digest."""
        for b in await self.listed("/batches", "after", claim.since):
            meta = mapping(b.get("metadata"))
            if (b.get("input_file_id") == claim.file_id and b.get("id") not in claim.passed
                    and meta.get("benchcard_run", claim.run) == claim.run
                    and meta.get("benchcard_chunk", claim.digest) == claim.digest):
                return Found(batch=self._id(b, "id"))
        return Found()

    async def poll(self, batch: str) -> Poll:
        b = await self.request("GET", f"{self.base}/batches/{batch}")
        counts = mapping(b.get("request_counts"))
        completed, failed, total = (number(counts.get(k)) for k in ("completed", "failed", "total"))
        status = vendor_word(b.get("status"))
        ended = status in OPENAI_TERMINAL
        error = None
        if status == "failed":
            errors = b.get("errors")
            data = mapping(errors).get("data") if isinstance(errors, Mapping) else errors
            messages = [mapping(e).get("message") for e in (data if isinstance(data, list) else [])[:3]]
            said = [vendor_word(m, 200) for m in messages if m is not None]
            error = self._scrub("; ".join(said) or "the vendor gave no reason")
        sources = tuple(self._id(b, k) for k in ("output_file_id", "error_file_id") if b.get(k))
        return Poll(status, completed + failed, failed, total, ended, error, sources)

    async def download(self, source: str, dest: Path, cells: int) -> None:
        await self.request("GET", f"{self.base}/files/{source}/content", stream_to=dest, cells=cells)


class AnthropicBatches(Vendor):
    """`POST /messages/batches`, `GET /messages/batches/{id}`, its `results_url`."""

    name = "anthropic"
    limits = Limits(100_000, 256_000_000, overhead=1)

    def line(self, cell: str, body: bytes) -> bytes:
        return b'{"custom_id":"%s","params":%s}\n' % (cell.encode(), body)

    async def submit(self, path: Path, claim: Claim) -> str:
        lines = path.read_bytes().splitlines()
        content = b'{"requests":[' + b",".join(lines) + b"]}"
        answer = await self.request("POST", f"{self.base}/messages/batches", content=content, sent=len(content),
                                    headers={"Content-Type": "application/json"}, resend=False)
        return self._id(answer, "id")

    async def find(self, claim: Claim) -> Found:
        """A Message Batch has no metadata, and its requests are seen only in its results, once it has ended. So
        each batch that could be the chunk's (made since the `creating`, of its size) is looked at when it has
        ended: its results' custom_ids are this run's (they carry its tag) or it is another run's. One still
        running cannot be told yet: the chunk waits for it rather than send every request twice."""
        foreign: list[str] = []
        waiting: list[str] = []
        listed = await self.listed("/messages/batches", "after_id", claim.since)
        since = self.since(claim.since)
        for b in listed:
            counts = mapping(b.get("request_counts"))
            if (_created(b) < since or b.get("id") in claim.passed
                    or sum(number(v) for v in counts.values()) != claim.cells):
                continue
            batch = self._id(b, "id")
            if b.get("processing_status") != "ended" or not b.get("results_url"):
                waiting.append(batch)
            elif await self._holds(batch, _url(b.get("results_url")), claim):
                return Found(batch=batch, foreign=tuple(foreign))
            else:
                foreign.append(batch)
        return Found(foreign=tuple(foreign), waiting=tuple(waiting))

    async def _holds(self, batch: str, url: str, claim: Claim) -> bool:
        """Whether an ended batch's results answer the chunk's own custom_ids, and only those."""
        assert claim.scratch is not None
        self._home(batch, url)
        try:
            await self.request("GET", url, stream_to=claim.scratch, cells=claim.cells)
            ids = set(result_ids([claim.scratch]))
        finally:
            discard(claim.scratch)
        return bool(ids) and ids <= claim.ids

    async def poll(self, batch: str) -> Poll:
        b = await self.request("GET", f"{self.base}/messages/batches/{batch}")
        counts = {str(k): number(v) for k, v in mapping(b.get("request_counts")).items()}
        ended = b.get("processing_status") == "ended"
        done = sum(v for k, v in counts.items() if k != "processing")
        failed = counts.get("errored", 0) + counts.get("canceled", 0) + counts.get("expired", 0)
        status = "ended" if ended else vendor_word(b.get("processing_status"))
        sources = (_url(b.get("results_url")),) if ended and b.get("results_url") else ()
        for url in sources:
            self._home(batch, url)
        return Poll(status, done, failed, sum(counts.values()), ended, None, sources)

    def _home(self, batch: str, url: str) -> None:
        """The key goes with a results download: only ever to the API's own host."""
        if _origin(url) != _origin(self.base):
            raise ProviderError(f"batch {batch}: its results_url {visible(shown_url(url)[:200])} is not on "
                                f"{self.base}; refusing to send the key there")

    async def download(self, source: str, dest: Path, cells: int) -> None:
        await self.request("GET", source, stream_to=dest, cells=cells)


@dataclass
class _Clock:
    """A control call's deadline: `base` seconds from `start`, and one more for each `MIN_RATE` bytes received."""

    timeout: asyncio.Timeout
    start: float
    base: float
    got: int = 0

    def allowed(self) -> float:
        return self.base + self.got / MIN_RATE

    def more(self, received: int) -> None:
        self.got += received
        self.timeout.reschedule(self.start + self.allowed())

    async def counted(self, blocks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for block in blocks:
            self.more(len(block))
            yield block


class _LineCap:
    """Refuses a result file as soon as one of its lines passes `RESULT_LINE_BYTES`, whatever the blocks."""

    def __init__(self) -> None:
        self.run = 0  # bytes since the last newline

    def feed(self, block: bytes) -> None:
        first, *rest = block.split(b"\n")
        longest = max([self.run + len(first), *map(len, rest)])
        self.run = len(rest[-1]) if rest else self.run + len(first)
        if longest > RESULT_LINE_BYTES:
            raise CallError(f"a result line is more than {RESULT_LINE_BYTES:,} bytes, more than one reply takes: "
                            "refused")


def _results_cap(cells: int) -> tuple[int, str]:
    """The most a chunk's result file may hold (`RESULT_LINE_BYTES` a cell), and what passing it is told as."""
    cap = max(cells, 1) * RESULT_LINE_BYTES
    return cap, (f"the results are more than {cap:,} bytes, more than {max(cells, 1)} cells' results take "
                 f"({RESULT_LINE_BYTES:,} bytes each): refused")


def _created(b: Mapping[str, Any]) -> float:
    """A listed batch's creation time in unix seconds (OpenAI gives seconds, Anthropic an RFC 3339 time)."""
    created = b.get("created_at")
    if isinstance(created, int | float) and not isinstance(created, bool):
        return float(created)
    try:
        return _utc_seconds(str(created))
    except ValueError:
        return float("inf")  # a time that cannot be read is never taken as too old to be looked at


def _utc_seconds(stamp: str) -> float:
    """An ISO 8601 time as unix seconds; one without an offset is UTC, as every vendor's clock and the journal's
    are. Read as the local zone, a batch made 30 s after the create was 14 hours older under TZ=Pacific/Kiritimati
    (UTC+14), not looked at, and its cells sent and paid for a second time."""
    when = datetime.fromisoformat(stamp)
    return (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp()


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """A URL's scheme, host and port; None for one httpx cannot read (which is then no API's own host)."""
    try:
        u = httpx.URL(url)
    except httpx.InvalidURL:
        return None
    return u.scheme, u.host, u.port


def _kind(value: Any) -> str:
    """What a JSON value is, in words, for a line that refuses it without quoting a vendor's whole answer."""
    return {dict: "an object", list: "a list", str: "a text", bool: "true or false", type(None): "null"}.get(
        type(value), "a number")


def _url(value: Any) -> str:
    """A results_url as text (`_home` then checks it is on the API's host): anything else is no URL at all."""
    return value if isinstance(value, str) else ""


def vendor_for(provider: HttpProvider, attempts: int, backoff: tuple[float, float]) -> Vendor:
    if provider.config.type == "anthropic":
        return AnthropicBatches(provider, attempts, backoff)
    return OpenAIBatches(provider, attempts, backoff)
