"""The conventions users bring from other tools, each honoured or refused out loud, never silently.

- `--model openai/gpt-4o-mini`, as inspect_ai writes a model: provider, then model. Read so when `--provider` is
  not given, the prefix names a provider with an API (built in, or declared in `benchcard.yaml`), and the card's
  provider names its models without one (`openai`, `anthropic`, `local`; OpenRouter's and a declared server's
  model ids may themselves hold a `/`). `--provider P --model P/m` drops the repeated prefix.
- The SDKs' base-URL variables (`OPENAI_BASE_URL`, `OPENAI_API_BASE`, `ANTHROPIC_BASE_URL`,
  `OPENROUTER_BASE_URL`, `OPENROUTER_API_BASE`): honoured for the built-in provider they belong to, as
  `--base-url` is (another endpoint than the rig's, so the run is scratch), and said in one line; `--base-url`,
  a provider declared in `benchcard.yaml` and a resumed run's recorded endpoint come first, and that is said too.
- A `.env` file at the project root: API keys only (`*_API_KEY`, and any `api_key_env` named in
  `benchcard.yaml`), put into this process's environment when not set there already (the environment wins);
  never written anywhere. Every other variable in it is left alone, named in a note.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from benchcard._util.safeio import given, read_regular_text
from benchcard._util.urls import shown_url
from benchcard.card.model import Card
from benchcard.errors import ProviderError
from benchcard.project import ProjectConfig, keylike_name
from benchcard.run.options import RunOptions
from benchcard.run.providers import BUILTIN, provider_config
from benchcard.run.providers.base import ProviderConfig

SDK_BASE_URLS: Mapping[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL",),
    "openrouter": ("OPENROUTER_BASE_URL", "OPENROUTER_API_BASE"),
}
UNQUALIFIED = ("openai", "anthropic", "local")  # providers whose model names never start with a provider
DOTENV = ".env"
_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")


@dataclass(frozen=True)
class NewTarget:
    """One new run's provider and model, and where its endpoint came from when it is not the provider's own."""

    cfg: ProviderConfig
    model: str | None
    endpoint_from: str | None = None  # "--base-url" or the SDK variable that named the endpoint


def split_model(model: str, given: str | None, rig_provider: str, config: ProjectConfig) -> tuple[str, str]:
    """(provider, model) for one `--model` (see the module docstring)."""
    prefix, slash, rest = model.partition("/")
    if not slash or not rest:
        return given or rig_provider, model
    declared = config.providers
    if given is not None:
        if prefix == given and ("/" in rest or given != "openrouter"):  # openrouter/auto is OpenRouter's own model
            return given, rest
        return given, model
    apis = {n for n, c in BUILTIN.items() if c.type != "local"}
    apis |= {n for n, d in declared.items() if d.type != "local"}
    unqualified = rig_provider in UNQUALIFIED and rig_provider not in declared
    if unqualified and prefix in apis and not model.endswith(".gguf"):  # a local model's file keeps its path
        return prefix, rest
    return rig_provider, model


def new_targets(card: Card, o: RunOptions, config: ProjectConfig) -> tuple[list[NewTarget], list[str]]:
    """The new runs `benchcard run` makes (one per model), and the lines that say what was read how."""
    notes: list[str] = []
    wanted: list[tuple[str, str | None]] = []
    if not (o.provider or card.rig.provider):  # a card sealed with provider: "" before it was refused (2026-12-07)
        raise ProviderError(f"{card.id} v{card.version}: the card's rig names no provider (rig.provider is ''); "
                            "name one with --provider")
    for model in o.models or (None,):
        if model is None:
            wanted.append((o.provider or card.rig.provider, None))
            continue
        provider, name = split_model(model, o.provider, card.rig.provider, config)
        if (provider, name) != (o.provider or card.rig.provider, model):
            notes.append(f"--model {model}: provider {provider}, model {name} (provider/model, as inspect_ai "
                         "writes it)")
        wanted.append((provider, name))
    targets = []
    for provider, model in wanted:
        env = _sdk_url(provider, config, o.base_url, notes)
        cfg = provider_config(provider, config, o.base_url or (env[1] if env else None),
                              "--base-url" if o.base_url or not env else f"${env[0]}")
        if cfg.type != "local" and not cfg.base_url:
            raise ProviderError(f"provider '{cfg.name}' has no base_url; set one with --base-url")
        if model is None and cfg.type != "local":
            model = card.rig.model
            if not model:  # as for the provider: never a model named ''
                raise ProviderError(f"{card.id} v{card.version}: the card's rig names no model (rig.model is ''); "
                                    "name one with --model")
        targets.append(NewTarget(cfg, model, "--base-url" if o.base_url else env[0] if env else None))
    return targets, list(dict.fromkeys(notes))


def _sdk_url(provider: str, config: ProjectConfig, base_url: str | None,
             notes: list[str]) -> tuple[str, str] | None:
    """(variable, URL) when an SDK variable names this provider's endpoint and is honoured; notes say why not."""
    found = sdk_variable(provider)
    if found is None:
        return None
    name, url = found
    builtin = BUILTIN[provider].base_url
    if base_url:
        notes.append(f"{name} is set but --base-url {shown_url(base_url)} is used")
        return None
    if provider in config.providers:
        notes.append(f"{name} is ignored: provider '{provider}' is declared in benchcard.yaml with its own endpoint")
        return None
    if url.rstrip("/") == builtin:
        return None
    notes.append(f"{name} is set: calls go to {shown_url(url)}, not {provider}'s {builtin}; the run is "
                 f"scratch (not the rig's endpoint). Unset {name} to call the rig's endpoint")
    return name, url


