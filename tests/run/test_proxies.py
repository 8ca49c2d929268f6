"""A proxy benchcard's client cannot use (socks5://) is refused before the first call, in one line naming the
variable, by every command that calls out; a host called directly (loopback, $NO_PROXY) is not refused."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from benchcard.run._calls import make_client
from benchcard.run._proxies import refusal
from benchcard.testing.fakeserver import FakeServer

from ..helpers_judge import CARD_ID, judge_project, write_judge_config, write_judge_pool_config
from ..helpers_run import ab_project, bc, runs_of

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
              "no_proxy")


@pytest.fixture
def socks(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, list[bytes]]]:
    """A listener standing for a SOCKS proxy: its port, and every first read of a connection made to it."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    got: list[bytes] = []
    done = threading.Event()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)

        def accept() -> None:
            while not done.is_set():
                with contextlib.suppress(OSError), listener.accept()[0] as conn:
                    conn.settimeout(2)
                    got.append(conn.recv(100))

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        yield listener.getsockname()[1], got
        done.set()
        thread.join()


def _proxied(server: FakeServer) -> str:
    """The fake server's URL by a name that is not a loopback one (`localhost4`): a proxy is asked to reach it."""
    return server.base_url.replace("127.0.0.1", "localhost4")


@pytest.mark.parametrize("command", [("run", "colour-ab"), ("run", "colour-ab", "--batch"),
                                     ("check", CARD_ID, "--live")], ids=["run", "batch", "check-live"])
def test_a_socks_proxy_stops_the_command_before_its_first_call(tmp_path: Path, server: FakeServer, key: str,
                                                               socks: tuple[int, list[bytes]],
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               command: tuple[str, ...]) -> None:
    """$ALL_PROXY=socks5://… was found out one call at a time: every cell sent, each failed, and the stop line
    suggested --retry-failed 'when the endpoint answers again'. Now the command stops at once, before any run
    folder is made, with one line naming the variable and what benchcard can use; neither the proxy nor the
    server hears a byte."""
    port, got = socks
    server.configure({"default_reply": "red"})
    if command[0] == "check":
        project = judge_project(tmp_path, _proxied(server), k=1, seal=False)
    else:
        project = ab_project(tmp_path, _proxied(server), fixtures=2, repetitions=1)
    monkeypatch.setenv("ALL_PROXY", f"socks5://puser:pr0xy-s3cret@127.0.0.1:{port}")
    result = bc(project, *command)
    assert result.exit_code != 0
    assert (f"ALL_PROXY=socks5://127.0.0.1:{port}: benchcard's client can use only an http:// (or https://) proxy, "
            "not a socks5:// one; set ALL_PROXY to an http:// proxy, unset it, or list localhost4 in NO_PROXY") \
        in result.output
    assert "pr0xy-s3cret" not in result.output and "retry-failed" not in result.output
    assert got == [] and server.stats()["calls"] == 0
    assert runs_of(project, command[1]) == []


@pytest.mark.parametrize("command", [("run", CARD_ID), ("run", CARD_ID, "--batch"), ("check", CARD_ID, "--live")],
                         ids=["run", "batch", "check-live"])
@pytest.mark.parametrize("pool", [False, True], ids=["one-server", "pool"])
def test_a_socks_proxy_on_the_judges_route_alone_stops_the_run_before_its_first_call(
        tmp_path: Path, server: FakeServer, key: str, socks: tuple[int, list[bytes]], monkeypatch: pytest.MonkeyPatch,
        command: tuple[str, ...], pool: bool) -> None:
    """A judge card whose model is called directly (a loopback server) and whose judge's provider goes through a
    socks $ALL_PROXY: the run sent every cell, then stopped when judging began, the calls spent. The judge's
    servers (each of a pool's) are now asked of the same routes as the run's own provider, at the same moment:
    one line naming the judge before any call, no run folder; `check --live` names the judge the same way."""
    port, got = socks
    server.configure({"default_reply": "A tomato.\nGRADE: PASS"})
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=1)
    if pool:
        write_judge_pool_config(project.root, server.base_url, [server.base_url, _proxied(server)])
    else:
        write_judge_config(project.root, server.base_url, _proxied(server))
    monkeypatch.setenv("ALL_PROXY", f"socks5://puser:pr0xy-s3cret@127.0.0.1:{port}")
    result = bc(project, *command)
    assert result.exit_code != 0
    assert (f"the judge of {CARD_ID} (provider 'judge'): ALL_PROXY=socks5://127.0.0.1:{port}: benchcard's client "
            "can use only an http:// (or https://) proxy, not a socks5:// one; set ALL_PROXY to an http:// proxy, "
            "unset it, or list localhost4 in NO_PROXY") in result.output, result.output
    assert "pr0xy-s3cret" not in result.output
    assert got == [] and server.stats()["calls"] == 0
    assert runs_of(project, CARD_ID) == []


def test_a_host_called_directly_is_not_refused(tmp_path: Path, server: FakeServer, key: str,
                                               socks: tuple[int, list[bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal follows the route each host's calls take: a loopback server, and a host $NO_PROXY lists, are
    called directly under a socks $ALL_PROXY, and the run goes on (the same fake server, now answering)."""
    port, got = socks
    server.configure({"default_reply": "red"})
    monkeypatch.setenv("ALL_PROXY", f"socks5://127.0.0.1:{port}")
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 0, result.output
    assert got == [] and server.stats()["calls"] == 4


@pytest.mark.parametrize(("variable", "url"), [("ALL_PROXY", "http://api.example/v1"),
                                               ("https_proxy", "https://api.example/v1"),
                                               ("HTTPS_PROXY", "https://api.example/v1")])
def test_the_refusal_names_the_variable_the_proxy_came_from(monkeypatch: pytest.MonkeyPatch, variable: str,
                                                             url: str) -> None:
    """httpx ranks a scheme's own variable over ALL_PROXY, and urllib a lowercase one over its uppercase: the line
    names the one to change. An http:// proxy beside it is no refusal."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALL_PROXY" if variable != "ALL_PROXY" else "HTTPS_PROXY", "http://127.0.0.1:3128")
    monkeypatch.setenv(variable, "socks5h://127.0.0.1:1080")
    client = make_client(1, 5.0)
    said = refusal(client, httpx.URL(url))
    if variable == "ALL_PROXY":  # the https:// variable's http:// proxy serves https:// URLs only
        assert said is not None and said.startswith("ALL_PROXY=socks5h://127.0.0.1:1080: ")
        assert refusal(client, httpx.URL("https://api.example/v1")) is None
    else:
        assert said is not None and said.startswith(f"{variable}=socks5h://127.0.0.1:1080: ")
        assert refusal(client, httpx.URL("http://api.example/v1")) is None  # ALL_PROXY's http:// proxy
    monkeypatch.setenv("NO_PROXY", "api.example")
    assert refusal(make_client(1, 5.0), httpx.URL(url)) is None
