"""The calls of one run: one HTTP client, N workers, each cell's attempts with backoff, one row per cell.

Execution is one asyncio loop with ONE `httpx.AsyncClient` over `httpx_aiohttp.AiohttpTransport` (plain httpx's
connection pool stalls at high concurrency, see design.md). N workers pull cells from a bounded queue fed lazily from
`sealed/requests.jsonl`, so memory stays flat however large the grid. Each call is retried with exponential backoff
and full jitter on 429, 5xx, timeouts, dropped connections and a 200 answer not in the API's shape (a proxy's
garbage, `base.malformed`), waiting at least what a `Retry-After` header asks, up
to `max_wait` (600 s) between the attempts of one cell in all (and the calls in flight narrowed on a 429, 503 or 529,
`_gate`, so that a server taking fewer calls is not refused again at full width): a server asking for more is not
waited on, and the cell's error says so (it counts as a failure in transport, so that a quota spent, asking every
call to wait a day, stops the run as a dead endpoint does). A cell that still fails, or fails for good (another 4xx,
a reply past its cap), is recorded as `failed` with its error and never scored. An authentication or not-found error
(401, 403, 404) says nothing about a cell, so it stops the run instead (`Fatal`), leaving those cells to `--resume`.
So does an endpoint that stops answering, or one that refuses every request alike (a 400 for a parameter the model
does not take): after a few cells in a row fail in transport, or are refused with the same status across every
variant and several fixtures, or time out in a row over several cells with no answer for twice the timeout (a server
that takes calls and answers none), the run stops (`Session.stopped`) instead of recording the rest of the grid as
failed; a cell in flight then is not tried again, and `--resume` calls it with the cells not yet called,
`--retry-failed` the failed ones. Refusals of one variant or one fixture only
(a content filter on the treatment's text, a fixture too long for the model) are that arm's or that fixture's
outcome, and never stop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import random
import signal
import ssl
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import httpx
import msgspec

from benchcard._util.text import squeezed
from benchcard._util.urls import basic_auth, is_loopback
from benchcard.errors import BenchcardError, CallError, Fatal, ProviderError, RetryableError, RunError, WorkerLost
from benchcard.records.rows import OutputRow, Usage
from benchcard.run._gate import CallGate, is_refusal
from benchcard.run._progress import Progress
from benchcard.run._proxies import USABLE, Unusable
from benchcard.run.options import RunOptions, backoff_delay
from benchcard.run.providers import Price, cost_of
from benchcard.run.providers.base import (
    ACCEPT_ENCODING,
    UNVERIFIED_STATUS,
    Completion,
    Provider,
    kept_model_name,
    redact,
    without_secret,
)
from benchcard.run.store import OutputWriter, RunStore

if TYPE_CHECKING:
    from httpx_aiohttp.transport import AiohttpTransport

#: A key refused, an endpoint not found, a redirect (never followed), a TLS certificate that cannot be verified: every
#: cell would get the same, so the run stops.
FATAL_STATUSES = frozenset({401, 403, 404, *range(300, 400), UNVERIFIED_STATUS})
STOP_AFTER_TRANSPORT_FAILURES = 5
"""Cells in a row (at least this many, and twice the calls in flight) that failed in transport after all their
attempts: the endpoint is down, so the run stops rather than record the rest of the grid as failed. Timeouts do
not count: a slow answer is the cell's own (a server that answers none stops the run by `SILENT_CELLS`)."""
SILENT_CELLS = 3
"""Cells at least that the calls timed out in a row must span to stop the run (beside as many calls as a transport
stop takes, and twice `--timeout` without an answer): one cell whose request the server cannot answer in time is
that cell's own, however many of its attempts time out; several cells and no answer at all is a server that takes
calls and answers none, and each cell would otherwise cost its attempts times the timeout (8 minutes by default)."""
REFUSED_FIXTURES = 3
"""Fixtures (or all, when fewer) that refusals alike in a row must hit, with every variant, to stop the run."""
ERROR_CHARS = 300


class _NoCookies(httpx.Cookies):
    """Cells are independent calls: no cookie from one answer rides along with the next request. (It also
    spares httpx's cookie-jar bookkeeping, a tenth of a millisecond per call.)"""

    def extract_cookies(self, response: httpx.Response) -> None:
        pass

    def set_cookie_header(self, request: httpx.Request) -> None:
        pass


