"""A pool of servers of one model (vLLM or llama.cpp replicas) behind one provider: each call goes to the
least-loaded healthy server, and a server that fails repeatedly is taken out and tried again later.

Why here and not in the runner: to the runner a pool is one provider whose calls take a little longer to
place; the cell's retries, its row and its statuses stay the runner's. The body sent is the stored body,
byte for byte, whichever server answers (each server is the vendor's own `HttpProvider` at another URL), and
the row of every answered cell names the server (`endpoint`).

Health: `fail_after` transport failures in a row (429, 5xx, timeouts, dropped connections) take a server out
for `out_for_s` seconds; it then gets one call at a time until it answers again, and each further failure
doubles its time out (up to five minutes). When every server is out, the next call waits for the first back,
before it is sent and outside its timeout (`place`), for as long as the cell may still wait (`max_wait`).

Width: each server has its own calls in flight (a `_gate.Width`, up to its concurrency), narrowed
by its own refusals for load (429, 503, 529) and grown by its own answers, so that one server's rate limit does
not slow the others (`narrows_itself`: the runner's gate takes none of a pool's refusals as its own, and keeps
the widths of the servers that are in together in flight, `width`, `_calls._adjust_width`: a server out holds back
its calls before they are sent, as a narrowed one does).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from benchcard._util.safeio import json_loads
from benchcard.errors import CallError, ProviderError, RetryableError, RunError
from benchcard.project import CONFIG_FILE, MAX_CONCURRENCY, Endpoint, pool_concurrency
from benchcard.run._calls import RateLimiter, workers_for
from benchcard.run._gate import Width, is_refusal
from benchcard.run.providers import make_provider
from benchcard.run.providers.base import (
    Completion,
    HttpProvider,
    Provider,
    ProviderConfig,
    is_retryable,
    kept_model_name,
    read_capped,
    read_key,
    sent_headers,
)

MAX_OUT_S = 300.0
#: The server a task's next call goes to, reserved by `PoolProvider.place` outside the call's timeout.
_PLACED: contextvars.ContextVar[_Server | None] = contextvars.ContextVar("benchcard_placed")
#: The longest a server's `GET /models` is waited on, in all: the client's timeout is per read, and a server that
#: sends its list a byte at a time (or never ends it) held the run before its first call for as long as it liked.
MODELS_WAIT_S = 10.0
#: The most of a server's `GET /models` list that is read (a list of models is kilobytes; OpenRouter's whole
#: catalogue about 1 MB): a server sending more is not read further, and is let in as one that did not answer.
MODELS_BYTES = 8 * 2**20


class _Server:
    """One endpoint's live state: calls in flight, failures in a row, out until when."""

    def __init__(self, provider: HttpProvider, endpoint: Endpoint, concurrency: int):
        self.provider = provider
        self.url = endpoint.url
        self.capacity = endpoint.concurrency or concurrency
        self.width = Width(self.capacity)  # its calls allowed now: `room` and `_acquire` hold them
        self.limiter = RateLimiter(endpoint.requests_per_minute)
        self.in_flight = 0
        self.failures = 0
        self.out_until = 0.0
        self.out_for = 0.0
        self.calls = 0

    def takes(self, now: float) -> int:
        """Calls it takes at once now: none while out, one while on trial after being out, else its width."""
        if self.out_until > now:
            return 0
        if self.out_for:  # back from being out: one call proves it before it takes more
            return 1
        return self.width.allowed

    def room(self, now: float) -> int:
        """Calls it may take now besides those it has (none or less while out or on trial)."""
        return self.takes(now) - self.in_flight


