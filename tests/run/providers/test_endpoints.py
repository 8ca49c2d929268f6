"""A provider's pool of servers as benchcard.yaml declares it (base_urls, pool, batch_limits): every bad entry is one
line naming its field and what was expected."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from benchcard.errors import ProviderError
from benchcard.run.providers.base import Endpoint
from benchcard.run.providers.endpoints import parse_batch_limits, parse_endpoints, parse_pool

from ...helpers_run import ab_project, bc


@pytest.mark.parametrize(("entry", "message"), [
    ("base_urls: []", "field 'providers.fake.base_urls': expected a non-empty list"),
    ("base_urls: [ftp://x]", "field 'providers.fake.base_urls[0]': expected an http:// or https:// URL"),
    ("base_urls: [{url: 'http://a/v1', concurrency: 0}]", "field 'providers.fake.base_urls[0].concurrency': "
                                                          "expected an integer > 0"),
    ("base_urls: ['http://a/v1', 'http://a/v1/']", "http://a/v1 is listed twice"),
    ("base_url: 'http://a/v1'\n    base_urls: ['http://b/v1']", "give base_url or base_urls, not both"),
    ("base_urls: ['http://a/v1']\n    pool: {fail_after: 1.5}", "field 'providers.fake.pool.fail_after'"),
])
def test_a_bad_pool_is_one_line_naming_the_field(tmp_path: Path, key: str, entry: str, message: str) -> None:
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    {entry}\n",
                                             encoding="utf-8")
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_a_pool_is_its_urls_with_each_servers_limits() -> None:
    declared = {"base_urls": ["http://gpu1:8000/v1", {"url": "http://gpu2:8000/v1", "concurrency": 32,
                                                      "requests_per_minute": 600}]}
    assert parse_endpoints("vllm", declared) == (
        Endpoint("http://gpu1:8000/v1"), Endpoint("http://gpu2:8000/v1", 32, 600))
    assert parse_endpoints("vllm", {"base_url": "http://one/v1"}) == ()  # one server is no pool


@pytest.mark.parametrize(("declared", "message"), [
    ({"base_urls": "http://a/v1"}, "field 'providers.p.base_urls': expected a non-empty list of URLs or "
                                   "{url, concurrency, requests_per_minute}"),
    ({"base_urls": [7]}, "field 'providers.p.base_urls[0]': expected a URL or {url, concurrency, "
                         "requests_per_minute}"),
    ({"base_urls": [{"url": "http://a/v1", "weight": 2}]}, "field 'providers.p.base_urls[0]': unknown key "
                                                           "'weight'; expected url, concurrency, requests_per_minute"),
    ({"base_urls": ["http://user:pw@a/v1"]}, "field 'providers.p.base_urls[0]': a pool URL may not carry "
                                             "user:password; use one base_url for a server behind a password"),
    ({"base_urls": [{"url": "http://a/v1", "requests_per_minute": True}]},
     "field 'providers.p.base_urls[0].requests_per_minute': expected a number > 0, got True"),
    ({"base_urls": [{"url": "http://a/v1", "concurrency": 2.5}]},
     "field 'providers.p.base_urls[0].concurrency': expected an integer > 0, got 2.5"),
])
def test_a_bad_pool_entry_names_its_field(declared: dict[str, Any], message: str) -> None:
    with pytest.raises(ProviderError) as info:
        parse_endpoints("p", declared)
    assert str(info.value) == f"benchcard.yaml: {message}"


def test_the_pool_settings_default_and_are_checked() -> None:
    assert parse_pool("p", {}) == {"fail_after": 3.0, "out_for_s": 10.0}
    assert parse_pool("p", {"pool": {"out_for_s": 2.5}}) == {"fail_after": 3.0, "out_for_s": 2.5}
    for raw, message in (([3], "expected {fail_after: N, out_for_s: seconds}"),
                         ({"fail": 3}, "unknown key 'fail'; expected fail_after, out_for_s"),
                         ({"out_for_s": -1}, "field 'providers.p.pool.out_for_s': expected a number > 0, got -1")):
        with pytest.raises(ProviderError, match=re.escape(message)):
            parse_pool("p", {"pool": raw})


def test_batch_limits_may_only_be_counts() -> None:
    assert parse_batch_limits("p", {}) == {}
    assert parse_batch_limits("p", {"batch_limits": {"requests": 7, "bytes": 1200}}) == {"requests": 7, "bytes": 1200}
    with pytest.raises(ProviderError) as info:
        parse_batch_limits("p", {"batch_limits": {"requests": 7, "tokens": 9}})
    assert str(info.value) == "benchcard.yaml: field 'providers.p.batch_limits': expected {requests: N, bytes: N}"
    with pytest.raises(ProviderError, match=re.escape("field 'providers.p.batch_limits.bytes': expected an integer")):
        parse_batch_limits("p", {"batch_limits": {"bytes": 0}})
