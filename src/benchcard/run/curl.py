"""The "Run it yourself" command: the exact request a card sends, with the key as a shell variable."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from benchcard.card.load import load_named
from benchcard.card.model import Card
from benchcard.errors import CardError
from benchcard.project import Project, ProjectConfig, check_env_name
from benchcard.run.providers import build_body, endpoint, provider_config
from benchcard.run.providers.base import ProviderConfig


def request_for(
    card: Card, cfg: ProviderConfig, model: str, variant: str | None, fixture: str | None
) -> dict[str, Any]:
    """The body for one (variant, fixture) of a card; a probe takes neither."""
    if card.is_ab:
        variant = variant or card.baseline
        if variant not in card.variants:
            raise CardError(f"{card.id}: no variant '{variant}'; expected one of {', '.join(card.variant_names())}")
        fixture = fixture or card.fixture_ids()[0]
        if fixture not in card.fixtures:
            raise CardError(f"{card.id}: no fixture '{fixture}'; expected one of {', '.join(card.fixture_ids())}")
        messages = card.messages(variant, card.fixture_value(fixture))
    else:
        if variant or fixture:
            raise CardError(f"{card.id}: a probe has no variants or fixtures; drop --variant and --fixture")
        messages = card.messages()
    return build_body(cfg, model, messages, card.params, card.rig.effort)


def card_curl(project: Project, name: str, variant: str | None = None, fixture: str | None = None,
              provider: str | None = None, model: str | None = None, base_url: str | None = None) -> str:
    """`benchcard curl CARD`'s core: the card `name` (an id or a path) loaded and its request as a command, with the
    project's providers (`curl_command`)."""
    return curl_command(load_named(project, name), project.config(), variant, fixture, provider, model, base_url)


def curl_command(card: Card, config: ProjectConfig, variant: str | None = None, fixture: str | None = None,
                 provider: str | None = None, model: str | None = None, base_url: str | None = None,
                 public: bool = False) -> str:
    """A command safe to paste: every argument single-quoted (`shlex.quote`, or `shell_quote` for the body), the
    key a `$NAME` whose name is checked, and a URL's password left out (curl asks for it). `public` (a page)
    shows no user name either: `-u USER`. `--model openai/gpt-4o-mini` is read as `benchcard run` reads it."""
    if model is not None:
        from benchcard.run._conventions import split_model

        provider, model = split_model(model, provider, card.rig.provider, config)
    cfg = provider_config(provider or card.rig.provider, config, base_url)
    body = request_for(card, cfg, model or card.rig.model, variant, fixture)
    if cfg.type == "local":  # the first repetition's body as a local run seals it, seed included
        from benchcard.run.providers.local import planned_body

        body = planned_body(body, 0)
    lines = _local_note(model or card.rig.model, public) if cfg.type == "local" else []
    lines.append(f"curl {shlex.quote(endpoint(cfg))} \\")
    creds = cfg.credentials
    if creds is not None:
        lines.append(f"  -u {'USER' if public else shlex.quote(creds[0])} \\")
    if cfg.api_key_env and cfg.type != "local":
        variable = "$" + check_env_name(cfg.api_key_env, f"provider '{cfg.name}': api_key_env")
        header = "x-api-key: " if cfg.type == "anthropic" else "Authorization: Bearer "
        lines.append(f'  -H "{header}{variable}" \\')  # the only unquoted text: a checked variable name
    if cfg.type == "anthropic":
        lines.append('  -H "anthropic-version: 2023-06-01" \\')  # constants: nothing in them expands
    lines.append('  -H "Content-Type: application/json" \\')
    text = _RAW_IN_JSON.sub(_json_escape, json.dumps(body, indent=2, ensure_ascii=False))
    lines.append("  -d " + shell_quote(text))
    return "\n".join(lines)


#: DEL and the C1 controls, which JSON keeps raw: written as JSON's `\u0085`, the same character to the API, since a
#: terminal would act on them raw and the printer's own escape (`\x85`) is no JSON escape (the body would not parse).
_RAW_IN_JSON = re.compile("[\x7f-\x9f]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _local_note(model: str | None, public: bool) -> list[str]:
    """The local provider answers inside benchcard: curl needs llama.cpp's own server on the same GGUF first."""
    from benchcard.errors import ProviderError
    from benchcard.run.providers.localmodel import resolve_model

    try:
        path = resolve_model(model)
        shown = path.name if public else shlex.quote(str(path))
    except ProviderError:
        shown = "MODEL.gguf"
    return ["# The local provider runs the model inside benchcard. To send this request with curl, first serve the",
            "# same GGUF with llama.cpp's server (pip install 'llama-cpp-python[server]'), in another terminal:",
            f"#   python -m llama_cpp.server --model {shown} --host 127.0.0.1 --port 8000"]


def shell_quote(text: str) -> str:
    """Single-quote for POSIX shells: nothing inside is expanded, and `'` becomes `'\\''` (the seeds' form;
    `shlex.quote` writes the same string as `'"'"'`)."""
    return "'" + text.replace("'", "'\\''") + "'"