def make_client(concurrency: int, timeout: float, transport: httpx.AsyncBaseTransport | None = None
                ) -> httpx.AsyncClient:
    """The run's one HTTP client: httpx's API over aiohttp's connection pool, sized to the concurrency.

    With no transport given, httpx builds aiohttp's transports itself and so honours $HTTPS_PROXY, $HTTP_PROXY,
    $ALL_PROXY and $NO_PROXY as plain httpx does (`trust_env`; a transport passed in turns that off, hence never
    here); a loopback host (`urls.is_loopback`: all of 127.0.0.0/8, `::1`, `localhost`, `localhost.localdomain` and
    the names under them) is never sent to a proxy, which could not reach this machine's own servers, whatever
    $NO_PROXY lists. Every route, direct or through a proxy, is `_transport_class`'s, which sends a call again on a
    keep-alive connection found closed; a transport passed in (tests' `httpx.MockTransport`, which has no
    connections) is used as it is, and nothing a user runs passes one."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    options: dict[str, Any] = {"limits": limits, "timeout": httpx.Timeout(timeout),
                               "headers": {"Accept-Encoding": ACCEPT_ENCODING}}
    if transport is None:
        tls = _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        client: httpx.AsyncClient = _client_class()(verify=tls, trust_env=True, **options)
    else:
        client = _client_class()(transport=transport, **options)
    client._cookies = _NoCookies()  # the public setter would copy into a plain jar
    return client


#: A request's extension saying it is sent once only, never again by the transport, even on a keep-alive connection
#: found closed: a batch's create, which may have been made though its answer was lost, so that the driver looks for
#: it before making it again (`batch/_vendors.request`).
SEND_ONCE = "benchcard_send_once"

@dataclass
class _Sending:
    """One send of a request, as aiohttp's pool handed it its connection (`_transport_class`): whether the
    connection was a pooled one, and whether it was closed already, so that nothing of the request went out."""

    reused: bool = False
    closed: bool = False


#: Each send's `_Sending`, set by a trace callback and the connector, which run in the requesting task: one per send,
#: so concurrent requests never read each other's.
_SENDING: contextvars.ContextVar[_Sending] = contextvars.ContextVar("benchcard_sending")


async def _note_reuse(*_args: object) -> None:
    if (sending := _SENDING.get(None)) is not None:
        sending.reused = True


#: Each cell's count of the requests the transport sent again at once after one may have reached the server
#: (`_unsent`: its bytes went out before the connection dropped): set by `call_cell` for its task, so that the
#: cell's row counts every call the server may have taken (and billed) among its attempts.
_RESENT: contextvars.ContextVar[list[int]] = contextvars.ContextVar("benchcard_resent")


def _unsent(exc: BaseException, sending: _Sending) -> bool:
    """Whether a failed request provably never left: its connection was closed already when the pool handed it
    out, or aiohttp found it closed as it was about to write, and wrote nothing (its own words, "Cannot write to
    closing transport", anywhere in the causes: the write runs a loop turn after the handing out before Python
    3.12). Anything else on a stale connection went out: the server may have read it before dropping the
    connection."""
    if sending.closed:
        return True
    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes is a few long; never loop on one citing itself
        if seen is None:
            return False
        if "Cannot write to closing transport" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _stale(exc: BaseException) -> bool:
    """Whether a request failed as one sent on a keep-alive connection the server had already closed does: the
    connection closed (cleanly, without a byte of an answer) or reset before any answer came. Never a timeout,
    a connection that could not be made, or an answer cut off after it began."""
    import aiohttp

    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) and exc.__cause__ is not None else exc
    if isinstance(cause, aiohttp.ServerDisconnectedError):
        return isinstance(cause.message, str)  # a partial answer is a message read, not a string
    # ConnectionResetError, not aiohttp's ClientConnectionResetError (a subclass of it): that came in aiohttp 3.10.6,
    # and httpx-aiohttp takes 3.10.0, whose resets are Python's own
    return isinstance(cause, aiohttp.ClientOSError | ConnectionResetError) and not isinstance(
        cause, aiohttp.ClientConnectorError | TimeoutError)


def _replayable(request: httpx.Request) -> bool:
    """Whether a request's body is held whole, so it can be sent again (a stream is read once)."""
    try:
        return request.content is not None
    except httpx.RequestNotRead:
        return False


