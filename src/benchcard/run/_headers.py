"""A provider's own `headers` (benchcard.yaml): which of them are secrets, and what a run records of them.

A header a user sets (`anthropic-beta`, `OpenAI-Organization`, a proxy's routing header) can change what the model
does, so a run's manifest records the ones it sent (`Manifest.headers`), and a resume or a replication compares
them with the ones it would send now. A secret is never written: a header whose name says it is one, whose value
holds the key or a URL's password, or whose value looks like a credential is recorded by its name alone (`None`
in place of its value), as `benchcard curl` prints it as a variable to set (docs/security.md). A digest is not
kept in its place: a short password would be found again from it by trying words; so a secret's new value is not
seen on resume, and the resume says which secrets it could not compare (`uncompared_secrets`). A judge's provider's
headers are recorded and compared the same way, in the manifest's `judge` block.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from benchcard._util.urls import secrets_of
from benchcard.run.providers import vendor_headers
from benchcard.run.providers.base import ProviderConfig, call_headers

#: A header name that says its value is a secret.
_SECRET_NAME = re.compile(r"auth|key|token|secret|passw|cookie|session|signature|credential", re.IGNORECASE)
#: A value that carries a credential whatever its header's name: an HTTP authentication scheme's word first.
_AUTH_SCHEME = re.compile(r"\s*(bearer|basic|digest|token|apikey|key)\s+\S", re.IGNORECASE)
#: A run of a token's characters in a value; one of 20 or more, of letters and digits mixed, reads as a key.
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+=-]{20,}")
#: What stands for the key and a URL's user and password while the headers a call sends are built.
_KEY, _BASIC = "\0key\0", "\0basic\0"

#: A provider's headers as a run records them: name as written in benchcard.yaml → its value, or None for a secret.
Recorded = Mapping[str, str | None]


def secret_header(name: str, value: str, secrets: tuple[str, ...]) -> bool:
    """Whether a header of benchcard.yaml is a secret, never printed or written: by its name, by holding one of
    `secrets` (the key, a URL's password), or by its value's look, an authentication scheme's (`Bearer …`) or a
    key's (a page is built without the key, and a token under a name such as `X-Upstream` was printed on it)."""
    if _SECRET_NAME.search(name) or any(s and s in value for s in secrets) or _AUTH_SCHEME.match(value):
        return True
    return any(sum(c.isdigit() for c in run) >= 4 and sum(c.isalpha() for c in run) >= 4
               for run in _TOKEN_RUN.findall(value))


def config_secrets(cfg: ProviderConfig) -> tuple[str, ...]:
    """The secrets a provider's header may hold: a URL's password (and a user that is a token), and the key."""
    key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
    return (*secrets_of(cfg.credentials), *((key,) if key else ()))


def recorded_headers(cfg: ProviderConfig) -> dict[str, str | None] | None:
    """The headers of benchcard.yaml a call to `cfg` sends, as a manifest records them (`Recorded`): each secret by
    its name alone; one benchcard sets itself over it (`Content-Type`, the key's) is not sent and not recorded.
    None for the local model, which sends none."""
    if cfg.type == "local":
        return None
    sent = call_headers(cfg, vendor_headers(cfg, _KEY if cfg.api_key_env else None),
                        _BASIC if cfg.credentials else None)
    secrets = config_secrets(cfg)
    return {name: None if secret_header(name, value, secrets) else value
            for name, value in cfg.headers.items() if sent.get(name) == value}


def headers_text(recorded: Recorded | None) -> str:
    """The headers as a line says them: `anthropic-beta: tools-1, X-Api-Token (a secret, not recorded)`, or none."""
    if recorded is None:
        return "not recorded (a run made before benchcard recorded them)"
    if not recorded:
        return "none"
    return ", ".join(f"{n}: {v}" if v is not None else f"{n} (a secret, not recorded)" for n, v in recorded.items())


def header_changes(was: Recorded, now: Recorded) -> list[str]:
    """Each header that differs between a run's record (`was`) and what would be sent now (`now`), in the order of
    their names, compared without case as HTTP does, said in words (a secret's value never, neither side's); none
    when the record sees no difference (a secret's value is not recorded, so its change is not seen)."""
    before = {n.lower(): (n, v) for n, v in was.items()}
    after = {n.lower(): (n, v) for n, v in now.items()}
    return [said for low in sorted(before.keys() | after.keys())
            if (said := _change(before.get(low), after.get(low))) is not None]


def uncompared_secrets(was: Recorded, now: Recorded) -> list[str]:
    """The secrets recorded and set again now, each as benchcard.yaml names it now: neither value is recorded, so a
    change of value is not seen (a secret that appears or goes is a change `header_changes` names)."""
    secret_now = {n.lower(): n for n, v in now.items() if v is None}
    return [secret_now[n.lower()] for n, v in was.items() if v is None and n.lower() in secret_now]


def _change(was: tuple[str, str | None] | None, now: tuple[str, str | None] | None) -> str | None:
    if now is None:
        assert was is not None
        return f"header {was[0]} was sent{'' if was[1] is None else f' as {was[1]!r}'} and is no longer set"
    if was is None:
        return f"header {now[0]} is now set{'' if now[1] is None else f' to {now[1]!r}'} and was not sent"
    if was[1] == now[1]:
        return None
    return (f"header {was[0]} was sent as {'a secret' if was[1] is None else repr(was[1])} and is now "
            f"{'a secret (not shown)' if now[1] is None else repr(now[1])}")
