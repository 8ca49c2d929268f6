"""The registry of providers (run/providers/__init__.py): a provider made by its type, the lazy local import,
prices from the config only, and hooks called directly, never found by name."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import msgspec
import pytest

from benchcard.errors import ProviderError
from benchcard.project import Price, ProjectConfig, parse_config, price_table
from benchcard.records.rows import Usage
from benchcard.run.providers import BUILTIN, cost_of, make_provider, provider_config
from benchcard.run.providers.anthropic import AnthropicProvider
from benchcard.run.providers.openai import OpenAIProvider

from ..helpers_providers import client_for
from ..helpers_run import REPO

pytestmark = pytest.mark.usefixtures("provider_keys")  # each test gets the test keys and an empty SEEN


def test_make_provider_by_type() -> None:
    client = client_for(lambda r: httpx.Response(200))
    assert isinstance(make_provider(provider_config("openrouter", ProjectConfig()), client), OpenAIProvider)
    assert isinstance(make_provider(provider_config("anthropic", ProjectConfig()), client), AnthropicProvider)
    cfg = provider_config("mine", parse_config({"providers": {"mine": {"type": "openai", "base_url": "http://h/v1"}}}),
                          base_url="http://other/v1/")
    assert make_provider(cfg, client).url == httpx.URL("http://other/v1/chat/completions")  # type: ignore[attr-defined]


def test_a_missing_local_extra_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry imports `local` lazily: whatever is missing surfaces as one ProviderError line."""
    monkeypatch.setitem(sys.modules, "benchcard.run.providers.local", None)  # as if the module could not be imported
    with pytest.raises(ProviderError, match="local"):
        make_provider(BUILTIN["local"], client_for(lambda r: httpx.Response(200)), None)


def test_prices_come_from_the_config_only(tmp_path: Path) -> None:
    table = price_table({"test/model": {"input": 3, "output": 15}})
    assert table == {"test/model": Price(3.0, 15.0)}
    usage = Usage(input=1000, output=200, reasoning=50)
    assert cost_of(usage, None, "test/model", table).cost == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    assert cost_of(usage, 0.5, "test/model", table).cost == 0.5  # the provider's own figure wins
    assert cost_of(usage, 0.0, "test/model", table).cost == 0.0  # a free model costs 0, not "unknown"
    assert cost_of(usage, None, "other/model", table).cost is None
    assert price_table(None) == {} and parse_config({}).prices == {}
    for bad in ({"m": {"input": "cheap", "output": 1}}, {"m": 3}, [1]):
        with pytest.raises(ProviderError, match="prices"):
            price_table(bad)


def test_the_runner_finds_no_provider_hook_by_name() -> None:
    """Hooks are declared on `Provider` and called directly; a `getattr(provider, …)` would hide one again."""
    offenders = [f"{p.relative_to(REPO)}:{n}" for p in (REPO / "src" / "benchcard" / "run").rglob("*.py")
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "getattr(provider" in line or "getattr(s.provider" in line or "getattr(self.provider" in line]
    assert offenders == []


CACHED = {"m": Price(2.0, 8.0, batch_discount=0.5, cached_input=0.5, cache_write=2.5, cache_write_1h=4.0)}


def test_input_read_from_the_prompt_cache_is_priced_at_the_cached_input_price() -> None:
    """1,000 input tokens of which 800 came from the cache (OpenAI's shape, and Anthropic's once its fields are
    added to input): 200 at $2, 800 at $0.5, 100 output at $8, per million."""
    usage = Usage.of(input=1000, output=100, cached=800)
    priced = cost_of(usage, None, "m", CACHED)
    assert priced.cost == pytest.approx((200 * 2.0 + 800 * 0.5 + 100 * 8.0) / 1e6) and not priced.upper_bound
    assert priced.mark is msgspec.UNSET
    batch = cost_of(usage, None, "m", CACHED, batch=True)  # the vendors' cache prices stack with the batch's
    assert batch.cost == pytest.approx((200 * 2.0 + 800 * 0.5 + 100 * 8.0) / 1e6 * 0.5)


def test_without_a_cached_input_price_the_cost_is_the_full_price_and_says_it_is_an_upper_bound() -> None:
    """A price written before cache prices existed keeps its figure: every input token at `input`, as before, and
    the cost is marked an upper bound when the reply says some were read from the cache (not when none were)."""
    old = {"m": Price(2.0, 8.0, batch_discount=0.5)}
    cached = Usage.of(input=1000, output=100, cached=800)
    full = cost_of(cached, None, "m", old)
    assert full.cost == pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6) and full.upper_bound and full.mark is True
    assert cost_of(cached, None, "m", old, batch=True).upper_bound
    assert cost_of(Usage.of(input=1000, output=100), None, "m", old).upper_bound is False
    assert cost_of(cached, 0.0012, "m", old) == (0.0012, False)  # a reported cost is the bill, not a bound


def test_cache_writes_are_priced_by_lifetime_and_unknown_without_their_price() -> None:
    """Anthropic bills a token written to its cache above the input price (5 minutes and 1 hour apart): priced at
    `cache_write` and `cache_write_1h`; without the price a write needs, the cost is unknown, never a figure below
    the bill."""
    usage = Usage.of(input=20 + 3000 + 500, output=9, cached=3000, cache_write=500, cache_write_1h=100)
    expected = (20 * 2.0 + 3000 * 0.5 + 400 * 2.5 + 100 * 4.0 + 9 * 8.0) / 1e6
    assert cost_of(usage, None, "m", CACHED).cost == pytest.approx(expected)
    no_1h = {"m": Price(2.0, 8.0, cached_input=0.5, cache_write=2.5)}
    assert cost_of(usage, None, "m", no_1h).cost is None
    five_minutes = Usage.of(input=520, output=9, cache_write=500)
    assert cost_of(five_minutes, None, "m", no_1h).cost == pytest.approx((20 * 2.0 + 500 * 2.5 + 9 * 8.0) / 1e6)
    assert cost_of(five_minutes, None, "m", {"m": Price(2.0, 8.0)}).cost is None
    silly = Usage.of(input=10, output=0, cached=50)  # a server's count past its input prices no token twice
    assert cost_of(silly, None, "m", CACHED).cost == pytest.approx(10 * 0.5 / 1e6)


def test_cache_prices_are_read_checked_and_optional() -> None:
    table = price_table({"m": {"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75,
                               "cache_write_1h": 6}})
    assert table == {"m": Price(3.0, 15.0, None, 0.3, 3.75, 6.0)}
    assert price_table({"m": {"input": 3, "output": 15}})["m"].cached_input is None
    with pytest.raises(ProviderError, match=r"field 'prices\.m\.cached_input': expected USD per million tokens "
                                            r"\(a number >= 0\), got 'cheap'"):
        price_table({"m": {"input": 3, "output": 15, "cached_input": "cheap"}})
    with pytest.raises(ProviderError, match=r"prices\.m\.cache_write_1h.*got -1"):
        price_table({"m": {"input": 3, "output": 15, "cache_write_1h": -1}})
    with pytest.raises(ProviderError, match=r"'prices\.m\.cached': unknown field; expected input, output, "
                                            r"batch_discount, cached_input, cache_write or cache_write_1h"):
        price_table({"m": {"input": 3, "output": 15, "cached": 0.3}})