@lru_cache(maxsize=1)
def _transport_class() -> type[AiohttpTransport]:
    """httpx-aiohttp's transport, made to send a request again at once, on another connection, when the pooled
    keep-alive connection it went out on turns out closed by the server (idle too long, or after as many requests
    as the server takes on one, without `Connection: close` to say so). The resend waits no backoff, narrows
    nothing and spends none of the cell's `--attempts`; but unless the request provably never left (`_unsent`),
    the server may have read it before dropping the connection, and billed it, so the cell's row counts it among
    its `attempts` (`_RESENT`), which are the calls the server may have taken. aiohttp itself
    resends only requests of idempotent methods, and a call is a POST. Only a request on a reused connection is
    sent again (aiohttp's trace of the pool says which), so a server that drops every request, on fresh
    connections too, fails it at once as before; each stale connection is dropped from the pool as it fails, so the
    resends end by the pool's size. A body sent as a stream (a batch file's upload) is not sent again here, nor a
    request marked `SEND_ONCE`."""
    import aiohttp
    from aiohttp.client_reqrep import ClientRequest
    from httpx_aiohttp.transport import AiohttpTransport

    class Connector(aiohttp.TCPConnector):
        async def connect(self, req: ClientRequest, traces: list[aiohttp.tracing.Trace],
                          timeout: aiohttp.ClientTimeout) -> aiohttp.connector.Connection:
            conn = await super().connect(req, traces, timeout)
            if (sending := _SENDING.get(None)) is not None:
                sending.closed = conn.transport is None or conn.transport.is_closing()
            return conn

    class Transport(AiohttpTransport):
        def get_client(self) -> aiohttp.ClientSession:
            trace = aiohttp.TraceConfig()
            trace.on_connection_reuseconn.append(_note_reuse)
            most = self.limits.max_connections
            connector = Connector(keepalive_timeout=self.limits.keepalive_expiry, ssl=self.ssl_context,
                                  limit=100 if most is None else most)
            return aiohttp.ClientSession(connector=connector, trace_configs=[trace])

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            once = request.extensions.get(SEND_ONCE) or not _replayable(request)
            resends = 0 if once else (self.limits.max_connections or 100) + 1
            while True:
                sending = _Sending()
                token = _SENDING.set(sending)
                try:
                    return await super().handle_async_request(request)
                except httpx.HTTPError as exc:
                    if not (sending.reused and resends > 0 and _stale(exc)):
                        raise
                    resends -= 1
                    if not _unsent(exc, sending) and (resent := _RESENT.get(None)) is not None:
                        resent[0] += 1  # the server may have taken it: the cell's row counts the call
                finally:
                    _SENDING.reset(token)

    return Transport


@lru_cache(maxsize=1)
def _client_class() -> type[httpx.AsyncClient]:
    """httpx-aiohttp's client, its proxies' credentials sent as a header: the transport hands them to aiohttp as
    `BasicAuth`, which aiohttp 3.14 deprecates (a warning on every call). Imported late: aiohttp costs 0.1 s."""
    from httpx_aiohttp import HttpxAiohttpClient

    class Client(HttpxAiohttpClient):
        def _init_transport(self, *args: Any, transport: httpx.AsyncBaseTransport | None = None,
                            **kwargs: Any) -> httpx.AsyncBaseTransport:
            return transport if transport is not None else _transport_class()(*args, **kwargs)

        def _transport_for_url(self, url: httpx.URL) -> httpx.AsyncBaseTransport:
            """Direct for a loopback host: httpx's mounts match a host by name or one address, never a range, so
            $NO_PROXY=127.0.0.1 (or a mount of it) left 127.0.0.2, `app.localhost` and `::ffff:127.0.0.1` proxied.
            No public hook does this: a transport routing by URL mounted at `all://` loses to the proxies httpx
            mounts at `http://` and `https://` from the environment, and mounting those itself would mean reading
            $NO_PROXY other than as httpx does, which README promises. httpx calls this for every request; the
            run on 127.0.0.2 behind a dead proxy in tests/run/test_calls.py fails if it ever stops."""
            if is_loopback(url.host):
                return self._transport
            return super()._transport_for_url(url)

        def _init_proxy_transport(self, proxy: httpx.Proxy, *args: Any, **kwargs: Any) -> httpx.AsyncBaseTransport:
            if proxy.url.scheme not in USABLE:
                return Unusable(proxy.url)
            headers = httpx.Headers(proxy.headers)
            auth = basic_auth(proxy.auth)  # as httpx.BasicAuth writes it, without its internals
            if auth is not None:  # aiohttp moves a proxy's Authorization to Proxy-Authorization (or CONNECT)
                headers["Authorization"] = auth
            plain = httpx.Proxy(proxy.url, headers=headers)  # the URL without its user and password
            return _transport_class()(*args, **{**kwargs, "proxy": plain})

    return Client


