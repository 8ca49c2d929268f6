"""An API key's value reaches the server's request header and nothing else: no file under results/, no log
line, no error message, no progress output — whatever goes wrong on the way."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.errors import ProviderError, RunError
from benchcard.project import Project
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from .helpers_batch import FAST, project_for
from .helpers_run import KEY_ENV, ab_project, write_config

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
    # the drops are shared by both runs, and a call dropped on a reused connection is sent again at once: which
    # run's cell ends on a connection error depends on how the connections fell, so both runs are read
    outputs = "".join(f.read_text() for f in sorted(project.results_dir.rglob("outputs.jsonl")))
    assert "failed" in shown.stderr and "connection error" in outputs
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


def test_a_key_echoed_in_a_replys_text_never_reaches_disk_or_the_pages(tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """A server (a debugging proxy) that echoes the request's headers into an answer: the stored output has the
    key replaced, the one edit made to a raw output; text merely shaped like a key stays as written."""
    project = ab_project(tmp_path, "http://echo.invalid/v1", fixtures=2, repetitions=1)

    def echo(request: httpx.Request) -> httpx.Response:
        got = request.headers["authorization"]
        return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": f"red; you sent {got}, not sk-look-alike-0000"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5}})

    [s] = run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(echo))
    assert s.counts["ok"] == 4
    rows = [json.loads(line) for line in (project.root / s.folder / "outputs.jsonl").read_text().splitlines()]
    assert {r["text"] for r in rows} == {"red; you sent Bearer [redacted], not sk-look-alike-0000"}
    site = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(project.root / "site")])
    assert site.exit_code == 0, site.output
    assert_nowhere(project, caplog.text, site.output)


def test_a_key_echoed_in_a_stop_reason_never_reaches_disk(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A server quoting the key in `finish_reason`: the cell's error said `[redacted]`, but outputs.jsonl kept the
    stop reason as the server sent it, key and all, in its `finish_reason` field (hostile audit, round 20)."""
    project = ab_project(tmp_path, "http://echo.invalid/v1", fixtures=2, repetitions=1)

    def echo(request: httpx.Request) -> httpx.Response:
        got = request.headers["authorization"].removeprefix("Bearer ")
        return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": f"halted for {got}", "message": {
            "role": "assistant", "content": "red"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}})

    [s] = run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(echo))
    rows = [json.loads(line) for line in (project.root / s.folder / "outputs.jsonl").read_text().splitlines()]
    assert {(r["status"], r["finish_reason"]) for r in rows} == {("failed", "halted for [redacted]")}
    assert_nowhere(project, caplog.text)


@pytest.mark.parametrize(("vendor", "password"), [("openai", ""), ("anthropic", ""), ("anthropic", "pw-batch-9f1e")])
def test_a_key_echoed_in_a_batchs_answers_never_reaches_disk(tmp_path: Path, server: FakeServer, vendor: str,
                                                             password: str, caplog: pytest.LogCaptureFixture) -> None:
    """The batch path redacts as the interactive one does: a server quoting the key (and a base URL's password, as
    its Basic token) in every answer, every failed request's error and a failed batch's reason leaves `[redacted]`
    in its place in the result files kept in the run folder, in outputs.jsonl and in the journal."""
    server.configure({"default_reply": "red", "echo_key": True, "faults": [{"match": "number 1", "kind": "500"}]})
    project = project_for(tmp_path, server, vendor, fixtures=3)
    if password:
        write_config(tmp_path, server.base_url.replace("://", f"://batcher:{password}@", 1), type_=vendor)
    sent = "[redacted] [redacted]" if password else "[redacted]"
    done = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert done.exit_code == 0, done.output
    folder = project.root / json.loads(done.stdout)["runs"][0]["folder"]
    rows = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
    assert {r["text"] for r in rows if r["status"] == "ok"} == {f"red (you sent {sent})"}
    assert {r["status"] for r in rows} == {"ok", "failed"}
    assert all(f"(you sent {sent})" in r["error"] for r in rows if r["status"] == "failed")
    results = sorted(folder.glob("batch/*.results-*.jsonl"))
    assert results and all(f"you sent {sent}".encode() in p.read_bytes() for p in results)

    server.configure({"default_reply": "red", "echo_key": True, "batch": {"end": "failed"}})
    failed = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert failed.exit_code == 0, failed.output
    run = json.loads(failed.stdout)["runs"][0]["folder"]
    status = bc(project, "status", Path(run).name)
    if vendor == "openai":  # a Message Batch has no reason of failure: its requests come back expired
        journal = (project.root / run / "batch" / "journal.jsonl").read_text()
        assert "injected batch failure (you sent [redacted])" in journal
    assert_nowhere(project, done.output, failed.output, status.output, caplog.text)
    for path in project.root.rglob("*"):
        if password and path.is_file() and path.name != "benchcard.yaml":
            assert password.encode() not in path.read_bytes(), path


