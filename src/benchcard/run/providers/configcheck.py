"""`benchcard.yaml` checked whole when it is read, so a bad value is one line before any run folder exists.

Without this, a header with a newline, a base URL that is not http(s), a negative rate or a mistyped field
reached the first call and failed every cell of the grid.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from benchcard._util.names import name_clash, shown
from benchcard.errors import ProviderError
from benchcard.run.providers.urls import check_url, credentials

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110 token)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
TYPES = ("openai", "anthropic", "local")
BUILTIN_NAMES = ("openai", "openrouter", "anthropic", "local")  # as `providers.BUILTIN` declares them
PROVIDER_FIELDS = ("type", "base_url", "api_key_env", "requests_per_minute", "headers", "base_urls", "pool",
                   "batch_limits")


def check_env_name(name: object, where: str) -> str:
    """An environment variable's name: letters, digits and `_`, not starting with a digit (so that a shell
    command built around `$NAME` can run nothing else)."""
    if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
        raise ProviderError(f"{where}: expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got {name!r}")
    return name


def check_config(data: Mapping[str, Any], source: str) -> None:
    """Every provider entry of a parsed `benchcard.yaml`; prices are checked by `price_table`."""
    providers = data.get("providers")
    if providers is None:
        return
    if not isinstance(providers, Mapping):
        raise ProviderError(f"{source}: field 'providers': expected a mapping of provider name to settings")
    _check_provider_names([str(n) for n in providers], source)
    for name, entry in providers.items():
        _check_entry(str(name), entry, f"{source}: field 'providers.{name}")


def _check_entry(name: str, entry: object, where: str) -> None:
    """One provider's settings, each of them, as a run would read them (`where` ends inside the field's quote)."""
    if not isinstance(entry, Mapping):
        raise ProviderError(f"{where}': expected a mapping with type, base_url, api_key_env, ...")
    unknown = sorted(str(k) for k in entry if k not in PROVIDER_FIELDS)
    if unknown:
        raise ProviderError(f"{where}.{unknown[0]}': not a provider setting; expected one of "
                            + ", ".join(PROVIDER_FIELDS))
    if entry.get("type") not in TYPES:
        raise ProviderError(f"{where}.type': expected openai, anthropic or local, got {entry.get('type')!r}")
    if entry.get("base_url") is not None:
        check_url(entry["base_url"], f"{where}.base_url'")
    if entry.get("api_key_env") is not None:
        check_env_name(entry["api_key_env"], f"{where}.api_key_env'")
    rpm = entry.get("requests_per_minute")
    if rpm is not None and (isinstance(rpm, bool) or not isinstance(rpm, int | float) or not math.isfinite(rpm)
                            or rpm <= 0):
        raise ProviderError(f"{where}.requests_per_minute': expected a number > 0, got {rpm!r} "
                            "(leave it out for no limit)")
    check_headers(entry.get("headers"), where)
    check_auth(entry.get("type"), entry.get("base_url"), entry.get("api_key_env"), f"{where}.base_url'")
    from benchcard.run.providers.endpoints import parse_batch_limits, parse_endpoints, parse_pool

    if not parse_endpoints(name, entry) and entry.get("pool") is not None:
        raise ProviderError(f"{where}.pool': pool settings need a pool of servers (base_urls)")
    parse_pool(name, entry)
    parse_batch_limits(name, entry)


def _check_provider_names(names: list[str], source: str) -> None:
    """A provider's name is read on every page and in every rig line: it reads as itself, and no two names (the
    built-in ones included) look alike (`_util/names.py`)."""
    clash = name_clash([*BUILTIN_NAMES, *names])
    if clash is None:
        return
    name, other, problem = clash
    if other:
        raise ProviderError(f"{source}: field 'providers': provider names {shown(name)} and {shown(other)} "
                            f"{problem}; give them names that look different")
    raise ProviderError(f"{source}: field 'providers': provider name {shown(name)} {problem}")


def check_headers(headers: object, where: str) -> None:
    if headers is None:
        return
    if not isinstance(headers, Mapping):
        raise ProviderError(f"{where}.headers': expected a mapping of header name to text")
    for key, value in headers.items():
        if not isinstance(key, str) or not _TOKEN.fullmatch(key):
            raise ProviderError(f"{where}.headers': expected a header name (letters, digits, -), got {key!r}")
        if not isinstance(value, str) or _CONTROL.search(value):
            raise ProviderError(f"{where}.headers.{key}': expected one line of text, got {type(value).__name__}"
                                if not isinstance(value, str) else
                                f"{where}.headers.{key}': expected one line of text without control characters")


def check_auth(type_: object, base_url: object, key_env: object, where: str) -> None:
    """Credentials in a base URL are sent as `Authorization: Basic`; an OpenAI-type key is sent in that same
    header, so the two together cannot both reach the server."""
    if isinstance(base_url, str) and credentials(base_url) is not None and type_ == "openai" and key_env:
        raise ProviderError(f"{where}: the URL's user:password and the key in ${key_env} would both be the "
                            "Authorization header; keep one (api_key_env: null in benchcard.yaml for a proxy "
                            "that takes a password)")