def sdk_variable(provider: str) -> tuple[str, str] | None:
    """The first SDK base-URL variable of a built-in provider that is set (non-empty), with its value."""
    for name in SDK_BASE_URLS.get(provider, ()):
        value = os.environ.get(name, "").strip()
        if value:
            return name, value
    return None


def resume_note(provider: str, recorded: str | None) -> str | None:
    """What a resumed run says of an SDK variable that would point elsewhere: the run keeps its endpoint."""
    found = sdk_variable(provider)
    if found is None or recorded is None or found[1].rstrip("/") == recorded:
        return None
    return f"{found[0]} is ignored: a resumed run keeps the endpoint it was started with, {recorded}"


def judge_note(provider: str) -> str | None:
    """The judge is called at its sealed provider's endpoint; an SDK variable does not move it."""
    found = sdk_variable(provider)
    if found is None or provider not in BUILTIN:
        return None
    return (f"{found[0]} is not used for the judge: it is called at {provider}'s {BUILTIN[provider].base_url} as "
            "sealed (declare a provider in benchcard.yaml to call it elsewhere)")


def load_dotenv_keys(root: Path, config: ProjectConfig) -> list[str]:
    """API keys from the project's `.env` into this process's environment (see the module docstring); the
    notes name what was read and what was left alone, never a value."""
    path = root / DOTENV
    if not given(path, DOTENV, ProviderError) or path.is_dir():  # a folder: a virtualenv (`venv .env`), no keys
        return []
    # Notepad's "UTF-8 with BOM": its mark made line 1 (the key) not read, though it looks as written
    text = read_regular_text(path, DOTENV, ProviderError, max_bytes=1 << 20).removeprefix("\ufeff")
    if "\0" in text:  # UTF-16 with no byte-order mark is valid UTF-8 with a NUL after every ASCII letter
        wide = " (it reads as UTF-16)" if text.count("\0") * 3 >= len(text) else ""
        raise ProviderError(f"{DOTENV}:{text.count(chr(10), 0, text.index(chr(0))) + 1}: a NUL character (U+0000), "
                            f"which no text file holds{wide}; expected UTF-8 text: save it as UTF-8")
    named = {d.api_key_env for d in config.providers.values() if d.api_key_env}
    read, kept, ignored, unread = [], [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            unread.append(str(n))
            continue
        name, value = match.group(1), _value(match.group(2))
        if not (name.endswith("_API_KEY") or name in named):
            ignored.append(name if not keylike_name(name) else f"line {n} (its name reads as a key: not shown)")
        elif os.environ.get(name):
            kept.append(name)
        elif value:
            os.environ[name] = value
            read.append(name)
    notes = [f"{DOTENV}: read {', '.join(read)}"] if read else []
    notes += [f"{DOTENV}: {', '.join(kept)} already set in the environment, which wins"] if kept else []
    notes += [f"{DOTENV}: ignored {', '.join(ignored)} (only API keys are read from it)"] if ignored else []
    notes += [f"{DOTENV}: line {', '.join(unread)} not read (expected NAME=value)"] if unread else []
    return notes


def _value(raw: str) -> str:
    """A value as shells and python-dotenv read the simple cases: quotes removed, a ` #` comment cut."""
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw.split(" #", 1)[0].strip()