@lru_cache(maxsize=4)
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS context the transport would make itself (httpx's defaults: certifi's roots, or $SSL_CERT_FILE or
    $SSL_CERT_DIR, hence the key), made once a process: reading the roots costs about 30 ms of CPU a client, and
    a run, its judging and each `status` make one."""
    return httpx.create_ssl_context()


class RateLimiter:
    """At most `rpm` call starts per minute, evenly spaced; every attempt counts, retries included."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = asyncio.get_running_loop().time()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


def workers_for(provider: Provider, concurrency: int) -> int:
    """`--concurrency`, capped at the provider's `max_concurrency` when it states one: the local model runs one
    call at a time, and a cell queued behind another would count the wait in its latency_ms and its timeout."""
    limit = provider.max_concurrency
    return min(concurrency, limit) if limit is not None and limit >= 1 else concurrency


# ------------------------------------------------------------------------------------------------ execution


@dataclass
class Job:
    cell: str
    fixture: str
    body: dict[str, Any]
    variant: str = ""  # the arm, which only the refusal streak reads (a judge's call has one arm)


@dataclass
class Refusals:
    """The failed cells in a row refused alike (one status, or one kind of unreadable answer), and which
    variants and fixtures they hit: a refusal about the request, the model or the account hits them all."""

    kind: str = ""
    cells: int = 0
    variants: set[str] = field(default_factory=set)
    fixtures: set[str] = field(default_factory=set)


@dataclass
class Session:
    """One invocation's state for one run, shared by its workers."""

    store: RunStore
    provider: Provider
    model: str
    prices: Mapping[str, Price]
    options: RunOptions
    limiter: RateLimiter
    progress: Progress
    secret_env: str | None
    hidden: tuple[str, ...] = ()  # beside the key: a base URL's password and its Basic token (`urls.secrets_of`)
    workers: int = 1
    rng: random.Random = field(default_factory=random.Random)
    fatal: str | None = None
    stopped: str | None = None  # why the run stopped (failures or refusals in a row, a silent server): cells in
    # flight then are left unrecorded for --resume (`call_cell` None), those that failed are recorded
    stop_advice: str = "When the endpoint answers again"  # what to do before the command that continues
    longer_answers: str = "raise --timeout"  # what to do for a server whose answers take longer than the timeout
    transport_streak: int = 0
    silent: set[str] = field(default_factory=set)  # the cells whose calls timed out since the last answer
    silent_calls: int = 0  # those calls
    heard_at: float | None = None  # when the server last answered (anything, an error included), or was first called
    answered: bool = False  # whether the server answered any call of this session (an error included)
    silent_stop: int | None = None  # a check's: the calls timed out in a row that stop it while none was answered
    server: str = "the server"  # the server as a stop names it
    refusal: Refusals = field(default_factory=Refusals)  # the refusals alike in a row
    variants: int = 1  # the plan's variants and fixtures, which a refusal must hit all of (fixtures: a few) to stop
    fixtures: int = 1
    notes: list[str] = field(default_factory=list)  # what the user must hear of this pass (refused batch results)
    replied: Counter[str] = field(default_factory=Counter)  # the model each reply named, counted (Completion.model)
    gate: CallGate = field(init=False)  # the calls in flight allowed, `workers` at most, narrowed by refusals
    halt: asyncio.Event = field(init=False)  # set at a stop or a fatal error: wakes the cells waiting to call

    def __post_init__(self) -> None:
        self.gate = CallGate(self.workers)
        self.halt = asyncio.Event()

    @property
    def halted(self) -> bool:
        """Whether the pass stopped, on a rule (`stopped`) or a fatal error (`fatal`): no call is sent after."""
        return self.fatal is not None or self.stopped is not None

    def stop(self, why: str) -> None:
        """Stop the pass for `why` (the first reason kept), waking the cells waiting for their next call, which
        then send none."""
        if self.stopped is None:
            self.stopped = why
        self.halt.set()

    def fail(self, why: str) -> None:
        """End the pass on a fatal error (a key refused: every cell would get it), waking the waiting cells, as
        `stop` does."""
        if self.fatal is None:
            self.fatal = why
        self.halt.set()

    @property
    def narrowed(self) -> int | None:
        """The calls in flight allowed at the end, once a refusal narrowed them: the run's, or a pool's servers'."""
        return self.provider.narrowed() if self.provider.narrows_itself else self.gate.narrowed

    def note_reply(self, c: Completion) -> None:
        """Count the model a reply named (the key scrubbed from it, as from any text the server sent, before it
        is cut to the length kept)."""
        if c.model is not None:
            self.replied[kept_model_name(_scrub(self, c.model))] += 1

    def record_replies(self, writer: OutputWriter, *, judge: bool = False) -> None:
        """This pass's reply models in the manifest (`RunStore.append_replies`) once it wrote a row, the model
        asked or not, so a later pass knows which rows were counted; the embedded model is not counted. Called as a
        pass ends, an error included: then a failed write (a full disk) is dropped, never put in that error's
        place."""
        replied = dict(self.replied)
        self.replied.clear()
        if not writer.written or self.provider.config.type == "local":
            return
        with _stops_deferred():
            if sys.exc_info()[0] is None:
                self.store.append_replies(replied, writer.written, writer.before, judge=judge)
                return
            with contextlib.suppress(OSError, BenchcardError):
                self.store.append_replies(replied, writer.written, writer.before, judge=judge)

    def raise_if_stopped(self, what: str, noun: str, recorded: int, total: int, resume: str,
                         failed: int | None = None) -> None:
        """End a pass that stopped early (the `what`: run, judging) with one line: why, how many of its `noun`
        (cells, judgements) are recorded, and the command that continues it (`resume`; after a stop on transport
        failures, with `--retry-failed` when some of the `failed` cells can be called again)."""
        if self.fatal is not None:
            raise RunError(f"{self.fatal}; the {what} stopped with {recorded} of {total} {noun} recorded. Fix the "
                           f"cause, then: {resume}")
        if self.stopped is not None:
            count = "" if failed is None else f", {failed} failed"
            retry = " --retry-failed" if failed else ""
            raise RunError(f"the {what} stopped: {self.stopped}; {recorded} of {total} {noun} recorded{count}. "
                           f"{self.stop_advice}: {resume}{retry}")


