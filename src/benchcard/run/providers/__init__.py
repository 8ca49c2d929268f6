"""Named providers: the built-in endpoints plus any the project's `benchcard.yaml` declares.

Only the *name* of the environment variable holding a key is ever stored; its value is read at call time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from msgspec import UNSET, UnsetType

from benchcard._util.urls import check_url
from benchcard._util.version import pip_install
from benchcard.errors import ProviderError
from benchcard.project import CONFIG_FILE, Price, ProjectConfig, check_auth
from benchcard.records.rows import Usage
from benchcard.run.providers.base import HttpProvider, Provider, ProviderConfig, require_key

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BUILTIN",
    "CONFIG_FILE",
    "Price",
    "Priced",
    "anthropic",
    "base",
    "build_body",
    "cost_of",
    "endpoint",
    "local",
    "localmodel",
    "make_provider",
    "openai",
    "price_gap",
    "provider_config",
    "require_key",
    "stored_url",
    "vendor_headers",
]

BUILTIN: dict[str, ProviderConfig] = {
    "openai": ProviderConfig("openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "openrouter": ProviderConfig("openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "anthropic": ProviderConfig("anthropic", "anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
    "local": ProviderConfig("local", "local"),
}


def provider_config(name: str, config: ProjectConfig, base_url: str | None = None,
                    url_from: str = "--base-url") -> ProviderConfig:
    """Resolve a provider name; `--base-url` (or, `url_from` says, an SDK's variable) turns any openai-type name
    toward another server."""
    declared = config.providers.get(name)
    if declared is not None:
        cfg = ProviderConfig(name=name, type=declared.type, base_url=declared.base_url,
                             api_key_env=declared.api_key_env, requests_per_minute=declared.requests_per_minute,
                             headers=dict(declared.headers), endpoints=declared.endpoints, pool=dict(declared.pool),
                             batch_limits=dict(declared.batch_limits))
    elif name in BUILTIN:
        cfg = BUILTIN[name]
    else:
        known = sorted(set(BUILTIN) | set(config.providers))
        names = ", ".join(known)
        raise ProviderError(f"unknown provider '{name}'; expected one of {names} (or declare it in {CONFIG_FILE})")
    if base_url:  # one server named on the command line replaces the configured one (or pool)
        given = check_url(base_url, url_from, cfg.api_key_env)
        check_auth(cfg.type, given, cfg.api_key_env, url_from)
        cfg = ProviderConfig(cfg.name, cfg.type, given, cfg.api_key_env,
                             cfg.requests_per_minute, cfg.headers, batch_limits=cfg.batch_limits)
    return cfg


def build_body(cfg: ProviderConfig, model: str, messages: list[dict[str, str]], params: Mapping[str, Any],
               effort: str | None) -> dict[str, Any]:
    """The exact request body this provider type sends for one call (before a local plan writes its seed in)."""
    if cfg.type == "anthropic":
        from benchcard.run.providers.anthropic import anthropic_body

        return anthropic_body(model, messages, params, effort)
    from benchcard.run.providers.openai import is_openrouter, openai_body

    if cfg.type == "local":  # as LocalProvider.build_body: effort has no local meaning and is not sent
        effort = None
    return openai_body(model, messages, params, effort, openrouter=is_openrouter(cfg))


def endpoint(cfg: ProviderConfig) -> str:
    """The URL a call goes to; the local provider's equivalent is llama.cpp's own server on 127.0.0.1."""
    if cfg.type == "local":
        return "http://127.0.0.1:8000/v1/chat/completions"
    return f"{stored_url(cfg)}/{_http_class(cfg).path}"


def vendor_headers(cfg: ProviderConfig, key: str | None) -> dict[str, str]:
    """The vendor's own headers of a call with `key` (`HttpProvider.vendor_headers`); the local model's: none
    (llama.cpp's server takes the body alone)."""
    return {} if cfg.type == "local" else _http_class(cfg).vendor_headers(key)


def _http_class(cfg: ProviderConfig) -> type[HttpProvider]:
    if cfg.type == "anthropic":
        from benchcard.run.providers.anthropic import AnthropicProvider

        return AnthropicProvider
    from benchcard.run.providers.openai import OpenAIProvider

    return OpenAIProvider


def stored_url(cfg: ProviderConfig) -> str | None:
    """The base URL as it may be written down or shown: without any `user:password@` (the config holds none)."""
    return cfg.base_url


def make_provider(cfg: ProviderConfig, client: httpx.AsyncClient, model: str | None = None) -> Provider:
    """The provider object for a config. `local` is imported only when asked for, so a missing extra is a
    one-line ProviderError rather than an import failure of benchcard itself."""
    if cfg.type == "openai":
        from benchcard.run.providers.openai import OpenAIProvider

        return OpenAIProvider(cfg, client)
    if cfg.type == "anthropic":
        from benchcard.run.providers.anthropic import AnthropicProvider

        return AnthropicProvider(cfg, client)
    try:
        from benchcard.run.providers.local import LocalProvider  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        missing = getattr(exc, "name", None) or "a module"
        if missing == f"{__name__}.local":
            raise ProviderError("the local provider is not part of this installation of benchcard") from None
        raise ProviderError(
            f"the local provider needs the `local` extra ({missing} is not installed): {pip_install('local')}"
        ) from None
    provider: Provider = LocalProvider(cfg, model)
    return provider


# ------------------------------------------------------------------------------------------------------ prices


class Priced(NamedTuple):
    """A call's cost in USD (None: unknown) and whether it is an upper bound: input tokens the vendor read from
    its prompt cache priced at the full input price, the model's price giving no `cached_input`."""

    cost: float | None
    upper_bound: bool = False

    @property
    def mark(self) -> bool | UnsetType:
        """`OutputRow.cost_upper_bound`: true, or left out of the row."""
        return True if self.upper_bound else UNSET


def cost_of(usage: Usage, reported: float | None, model: str, prices: Mapping[str, Price],
            batch: bool = False, counted: bool = True) -> Priced:
    """The provider's reported cost when there is one, else the configured price, else None (unknown).

    Output tokens are billed as reported, reasoning included (both APIs count reasoning inside them). Input tokens
    read from the prompt cache are priced at the model's `cached_input`, or without one at `input` (the cost is
    then an upper bound, and says so); those written to Anthropic's cache at `cache_write` (5 minutes) and
    `cache_write_1h`, or without the one they need the cost is unknown: those cost more than `input`, and no
    figure below the bill is given for one. A call made through a batch API is priced with the model's
    `batch_discount`, taken off the whole (the vendors' cache prices stack with it); without one its cost is
    unknown rather than the interactive price. Nor is a reply that did not say its tokens (`counted` false)
    priced: its cost is unknown, not $0.
    """
    if reported is not None:
        return Priced(reported)
    price = prices.get(model)
    if price is None or not counted or (batch and price.batch_discount is None):
        return Priced(None)
    full = tokens_cost(usage, price)
    if full is None:
        return Priced(None)
    upper = usage.cached_tokens > 0 and price.cached_input is None
    return Priced(full * (1 - price.batch_discount) if batch and price.batch_discount is not None else full, upper)


def tokens_cost(usage: Usage, price: Price) -> float | None:
    """The interactive price of a call's tokens, each kind at its own price (`cost_of`); None when it wrote to
    the prompt cache and the price for that write is not given. The cache's counts are parts of `input`, held to
    it (a server's count of more cached tokens than input ones prices no token twice)."""
    cached = min(usage.cached_tokens, usage.input)
    written = min(usage.written_tokens, usage.input - cached)
    written_1h = min(usage.written_1h_tokens, written)
    written_5m = written - written_1h
    if (written_5m and price.cache_write is None) or (written_1h and price.cache_write_1h is None):
        return None
    read = price.input if price.cached_input is None else price.cached_input
    total = ((usage.input - cached - written) * price.input + cached * read + usage.output * price.output
             + written_5m * (price.cache_write or 0.0) + written_1h * (price.cache_write_1h or 0.0))
    return total / 1_000_000


def price_gap(model: str, prices: Mapping[str, Price], batch: bool = False) -> str:
    """Why `cost_of` can price no cell of `model` from benchcard.yaml, said where a run reports its cost as
    unknown; "" when a price applies. A price is named by the model id as sent, so `openai/gpt-5-mini` prices
    OpenRouter's model of that id and never `--provider openai --model gpt-5-mini`: a run only said "cost
    unknown", which reads as the vendor's silence, not a key that names no model it called."""
    price = prices.get(model)
    if price is None:
        near = sorted(k for k in prices if k.rsplit("/", 1)[-1] == model.rsplit("/", 1)[-1])
        other = f" (it prices '{near[0]}', not the id sent)" if near else ""
        return (f"no price for '{model}' in {CONFIG_FILE}{other}: a price is named by the model id as sent, "
                f"prices: {{{model}: {{input: USD, output: USD}}}} per million tokens")
    if batch and price.batch_discount is None:
        return (f"{CONFIG_FILE}'s price of '{model}' has no batch_discount, so a batch cell is not priced (its "
                "cost is unknown, never the interactive price): add batch_discount, 0.5 for half price")
    return ""
