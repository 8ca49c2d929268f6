"""Credentials in a base URL are used like a key: sent as a header, never written, printed or published."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc, one_line_error
from ..helpers_run import ab_project, write_config

PASSWORD = "pw-9f8e7d6c5b4a"


def _with_credentials(base_url: str) -> str:
    return base_url.replace("://", f"://alice:{PASSWORD}@", 1)


def _everywhere(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


def test_url_credentials_are_sent_as_a_header_and_stored_nowhere(tmp_path: Path, server: FakeServer) -> None:
    server.configure({"require_key": True, "default_reply": "red"})
    project = ab_project(tmp_path / "proj")
    write_config(project.root, server.base_url, key_env=None)
    result = bc(project.root, "run", "colour-ab", "--base-url", _with_credentials(server.base_url), "--json")
    assert result.exit_code == 0, result.output
    stats = server.stats()
    assert stats["without_key"] == 0 and stats["with_key"] == 12
    site = bc(project.root, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    for text in (result.output, _everywhere(project.root), _everywhere(tmp_path / "site")):
        assert PASSWORD not in text
        assert "alice" not in text
    assert server.base_url in _everywhere(project.root / "results")


def test_url_credentials_in_benchcard_yaml_work_and_stay_there(tmp_path: Path, server: FakeServer) -> None:
    server.configure({"require_key": True, "default_reply": "red"})
    project = ab_project(tmp_path / "proj")
    write_config(project.root, _with_credentials(server.base_url), key_env=None)
    result = bc(project.root, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    assert server.stats()["without_key"] == 0
    assert PASSWORD not in _everywhere(project.results_dir) and PASSWORD not in result.output
    assert bc(project.root, "site", "--out", str(tmp_path / "site")).exit_code == 0
    site = _everywhere(tmp_path / "site")
    assert "-u USER" in site and PASSWORD not in site and "alice" not in site


def test_a_url_password_and_an_openai_key_cannot_share_the_header(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHCARD_TEST_KEY", "sk-test-0000")
    project = ab_project(tmp_path / "proj", "http://127.0.0.1:9/v1")
    line = one_line_error(bc(project.root, "run", "colour-ab", "--base-url", "http://bob:pw-1@127.0.0.1:9/v1"))
    assert "Authorization" in line and "pw-1" not in line
    assert not project.results_dir.exists()


def test_a_config_holds_the_password_apart_from_every_url_it_gives() -> None:
    """The one stripping path: made from a URL with credentials, a config's base_url (which every writer reads)
    has none, nor has its repr; the header is built from `credentials` alone."""
    from benchcard._util.urls import basic_auth
    from benchcard.run.providers.base import ProviderConfig

    cfg = ProviderConfig("proxy", "anthropic", f"http://alice:{PASSWORD}@127.0.0.1:9/v1", "X_KEY")
    assert cfg.base_url == "http://127.0.0.1:9/v1" and cfg.credentials == ("alice", PASSWORD)
    assert PASSWORD not in repr(cfg) and PASSWORD not in str(cfg.__dict__.get("base_url"))
    assert basic_auth(cfg.credentials) == "Basic YWxpY2U6cHctOWY4ZTdkNmM1YjRh"


def test_what_of_a_urls_credentials_is_kept_out_of_replies() -> None:
    """The password and the Basic token that carries it (what a server echoing the headers sends back); a URL
    with a user and no password has nothing to hide."""
    from benchcard._util.urls import credentials, secrets_of

    assert secrets_of(credentials(f"http://alice:{PASSWORD}@127.0.0.1:9/v1")) == (
        PASSWORD, "YWxpY2U6cHctOWY4ZTdkNmM1YjRh")
    assert secrets_of(credentials("http://alice@127.0.0.1:9/v1")) == ()
    assert secrets_of(None) == ()


def test_a_loopback_host_is_any_of_this_machines_own() -> None:
    """What is never sent through a proxy (`run/_calls.py`): 127.0.0.0/8, ::1 (as a URL brackets it or not),
    an IPv4 loopback written as IPv6, localhost and the names under it; nothing else."""
    from benchcard._util.urls import is_loopback

    own = ["127.0.0.1", "127.0.0.2", "127.1.2.3", "::1", "[::1]", "[::ffff:127.0.0.1]", "localhost", "LocalHost",
           "localhost.", "app.localhost", "a.b.localhost"]
    other = ["128.0.0.1", "10.0.0.1", "0.0.0.0", "::2", "[::]", "localhost.example.com", "notlocalhost",
             "example.org", "", "[::ffff:10.0.0.1]"]
    assert [h for h in own if not is_loopback(h)] == [] and [h for h in other if is_loopback(h)] == []
