"""The registry of providers (run/providers/__init__.py): a provider made by its type, the lazy local import,
prices from the config only, and hooks called directly, never found by name."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
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
    assert cost_of(usage, None, "test/model", table) == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    assert cost_of(usage, 0.5, "test/model", table) == 0.5  # the provider's own figure wins
    assert cost_of(usage, 0.0, "test/model", table) == 0.0  # a free model costs 0, not "unknown"
    assert cost_of(usage, None, "other/model", table) is None
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
