"""Credentials in a base URL are used like a key: sent as a header, never written, printed or published."""

from __future__ import annotations

import base64
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


TOKEN_USER = "ghp_5f4e3d2c1b0a9f8e7d6c"


@pytest.mark.parametrize(("user", "secret"), [
    ("alice", False), ("svc-bench", False), ("first.last", False), ("bench_v2", False), ("ab12345", False),
    (TOKEN_USER, True), ("sk-live-0123", True), ("a" * 33, True), ("tok+en/abc=", True), ("0a1b2c3d4e5f", True)])
def test_a_url_user_that_is_no_plain_account_name_is_a_secret(user: str, secret: bool) -> None:
    """Review21: `https://TOKEN@host` (a token as the user, no password) kept nothing out of a reply, and
    `benchcard curl` printed the token. A user of 8 characters or more that is no plain short account name (a
    letter, then up to 31 letters, digits, `.`, `_`, `-`, fewer than 4 digits) is hidden as a password is, with
    the Basic token that carries it."""
    from benchcard._util.urls import credentials, secret_user, secrets_of

    assert secret_user(user) is secret
    hidden = secrets_of(credentials(f"http://{user.replace('/', '%2F')}@127.0.0.1:9/v1"))
    assert hidden == ((user, basic_auth_token(f"{user}:")) if secret else ())


