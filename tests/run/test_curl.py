"""`benchcard curl` prints the seed pages' "Run it yourself" command: same body, key as a shell variable."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchcard.card.load import load_card, load_named
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.run.curl import card_curl, curl_command

from ..helpers_project import PROBES, copy_project, make_ab_project, seed_body
from ..helpers_run import KEY_ENV, RED_REPLY, ab_project, read_head, read_request_body, send_json, serve_raw


def _body_of(command: str) -> dict[str, Any]:
    words = shlex.split(command.replace("\\\n", " "))
    body: dict[str, Any] = json.loads(words[words.index("-d") + 1])
    return body


@pytest.mark.parametrize("name", sorted(PROBES))
def test_curl_body_matches_the_seed_page(project_dir: Path, name: str) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project_dir), "curl", name])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("curl https://openrouter.ai/api/v1/chat/completions \\\n")
    assert '-H "Authorization: Bearer $OPENROUTER_API_KEY"' in result.output
    assert _body_of(result.output) == seed_body(name)


def test_key_is_a_variable_never_a_value(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-SENTINEL-123")
    result = CliRunner().invoke(cli, ["-C", str(project_dir), "curl", "reordered-input"])
    assert "SENTINEL" not in result.output
    assert "$OPENROUTER_API_KEY" in result.output


def test_command_is_valid_shell_with_quotes_in_the_prompt(project_dir: Path) -> None:
    """emit-terminator's prompt holds single quotes: the printed command must survive the shell intact."""
    result = CliRunner().invoke(cli, ["-C", str(project_dir), "curl", "emit-terminator"])
    script = "body() { for a; do case $prev in -d) printf %s \"$a\";; esac; prev=$a; done; }; " + \
        result.output.replace("curl ", "body ", 1)
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={**os.environ}, check=True)
    assert json.loads(out.stdout) == seed_body("emit-terminator")


def test_ab_card_variant_and_fixture(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    runner = CliRunner()
    base = runner.invoke(cli, ["-C", str(project), "curl", "tiny-ab", "--fixture", "item-02"])
    variant = runner.invoke(cli, ["-C", str(project), "curl", "tiny-ab", "--variant", "A", "--fixture", "item-02"])
    assert base.exit_code == 0 and variant.exit_code == 0
    user_base = _body_of(base.output)["messages"][1]["content"]
    user_variant = _body_of(variant.output)["messages"][1]["content"]
    assert user_base == "Name the colour.\n<item>a ripe tomato, number 2\n</item>"
    assert user_variant == "Name the colour.\nPlease.\n<item>a ripe tomato, number 2\n</item>"
    bad = runner.invoke(cli, ["-C", str(project), "curl", "tiny-ab", "--variant", "B"])
    assert bad.exit_code != 0


def test_a_line_separator_in_the_prompt_is_printed_on_one_line_and_sends_the_same_body(tmp_path: Path) -> None:
    """Each printed line is one visible line (a U+2028 in a fixture shows as `\\u2028`); inside the JSON body that
    escape is the same character, so the pasted command still sends the exact request."""
    project = make_ab_project(tmp_path / "proj")
    (project / "fixtures" / "tiny-ab" / "item-02.txt").write_text("a ripe\u2028tomato\tnumber 2\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(project), "curl", "tiny-ab", "--fixture", "item-02"])
    assert result.exit_code == 0, result.output
    assert "\u2028" not in result.output and "\\u2028" in result.output
    printed = _pasted(result.output, tmp_path)
    body = json.loads(printed.split("[-d]\n[", 1)[1].rsplit("]", 1)[0])
    assert body["messages"][1]["content"] == "Name the colour.\n<item>a ripe\u2028tomato\tnumber 2\n</item>"


def test_an_emoji_in_the_prompt_is_printed_as_the_emoji_and_a_stray_joiner_as_its_escape(tmp_path: Path) -> None:
    """A fixture holding a woman and a laptop joined printed its joiner as `\\u200d` (every zero-width joiner was
    escaped): the joiner between two pictographs prints as it is, one between letters as its escape; both send
    the fixture's exact text."""
    project = make_ab_project(tmp_path / "proj")
    text = "a 👩\u200d💻 and 🏳\ufe0f\u200d🌈 pay\u200dpal\n"
    (project / "fixtures" / "tiny-ab" / "item-02.txt").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(project), "curl", "tiny-ab", "--fixture", "item-02"])
    assert result.exit_code == 0, result.output
    assert "a 👩\u200d💻 and 🏳\ufe0f\u200d🌈 pay\\u200dpal" in result.output
    printed = _pasted(result.output, tmp_path)
    body = json.loads(printed.split("[-d]\n[", 1)[1].rsplit("]", 1)[0])
    assert body["messages"][1]["content"] == f"Name the colour.\n<item>{text}</item>"


