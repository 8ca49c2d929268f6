"""The habits users bring from other tools (run/_conventions.py), each honoured or refused out loud: provider/model
as inspect_ai writes it, the SDKs' base-URL variables, a `.env` file of keys. Over real sockets to the fake
server, through the command line as a user runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchcard.card.reader import read_card
from benchcard.card.seal import seal
from benchcard.errors import BenchcardError
from benchcard.project import Project
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import one_line_error
from ..helpers_run import bc, ok, seal_card, summary

KEY = "sk-from-dotenv-7f3a9c"
SDK_VARS = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "OPENROUTER_BASE_URL", "OPENROUTER_API_BASE",
            "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SDK variable or key from the machine running the tests; a `.env` key set by a test is undone."""
    for name in SDK_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv(name, "")  # registered, so monkeypatch restores it after load_dotenv_keys sets it
        monkeypatch.delenv(name)


def _project(root: Path, provider: str) -> Project:
    (root / "cards").mkdir(parents=True)
    card = COLOUR_AB.format(provider=provider, reps=1, effort="null", max_tokens=20)
    (root / "cards" / "colour-ab.yaml").write_text(card, encoding="utf-8")
    (root / "fixtures" / "colour-ab").mkdir(parents=True)
    for i in range(2):
        (root / "fixtures" / "colour-ab" / f"item-{i}.txt").write_text(f"a tomato {i}", encoding="utf-8")
    return seal_card(root, "colour-ab")


