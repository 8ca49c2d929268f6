"""A provider's pool of servers, as `benchcard.yaml` declares it under `base_urls`.

    providers:
      vllm:
        type: openai
        base_urls:
          - http://gpu1:8000/v1
          - {url: http://gpu2:8000/v1, concurrency: 32, requests_per_minute: 600}
        pool: {fail_after: 3, out_for_s: 10}

Each server serves the same model (checked at the start of a run, `run/pool.py`); a bad entry is one line
naming the field and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from benchcard.errors import ProviderError
from benchcard.run.providers.base import Endpoint
from benchcard.run.providers.urls import check_url, credentials

CONFIG_FILE = "benchcard.yaml"
POOL_KEYS: dict[str, float | int] = {"fail_after": 3, "out_for_s": 10.0}


def _where(name: str, field: str) -> str:
    return f"{CONFIG_FILE}: field 'providers.{name}.{field}'"


def _url(value: Any, where: str) -> str:
    url = check_url(value, where)
    if credentials(url) is not None:  # each output records its server's URL: a password there would be stored
        raise ProviderError(f"{where}: a pool URL may not carry user:password; use one base_url for a server "
                            "behind a password")
    return url


def _positive(value: Any, where: str, *, integer: bool) -> Any:
    if value is None:
        return None
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value <= 0:
        kind = "an integer" if integer else "a number"
        raise ProviderError(f"{where}: expected {kind} > 0, got {value!r}")
    return value


def parse_endpoints(name: str, declared: Mapping[str, Any]) -> tuple[Endpoint, ...]:
    """The pool of `providers.<name>.base_urls`, or () when the provider names one `base_url`."""
    raw = declared.get("base_urls")
    if raw is None:
        return ()
    if declared.get("base_url") is not None:
        raise ProviderError(f"{_where(name, 'base_urls')}: give base_url or base_urls, not both")
    if not isinstance(raw, list) or not raw:
        raise ProviderError(f"{_where(name, 'base_urls')}: expected a non-empty list of URLs or "
                            "{url, concurrency, requests_per_minute}")
    endpoints: list[Endpoint] = []
    for i, entry in enumerate(raw):
        where, at = _where(name, f"base_urls[{i}]"), f"base_urls[{i}]"
        if isinstance(entry, str):
            endpoints.append(Endpoint(_url(entry, where)))
            continue
        if not isinstance(entry, Mapping):
            raise ProviderError(f"{where}: expected a URL or {{url, concurrency, requests_per_minute}}")
        unknown = sorted(set(entry) - {"url", "concurrency", "requests_per_minute"})
        if unknown:
            raise ProviderError(f"{where}: unknown key {unknown[0]!r}; expected url, concurrency, "
                                "requests_per_minute")
        endpoints.append(Endpoint(_url(entry.get("url"), _where(name, f"{at}.url")),
                                  _positive(entry.get("concurrency"), _where(name, f"{at}.concurrency"), integer=True),
                                  _positive(entry.get("requests_per_minute"), _where(name, f"{at}.requests_per_minute"),
                                            integer=False)))
    urls = [e.url for e in endpoints]
    for url in urls:
        if urls.count(url) > 1:
            raise ProviderError(f"{_where(name, 'base_urls')}: {url} is listed twice")
    return tuple(endpoints)


def parse_pool(name: str, declared: Mapping[str, Any]) -> dict[str, float]:
    """`pool: {fail_after, out_for_s}`: failures in a row that take a server out, and for how long at first."""
    raw = declared.get("pool") or {}
    if not isinstance(raw, Mapping):
        raise ProviderError(f"{_where(name, 'pool')}: expected {{fail_after: N, out_for_s: seconds}}")
    unknown = sorted(set(raw) - set(POOL_KEYS))
    if unknown:
        raise ProviderError(f"{_where(name, 'pool')}: unknown key {unknown[0]!r}; expected fail_after, out_for_s")
    return {key: float(_positive(raw.get(key, default), _where(name, f"pool.{key}"), integer=key == "fail_after"))
            for key, default in POOL_KEYS.items()}


#: The smallest `batch_limits.bytes` taken: a batch file must hold its wrapper and at least one whole request.
MIN_BATCH_BYTES = 1024


def parse_batch_limits(name: str, declared: Mapping[str, Any]) -> dict[str, int]:
    """`batch_limits: {requests: N, bytes: N}`: smaller batches than the vendor allows (an organisation's quota)."""
    raw = declared.get("batch_limits") or {}
    if not isinstance(raw, Mapping) or set(raw) - {"requests", "bytes"}:
        raise ProviderError(f"{_where(name, 'batch_limits')}: expected {{requests: N, bytes: N}}")
    limits = {k: int(_positive(v, _where(name, f"batch_limits.{k}"), integer=True)) for k, v in raw.items()}
    if limits.get("bytes", MIN_BATCH_BYTES) < MIN_BATCH_BYTES:
        raise ProviderError(f"{_where(name, 'batch_limits.bytes')}: expected an integer >= {MIN_BATCH_BYTES} (a "
                            f"batch file must hold at least one whole request), got {limits['bytes']}")
    return limits