def test_anthropic_rig(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    card = project / "cards" / "tiny-ab.yaml"
    card.write_text(card.read_text().replace("provider: openrouter", "provider: anthropic"))
    result = CliRunner().invoke(cli, ["-C", str(project), "curl", "tiny-ab"])
    assert result.output.startswith("curl https://api.anthropic.com/v1/messages")
    assert '-H "x-api-key: $ANTHROPIC_API_KEY"' in result.output
    body = _body_of(result.output)
    assert body["system"] == "Answer with one word."
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert re.search(r'"max_tokens": 50', result.output)


def test_local_rig_prints_the_body_a_local_run_seals(tmp_path: Path) -> None:
    """For the embedded model: llama.cpp's server URL, no effort, and the first repetition's seed written in,
    exactly as `sealed/requests.jsonl` holds it for that cell."""
    from benchcard.run.providers.local import call_seed

    project = copy_project(tmp_path / "proj", ("demo-answer-cue",))
    result = CliRunner().invoke(cli, ["-C", str(project), "curl", "demo-answer-cue", "--provider", "local",
                                      "--fixture", "review-01"])
    assert result.exit_code == 0, result.output
    note, command = result.output.split("curl http://127.0.0.1:8000/v1/chat/completions \\\n")
    # the local model answers inside benchcard: the note says to start llama.cpp's server first, and how
    from benchcard.run.providers.localmodel import bundled_gguf

    assert note.splitlines() == [
        "# The local provider runs the model inside benchcard. To send this request with curl, first serve the",
        "# same GGUF with llama.cpp's server (pip install 'llama-cpp-python[server]'), in another terminal:",
        f"#   python -m llama_cpp.server --model {shlex.quote(str(bundled_gguf()))} --host 127.0.0.1 --port 8000"]
    assert "Authorization" not in result.output
    body = _body_of(command)
    assert body["temperature"] == 0.7 and "reasoning_effort" not in body
    unseeded = {k: v for k, v in body.items() if k != "seed"}
    assert body["seed"] == call_seed(unseeded, 0)


def _pasted(command: str, folder: Path) -> str:
    """What a shell does with the printed command when `curl` only prints its arguments."""
    script = "curl() { printf '[%s]\\n' \"$@\"; }\n" + command + "\n"
    done = subprocess.run(["bash", "-c", script], cwd=folder, capture_output=True, text=True, timeout=30,
                          env={**os.environ, "MY_KEY": "sk-from-env"}, check=True)
    return done.stdout


def test_a_hostile_base_url_is_quoted_not_run(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    url = "http://127.0.0.1:9/$(touch${IFS}pwned)`touch${IFS}pwned2`"
    (root / "benchcard.yaml").write_text(
        f"providers:\n  p: {{type: openai, base_url: '{url}', api_key_env: MY_KEY}}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(root), "curl", "tiny-ab", "--provider", "p"])
    assert result.exit_code == 0, result.output
    printed = _pasted(result.output, tmp_path)
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    assert f"[{url}/chat/completions]" in printed
    assert "[Authorization: Bearer sk-from-env]" in printed


def test_a_hostile_key_variable_name_is_refused(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "benchcard.yaml").write_text(
        "providers:\n  p: {type: openai, base_url: 'http://127.0.0.1:9', api_key_env: 'K\"; touch pwned; \"'}\n",
        encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(root), "curl", "tiny-ab", "--provider", "p"])
    assert result.exit_code == 1
    assert "api_key_env': expected an environment variable name" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_credentials_in_the_url_are_never_printed(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "benchcard.yaml").write_text(
        "providers:\n  p: {type: openai, base_url: 'http://alice:s3cr3t-pw@127.0.0.1:9/v1'}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(root), "curl", "tiny-ab", "--provider", "p"])
    assert result.exit_code == 0, result.output
    assert "s3cr3t-pw" not in result.output
    printed = _pasted(result.output, tmp_path)
    assert "[http://127.0.0.1:9/v1/chat/completions]" in printed and "[-u]\n[alice]" in printed


def test_the_command_s_core_takes_the_card_by_id_or_path_as_the_command_does(project_dir: Path) -> None:
    """`benchcard curl CARD` calls one core function, `card_curl`: the card found by id or path, the project's
    providers; the same command as `curl_command` on the card loaded, and what the command prints."""
    project = Project(project_dir)
    path = project_dir / "cards" / "reordered-input.yaml"
    by_id = card_curl(project, "reordered-input")
    assert card_curl(project, str(path)) == by_id == curl_command(load_card(path, project), project.config())
    assert CliRunner().invoke(cli, ["-C", str(project_dir), "curl", "reordered-input"]).output == by_id + "\n"


@pytest.mark.parametrize("character", ["\x7f", "\x85", "\x9b"])
def test_a_control_character_json_keeps_raw_is_printed_as_a_json_escape_and_sends_the_same_body(
        tmp_path: Path, character: str) -> None:
    """Review of 7a29ab0: DEL and the C1 controls, which JSON keeps raw, were printed as Python's `\\x7f`, which
    is no JSON escape: the pasted command sent a body the API refuses. Now the body writes them `\\u007f`, the
    same character to JSON, and nothing reaches the terminal raw."""
    project = make_ab_project(tmp_path / "proj")
    (project / "fixtures" / "tiny-ab" / "item-02.txt").write_text(f"a ripe{character}tomato\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(project), "curl", "tiny-ab", "--fixture", "item-02"])
    assert result.exit_code == 0, result.output
    assert character not in result.output and f"\\u{ord(character):04x}" in result.output
    printed = _pasted(result.output, tmp_path)
    body = json.loads(printed.split("[-d]\n[", 1)[1].rsplit("]", 1)[0])
    assert body["messages"][1]["content"] == f"Name the colour.\n<item>a ripe{character}tomato\n</item>"


def _same(body: bytes) -> str:
    """A JSON body as one text whatever its spacing (the command's is indented, a run's is not)."""
    return json.dumps(json.loads(body), sort_keys=True)


@pytest.mark.parametrize("type_", ["openai", "anthropic"])
def test_the_printed_command_sends_the_headers_a_run_sends(tmp_path: Path, key: str, type_: str) -> None:
    """A provider's `headers` in benchcard.yaml were sent by a run and left out of `benchcard curl` (wire21). Now
    the printed command, run by bash with real curl against a socket, sends each header the run sends (the
    vendor's, the key, the config's), and the same body; a header whose value is a secret (by its name, or
    holding the key) is printed as a variable to set, named in a comment, its value nowhere in the output."""
    seen: list[tuple[dict[str, str], bytes]] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            head = read_head(conn)
            body = read_request_body(conn, head)
            lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")[1:]
            seen.append(({k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}, body))
            send_json(conn, RED_REPLY)

    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    serve_raw(listener, answer, done)
    project = ab_project(tmp_path, fixtures=1, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: {type_}\n    base_url: 'http://127.0.0.1:{listener.getsockname()[1]}/v1'\n"
        f"    api_key_env: {KEY_ENV}\n    headers:\n      HTTP-Referer: 'https://bench.example/$HOME'\n"
        f"      X-Title: \"Colour's bench\"\n      X-Api-Token: tok-S3CRET-value\n      X-Mirror: 'k={key}'\n"
        "      content-type: text/plain\n", encoding="utf-8")
    try:
        CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--attempts", "1", "--concurrency", "1"])
        ran = {_same(body): headers for headers, body in seen}  # the run's two calls, by body
        printed = CliRunner().invoke(cli, ["-C", str(project.root), "curl", "colour-ab"])
        assert printed.exit_code == 0, printed.output
        subprocess.run(["bash", "-c", printed.output.replace("curl ", "curl -s -o /dev/null ", 1)], timeout=30,
                       check=True, env={**os.environ, "X_API_TOKEN": "tok-S3CRET-value", "X_MIRROR": f"k={key}"})
    finally:
        done.set()
    assert "tok-S3CRET-value" not in printed.output and key not in printed.output
    assert printed.output.startswith(
        "# X-Api-Token: set $X_API_TOKEN to the value of providers.fake.headers.X-Api-Token in benchcard.yaml, not "
        "printed\n# X-Mirror: set $X_MIRROR to the value of providers.fake.headers.X-Mirror in benchcard.yaml, not "
        "printed\ncurl "), printed.output
    sent, body = seen[-1]
    assert _same(body) in ran, "the command sends a body a run sent"
    by_run = ran[_same(body)]
    compared = ["content-type", "http-referer", "x-title", "x-api-token", "x-mirror",
                *(["x-api-key", "anthropic-version"] if type_ == "anthropic" else ["authorization"])]
    assert {name: sent.get(name) for name in compared} == {name: by_run.get(name) for name in compared}
    assert by_run["x-api-token"] == "tok-S3CRET-value" and by_run["content-type"] == "application/json"
    assert by_run["http-referer"] == "https://bench.example/$HOME"  # literal: nothing expanded by the shell


def _with_headers(tmp_path: Path, headers: str, url: str = "http://127.0.0.1:9/v1", key_env: str = KEY_ENV) -> Project:
    project = ab_project(tmp_path, fixtures=1, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    base_url: '{url}'\n    api_key_env: {key_env}\n"
        f"    headers:\n{headers}", encoding="utf-8")
    return project


def test_a_header_value_that_reads_as_a_credential_is_never_printed(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A header of benchcard.yaml whose name says nothing of a secret but whose value is one, by an authentication
    scheme's word (`Bearer …`) or a key's look. A page is built without the key in the environment, so holding
    the key cannot tell it there: before (review21), both values were printed on the card's page ("Run it
    yourself") and by `benchcard curl`. Plain values are printed as they are."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    project = _with_headers(tmp_path, "      X-Upstream: 'Bearer up-live-0a1b'\n"
                                      "      X-Portkey-Config: pc-a8F3kQ29xZ7mN4vB1c\n      X-Title: Colour bench\n"
                                      "      HTTP-Referer: 'https://github.com/acme/bench-2024'\n")
    page = curl_command(load_named(project, "colour-ab"), project.config(), public=True)
    terminal = CliRunner().invoke(cli, ["-C", str(project.root), "curl", "colour-ab"])
    assert terminal.exit_code == 0, terminal.output
    for printed in (page, terminal.output):
        assert "up-live-0a1b" not in printed and "a8F3kQ29xZ7mN4vB1c" not in printed, printed
        assert '-H "X-Upstream: $X_UPSTREAM"' in printed and '-H "X-Portkey-Config: $X_PORTKEY_CONFIG"' in printed
        assert "# X-Upstream: set $X_UPSTREAM to the value of providers.fake.headers.X-Upstream" in printed
        assert '-H "X-Title: Colour bench"' in printed
        assert '-H "HTTP-Referer: https://github.com/acme/bench-2024"' in printed


def test_a_url_s_password_is_the_authorization_the_command_sends_as_a_run_does(tmp_path: Path) -> None:
    """A URL's user and password are the `Authorization: Basic` a run sends, replacing an `Authorization` of the
    config's `headers`. The command sends them by curl's `-u` alone: before (review21), it also printed the
    config's `Authorization` as a variable to set, which curl sends in place of `-u`'s, so the command did not
    send what a run sends. A header holding the password is a secret as one holding the key is (it was printed)."""
    project = _with_headers(tmp_path, "      Authorization: Bearer gateway-token\n      X-Title: Colour bench\n"
                                      "      X-Forward: 'alice=pw-long-enough'\n",
                            url="http://alice:pw-long-enough@127.0.0.1:9/v1", key_env="null")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "curl", "colour-ab"])
    assert result.exit_code == 0, result.output
    assert "  -u alice \\\n" in result.output and '-H "X-Title: Colour bench"' in result.output
    assert "Authorization" not in result.output and "gateway-token" not in result.output, result.output
    assert "pw-long-enough" not in result.output and '-H "X-Forward: $X_FORWARD"' in result.output  # the password


@pytest.mark.parametrize("password", ["", "pw-long-enough"])
def test_a_token_as_the_url_s_user_is_read_from_a_variable(tmp_path: Path, password: str) -> None:
    """Review21b: `https://TOKEN@host` printed `-u 'TOKEN'` on the terminal (and curl, asking for a password,
    named the user again). A user that is a token is `$URL_USER`, and its password `$URL_PASSWORD` (or the empty
    one a run sends), each named in a comment; the pasted command sends what a run sends."""
    token = "ghp_5f4e3d2c1b0a9f8e7d6c"
    url = f"http://{token}{':' + password if password else ''}@127.0.0.1:9/v1"
    project = _with_headers(tmp_path, "      X-Title: Colour bench\n", url=url, key_env="null")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "curl", "colour-ab"])
    assert result.exit_code == 0, result.output
    assert token not in result.output and (not password or password not in result.output), result.output
    said = ["# -u: set $URL_USER to the user name of providers.fake.base_url in benchcard.yaml (or of --base-url), "
            "a token, not printed"] + (["# -u: set $URL_PASSWORD to its password, not printed"] if password else [])
    assert result.output.splitlines()[:len(said)] == said
    script = "curl() { printf '[%s]\\n' \"$@\"; }\n" + result.output
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=True,
                          env={**os.environ, "URL_USER": token, "URL_PASSWORD": password})
    assert f"[-u]\n[{token}:{password}]\n" in done.stdout


def test_each_hidden_header_has_a_variable_of_its_own(tmp_path: Path) -> None:
    """A hidden header whose name, in capitals, is the key's variable or another hidden header's gets a number
    after it: before (review21), `Benchcard-Test-Key` was read from the key's `$BENCHCARD_TEST_KEY`, and two
    headers named alike from one variable, so the command sent one value where a run sent two."""
    project = _with_headers(tmp_path, "      Benchcard-Test-Key: other-value\n      X-Api-Token: one\n"
                                      "      X_Api_Token: two\n")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "curl", "colour-ab"])
    assert result.exit_code == 0, result.output
    assert f'-H "Authorization: Bearer ${KEY_ENV}"' in result.output
    assert '-H "Benchcard-Test-Key: $BENCHCARD_TEST_KEY_2"' in result.output, result.output
    assert '-H "X-Api-Token: $X_API_TOKEN"' in result.output and '-H "X_Api_Token: $X_API_TOKEN_2"' in result.output
    assert "# X_Api_Token: set $X_API_TOKEN_2 to the value of providers.fake.headers.X_Api_Token" in result.output
