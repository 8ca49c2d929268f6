"""The "Run it yourself" command: the exact request a card sends, with the key as a shell variable."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from benchcard._util.urls import secret_user
from benchcard.card.load import load_named
from benchcard.card.model import Card
from benchcard.errors import CardError
from benchcard.project import CONFIG_FILE, Project, ProjectConfig, check_env_name
from benchcard.run._headers import config_secrets, secret_header
from benchcard.run.providers import build_body, endpoint, provider_config, vendor_headers
from benchcard.run.providers.base import ProviderConfig, call_headers


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
    key a `$NAME` whose name is checked, and a URL's password left out (curl asks for it), and its user too when
    that is a token (`_user`). `public` (a page) shows no user name either: `-u USER`. `--model
    openai/gpt-4o-mini` is read as `benchcard run` reads it."""
    if model is not None:
        from benchcard.run._conventions import split_model

        provider, model = split_model(model, provider, card.rig.provider, config)
    cfg = provider_config(provider or card.rig.provider, config, base_url)
    body = request_for(card, cfg, model or card.rig.model, variant, fixture)
    if cfg.type == "local":  # the first repetition's body as a local run seals it, seed included
        from benchcard.run.providers.local import planned_body

        body = planned_body(body, 0)
    lines = _local_note(model or card.rig.model, public) if cfg.type == "local" else []
    headers, hidden = _headers(cfg)
    lines += [f"# {name}: set ${variable} to the value of providers.{cfg.name}.headers.{name} in {CONFIG_FILE}, "
              "not printed" for name, variable in hidden]
    said, user = _user(cfg, public, {cfg.api_key_env, *(variable for _, variable in hidden)})
    lines += said
    lines.append(f"curl {shlex.quote(endpoint(cfg))} \\")
    lines += user
    lines += [f"  -H {header} \\" for header in headers]
    text = _RAW_IN_JSON.sub(_json_escape, json.dumps(body, indent=2, ensure_ascii=False))
    lines.append("  -d " + shell_quote(text))
    return "\n".join(lines)


#: Text printed inside double quotes as it is: nothing in it expands or ends the quotes (`!` is bash's history).
_PLAIN = re.compile(r'[^"$`\\!]*')
#: What stands for the key while the vendor's headers are built: replaced by the variable that holds it.
_KEY = "\0key\0"
#: What stands for a URL's user and password (`Authorization: Basic`): curl's `-u` sends that header.
_BASIC = "\0basic\0"


def _headers(cfg: ProviderConfig) -> tuple[list[str], list[tuple[str, str]]]:
    """Every header a run's call sets (`base.call_headers`: the config's, the body's type, the vendor's), each as
    one shell word, the vendor's first; and the config's whose value is a secret (`_headers.secret_header`), each
    printed as a variable to set (`$X_API_TOKEN` for `X-Api-Token`), with that variable's name. Left out: the
    encodings a run reads (curl would print what it asked compressed) and a URL's user and password (curl's `-u`,
    which asks for the password). The key is `$NAME`, `NAME` checked to be a variable's name."""
    if cfg.type == "local":
        return [_word("Content-Type: application/json")], []
    key = check_env_name(cfg.api_key_env, f"provider '{cfg.name}': api_key_env") if cfg.api_key_env else None
    vendor = vendor_headers(cfg, _KEY if key else None)
    sent = call_headers(cfg, vendor, _BASIC if cfg.credentials else None)
    secrets = config_secrets(cfg)
    configured = {name.lower(): name for name in cfg.headers}
    names = [*sorted(vendor, key=lambda n: _KEY not in vendor[n]), "Content-Type",  # the key's first
             *(configured.get(n, n) for n in sent)]
    words: list[str] = []
    hidden: list[tuple[str, str]] = []
    written = {n.lower(): n for n in reversed(names)}  # each name as it is first written
    for name in (written[n] for n in dict.fromkeys(n.lower() for n in names)):
        value = sent[name]
        if name.lower() == "accept-encoding" or value == _BASIC:
            continue
        if _KEY in value:  # the vendor's key header: its text, then the variable
            words.append(_word(f"{name}: {value.removesuffix(_KEY)}", key))
        elif name.lower() in configured and secret_header(name, value, secrets):
            variable = _variable(name, {key, *(v for _, v in hidden)})
            hidden.append((name, check_env_name(variable, f"provider '{cfg.name}': headers.{name}")))
            words.append(_word(f"{name}: ", variable))
        else:
            words.append(_word(f"{name}: {value}"))
    return words, hidden


def _user(cfg: ProviderConfig, public: bool, taken: set[str | None]) -> tuple[list[str], list[str]]:
    """A URL's user as the command's comment lines and its `-u` line: the user as it is when it is a plain account
    name (curl asks for the password); `USER` on a page; a user name that is a token (`https://TOKEN@host`,
    `urls.secret_user`) read from a variable named in a comment, and so its password (curl would ask for one
    naming the user), or the empty password the run sends."""
    creds = cfg.credentials
    if creds is None:
        return [], []
    if public or not secret_user(creds[0]):
        return [], [f"  -u {'USER' if public else shlex.quote(creds[0])} \\"]
    user = _variable("URL_USER", taken)
    password = _variable("URL_PASSWORD", {*taken, user}) if creds[1] else ""
    said = [f"# -u: set ${user} to the user name of providers.{cfg.name}.base_url in {CONFIG_FILE} (or of "
            "--base-url), a token, not printed"]
    said += [f"# -u: set ${password} to its password, not printed"] if password else []
    return said, [f'  -u "${user}:{"$" + password if password else ""}" \\']


def _variable(name: str, taken: set[str | None]) -> str:
    """The variable a hidden header's value is read from: its name in capitals, `_` for the rest (`X_API_TOKEN`),
    with a number after it when the key's or another header's has that name (one variable would send one value
    for both)."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name).upper().lstrip("_0123456789") or "HEADER"
    variable, n = base, 1
    while variable in taken:
        n += 1
        variable = f"{base}_{n}"
    return variable


def _word(text: str, variable: str | None = None) -> str:
    """`text` as one shell word, then the value of `$variable` when one is given: in double quotes when nothing
    in the text expands there (the form people write), else single-quoted and the variable joined in double."""
    ref = f"${variable}" if variable else ""
    if _PLAIN.fullmatch(text):
        return f'"{text}{ref}"'
    return shlex.quote(text) + (f'"{ref}"' if ref else "")


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