def _manifest(project: Project, result_json: dict[str, object]) -> dict[str, object]:
    folder = project.root / str(result_json["runs"][0]["folder"])  # type: ignore[index]
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_openai_base_url_is_honoured_said_and_makes_the_run_scratch(tmp_path: Path, server: FakeServer,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red"})
    project = _project(tmp_path / "proj", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    result = ok(bc(project, "run", "colour-ab", "--json"))
    assert result.stderr.strip() == (f"OPENAI_BASE_URL is set: calls go to {server.base_url}, not openai's "
                                     "https://api.openai.com/v1; the run is scratch (not the rig's endpoint). Unset "
                                     "OPENAI_BASE_URL to call the rig's endpoint")
    made = summary(result)
    manifest = _manifest(project, made)
    assert manifest["base_url"] == server.base_url
    assert manifest["scratch"] == f"OPENAI_BASE_URL {server.base_url} instead of the provider's own endpoint"
    assert made["runs"][0]["rig"].endswith(" · scratch")
    assert server.stats()["calls"] == 4

    # --base-url comes first, and that is said too
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    again = ok(bc(project, "run", "colour-ab", "--json", "--base-url", server.base_url))
    assert again.stderr.strip() == f"OPENAI_BASE_URL is set but --base-url {server.base_url} is used"

    # a resumed run keeps the endpoint it was started with, and says so
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    [stopped] = run(project, "colour-ab", RunOptions(progress=False), stop_after=1)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    resumed = ok(bc(project, "run", "colour-ab", "--resume", stopped.run, "--json"))
    assert resumed.stderr.strip() == ("OPENAI_BASE_URL is ignored: a resumed run keeps the endpoint it was started "
                                      f"with, {server.base_url}")
    assert summary(resumed)["runs"][0]["counts"]["ok"] == 4


def test_anthropic_base_url_is_honoured_like_openai(tmp_path: Path, server: FakeServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red"})
    project = _project(tmp_path / "proj", "anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-0000")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    result = ok(bc(project, "run", "colour-ab", "--json"))
    assert result.stderr.startswith(f"ANTHROPIC_BASE_URL is set: calls go to {server.base_url}, not anthropic's ")
    assert _manifest(project, summary(result))["provider_type"] == "anthropic"
    assert summary(result)["runs"][0]["counts"]["ok"] == 4


def test_provider_slash_model_and_a_dotenv_key_on_a_local_card(tmp_path: Path, server: FakeServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red", "record_bodies": True})
    project = _project(tmp_path / "proj", "local")
    (project.root / ".env").write_text(f"# keys\nexport OPENAI_API_KEY='{KEY}'\nOPENAI_BASE_URL=http://127.0.0.1:9/v1"
                                       "\nDEBUG=1\nnot a variable\n", encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    result = ok(bc(project, "run", "colour-ab", "--model", "openai/gpt-4o-mini", "--json"))
    said = result.stderr.strip().splitlines()
    assert said[:4] == [".env: read OPENAI_API_KEY",
                        ".env: ignored OPENAI_BASE_URL, DEBUG (only API keys are read from it)",
                        ".env: line 5 not read (expected NAME=value)",
                        "--model openai/gpt-4o-mini: provider openai, model gpt-4o-mini (provider/model, as "
                        "inspect_ai writes it)"]
    assert said[4].startswith("OPENAI_BASE_URL is set: calls go to ")
    made = summary(result)["runs"][0]
    assert (made["provider"], made["model"], made["counts"]["ok"]) == ("openai", "gpt-4o-mini", 4)
    assert {b["model"] for b in server.stats()["bodies"]} == {"gpt-4o-mini"}
    for path in project.results_dir.rglob("*"):  # the key from .env never reaches disk
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path


def test_without_a_key_the_dotenv_note_comes_before_the_missing_key_line(tmp_path: Path, server: FakeServer) -> None:
    project = _project(tmp_path / "proj", "openai")
    (project.root / ".env").write_text("HF_TOKEN=abc\n", encoding="utf-8")
    result = bc(project, "run", "colour-ab", "--base-url", server.base_url)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == ".env: ignored HF_TOKEN (only API keys are read from it)"
    assert lines[-1].startswith("error: ") and "OPENAI_API_KEY" in lines[-1]


def test_the_notes_go_to_the_callers_tell_and_nothing_is_printed(tmp_path: Path, server: FakeServer,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI passes its reporter as `tell` (its stderr above); the core prints nothing of its own then."""
    project = _project(tmp_path / "proj", "openai")
    (project.root / ".env").write_text("HF_TOKEN=abc\n", encoding="utf-8")
    said: list[str] = []
    with pytest.raises(BenchcardError, match="OPENAI_API_KEY"):
        run(project, "colour-ab", RunOptions(base_url=server.base_url, progress=False), tell=said.append)
    assert said == [".env: ignored HF_TOKEN (only API keys are read from it)"]
    assert capsys.readouterr() == ("", "")


def test_a_provider_prefix_is_read_only_where_model_names_have_none(tmp_path: Path) -> None:
    from benchcard.project import parse_config
    from benchcard.run._conventions import split_model

    config = parse_config({"providers": {"my-vllm": {"type": "openai", "base_url": "http://10.0.0.5:8000/v1"}}})
    assert split_model("openai/gpt-4o-mini", None, "local", config) == ("openai", "gpt-4o-mini")
    assert split_model("anthropic/claude-x", None, "openai", config) == ("anthropic", "claude-x")
    assert split_model("openai/gpt-5-mini", None, "openrouter", config) == ("openrouter", "openai/gpt-5-mini")
    assert split_model("openai/gpt-oss-20b", None, "my-vllm", config) == ("my-vllm", "openai/gpt-oss-20b")
    assert split_model("qwen/qwen3-32b", "openrouter", "local", config) == ("openrouter", "qwen/qwen3-32b")
    assert split_model("openrouter/qwen/qwen3", "openrouter", "local", config) == ("openrouter", "qwen/qwen3")
    assert split_model("openrouter/auto", "openrouter", "local", config) == ("openrouter", "openrouter/auto")
    assert split_model("openai/gpt-4o", "openai", "local", config) == ("openai", "gpt-4o")
    assert split_model("models/smol.gguf", None, "local", config) == ("local", "models/smol.gguf")
    assert split_model("openai/smol.gguf", None, "local", config) == ("local", "openai/smol.gguf")
    assert split_model("my-vllm/llama-3", None, "openai", config) == ("my-vllm", "llama-3")


def test_curl_reads_provider_slash_model_as_run_does(tmp_path: Path) -> None:
    project = _project(tmp_path / "proj", "local")
    shown = ok(bc(project, "curl", "colour-ab", "--model", "openai/gpt-4o-mini")).stdout
    assert shown.startswith("curl https://api.openai.com/v1/chat/completions ")
    assert '"model": "gpt-4o-mini"' in shown and "$OPENAI_API_KEY" in shown
    line = one_line_error(bc(project, "curl", "colour-ab", "--provider", "nope", "--model", "nope/x"))
    assert "unknown provider 'nope'" in line


def test_the_judge_is_not_moved_by_an_sdk_variable_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchcard.run._conventions import judge_note

    assert judge_note("openai") is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert judge_note("openai") == ("OPENAI_BASE_URL is not used for the judge: it is called at openai's "
                                    "https://api.openai.com/v1 as sealed (declare a provider in benchcard.yaml to "
                                    "call it elsewhere)")
    assert judge_note("fake") is None


def test_a_card_sealed_with_an_empty_rig_provider_runs_only_on_a_provider_named(tmp_path: Path) -> None:
    """A card sealed with `provider: ""` before the reader refused it (2026-12-07) still reads while its seal holds
    (card/load.py), but a new run of it takes no provider named '': it is refused in one line before any call."""
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    path = root / "cards" / "colour-ab.yaml"
    path.write_text(COLOUR_AB.format(provider='""', reps=1, effort="null", max_tokens=20), encoding="utf-8")
    (root / "fixtures" / "colour-ab").mkdir(parents=True)
    (root / "fixtures" / "colour-ab" / "item-0.txt").write_text("a tomato", encoding="utf-8")
    project = Project(root)
    seal(read_card(path.read_text(encoding="utf-8"), "cards/colour-ab.yaml", project, path), project)
    assert one_line_error(bc(project, "run", "colour-ab")) == (
        "error: colour-ab v1: the card's rig names no provider (rig.provider is ''); name one with --provider")


def test_a_dotenv_saved_with_a_byte_order_mark_reads_its_first_key(tmp_path: Path) -> None:
    """Hostile audit (hostile21): a `.env` saved by Notepad as "UTF-8 with BOM" said `.env: line 1 not read
    (expected NAME=value)` of a line that reads `OPENAI_API_KEY=…` in every editor, and the key was missing. The
    mark is skipped, as in a data file."""
    import os

    from benchcard.project import ProjectConfig
    from benchcard.run._conventions import load_dotenv_keys

    (tmp_path / ".env").write_bytes(f"\ufeffOPENAI_API_KEY={KEY}\r\n".encode())
    assert load_dotenv_keys(tmp_path, ProjectConfig()) == [".env: read OPENAI_API_KEY"]
    assert os.environ["OPENAI_API_KEY"] == KEY


def test_a_dotenv_name_that_reads_as_a_key_is_not_said_back(tmp_path: Path) -> None:
    """Review (tail23a): a key of letters, digits and `_` written as a line's name (`hf_…=`, the key pasted where
    its variable's name goes) was said back in the note of names the `.env` left alone; its line is named."""
    from benchcard.project import ProjectConfig
    from benchcard.run._conventions import load_dotenv_keys

    (tmp_path / ".env").write_text("DEBUG=1\nhf_PASTEDxQ7rT2mZ9vK4bN8cL1=\n", encoding="utf-8")
    assert load_dotenv_keys(tmp_path, ProjectConfig()) == [
        ".env: ignored DEBUG, line 2 (its name reads as a key: not shown) (only API keys are read from it)"]


def _dotenv_to_nothing(env: Path) -> None:
    env.symlink_to("keys.env")


def _dotenv_to_itself(env: Path) -> None:
    env.symlink_to(".env")


def _dotenv_utf16(env: Path) -> None:
    env.write_bytes(f"OPENAI_API_KEY={KEY}\n".encode("utf-16-le"))  # Windows' "Unicode", without its mark


@pytest.mark.parametrize(("make", "expected"), [
    (_dotenv_to_nothing, "error: .env: a symbolic link to keys.env, which is not there; expected the file: point "
                         "the link at it or put the file in its place"),
    (_dotenv_to_itself, "error: .env: a symbolic link that leads back to itself (a loop); expected the file: put it "
                        "in the link's place"),
    (_dotenv_utf16, "error: .env:1: a NUL character (U+0000), which no text file holds (it reads as UTF-16); "
                    "expected UTF-8 text: save it as UTF-8"),
])
def test_a_dotenv_that_cannot_be_read_is_one_line_not_no_dotenv(tmp_path: Path, make: Callable[[Path], None],
                                                               expected: str) -> None:
    """Small audit (small21): a `.env` linked to nothing or to itself was read as no `.env`, and the run went on
    without its keys; a UTF-16 one said `.env: line 1, 2 not read`, two lines that look right in any editor."""
    project = _project(tmp_path, "openai")
    make(tmp_path / ".env")
    assert one_line_error(bc(project, "run", "colour-ab")) == expected
    assert not project.results_dir.exists()


def test_a_virtualenv_folder_named_dotenv_is_no_keys_file_and_the_run_goes_on(tmp_path: Path, server: FakeServer,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m venv .env` is a common name for a project's virtualenv: it holds no keys and was left alone, until
    the check of a `.env` linked to nothing (9945e04) refused every run with '.env: not a regular file (a folder)'."""
    server.configure({"default_reply": "red"})
    project = _project(tmp_path / "proj", "openai")
    (project.root / ".env" / "bin").mkdir(parents=True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    made = summary(ok(bc(project, "run", "colour-ab", "--json")))
    assert made["runs"][0]["cells"] == 4
    assert server.stats()["calls"] == 4