def test_a_url_password_echoed_by_the_server_never_reaches_disk(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """A base URL's password is read like a key: a server echoing the request's `Authorization: Basic` header
    (the password base64-encoded with the user) into an answer, or the password itself into its error, leaves
    neither in outputs.jsonl, the log or the pages."""
    import base64

    password = "pw-ECHO-SENTINEL-6d1e"
    token = base64.b64encode(f"alice:{password}".encode()).decode()
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    write_config(project.root, f"http://alice:{password}@echo.invalid/v1", key_env=None)

    def echo(request: httpx.Request) -> httpx.Response:
        if b"number 1" in request.content:
            return httpx.Response(400, json={"error": {"message": f"user alice: password {password} expired"}})
        return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": f"red; you sent {request.headers['authorization']}"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5}})

    [s] = run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(echo))
    assert s.counts == {"ok": 2, "truncated": 0, "failed": 2}
    rows = [json.loads(line) for line in (project.root / s.folder / "outputs.jsonl").read_text().splitlines()]
    assert {r["text"] for r in rows if r["status"] == "ok"} == {"red; you sent Basic [redacted]"}
    assert {r["error"] for r in rows if r["status"] == "failed"} == {"HTTP 400: user alice: password [redacted] "
                                                                     "expired"}
    site = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(project.root / "site")])
    assert site.exit_code == 0, site.output
    for path in (p for p in project.root.rglob("*") if p.is_file() and p.name != "benchcard.yaml"):
        assert password.encode() not in path.read_bytes() and token.encode() not in path.read_bytes(), path
    assert password not in caplog.text and token not in caplog.text


# --------------------------------------------------------------------------- every writer, every credential

SECRETS = {"RUN_PASS": "pw-RUN-SENTINEL-41c7", "JUDGE_PASS": "pw-JUDGE-SENTINEL-92d8",
           "RUN_KEY": "sk-RUNKEY-SENTINEL-5e0f", "JUDGE_KEY": "sk-JUDGEKEY-SENTINEL-b3a6"}


def _sentinel_config(root: Path, url: str) -> None:
    """The run's and the judge's provider each with a key and a password in its base URL (the Messages API
    takes both: the key as `x-api-key`, the password as `Authorization: Basic`)."""
    run_url = url.replace("://", f"://runner:{SECRETS['RUN_PASS']}@", 1)
    judge_url = url.replace("://", f"://judger:{SECRETS['JUDGE_PASS']}@", 1)
    (root / "benchcard.yaml").write_text(
        "providers:\n"
        f"  fake: {{type: anthropic, base_url: '{run_url}', api_key_env: BC_SENTINEL_RUN_KEY}}\n"
        f"  judge: {{type: anthropic, base_url: '{judge_url}', api_key_env: BC_SENTINEL_JUDGE_KEY}}\n",
        encoding="utf-8")