@contextlib.contextmanager
def _stops_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back while a stopping pass records its replies, then handled as they would have
    been. The first only cancels the calls (asyncio's handler), but a second is asyncio's hard stop, a
    KeyboardInterrupt wherever the process is: arriving during the record (a hand pressing Ctrl-C twice, a CI
    runner's SIGINT then SIGTERM), it lost the record, and the resume said those replies' models were unknown.
    Held back, it takes effect as the record is written. Python runs signal handlers in the main thread only, so
    the handlers are swapped there (blocking the signals would not do: another thread of the process takes
    them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    kept = {sig: signal.signal(sig, lambda n, _frame: held.append(n)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
        for number in held:
            handler = kept[signal.Signals(number)]
            if callable(handler):
                handler(number, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(number)


def _describe(s: Session, exc: BaseException) -> str:
    """An error as a cell's row and the run's lines quote it: without the session's secrets, then cut to one line
    (in that order, so that no cut leaves the first characters of a key it fell inside: `base.quoted`)."""
    text = str(exc) or type(exc).__name__
    if not isinstance(exc, RetryableError | CallError | BenchcardError):
        text = f"{type(exc).__name__}: {text}"
    return squeezed(_scrub(s, text), ERROR_CHARS)


async def call_cell(s: Session, job: Job) -> OutputRow | None:
    """Every attempt for one cell, ending in exactly one row (or Fatal for a run-level error); None when the run
    stopped (`Session.halted`: a stop rule, or another cell's fatal error) while the cell's call was out or it
    waited for its next: it is not called again, nor recorded, its last attempt's failure included, so that
    `--resume` calls it as a cell never called (a hung server's cells in flight would each wait out their attempts;
    a cell in its backoff at the stop sent one more). A stop wakes the cells waiting (`Session.halt`): the run ends
    then, not after the longest backoff. The row's `attempts` are the cell's own plus the transport's resends the
    server may have read (`_RESENT`)."""
    resent = [0]
    token = _RESENT.set(resent)
    try:
        return await _call_cell(s, job)
    finally:
        _RESENT.reset(token)


async def _call_cell(s: Session, job: Job) -> OutputRow | None:
    # Not tenacity's AsyncRetrying: it cost more CPU per cell and wall time than this loop (docs/performance.md).
    attempts = 0
    waited = 0.0  # seconds spent between attempts, Retry-After and a pool's wait for a server included
    while True:
        async with s.gate.slot() as sent_in:  # the calls in flight allowed now (`_gate`): a refusal narrows them
            await s.limiter.wait()
            try:
                await s.provider.warm()  # the local model's worker, restarted outside the call's timeout
            except WorkerLost as exc:
                message = _describe(s, exc)
                raise Fatal(message, _failed(job, attempts + 1, None, message)) from None
            placed = await _place(s, waited)
            if placed is None:  # the run stopped before a server took the call: none is sent
                return None
            waited += placed
            attempts += 1
            started = time.perf_counter()
            outcome = await _attempt(s, job, attempts, started)
            _adjust_width(s, outcome, sent_in)  # before this slot passes on at the old width
        if isinstance(outcome, OutputRow):
            return outcome
        if s.halted:  # in flight when the run stopped (this call's silence may have stopped it)
            return None
        gave_up, delay = _retry_or_give_up(s, job, outcome, attempts, _elapsed(started), waited)
        if gave_up is not None:
            return gave_up
        if s.halted:
            return None
        waited += delay
        await _back_off(s, delay)
        if s.halted:  # the run stopped during the backoff: no call after the stop
            return None


async def _back_off(s: Session, delay: float) -> None:
    """A cell's wait before its next attempt, `delay` seconds, cut short by a stop (`Session.halt`), so that a run
    stopping ends then, not after the longest `Retry-After` its cells were told."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(delay):
            await s.halt.wait()


async def _place(s: Session, waited: float) -> float | None:
    """Wait, outside the call's timeout, for the provider to take the call (a pool: a server with room, which
    waits for a server's trial while every one is out); the seconds it waited, or None when the run stopped
    meanwhile, or now, because no server will be back within what the cell may still wait (`max_wait`)."""
    since = time.monotonic()
    left = s.options.max_wait - waited
    late = await s.provider.place(left, s.halt)
    if late is not None:
        s.stop(f"every server of the pool is out after failures in a row, and none is back to be tried within the "
               f"{left:.1f} s a cell may still wait (of {s.options.max_wait:g} s in all): the first in {late:.1f} s")
    return None if s.halted else time.monotonic() - since


def _adjust_width(s: Session, outcome: OutputRow | BaseException, sent_in: int) -> None:
    """The calls in flight after one: narrowed on a refusal for load, grown on an answer. A pool narrows each
    server's own (`_pool`), and the run's follow the sum of those that are in, so that the calls a narrowed or an
    out server holds back wait here, outside their timeout, as over one server, not in the pool for a server."""
    if s.provider.narrows_itself:
        if (width := s.provider.width()) is not None:
            s.gate.follow(width)
    elif is_refusal(outcome):
        s.gate.refused(sent_in)
    elif isinstance(outcome, OutputRow) and outcome.status != "failed":
        s.gate.answered()


async def _attempt(s: Session, job: Job, attempts: int, started: float) -> OutputRow | BaseException:
    """One call: the cell's row (answered, or failed for good), or the error to retry on; Fatal for an error
    no cell can get past (a key refused, the local worker lost)."""
    if s.heard_at is None:
        s.heard_at = time.monotonic()
    try:
        async with asyncio.timeout(s.options.timeout):
            completion = await s.provider.complete(job.body)
    except TimeoutError:
        _count_silence(s, job)
        return RetryableError(f"timed out after {s.options.timeout:g} s")
    except (asyncio.CancelledError, KeyboardInterrupt, ProviderError):
        raise
    except Exception as exc:
        if isinstance(exc, CallError) and exc.status in FATAL_STATUSES:
            raise Fatal(_describe(s, exc)) from None
        if isinstance(exc, WorkerLost):
            message = _describe(s, exc)
            raise Fatal(message, _failed(job, attempts, _elapsed(started), message)) from None
        if isinstance(exc, CallError | RetryableError) and exc.status is not None:
            _heard(s)  # an answer, if not to this cell's good: the server is alive
        else:
            _not_timed_out(s)
        if not s.provider.should_retry(exc):
            s.transport_streak = 0  # the endpoint answered, about this cell
            message = _describe(s, exc)
            _count_refusal(s, job, exc, message)
            return _failed(job, attempts, _elapsed(started), message)
        return exc
    s.transport_streak = 0
    s.refusal = Refusals()
    _heard(s)
    return _row(s, job, completion, attempts, _elapsed(started))


def _retry_or_give_up(s: Session, job: Job, error: BaseException, attempts: int, latency: float,
                      waited: float) -> tuple[OutputRow | None, float]:
    """After a retryable error: the failed row when the attempts or the wait allowed are spent, else the delay
    before the next attempt (backoff, or the server's Retry-After)."""
    opts = s.options
    if attempts >= opts.attempts:
        message = _describe(s, error) + f" ({_gave_up(attempts)})"
        _count_transport_failure(s, error, message)
        return _failed(job, attempts, latency, message), 0.0
    retry_after = error.retry_after if isinstance(error, RetryableError) else None
    delay = backoff_delay(attempts, retry_after, opts.backoff_base, opts.backoff_cap, s.rng)
    asked = max(delay, retry_after or 0.0)
    if waited + asked > opts.max_wait:  # a server may not hold one cell for half an hour, 600 s at a time
        message = _describe(s, error) + (f"; the server asked to wait {asked:g} s more, past the {opts.max_wait:g} s "
                                         f"one cell may wait in all ({_gave_up(attempts)})")
        _count_transport_failure(s, error, message)  # on every call (a quota spent), it stops the run as any is
        return _failed(job, attempts, latency, message), 0.0
    return None, delay


def _gave_up(attempts: int) -> str:
    """How many attempts a cell gave up after, and the calls sent again at once besides, which its row's
    `attempts` count too (`_RESENT`): a row of 5 attempts says why when `--attempts` was 3."""
    said = f"gave up after {attempts} attempt{'s' if attempts > 1 else ''}"
    resent = _calls_made(attempts) - attempts
    if resent:
        said += f", and {resent} call{'s' if resent > 1 else ''} sent again at once on a connection found closed"
    return said


def _count_transport_failure(s: Session, error: BaseException, message: str) -> None:
    if str(error).startswith("timed out"):
        return
    s.transport_streak += 1
    if s.transport_streak >= max(STOP_AFTER_TRANSPORT_FAILURES, 2 * s.workers) and s.stopped is None:
        s.stop(f"{s.transport_streak} cells in a row failed in transport (last: {message})")


def _heard(s: Session) -> None:
    s.answered = True
    s.silent.clear()
    s.silent_calls = 0
    s.heard_at = time.monotonic()


def _not_timed_out(s: Session) -> None:
    """A call failed with no answer but did not time out (a connection refused or dropped): the calls that timed
    out before it are no longer in a row, while the clock of no answer runs on (it is none). Of the two readings
    this one stops a run the later: the silence rule stops on timeouts only, the transport rule on the rest."""
    s.silent.clear()
    s.silent_calls = 0


def _count_silence(s: Session, job: Job) -> None:
    """A call timed out. Calls in a row timing out stop the run when they are as many as transport failures that
    stop it, span `SILENT_CELLS` cells, and no answer came for twice `--timeout`: a server that accepts calls and
    answers none. A check, which has no run to protect, stops sooner: at its `silent_stop` calls timed out in a row
    while the server answered none of its calls (check --live: 2, not 9 calls of 120 s one after another). A server
    answering slowly, or timing out on some cells only, answers in between, and each answer
    (an error's included) starts the count again; a call failing otherwise (a connection error, no answer) breaks
    the row but not the time with no answer (`_not_timed_out`)."""
    s.silent.add(job.cell)
    s.silent_calls += 1
    quiet = time.monotonic() - (s.heard_at or 0.0)
    timeout = s.options.timeout
    if s.silent_stop is not None and not s.answered and s.silent_calls >= s.silent_stop and s.stopped is None:
        s.stop(f"{s.server} answered none of the calls sent, {s.silent_calls} of them timed out after "
               f"{timeout:g} s: it takes calls but answers none (if its answers only take longer, "
               f"{s.longer_answers})")
        return
    if (s.silent_calls >= max(STOP_AFTER_TRANSPORT_FAILURES, 2 * s.workers) and len(s.silent) >= SILENT_CELLS
            and quiet >= 2 * timeout and s.stopped is None):
        s.stop(f"{s.silent_calls} calls in a row over {len(s.silent)} cells timed out after {timeout:g} s and "
               f"no answer came for {quiet:.1f} s: the server takes calls but answers none (if its answers "
               f"only take longer, {s.longer_answers})")


def _count_refusal(s: Session, job: Job, error: BaseException, message: str) -> None:
    """A cell refused for good (a 400, a 422, an answer that cannot be read): one such cell says something about
    that cell, but the same refusal on as many cells in a row as would stop a dead endpoint, over every variant
    and `REFUSED_FIXTURES` fixtures, says something about the request, the model or the account (`max_tokens` a
    model no longer takes), so the run stops rather than record the rest of the grid as failed. Refusals of one
    variant (a content filter on its text) or of one fixture are outcomes of that arm or fixture: they run on."""
    kind = f"HTTP {error.status}" if isinstance(error, CallError) and error.status else type(error).__name__
    if s.refusal.kind != kind:
        s.refusal = Refusals(kind)
    streak = s.refusal
    streak.cells += 1
    streak.variants.add(job.variant)
    streak.fixtures.add(job.fixture)
    if (streak.cells >= max(STOP_AFTER_TRANSPORT_FAILURES, 2 * s.workers) and len(streak.variants) >= s.variants
            and len(streak.fixtures) >= min(s.fixtures, REFUSED_FIXTURES) and s.stopped is None):
        s.stop(f"{streak.cells} cells in a row were refused alike (last: {message})")
        s.stop_advice = "Fix the cause (the card's request, the model or the account), then"


def _secrets(s: Session) -> list[str]:
    """Every secret of the session's calls, read now: the key from the environment, and the URL's password."""
    key = os.environ.get(s.secret_env) if s.secret_env else None
    return [secret for secret in (key, *s.hidden) if secret]


def _scrub(s: Session, text: str) -> str:
    for secret in _secrets(s):
        text = text.replace(secret, "[redacted]")
    return redact(text, None)


def _elapsed(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 1)


def _calls_made(attempts: int) -> int:
    """A cell's attempts as its row records them: its own, and the transport's resends the server may have read."""
    resent = _RESENT.get(None)
    return attempts + (resent[0] if resent else 0)


def _row(s: Session, job: Job, c: Completion, attempts: int, latency: float) -> OutputRow:
    s.note_reply(c)
    text = c.text
    for secret in _secrets(s):
        text = without_secret(text, secret)
    reason = _scrub(s, c.finish_reason) if c.finish_reason else c.finish_reason  # a server's words, as its error
    priced = cost_of(c.usage, c.cost, s.model, s.prices, counted=c.counted)
    return OutputRow(cell=job.cell, fixture=job.fixture, status=c.status, text=text, finish_reason=reason,
                     usage=c.usage, cost=priced.cost, latency_ms=latency,
                     attempts=_calls_made(attempts), error=_scrub(s, c.error) if c.error else None,
                     endpoint=msgspec.UNSET if c.endpoint is None else c.endpoint,  # a pool: which server answered
                     cost_upper_bound=priced.mark)


def _failed(job: Job, attempts: int, latency: float | None, error: str) -> OutputRow:
    return OutputRow(cell=job.cell, fixture=job.fixture, status="failed", text="", finish_reason=None,
                     usage=Usage(), cost=None, latency_ms=latency,
                     attempts=_calls_made(attempts), error=error)


async def execute(s: Session, writer: OutputWriter, done: set[str], stop_after: int | None = None) -> int:
    """Call every planned cell not in `done`, appending each outcome as it finishes; returns cells called."""
    workers = max(1, s.workers)
    queue: asyncio.Queue[Job | None] = asyncio.Queue(maxsize=2 * workers)
    producer = asyncio.create_task(_produce(s, queue, done, stop_after, workers))
    tasks = [asyncio.create_task(_work(s, queue, writer)) for _ in range(workers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        producer.cancel()
        for t in tasks:
            t.cancel()
        await asyncio.gather(producer, *tasks, return_exceptions=True)
    return writer.written


async def _produce(s: Session, queue: asyncio.Queue[Job | None], done: set[str], stop_after: int | None,
                   workers: int) -> None:
    """The planned cells not in `done` onto the queue, in plan order, until a stop; then one end per worker."""
    sent = 0
    for assignment, request in s.store.iter_sealed(skip=done):
        if assignment.cell in done:
            continue
        if s.fatal is not None or s.stopped is not None or (stop_after is not None and sent >= stop_after):
            break
        await queue.put(Job(assignment.cell, assignment.fixture, request.body, assignment.variant))
        sent += 1
    for _ in range(workers):
        await queue.put(None)


async def _work(s: Session, queue: asyncio.Queue[Job | None], writer: OutputWriter) -> None:
    """One worker: call cells off the queue and append each row as it finishes, until the end or a stop."""
    while s.fatal is None and s.stopped is None:
        job = await queue.get()
        if job is None:
            return
        try:
            row = await call_cell(s, job)
            if row is None:  # stopped: left to --resume
                return
        except Fatal as exc:
            if exc.row is not None:
                writer.append(exc.row)
                s.progress.advance(exc.row)
            s.fail(str(exc))
            return
        writer.append(row)
        s.progress.advance(row)