def basic_auth_token(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def test_a_token_given_as_the_url_s_user_is_stored_and_printed_nowhere(tmp_path: Path, server: FakeServer) -> None:
    """A server echoing the request's `Authorization` sent back the Basic token of `TOKEN:` (the token, base64):
    outputs.jsonl kept it, and `benchcard curl` printed the token as `-u 'TOKEN'`. Now neither does, and curl's
    `-u` reads it from a variable named in a comment, with the empty password a run sends."""
    server.configure({"default_reply": "red", "echo_key": True})
    project = ab_project(tmp_path / "proj")
    write_config(project.root, server.base_url.replace("://", f"://{TOKEN_USER}@", 1), key_env=None)
    result = bc(project.root, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    curl = bc(project.root, "curl", "colour-ab")
    assert curl.exit_code == 0, curl.output
    encoded = basic_auth_token(f"{TOKEN_USER}:")
    for text in (result.output, _everywhere(project.results_dir), curl.output):
        assert TOKEN_USER not in text and encoded not in text
    outputs = next(project.results_dir.rglob("outputs.jsonl")).read_text()
    assert "you sent [redacted]" in outputs
    assert curl.output.startswith("# -u: set $URL_USER to the user name of providers.fake.base_url in "
                                  "benchcard.yaml (or of --base-url), a token, not printed\ncurl "), curl.output
    assert '  -u "$URL_USER:" \\\n' in curl.output


def test_a_loopback_host_is_any_of_this_machines_own() -> None:
    """What is never sent through a proxy (`run/_calls.py`): 127.0.0.0/8 (also as the resolver reads a short or
    numeric form: `0x7f.1`, `127.1`), ::1 (as a URL brackets it or not), an IPv4 loopback written as IPv6,
    localhost and localhost.localdomain and the names under them, which systemd's resolver answers with the
    loopback whatever the hosts file says; nothing else (another alias of a hosts file is a name like any other)."""
    from benchcard._util.urls import is_loopback

    own = ["127.0.0.1", "127.0.0.2", "127.1.2.3", "::1", "[::1]", "[::ffff:127.0.0.1]", "localhost", "LocalHost",
           "localhost.", "app.localhost", "a.b.localhost", "127.1", "2130706433", "0x7f000001", "0x7f.1",
           "localhost.localdomain", "LOCALHOST.LocalDomain.", "app.localhost.localdomain"]
    other = ["128.0.0.1", "10.0.0.1", "0.0.0.0", "::2", "[::]", "localhost.example.com", "notlocalhost",
             "example.org", "", "[::ffff:10.0.0.1]", "10.1", "1", "167772161", "127.example",
             "localdomain", "host.localdomain", "localhost.localdomain.example", "notlocalhost.localdomain",
             "localhost4", "ip6-localhost"]
    assert [h for h in own if not is_loopback(h)] == [] and [h for h in other if is_loopback(h)] == []


SECRET = "sk-query-5e4d3c2b1a"


@pytest.mark.parametrize(("url", "said"), [
    (f"http://127.0.0.1:9/v1?key={SECRET}", "?key=…"),
    (f"http://127.0.0.1:9/v1?alt=sse&api-key={SECRET}", "?api-key=…"),
    (f"http://127.0.0.1:9/v1?API_KEY={SECRET}", "?API_KEY=…"),
    (f"http://127.0.0.1:9/v1?token={SECRET}", "?token=…"),
])
def test_a_key_in_a_base_urls_query_is_refused_saying_where_the_key_goes(tmp_path: Path, url: str,
                                                                         said: str) -> None:
    """Gemini's habit, `?key=…`: a query was refused as any query is, without saying where the key belongs. In
    benchcard.yaml (`check` and `run` read it whole) and on the command line, the line names the field and the
    variable the key goes in, and never the key; nothing is written."""
    expected = (f": the URL carries a key in its query ({said}), which would be stored with the URL: put the key "
                "in $BENCHCARD_TEST_KEY (the provider's api_key_env), sent as a header and never stored, and give "
                "the URL without its query")
    project = ab_project(tmp_path / "proj", "http://127.0.0.1:9/v1")
    given = one_line_error(bc(project.root, "run", "colour-ab", "--base-url", url))
    assert given == "error: --base-url" + expected
    write_config(project.root, url)
    for args in (("check", "colour-ab"), ("run", "colour-ab", "--scratch")):
        result = bc(project.root, *args)
        assert result.exit_code == 1 and SECRET not in result.output + result.stderr
        assert f"error: benchcard.yaml: field 'providers.fake.base_url'{expected}" in result.stderr.splitlines()
    assert not project.results_dir.exists()


def test_a_key_in_an_sdk_base_url_variable_is_refused_naming_the_variable(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://gateway.example/v1?api_key={SECRET}")
    project = ab_project(tmp_path / "proj", "http://127.0.0.1:9/v1")
    line = one_line_error(bc(project.root, "run", "colour-ab", "--provider", "openai", "--model", "m"))
    assert line.startswith("error: $OPENAI_BASE_URL: the URL carries a key in its query (?api_key=…)") and (
        "put the key in $OPENAI_API_KEY" in line and SECRET not in line)


@pytest.mark.parametrize(("url", "said"), [
    (f"https://alice:{PASSWORD}@host.example/v1 x",
     "expected a URL without spaces or control characters, got 'https://host.example/v1 x'"),
    (f"ftp://alice:{PASSWORD}@host.example/v1?q={PASSWORD}",
     "expected an http:// or https:// URL with a host, got 'ftp://host.example/v1?…'"),
    (f"http://alice:{PASSWORD}/v1", "not a valid URL (its port is not a number from 0 to 65535): 'http://alice:…/v1'"),
    (f"https://alice:b64/{PASSWORD}@host.example/v1?k=1",
     "not a valid URL (its port is not a number from 0 to 65535): 'https://host.example/v1?…'"),
    (f"https://alice:\uff0f{PASSWORD}@host.example/v1", "not a valid URL (its host or password holds a character "
     "that reads as '/', '?', '#', '@' or ':' once normalized (NFKC)): 'https://host.example/v1'"),
    (f"https://alice:{PASSWORD}@[host/v1", "not a valid URL (its host in brackets is not an IP address): "
     "'https://[host/v1'"),
])
def test_a_refused_url_is_quoted_without_its_password_or_query(tmp_path: Path, url: str, said: str) -> None:
    """Each line refusing a base URL quoted it as given (a space, another scheme: with its password and query;
    a password written without its '@' reached the line as the port the parser could not read; one holding a
    '/', as base64 does, ends the authority early, and the rest of it reached the line as the path; one holding a
    character that NFKC reads as '/', such as '／', reached it in the parser's own words, which quote the whole
    `user:password@host`)."""
    project = ab_project(tmp_path / "proj", "http://127.0.0.1:9/v1")
    assert one_line_error(bc(project.root, "run", "colour-ab", "--base-url", url)) == f"error: --base-url: {said}"


def test_a_key_given_in_a_urls_place_is_quoted_by_no_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--base-url "$OPENAI_API_KEY"` or an SDK's base URL variable holding the key (variables swapped): the
    line refusing it quoted the key, `got 'sk-proj-…'` (hostile audit, round 20)."""
    pasted = "sk-proj-PASTED-9a8b7c6d"
    project = ab_project(tmp_path / "proj", "http://127.0.0.1:9/v1")
    said = (": expected an http(s) URL such as https://host/v1, got text of 23 character(s) without a ':' or '/', "
            "not quoted since it may be a key pasted in the URL's place")
    assert one_line_error(bc(project.root, "run", "colour-ab", "--base-url", pasted)) == f"error: --base-url{said}"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", pasted)
    line = one_line_error(bc(project.root, "run", "colour-ab", "--provider", "openai", "--model", "m"))
    assert line == f"error: $OPENAI_BASE_URL{said}"
    write_config(project.root, pasted)
    checked = bc(project.root, "check")
    assert checked.exit_code == 1 and "PASTED" not in checked.output + checked.stderr
    assert f"benchcard.yaml: field 'providers.fake.base_url'{said}" in checked.output
    assert not project.results_dir.exists()


def test_a_url_is_shown_without_what_may_carry_a_key() -> None:
    from benchcard._util.urls import shown_url

    assert [shown_url(u) for u in (
        "https://alice:pw@host/v1", "https://host/v1?key=x#f", "https://host/v1#f", "http://key:sk-1/v1",
        "http://[::1]:80/v1", "https://a:b@c:d@host:443/p?x", "http://h:80/a/b:c@d", "host/v1", "",
        "https://a:b/c+d/e==@host/v1", "https://a:b/c@d@host:443/v1#f")] == [
        "https://host/v1", "https://host/v1?…", "https://host/v1#…", "http://key:…/v1",
        "http://[::1]:80/v1", "https://host:443/p?…", "http://h:80/a/b:c@d", "host/v1", "",
        "https://host/v1", "https://host:443/v1#…"]


def test_a_password_holding_a_slash_is_refused_before_it_is_stored(tmp_path: Path, server: FakeServer) -> None:
    """A '/' in a password (base64 holds them) ends the URL's host there: `http://alice:2024/pw@host/v1` reads as
    host `alice`, port 2024 and the path `/pw@host/v1`, so the run was planned and its manifest recorded the
    password as part of the base URL (a '?' or a '#' was refused as a query or fragment, never saying why). An '@'
    after the host is refused in one line that quotes no part of the URL, saying how to write the password;
    nothing is written. Written with %2F, the password is sent, never stored."""
    project = ab_project(tmp_path / "proj")
    write_config(project.root, server.base_url, key_env=None)
    for url in (f"http://alice:2024/{PASSWORD}@127.0.0.1:9/v1", f"http://alice:2024?{PASSWORD}@127.0.0.1:9/v1",
                f"http://alice:2024#{PASSWORD}@127.0.0.1:9/v1"):
        line = one_line_error(bc(project.root, "run", "colour-ab", "--base-url", url, "--attempts", "1"))
        assert line == ("error: --base-url: expected no '@' after the URL's host: a password holding '/', '?' or "
                        "'#' ends the host there, and what follows would be stored with the URL; write them as %2F, "
                        "%3F and %23 (an '@' of the path as %40)")
    assert not project.results_dir.exists()
    server.configure({"require_key": True, "default_reply": "red"})
    written = server.base_url.replace("://", f"://alice:2024%2F{PASSWORD}@", 1)
    result = bc(project.root, "run", "colour-ab", "--base-url", written, "--json")
    assert result.exit_code == 0, result.output
    assert server.stats()["without_key"] == 0
    assert PASSWORD not in _everywhere(project.results_dir) and "2024%2F" not in _everywhere(project.results_dir)