def _no_secret_in(where: str, text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    for name, value in SECRETS.items():
        assert value.encode() not in data, f"{name} found in {where}"


def test_no_credential_reaches_any_file_page_or_output(tmp_path: Path, server: FakeServer,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Every writer (manifest, sealed requests, judge requests and outputs, batch journal and chunks, outputs,
    scores, verdict, table, ledger, blind sheet, grades, export, pages) and every printed line (`--json`, the
    verdict's text, `curl`, status, plan, errors), with sentinel passwords in the run's and the judge's base
    URLs and sentinel keys in both providers' variables: no sentinel anywhere but benchcard.yaml."""
    from .helpers_judge import CARD_ID, judge_project, script

    monkeypatch.setenv("BC_SENTINEL_RUN_KEY", SECRETS["RUN_KEY"])
    monkeypatch.setenv("BC_SENTINEL_JUDGE_KEY", SECRETS["JUDGE_KEY"])
    root = tmp_path / "proj"
    project = judge_project(root, fixtures=3, repetitions=2, k=2)
    _sentinel_config(root, server.base_url)
    server.configure(script({"reply": "GRADE: PASS"}))
    outside = tmp_path / "out"
    outside.mkdir()
    shown: list[Result] = [bc(project, "check"), bc(project, "run", CARD_ID, "--json")]
    assert shown[-1].exit_code == 0, shown[-1].output
    stats = server.stats(by_request=False)
    assert stats["with_key"] == stats["calls"] > 0 and stats["without_key"] == 0  # both secrets were sent
    run = json.loads(shown[-1].stdout)["runs"][0]["run"]
    shown += [bc(project, "blind-sheet", run, "--out", str(outside / "sheet.csv"))]
    sheet = (outside / "sheet.csv").read_text(encoding="utf-8").replace(",,", ",pass,")
    (outside / "graded.csv").write_text(sheet, encoding="utf-8")
    shown += [bc(project, "grade", run, str(outside / "graded.csv")),
              bc(project, "verdict", run, "--json"), bc(project, "verdict", run, "--show"),
              bc(project, "verdict", run, "--show", "--gate"),
              bc(project, "run", CARD_ID, "--batch", "--poll-interval", "0.05", "--json"),
              bc(project, "ledger"), bc(project, "ledger", "--verify"), bc(project, "ledger", "--json"),
              bc(project, "export", run, "--format", "csv", "--out", str(outside / "cells.csv")),
              bc(project, "status", run, "--json"), bc(project, "plan", CARD_ID, "--from", run, "--json"),
              bc(project, "curl", CARD_ID),
              bc(project, "site", "--out", str(outside / "site"))]
    batch = [r for r in shown if '"batch"' in r.stdout]
    assert shown[4].exit_code == 0 and batch, [(r.exit_code, r.output) for r in shown]
    # errors that name a server: refused connections, for the run's and the judge's provider
    dead = "http://runner:" + SECRETS["RUN_PASS"] + "@127.0.0.1:9/v1"
    shown += [bc(project, "run", CARD_ID, "--base-url", dead, "--attempts", "1", "--json"),
              bc(project, "curl", CARD_ID, "--base-url", dead)]
    _sentinel_config(root, "http://127.0.0.1:9/v1")
    shown += [bc(project, "run", CARD_ID, "--attempts", "1")]
    assert "12 failed" in shown[-1].output and '"failed": 12' in shown[-3].output  # their errors are on disk
    refused = [bc(project, "run", CARD_ID, "--base-url", dead.replace("http", "ftp", 1)),
               bc(project, "run", CARD_ID, "--base-url", dead.replace(":9/", ":99999/"))]
    assert [r.exit_code for r in refused] == [1, 1] and "ftp://127.0.0.1:9/v1" in refused[0].output
    shown += refused
    for path in [*root.rglob("*"), *outside.rglob("*")]:
        if path.is_file() and path.name != "benchcard.yaml":
            _no_secret_in(str(path), path.read_bytes())
    assert (outside / "site" / "index.html").is_file() and any(root.rglob("journal.jsonl"))
    for result in shown:
        _no_secret_in(f"the output of {result}", result.output + result.stderr + repr(result.exception))
    _no_secret_in("the log", caplog.text)
    manifest = json.loads(next(root.rglob(f"{run}/manifest.json")).read_text())
    assert manifest["judge"]["base_url"] == server.base_url  # the URL is kept, its password is not


@pytest.mark.parametrize("how", ["key", "password"])
def test_a_key_or_password_too_short_to_find_in_a_reply_is_refused_before_any_call(
        tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """A 7-character key (`abc1234`) or URL password (`hunter2`) echoed by the server was written to outputs.jsonl
    as the model's text: a reply is cleared of a key of 8 characters or more only. Now it is one line, no call."""
    server.configure({"default_reply": "red", "echo_key": True})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    if how == "key":
        monkeypatch.setenv(KEY_ENV, "abc1234")
        said = (f"error: {KEY_ENV} holds a key of 7 character(s): one shorter than 8 cannot be told from a model's "
                "own words, so it could not be kept out of a reply that quotes it; use a key of 8 characters or more "
                "(a server that takes none: declare it in benchcard.yaml without api_key_env)\n")
    else:
        write_config(project.root, server.base_url.replace("://", "://alice:hunter2@", 1), key_env=None)
        said = ("error: the base URL of provider 'fake' holds a password of 7 character(s): one shorter than 8 "
                "cannot be told from a model's own words, so it could not be kept out of a reply that quotes it; "
                "use a password of 8 characters or more\n")
    refused = bc(project, "run", "colour-ab")
    assert (refused.exit_code, refused.stdout, refused.stderr) == (1, "", said)
    assert server.stats(by_request=False)["calls"] == 0 and not project.results_dir.exists()
    monkeypatch.setenv(KEY_ENV, "abc12345")  # 8 characters: taken, and taken out of the echo
    write_config(project.root, server.base_url)
    ran = bc(project, "run", "colour-ab", "--json")
    assert ran.exit_code == 0, ran.output
    outputs = project.root / json.loads(ran.stdout)["runs"][0]["folder"] / "outputs.jsonl"
    assert {json.loads(line)["text"] for line in outputs.read_text().splitlines()} == {"red (you sent [redacted])"}


# ------------------------------------------------------------------ a key quoted where a line is cut short

#: A key no look-alike rule takes out (`redact` also masks text shaped `sk-…`): only its own replacement can.
CUT_KEY = "gsk_CUT7wQ2mZ9xV4bN8kL3pR6tY1uE5oA0sJ"


def _parts(secret: str, size: int = 8) -> set[str]:
    """Every run of `size` characters of `secret`: what a line cut inside the key would still hold of it."""
    return {secret[i:i + size] for i in range(len(secret) - size + 1)}


def _echoed(where: str, request: httpx.Request) -> httpx.Response:
    """The key (`Authorization`'s token) quoted by a server after a pad that grows with the fixture's number (8
    characters more for each), in the place `where` says: whichever length benchcard cuts the server's words to,
    some cell's cut falls inside the key. Only variant A's calls are refused so (the baseline's are answered), so
    that the refusals are that arm's outcome and the run goes on to the end."""
    if b"Please" not in request.content:
        return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "red"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}})
    got = request.headers["authorization"].removeprefix("Bearer ")
    number = int(re.search(rb"number (\d+)", request.content).group(1))  # type: ignore[union-attr]
    said = "x" * (8 * number) + got
    if where == "an error's message":
        return httpx.Response(400, json={"error": {"message": said}})
    if where == "an error in a 200":
        return httpx.Response(200, json={"error": {"code": 400, "message": said}})
    if where == "an error's type":
        return httpx.Response(200, json={"error": {"code": 400, "type": said, "message": "refused"}})
    choice: dict[str, object] = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                                 "content": "red"}}
    if where == "a refusal":
        choice["message"] = {"role": "assistant", "content": None, "refusal": said}
    elif where == "a stop reason":
        choice["finish_reason"] = said
    elif where == "a stop reason of another type":
        choice["finish_reason"] = {"why": said}
    return httpx.Response(200, json={"choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 5}})


@pytest.mark.parametrize("where", ["an error's message", "an error in a 200", "an error's type", "a refusal",
                                   "a stop reason", "a stop reason of another type"])
def test_a_key_quoted_where_a_line_is_cut_leaves_no_part_of_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, where: str) -> None:
    """A server's words are cut to a line's length (an error's message to 200 characters, a stop reason to 40, a
    type to 80) before they are kept. Cut first, a key quoted across the cut kept its first characters in the cell's
    error, since only the whole key was then replaced: a proxy quoting the key after 160 characters left 36 of its
    40 in outputs.jsonl (hostile audit, 2026-12-08). The key is taken out before any cut: no 8 characters of it
    are anywhere."""
    monkeypatch.setenv(KEY_ENV, CUT_KEY)
    project = ab_project(tmp_path, "http://echo.invalid/v1", fixtures=40, repetitions=1)
    [s] = run(project, "colour-ab", RunOptions(progress=False, attempts=1),
              transport=httpx.MockTransport(lambda request: _echoed(where, request)))
    _no_part_of(CUT_KEY, project, caplog.text)
    assert s.counts["failed"] == 40
    outputs = (project.root / s.folder / "outputs.jsonl").read_text()
    assert "[redac" in outputs  # the server's words were kept, cut, without the key


def _no_part_of(secret: str, project: Project, *texts: str) -> None:
    files = [p for p in project.root.rglob("*") if p.is_file() and p.name != "benchcard.yaml"]
    for part in _parts(secret):
        for path in files:
            assert part.encode() not in path.read_bytes(), f"{part!r} of the key in {path}"
        for text in texts:
            assert part not in text, f"{part!r} of the key in {text[:200]!r}"


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_key_quoted_in_a_batch_apis_refusal_where_its_line_is_cut_leaves_no_part_of_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, vendor: str) -> None:
    """A batch API's control call refused (HTTP 400) with the key in its message after 190 characters: the
    message is cut to 200 for the line that stops the run, and the line held the key's first 10 characters."""
    monkeypatch.setenv(KEY_ENV, CUT_KEY)
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    write_config(project.root, "http://echo.invalid/v1", type_=vendor)

    def echo(request: httpx.Request) -> httpx.Response:
        got = request.headers.get("x-api-key") or request.headers["authorization"].removeprefix("Bearer ")
        return httpx.Response(400, json={"error": {"type": "invalid_request_error", "message": "x" * 190 + got}})

    with pytest.raises(ProviderError) as info:
        run(project, "colour-ab", RunOptions(progress=False, batch=True), transport=httpx.MockTransport(echo))
    assert "HTTP 400: " + "x" * 190 in str(info.value)
    _no_part_of(CUT_KEY, project, str(info.value), caplog.text)