class PoolProvider(Provider):
    """Several servers of one model as one provider (the runner's `Provider` interface)."""

    narrows_itself = True

    def __init__(self, config: ProviderConfig, client: httpx.AsyncClient, concurrency: int):
        self.config = config
        self.fail_after = int(config.pool.get("fail_after", 3))
        self.first_out = float(config.pool.get("out_for_s", 10.0))
        self.servers = []
        for e in config.endpoints:
            one = dataclasses.replace(config, base_url=e.url, endpoints=())
            provider = make_provider(one, client)
            assert isinstance(provider, HttpProvider)
            self.servers.append(_Server(provider, e, concurrency))
        self.max_concurrency: int = pool_capacity(config, concurrency)
        self._changed = asyncio.Condition()

    def build_body(self, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
                   effort: str | None) -> dict[str, Any]:
        return self.servers[0].provider.build_body(model, messages, params, effort)

    def should_retry(self, error: BaseException) -> bool:
        return is_retryable(error)

    async def aclose(self) -> None:
        """The client belongs to the runner, which closes it."""

    def narrowed(self) -> int | None:
        """The calls the servers allow now together, once a refusal narrowed one of them (None: none did)."""
        if all(s.width.narrowed is None for s in self.servers):
            return None
        return sum(s.width.allowed for s in self.servers)

    def width(self) -> int:
        """The calls the servers that are in take now together: each at its own width, one on trial, none while
        out, so that the calls an out server would have taken wait in the runner, outside their timeout."""
        now = asyncio.get_running_loop().time()
        return sum(s.takes(now) for s in self.servers)

    async def place(self, within: float, halt: asyncio.Event) -> float | None:
        """Reserve, outside the call's timeout, the server the next `complete` of this task sends to (`_PLACED`):
        the least-loaded with room, waiting for one while none has (while every server is out, for the first back
        on trial). None once placed, or when `halt` is set meanwhile (nothing reserved); the seconds until the
        first server is back when every one is out past `within`, what the cell may still wait."""
        server = await self._take(within, halt)
        if isinstance(server, _Server):
            _PLACED.set(server)
            return None
        return server

    async def complete(self, body: Mapping[str, Any]) -> Completion:
        server = _PLACED.get(None)
        if server is None:
            server = await self._acquire()
        else:
            _PLACED.set(None)  # taken: the task's next call is placed anew
        sent_in = server.width.epoch  # the width it went out at: a refusal of an older one is an echo
        ok = answered = refused = False
        try:
            await server.limiter.wait()
            server.calls += 1
            completion = await server.provider.complete(body)
            ok, answered = True, completion.status != "failed"
            return dataclasses.replace(completion, endpoint=server.url)
        except RetryableError as exc:
            refused = is_refusal(exc)
            raise RetryableError(f"{server.url}: {exc}", exc.retry_after, exc.status) from None
        except CallError as exc:
            ok, refused = True, is_refusal(exc)  # a refusal of this body says nothing about the server's health
            raise CallError(f"{server.url}: {exc}", exc.status) from None
        finally:
            await self._release(server, ok, refused, answered, sent_in)

    async def _acquire(self) -> _Server:
        """A server for a call not placed before (no wait limit, no stop to heed)."""
        server = await self._take(float("inf"), asyncio.Event())
        assert isinstance(server, _Server)
        return server

    async def _take(self, within: float, halt: asyncio.Event) -> _Server | float | None:
        """The least-loaded server with room, counted in flight; None when `halt` is set first; the seconds until
        the first is back when every server is out past `within`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        async with self._changed:
            while not halt.is_set():
                now = loop.time()
                open_ = [s for s in self.servers if s.room(now) > 0]
                if open_:
                    best = min(open_, key=lambda s: (s.in_flight / s.capacity, s.calls))
                    best.in_flight += 1
                    return best
                back = [s.out_until for s in self.servers if s.out_until > now]
                if len(back) == len(self.servers) and min(back) > deadline:
                    return min(back) - now  # every server out, none back in time
                await self._changed_or(halt, min(back) - now if back else None)
        return None

    async def _changed_or(self, halt: asyncio.Event, timeout: float | None) -> None:
        """Wait (the condition's lock held around it, released within) for a call's release, a server's time
        out over (`timeout`), or `halt`, whichever comes first."""
        changed = asyncio.ensure_future(self._changed.wait())
        halted = asyncio.ensure_future(halt.wait())
        try:
            await asyncio.wait((changed, halted), timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (changed, halted):
                task.cancel()
            # the condition's wait takes the lock back as it ends, cancelled or not: this `async with` holds it
            await asyncio.gather(changed, halted, return_exceptions=True)

    async def _release(self, server: _Server, ok: bool, refused: bool, answered: bool, sent_in: int) -> None:
        """A call done: its server's width narrowed on a refusal for load (before its slot passes on at the old
        width) or grown on an answer, its health told, and as many waiting calls woken as may go now."""
        now = asyncio.get_running_loop().time()
        async with self._changed:
            before = server.width.allowed
            if refused:
                server.width.refused(sent_in)
            elif answered:
                server.width.answered()
            server.in_flight -= 1
            if ok:
                server.failures, server.out_for = 0, 0.0
            else:
                server.failures += 1
                on_trial = server.out_for > 0
                if on_trial or server.failures >= self.fail_after:
                    server.out_for = min(MAX_OUT_S, server.out_for * 2 if on_trial else self.first_out)
                    server.out_until = now + server.out_for
                    server.failures = 0
            # one slot was freed, and one more for each the width grew: wake as many waiting calls, not all of them
            self._changed.notify(1 + max(0, server.width.allowed - before))

    async def check_models(self, model: str) -> None:
        """Refuse a pool whose servers serve different models: the rig is one model.

        Each server's `GET /models` is read; a server that does not answer is let in (it may come back), one
        whose list lacks the model while another's has it, or whose list differs from the others', is refused.
        """
        served = await asyncio.gather(*(self._models(s) for s in self.servers))
        known = [(s.url, m) for s, m in zip(self.servers, served, strict=True) if m is not None]
        if not known or all(m == known[0][1] for _, m in known):
            return
        for url, models in known:
            if model not in models:
                shown = ", ".join(sorted(models)[:5]) or "no model"
                raise ProviderError(f"provider '{self.config.name}': {url} serves {shown}, not {model}; a pool "
                                    "must serve one model (remove that server from base_urls)")

    async def _models(self, server: _Server) -> frozenset[str] | None:
        provider = server.provider
        try:
            key = read_key(provider.config)
            headers = sent_headers(provider.config, provider.vendor_headers(key), None)
            async with (asyncio.timeout(MODELS_WAIT_S),
                        provider.client.stream("GET", f"{server.url}/models", headers=headers,
                                               timeout=MODELS_WAIT_S) as response):
                ok = response.status_code == 200
                # json_loads: JSON nested past the stack is a ValueError, not json's RecursionError
                data = json_loads(await read_capped(response, MODELS_BYTES, "too large")) if ok else None
        except (httpx.HTTPError, OSError, ValueError, CallError):  # TimeoutError is an OSError
            return None
        except Exception as exc:  # aiohttp errors come through the transport unwrapped
            if type(exc).__module__.startswith("aiohttp"):
                return None
            raise
        entries = data.get("data") if isinstance(data, Mapping) else None
        if not isinstance(entries, Sequence):
            return None
        # each as the manifest keeps a replied model's name: what does not show escaped, 200 characters at most
        return frozenset(kept_model_name(str(e["id"])) for e in entries if isinstance(e, Mapping) and "id" in e)


def open_provider(cfg: ProviderConfig, client: httpx.AsyncClient, model: str | None, concurrency: int) -> Provider:
    """The provider a run's, a judging pass's or `check --live`'s calls go through: a pool when benchcard.yaml lists
    several servers (`base_urls`, each taking `concurrency` calls unless it states its own), else the one server."""
    return PoolProvider(cfg, client, concurrency) if cfg.endpoints else make_provider(cfg, client, model)


def calls_in_flight(provider: Provider, concurrency: int) -> int:
    """The workers its calls get: a pool's servers' widths together, else --concurrency (`_calls.workers_for`)."""
    return provider.max_concurrency if isinstance(provider, PoolProvider) else workers_for(provider, concurrency)


async def check_served(provider: Provider, model: str) -> None:
    """A pool's servers must serve one model (`PoolProvider.check_models`); one server is taken at its word."""
    if isinstance(provider, PoolProvider):
        await provider.check_models(model)


def client_size(cfg: ProviderConfig, concurrency: int) -> int:
    """Connections the HTTP client keeps for a provider: --concurrency, or a pool's servers' together."""
    return max(concurrency, pool_capacity(cfg, concurrency))


def pool_capacity(config: ProviderConfig, concurrency: int) -> int:
    """Calls in flight at most over a pool: each server's own concurrency, else --concurrency each; more than
    MAX_CONCURRENCY is one line naming benchcard.yaml's field (a pool's workers are started at once)."""
    capacity = pool_concurrency(config.endpoints, concurrency)
    if capacity > MAX_CONCURRENCY:
        unset = sum(e.concurrency is None for e in config.endpoints)
        raise RunError(f"{CONFIG_FILE}: field 'providers.{config.name}.base_urls': {len(config.endpoints):,} servers "
                       f"take {capacity:,} calls in flight together ({unset:,} of them at --concurrency "
                       f"{concurrency:,} each, stating none), more than the {MAX_CONCURRENCY:,} a run may keep (each "
                       "holds a socket and a worker); give each server its concurrency, or a lower --concurrency")
    return capacity

