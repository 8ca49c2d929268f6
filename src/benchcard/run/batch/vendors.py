"""The two vendors' batch services over the run's HTTP client: OpenAI's Files + Batches API and Anthropic's
Message Batches API. Each knows its limits, its upload line, how to submit, find, poll and download a batch,
and nothing about the run (the driver, `driver.py`, owns the order of steps and the journal).

Limits (per batch; sources in docs/scale.md): OpenAI, 50,000 requests and a 200 MB input file; Anthropic,
100,000 requests or 256 MB, whichever comes first. A provider's `batch_limits` in benchcard.yaml may only lower
them (an organisation's own quota).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchcard._util.files import AtomicFile
from benchcard.errors import ProviderError, RunError
from benchcard.run.calls import backoff_delay
from benchcard.run.providers.base import HttpProvider, RetryableError, parse_retry_after, read_key, redact
from benchcard.run.providers.urls import basic_auth, strip_credentials

OPENAI_ENDPOINT = "/v1/chat/completions"
OPENAI_TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})


@dataclass(frozen=True)
class Limits:
    requests: int
    bytes: int
    overhead: int = 0  # bytes per request besides its line (Anthropic: the comma of a JSON list)


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

    def __init__(self, provider: HttpProvider, attempts: int, backoff: tuple[float, float]):
        self.provider = provider
        self.config = provider.config
        self.client = provider.client
        self.base = strip_credentials(str(provider.config.base_url))  # a URL's password goes in a header only
        self.attempts = attempts
        self.backoff = backoff
        self.rng = random.Random()

    def line(self, cell: str, body: bytes) -> bytes:
        """One request of the upload, around the sealed body's own bytes."""
        raise NotImplementedError

    async def submit(self, path: Path, cells: int, file_id: str | None) -> str:
        raise NotImplementedError

    async def find(self, created_after: str, cells: int, file_id: str | None, taken: set[str]) -> str | None:
        raise NotImplementedError

    async def poll(self, batch: str) -> Poll:
        raise NotImplementedError

    async def download(self, source: str, dest: Path) -> None:
        raise NotImplementedError

    # -------------------------------------------------------------------------------------------- HTTP

    def _headers(self) -> dict[str, str]:
        key = read_key(self.config)
        basic = {"Authorization": auth} if (auth := basic_auth(self.config.base_url)) else {}
        return {**self.config.headers, **basic, **self.provider.vendor_headers(key)}

    def _scrub(self, text: str) -> str:
        env = self.config.api_key_env
        return redact(text, os.environ.get(env) if env else None)

    async def request(self, method: str, url: str, *, stream_to: Path | None = None, **kwargs: Any) -> Any:
        """One control call with retries on 429/5xx/timeouts; the parsed JSON answer, or the body saved to
        `stream_to` (written to a `.part` name and renamed only when whole)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._once(method, url, stream_to, **kwargs)
            except RetryableError as exc:
                if attempt >= self.attempts:
                    raise ProviderError(self._scrub(f"{method} {url}: {exc} (gave up after {attempt} attempts); "
                                                    "nothing is lost, resume the run later")) from None
                await asyncio.sleep(backoff_delay(attempt, exc.retry_after, *self.backoff, self.rng))

    async def _once(self, method: str, url: str, stream_to: Path | None, **kwargs: Any) -> Any:
        headers = {**self._headers(), **kwargs.pop("headers", {})}
        try:
            async with self.client.stream(method, url, headers=headers, **kwargs) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._raise(method, url, response)
                if stream_to is None:
                    return json.loads(await response.aread())
                with AtomicFile(stream_to, suffix=".part") as fh:
                    async for block in response.aiter_bytes():
                        fh.write(block)
                return None
        except (httpx.HTTPError, OSError) as exc:
            if isinstance(exc, OSError) and stream_to is not None and not isinstance(exc, ConnectionError):
                raise RunError(f"{stream_to}: {exc}") from None
            raise RetryableError(self._scrub(f"connection error: {type(exc).__name__}: {exc}")) from None
        except ValueError:
            raise ProviderError(f"{method} {url}: the answer is not JSON") from None
        except Exception as exc:
            if type(exc).__module__.startswith("aiohttp"):
                raise RetryableError(self._scrub(f"connection error: {type(exc).__name__}: {exc}")) from None
            raise

    def _raise(self, method: str, url: str, response: httpx.Response) -> None:
        status = response.status_code
        try:
            err = json.loads(response.content).get("error")
            detail = err.get("message") if isinstance(err, Mapping) else err
        except (ValueError, AttributeError):
            detail = None
        text = self._scrub(f"HTTP {status}" + (f": {' '.join(str(detail).split())[:200]}" if detail else ""))
        if status in (408, 409, 429) or status >= 500:  # `request` names the call when it gives up
            raise RetryableError(text, retry_after=parse_retry_after(response.headers), status=status)
        raise ProviderError(f"{method} {url}: {text}; nothing is lost, fix the cause and resume the run")


class OpenAIBatches(Vendor):
    """`POST /files` (purpose batch), `POST /batches`, `GET /batches/{id}`, `GET /files/{id}/content`."""

    name = "openai"
    limits = Limits(50_000, 200_000_000)

    def line(self, cell: str, body: bytes) -> bytes:
        return b'{"custom_id":"%s","method":"POST","url":"%s","body":%s}\n' % (cell.encode(), OPENAI_ENDPOINT.encode(),
                                                                              body)

    async def upload(self, path: Path, run: str) -> str:
        data = path.read_bytes()
        answer = await self.request("POST", f"{self.base}/files", data={"purpose": "batch"},
                                    files={"file": (f"benchcard-{run}-{path.name}", data, "application/jsonl")})
        return str(answer["id"])

    async def submit(self, path: Path, cells: int, file_id: str | None) -> str:
        assert file_id is not None
        answer = await self.request("POST", f"{self.base}/batches", json={
            "input_file_id": file_id, "endpoint": OPENAI_ENDPOINT, "completion_window": "24h",
            "metadata": {"benchcard": path.name}})
        return str(answer["id"])

    async def find(self, created_after: str, cells: int, file_id: str | None, taken: set[str]) -> str | None:
        """The batch made from our uploaded file, if the vendor has one (its id was never recorded)."""
        answer = await self.request("GET", f"{self.base}/batches", params={"limit": 100})
        for b in answer.get("data") or []:
            if b.get("input_file_id") == file_id and b.get("id") not in taken:
                return str(b["id"])
        return None

    async def poll(self, batch: str) -> Poll:
        b = await self.request("GET", f"{self.base}/batches/{batch}")
        counts = b.get("request_counts") or {}
        status = str(b.get("status"))
        ended = status in OPENAI_TERMINAL
        error = None
        if status == "failed":
            errors = (b.get("errors") or {}).get("data") or []
            error = "; ".join(str(e.get("message")) for e in errors[:3]) or "the vendor gave no reason"
        sources = tuple(str(b[k]) for k in ("output_file_id", "error_file_id") if b.get(k))
        return Poll(status, int(counts.get("completed") or 0) + int(counts.get("failed") or 0),
                    int(counts.get("failed") or 0), int(counts.get("total") or 0), ended, error, sources)

    async def download(self, source: str, dest: Path) -> None:
        await self.request("GET", f"{self.base}/files/{source}/content", stream_to=dest)


class AnthropicBatches(Vendor):
    """`POST /messages/batches`, `GET /messages/batches/{id}`, its `results_url`."""

    name = "anthropic"
    limits = Limits(100_000, 256_000_000, overhead=1)

    def line(self, cell: str, body: bytes) -> bytes:
        return b'{"custom_id":"%s","params":%s}\n' % (cell.encode(), body)

    async def submit(self, path: Path, cells: int, file_id: str | None) -> str:
        lines = path.read_bytes().splitlines()
        content = b'{"requests":[' + b",".join(lines) + b"]}"
        answer = await self.request("POST", f"{self.base}/messages/batches", content=content,
                                    headers={"Content-Type": "application/json"})
        return str(answer["id"])

    async def find(self, created_after: str, cells: int, file_id: str | None, taken: set[str]) -> str | None:
        """A batch of exactly this many requests created since we asked for one, if there is exactly one."""
        since = datetime.fromisoformat(created_after) - timedelta(minutes=2)
        answer = await self.request("GET", f"{self.base}/messages/batches", params={"limit": 100})
        found = []
        for b in answer.get("data") or []:
            counts = b.get("request_counts") or {}
            created = datetime.fromisoformat(str(b.get("created_at")))
            if created >= since and sum(int(v or 0) for v in counts.values()) == cells and b.get("id") not in taken:
                found.append(str(b["id"]))
        if len(found) > 1:
            raise RunError(f"cannot tell which of the batches {', '.join(found)} this run created (its id was "
                           "never recorded); cancel the extra ones in the Anthropic console, then resume")
        return found[0] if found else None

    async def poll(self, batch: str) -> Poll:
        b = await self.request("GET", f"{self.base}/messages/batches/{batch}")
        counts = {k: int(v or 0) for k, v in (b.get("request_counts") or {}).items()}
        ended = b.get("processing_status") == "ended"
        done = sum(v for k, v in counts.items() if k != "processing")
        failed = counts.get("errored", 0) + counts.get("canceled", 0) + counts.get("expired", 0)
        status = "ended" if ended else str(b.get("processing_status"))
        sources = (str(b["results_url"]),) if ended and b.get("results_url") else ()
        for url in sources:  # the key goes with the download: only ever to the API's own host
            if _origin(url) != _origin(self.base):
                raise ProviderError(f"batch {batch}: its results_url {url} is not on {self.base}; refusing to send "
                                    "the key there")
        return Poll(status, done, failed, sum(counts.values()), ended, None, sources)

    async def download(self, source: str, dest: Path) -> None:
        await self.request("GET", source, stream_to=dest)


def _origin(url: str) -> tuple[str, str, int | None]:
    u = httpx.URL(url)
    return u.scheme, u.host, u.port


def vendor_for(provider: HttpProvider, attempts: int, backoff: tuple[float, float]) -> Vendor:
    if provider.config.type == "anthropic":
        return AnthropicBatches(provider, attempts, backoff)
    return OpenAIBatches(provider, attempts, backoff)
