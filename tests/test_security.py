"""An API key's value reaches the server's request header and nothing else: no file under results/, no log
line, no error message, no progress output — whatever goes wrong on the way."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from .helpers_run import KEY_ENV, ab_project, server, write_config

__all__ = ["server"]

SENTINEL = "sk-SENTINEL-7f3a9c2e1b5d"
FRAGMENTS = (SENTINEL, "SENTINEL-7f3a", "7f3a9c2e1b5d")


@pytest.fixture(autouse=True)
def _sentinel(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(KEY_ENV, SENTINEL)
    caplog.set_level(logging.DEBUG)  # httpx, aiohttp, asyncio and benchcard at their most talkative


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def assert_nowhere(project: Project, *texts: str) -> None:
    files = [p for p in project.root.rglob("*") if p.is_file() and p.name != "benchcard.yaml"]
    assert any(p.name == "requests.jsonl" for p in files)  # the check looked at a real run
    for path in files:
        data = path.read_bytes()
        for fragment in FRAGMENTS:
            assert fragment.encode() not in data, f"key found in {path}"
    for text in texts:
        for fragment in FRAGMENTS:
            assert fragment not in text


def test_the_key_is_sent_but_never_written_logged_or_shown(tmp_path: Path, server: FakeServer,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    server.configure({
        "default_reply": "red", "require_key": True,
        "faults": [{"kind": "429", "times": 1, "retry_after": 0, "match": "number 0"},
                   {"kind": "500", "times": 9, "match": "number 1"},
                   {"kind": "drop", "times": 9, "match": "number 2"},
                   {"kind": "malformed", "times": 1, "match": "number 3"},
                   {"kind": "hang", "times": 9, "hang_s": 3, "match": "number 4"},
                   {"kind": "truncate", "times": 1, "match": "number 5"}],
    })
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=1)
    shown = bc(project, "run", "colour-ab", "--attempts", "2", "--timeout", "0.3")  # with the progress bar
    as_json = bc(project, "run", "colour-ab", "--attempts", "2", "--timeout", "0.3", "--json")
    assert shown.exit_code == 0 and as_json.exit_code == 0, (shown.output, as_json.output)
    assert "failed" in shown.stderr and "connection error" in project.root.joinpath(
        as_json.stdout.split('"folder": "')[1].split('"')[0], "outputs.jsonl").read_text()
    stats = server.stats(by_request=False)
    assert stats["with_key"] == stats["calls"] > 24 and stats["without_key"] == 0  # the key was really sent
    assert_nowhere(project, shown.stdout, shown.stderr, as_json.stdout, as_json.stderr, caplog.text)


def test_a_401_is_reported_without_the_key(tmp_path: Path, server: FakeServer,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """The fake server's 401 (no key sent), and a server that echoes the key it got, as OpenAI's 401 does."""
    server.configure({"default_reply": "red", "require_key": True})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, key_env=None)
    refused = bc(project, "run", "colour-ab")
    assert refused.exit_code == 1 and "HTTP 401" in refused.stderr

    write_config(project.root, "http://echo.invalid/v1")

    def echo(request: httpx.Request) -> httpx.Response:
        got = request.headers["authorization"].removeprefix("Bearer ")
        masked = got[:7] + "*" * 8 + got[-4:]
        return httpx.Response(401, json={"error": {"message": f"Incorrect API key provided: {got} ({masked})"}})

    with pytest.raises(RunError) as info:
        run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(echo))
    assert "HTTP 401: Incorrect API key provided: [redacted]" in str(info.value)
    assert_nowhere(project, refused.stdout, refused.stderr, str(info.value), caplog.text)


def test_an_echoed_key_in_a_cell_error_is_redacted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    project = ab_project(tmp_path, "http://echo.invalid/v1", fixtures=2, repetitions=1)

    def echo(request: httpx.Request) -> httpx.Response:
        got = request.headers["authorization"].removeprefix("Bearer ")
        return httpx.Response(422, json={"error": {"message": f"bad request from {got}"}})

    [s] = run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(echo))
    assert s.counts["failed"] == 4
    assert "[redacted]" in (project.root / s.folder / "outputs.jsonl").read_text()
    assert_nowhere(project, caplog.text)
