"""`benchcard run` end to end over real sockets against the fake server, as a user runs it."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import socket
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchcard._util.hashing import digest, file_digest
from benchcard.card.load import load_card
from benchcard.run import _calls as calls
from benchcard.run._calls import workers_for
from benchcard.run.options import RunOptions
from benchcard.run.providers import BUILTIN
from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.providers.openai import OpenAIProvider
from benchcard.run.runner import run, score_blind
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import (
    KEY_ENV,
    PROBE,
    RED_REPLY,
    ab_project,
    bc,
    copy_repo_card,
    ok,
    only_run,
    probe_project,
    read_head,
    read_jsonl,
    read_request_body,
    recorded_sleeps,
    run_on_raw_server,
    runs_of,
    seal_card,
    send_json,
    summary,
    tls_server,
    write_config,
)
from ..helpers_wait import watchdog

MANIFEST_KEYS = {"run", "card", "version", "kind", "seal_root", "rig", "provider_type", "base_url", "params", "seed",
                 "headers", "sealed", "plan_digest",
                 "repetitions", "cells", "concurrency", "requests_per_minute", "benchcard_version", "started_at"}
FINISH_KEYS = {"finished_at", "outputs_digest", "scores_digest", "counts"}
REPLIED_KEYS = {"replied_models", "replied_rows"}  # every pass of calls to a server counts its replies' models
OUTPUT_KEYS = {"cell", "fixture", "status", "text", "finish_reason", "usage", "cost", "latency_ms", "attempts",
               "error"}


# ------------------------------------------------------------------------------------------- the happy path


def test_a_probe_run_writes_the_whole_run_folder(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "negative", "record_bodies": True, "latency_ms": 5})
    project = probe_project(tmp_path, server.base_url, repetitions=5)
    out = summary(ok(bc(project, "run", PROBE, "--json")))
    folder = only_run(project, PROBE)
    [s] = out["runs"]
    assert s["run"] == folder.name and s["folder"] == project.relative(folder)
    assert s["counts"] == {"ok": 5, "truncated": 0, "failed": 0} and s["cells"] == 5 and s["finished"]
    assert out["wall_s"] > 0

    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest) == MANIFEST_KEYS | FINISH_KEYS | REPLIED_KEYS
    assert manifest["replied_models"] == [{"anthropic/claude-opus-5": 5}] and manifest["replied_rows"] == [
        {"rows": 5, "uncounted": 0}]
    assert manifest["rig"] == {"provider": "fake", "model": "anthropic/claude-opus-5", "effort": None,
                               "surface": None, "line": "anthropic/claude-opus-5 · fake"}
    assert manifest["provider_type"] == "openai" and manifest["base_url"] == server.base_url
    assert manifest["cells"] == 5 and manifest["concurrency"] == 8 and manifest["kind"] == "probe"
    assert manifest["outputs_digest"] == file_digest(folder / "outputs.jsonl")
    assert manifest["scores_digest"] == file_digest(folder / "scores.jsonl")
    assert manifest["counts"] == {"ok": 5, "truncated": 0, "failed": 0}

    assignment = read_jsonl(folder / "sealed" / "assignment.jsonl")
    requests = read_jsonl(folder / "sealed" / "requests.jsonl")
    outputs = read_jsonl(folder / "outputs.jsonl")
    scores = read_jsonl(folder / "scores.jsonl")
    assert [a["cell"] for a in assignment] == [r["cell"] for r in requests]
    assert sorted(a["repetition"] for a in assignment) == [0, 1, 2, 3, 4]
    assert {o["cell"] for o in outputs} == {a["cell"] for a in assignment} == {s["cell"] for s in scores}
    for o in outputs:
        assert set(o) == OUTPUT_KEYS
        assert o["status"] == "ok" and o["text"] == "negative" and o["attempts"] == 1 and o["error"] is None
        assert o["usage"]["input"] > 0 and o["latency_ms"] >= 5
    assert all(s["score"] == 1.0 for s in scores)
    # what was sent is exactly what was stored
    stats = server.stats()
    assert sorted(map(digest, stats["bodies"])) == sorted(digest(r["body"]) for r in requests)
    assert all(r["url"] == server.base_url + "/chat/completions" and r["provider"] == "fake" for r in requests)


def test_the_plan_and_manifest_exist_before_the_first_call(tmp_path: Path, key: str) -> None:
    project = ab_project(tmp_path, "http://fake.invalid/v1", fixtures=3, repetitions=2)
    seen: list[tuple[bool, int, int]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if not seen:
            [folder] = runs_of(project, "colour-ab")
            requests = read_jsonl(folder / "sealed" / "requests.jsonl")
            seen.append(((folder / "manifest.json").is_file(), len(requests),
                         len(read_jsonl(folder / "sealed" / "assignment.jsonl"))))
            assert json.loads(request.content) in [r["body"] for r in requests]
        return httpx.Response(200, json={"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]})

    [s] = run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(handler))
    assert seen == [(True, 12, 12)]
    assert s.counts["ok"] == 12


def test_the_verdict_refuses_scores_edited_after_the_run(tmp_path: Path, key: str) -> None:
    project = ab_project(tmp_path, "http://fake.invalid/v1", fixtures=3, repetitions=2)
    reply = {"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]}
    [s] = run(project, "colour-ab", RunOptions(progress=False),
              transport=httpx.MockTransport(lambda request: httpx.Response(200, json=reply)))
    scores = project.root / s.folder / "scores.jsonl"
    scored = scores.read_bytes()
    first, rest = scored.split(b"\n", 1)
    row = json.loads(first)
    scores.write_bytes(json.dumps({**row, "score": 1.0 - row["score"]}).encode() + b"\n" + rest)
    result = bc(project, "verdict", s.run)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    assert "scores.jsonl" in line and "changed" in line
    scores.write_bytes(scored)
    ok(bc(project, "verdict", s.run))


def test_unsealed_and_changed_cards_are_refused(tmp_path: Path, key: str) -> None:
    project = probe_project(tmp_path, "http://fake.invalid/v1")
    (project.keys_dir(PROBE) / "v3.seal.json").unlink()
    result = bc(project, "run", PROBE)
    assert result.exit_code == 1 and "not sealed" in result.stderr and "Traceback" not in result.output
    seal_card(tmp_path, PROBE)
    path = project.card_path(PROBE)
    path.write_text(path.read_text().replace("max_tokens: 1020", "max_tokens: 1000"))
    result = bc(project, "run", PROBE)
    assert result.exit_code == 1
    assert "cards/one-word-sentiment.yaml" in result.stderr and "changed after sealing" in result.stderr
    assert not runs_of(project, PROBE)


def test_a_missing_key_is_one_line_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = probe_project(tmp_path, "http://fake.invalid/v1")
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = bc(project, "run", PROBE)
    assert result.exit_code == 1
    assert result.stderr == (f"error: {KEY_ENV} is not set; export it, or run on the embedded model with "
                             "--provider local\n")
    assert not project.results_dir.exists()
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    result = bc(project, "run", PROBE, "--provider", "openrouter")
    assert result.exit_code == 1 and "OPENROUTER_API_KEY is not set" in result.stderr
    # a batch cannot go to the embedded model (`provider 'local' ... has no batch API`): not offered there
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = bc(project, "run", PROBE, "--provider", "openai", "--batch", "--no-wait")
    assert (result.exit_code, result.stderr) == (1, "error: OPENAI_API_KEY is not set; export it (--batch goes to "
                                                    "the vendor's batch API, which only its key opens)\n")
    assert not project.results_dir.exists()


@pytest.mark.parametrize("value", ["sk-\u2010abcd1234", "sk-abcd1234\u00e9", "sk-abcd\u00a01234"])
def test_a_key_no_http_header_can_carry_is_one_line_before_any_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     value: str) -> None:
    """A key pasted with a typographic hyphen (U+2010), an accented letter or a no-break space: every call of the
    grid failed with "UnicodeEncodeError: 'ascii' codec can't encode character '\\u2010' in position 10", a run
    folder of failed cells written, and the key's character and position in every cell's error on disk."""
    project = probe_project(tmp_path, "http://fake.invalid/v1", repetitions=3)
    monkeypatch.setenv(KEY_ENV, value)
    result = bc(project, "run", PROBE)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"error: {KEY_ENV} holds a character outside ASCII (a typographic dash or quote, or "
                             "a no-break space, pasted with it?); no HTTP header can carry it. Set it to the key "
                             "alone\n")
    assert not project.results_dir.exists()


def test_one_run_per_model_and_the_rig_is_the_one_used(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "record_bodies": True})
    project = ab_project(tmp_path, "http://wrong.invalid/v1", fixtures=2, repetitions=1)
    out = summary(ok(bc(project, "run", "colour-ab", "--model", "m-a", "--model", "m-b", "--base-url",
                        server.base_url + "/", "--json")))
    assert [r["model"] for r in out["runs"]] == ["m-a", "m-b"]
    assert len({r["run"] for r in out["runs"]}) == 2
    for r in out["runs"]:
        manifest = json.loads((project.root / r["folder"] / "manifest.json").read_text())
        # another endpoint than the rig's own: a scratch run, marked so (tests/run/test_scratch.py)
        assert manifest["rig"]["model"] == r["model"] and manifest["rig"]["line"] == f"{r['model']} · fake · scratch"
        assert manifest["base_url"] == server.base_url and manifest["scratch"].startswith("--base-url")
        assert {b["body"]["model"] for b in read_jsonl(project.root / r["folder"] / "sealed" / "requests.jsonl")} \
            == {r["model"]}
    assert sorted(b["model"] for b in server.stats()["bodies"]) == ["m-a"] * 4 + ["m-b"] * 4


def test_the_anthropic_messages_api_over_sockets(tmp_path: Path, server: FakeServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red", "require_key": True,
                      "replies": [{"match": "number 1", "reply": "a long red answer", "finish_reason": "length"}]})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1, effort="low", max_tokens=5000)
    out = summary(ok(bc(project, "run", "colour-ab", "--provider", "anthropic", "--model", "claude-test",
                        "--base-url", server.base_url, "--json")))
    [s] = out["runs"]
    assert s["rig"] == "claude-test · effort low · anthropic · scratch"  # --base-url: another endpoint
    assert s["counts"] == {"ok": 2, "truncated": 2, "failed": 0}
    folder = project.root / s["folder"]
    body = read_jsonl(folder / "sealed" / "requests.jsonl")[0]["body"]
    assert body["system"] == "Answer with one word." and body["thinking"] == {"type": "enabled",
                                                                               "budget_tokens": 1250}
    outputs = {o["fixture"]: o for o in read_jsonl(folder / "outputs.jsonl") if o["status"] == "ok"}
    assert outputs["item-000"]["text"] == "red"  # the thinking block is not part of the text
    assert server.stats()["by_endpoint"] == {"/v1/messages": 4}


# --------------------------------------------------------------------------------------------- faults


def fault_run(tmp_path: Path, server: FakeServer, faults: list[dict[str, Any]], *args: str,
              **config: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    server.configure({"default_reply": "red", "faults": faults, **config})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    out = summary(ok(bc(project, "run", "colour-ab", "--json", *args)))
    [s] = out["runs"]
    return s, read_jsonl(project.root / s["folder"] / "outputs.jsonl")


def test_429_is_retried_after_retry_after(tmp_path: Path, server: FakeServer, key: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    asked = recorded_sleeps(monkeypatch)
    s, outputs = fault_run(tmp_path, server, [{"kind": "429", "times": 1, "retry_after": 1}])
    assert s["counts"]["ok"] == 4 and all(o["attempts"] == 2 for o in outputs)
    assert len(asked) == 4 and all(1.0 <= a <= 1.5 for a in asked)  # each cell waited what Retry-After asked, once,
    assert len(set(asked)) == 4  # and a jitter of its own on top: they do not come back together
    assert server.stats()["by_status"] == {"429": 4, "200": 4}


@pytest.mark.parametrize("refusal", [b"429 Too Many Requests\r\nRetry-After: 0.05", b"503 Service Unavailable",
                                     b"503 Service Unavailable\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT"],
                         ids=["429", "503", "503-date"])
def test_a_server_limiting_calls_in_flight_gets_each_cell_once_at_concurrency_64(tmp_path: Path, key: str,
                                                                                 refusal: bytes) -> None:
    """A server that takes 5 calls at once and refuses the rest with `429, Retry-After: 0.05`, run at
    --concurrency 64 with the default 4 attempts: the run ends, every cell is answered, and none twice (billed
    twice). Each refused cell used to wait exactly what Retry-After asked, so the 59 refused came back together and
    were refused together again: 89 of 160 cells failed; with a jitter on top of the wait, still 3 to 23 in five
    runs. The calls in flight now narrow on each refusal (`_gate`) and the run finds the server's width. A 503
    (overloaded: OpenAI's engine, nginx's limit_conn and limit_req) is the same refusal, with a Retry-After or
    without (hostile audit, wire20: it did not narrow them)."""
    lock = threading.Lock()
    state = {"in_flight": 0, "most": 0, "answered": 0}

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            with lock:
                refused = state["in_flight"] >= 5
                if not refused:
                    state["in_flight"] += 1
                    state["most"] = max(state["most"], state["in_flight"])
            if refused:
                body = b'{"error": {"message": "too many requests in flight"}}'
                conn.sendall(b"HTTP/1.1 %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                             % (refusal, len(body), body))
                return
            try:
                time.sleep(0.05)
                send_json(conn, RED_REPLY)
                with lock:
                    state["answered"] += 1
            finally:
                with lock:
                    state["in_flight"] -= 1

    project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "64", "--timeout", "30",
                                        fixtures=20, repetitions=4)
    out = summary(ok(result))
    [s] = out["runs"]
    rows = read_jsonl(project.root / s["folder"] / "outputs.jsonl")
    assert len(rows) == 160 and len({r["cell"] for r in rows}) == 160
    ok_rows = sum(r["status"] == "ok" for r in rows)
    assert state["most"] == 5 and state["answered"] == ok_rows, state  # no cell answered twice
    assert ok_rows == 160, (ok_rows, [r["error"] for r in rows if r["error"]][:3])
    assert s["concurrency"] == 64 and 1 <= s["narrowed"] < 16, s


def test_a_server_without_limits_gets_the_full_concurrency(tmp_path: Path, key: str) -> None:
    """No slow-down without cause: a server that refuses nothing sees --concurrency calls in flight at once. The
    server holds each answer until it has seen 16 calls at once, not for 0.2 s: under load the 16th call could
    come after the first had been answered. A run that never sends 16 is answered 20 s after the start, inside
    the calls' 30 s timeout (a call timed out and sent again would count twice)."""
    lock = threading.Lock()
    state = {"in_flight": 0, "most": 0}
    full = threading.Event()
    deadline = time.monotonic() + 20

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            with lock:
                state["in_flight"] += 1
                state["most"] = max(state["most"], state["in_flight"])
                if state["most"] >= 16:
                    full.set()
            full.wait(max(0.0, deadline - time.monotonic()))
            with lock:  # counted out before the answer leaves: the client's next call may come as soon as it has it
                state["in_flight"] -= 1
            send_json(conn, RED_REPLY)

    project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "16", "--timeout", "30",
                                        fixtures=8, repetitions=4)
    out = summary(ok(result))
    rows = read_jsonl(project.root / out["runs"][0]["folder"] / "outputs.jsonl")
    assert [r["status"] for r in rows] == ["ok"] * 64
    assert state["most"] == 16, state
    assert out["runs"][0]["narrowed"] is None


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_answer_whose_stream_never_ends_is_called_again(tmp_path: Path, key: str, encoding: str) -> None:
    """Hostile audit (round 13e): an answer compressed, its compressed stream cut before its end (no final block, no
    trailer with the CRC that proves it whole) was inflated without a word and recorded as the answer. Each first
    attempt here is cut so; each cell is called again and recorded from the whole answer."""
    calls_seen: list[int] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            calls_seen.append(1)
            squeeze = zlib.compressobj(wbits=16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
            body = squeeze.compress(RED_REPLY)
            body += squeeze.flush(zlib.Z_FULL_FLUSH if len(calls_seen) % 2 else zlib.Z_FINISH)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (encoding.encode(), len(body), body))

    project, result = run_on_raw_server(tmp_path, answer, "--json", "--concurrency", "1")
    out = summary(ok(result))
    rows = read_jsonl(project.root / out["runs"][0]["folder"] / "outputs.jsonl")
    assert [(r["status"], r["text"], r["attempts"]) for r in rows] == [("ok", "red", 2)] * 4
    assert len(calls_seen) == 8


@pytest.mark.parametrize("spoiled", ["br", "not gzip", "cut off"])
@pytest.mark.parametrize("status", [401, 429])
def test_an_error_status_is_read_whatever_its_body(tmp_path: Path, key: str, status: int, spoiled: str) -> None:
    """Hostile audit (round 13e): an error's body that could not be read (compressed as benchcard does not ask,
    spoiled, shorter than its Content-Length) stood in for its status. A refused key (401) so sent failed every
    cell for its encoding or was retried as a dropped connection, instead of stopping the run at once; a 429 sent
    as `br` was never retried. The status is now read first, and a body that cannot be read is none."""
    head = {401: b"401 Unauthorized", 429: b"429 Too Many Requests"}[status]
    framing = {"br": b"Content-Encoding: br\r\nContent-Length: 2", "not gzip": b"Content-Encoding: gzip\r\n"
               b"Content-Length: 2", "cut off": b"Content-Length: 500"}[spoiled]
    seen: list[int] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            seen.append(1)
            conn.sendall(b"HTTP/1.1 %s\r\nRetry-After: 0\r\n%s\r\nConnection: close\r\n\r\nxx" % (head, framing))

    project, result = run_on_raw_server(tmp_path, answer, "--concurrency", "1", "--attempts", "2")
    if status == 401:
        assert result.exit_code == 1 and len(seen) == 1, result.output
        assert "error: HTTP 401: Unauthorized; the run stopped with 0 of 4 cells recorded." in result.output
        return
    assert result.exit_code == 0, result.output
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    gave_up = "HTTP 429: Too Many Requests (gave up after 2 attempts)"
    assert {(r["attempts"], r["error"]) for r in rows} == {(2, gave_up)}
    assert len(seen) == 8


@pytest.mark.parametrize(("framing", "said"), [
    (b"Content-Length: 9999", "content length header (received 71 of 9999 bytes)"),
    (b"Transfer-Encoding: chunked", "transfer length header")])
def test_an_answer_cut_off_mid_body_is_retried_and_told_as_cut_off(tmp_path: Path, key: str, framing: bytes,
                                                                    said: str) -> None:
    """Hostile audit (round 13e): a body cut off before its declared length or its last chunk was told in aiohttp's
    words, `ClientPayloadError: Response payload is not completed: <ContentLengthError: 400, ...>`, a "400" that is
    aiohttp's own and no status the server sent. It is retried and told as an answer cut off."""
    part = RED_REPLY[:71]

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            body = part if framing.startswith(b"Content") else b"%x\r\n%s\r\n" % (len(RED_REPLY), part)
            conn.sendall(b"HTTP/1.1 200 OK\r\n%s\r\nConnection: close\r\n\r\n%s" % (framing, body))

    project, result = run_on_raw_server(tmp_path, answer, "--concurrency", "1", "--attempts", "2")
    ok(result)
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert {r["error"] for r in rows} == {f"connection error: the answer was cut off before its end (Not enough data "
                                          f"to satisfy {said}) (gave up after 2 attempts)"}


@pytest.mark.parametrize(("answer", "said"), [
    (b"HTTP/1.1 abc nope\r\n\r\n", "Bad status line: Invalid status code"),
    (b"SSH-2.0-OpenSSH_8.9\r\n", "Bad status line: Expected HTTP/, RTSP/ or ICE/"),
    (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n", "Got more than 8190 bytes when reading"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}", "Duplicate Content-Length"),
], ids=["status", "ssh", "header", "length"])
def test_an_answer_that_is_not_http_is_told_so_in_one_line(tmp_path: Path, key: str, answer: bytes,
                                                           said: str) -> None:
    """Hostile audit (wire20): an answer aiohttp's parser refuses (a status line that is none, another protocol, a
    header past 8 KiB, two Content-Lengths) was told in its words, `ClientResponseError: 400, message="Bad status
    line:\n Invalid status code:\n\n b'…'\n ^", url='…'`: a "400" no server sent, the server's bytes and the URL
    quoted. It is retried as a dropped connection is, and told in one line of what was wrong."""
    def reply(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            conn.sendall(answer)

    project, result = run_on_raw_server(tmp_path, reply, "--concurrency", "1", "--attempts", "2")
    ok(result)
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert {(r["status"], r["attempts"], r["error"]) for r in rows} == {(
        "failed", 2, f"connection error: the server's answer is not HTTP benchcard can read ({said}) (gave up after "
                     "2 attempts)")}


@pytest.mark.parametrize(("asked", "said"), [("9" * 23, "1e+23"), ("9" * 400, "inf"), ("9" * 30 + ".5", "1e+30")])
def test_a_retry_after_of_many_digits_is_read_as_the_long_wait_it_asks(tmp_path: Path, key: str, asked: str,
                                                                     said: str) -> None:
    """Hostile audit (round 13e): a Retry-After of 19 digits or more was read as no number, so the cell was retried
    at once on the backoff, while `Retry-After: 86400` gave up at once; it is a wait past what a cell may take."""
    seen: list[int] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            seen.append(1)
            conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: %s\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n" % asked.encode())

    project, result = run_on_raw_server(tmp_path, answer, "--concurrency", "1")
    ok(result)
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert {r["error"] for r in rows} == {f"HTTP 429: Too Many Requests; the server asked to wait {said} s more, past "
                                          "the 600 s one cell may wait in all (gave up after 1 attempt)"}
    assert len(seen) == 4


def test_500_and_503_are_retried(tmp_path: Path, server: FakeServer, key: str) -> None:
    s, outputs = fault_run(tmp_path, server, [{"kind": "500", "times": 1}, {"kind": "503", "times": 1}])
    assert s["counts"]["ok"] == 4 and all(o["attempts"] == 3 and o["text"] == "red" for o in outputs)


def test_dropped_connections_are_retried_then_fail(tmp_path: Path, server: FakeServer, key: str) -> None:
    s, outputs = fault_run(tmp_path, server, [{"kind": "drop", "times": 1, "match": "number 0"},
                                                 {"kind": "drop", "times": 9, "match": "number 1"}],
                              "--attempts", "3")
    by_fixture = {(o["fixture"], o["status"]) for o in outputs}
    assert by_fixture == {("item-000", "ok"), ("item-001", "failed")}
    # a drop on a reused keep-alive connection is sent again at once, spending no attempt (wire20); the server
    # read it, so the row counts it (wire21): the rows' attempts are the calls the server took
    assert sum(o["attempts"] for o in outputs) == server.stats(by_request=False)["calls"]
    for o in outputs:
        if o["fixture"] == "item-001":
            assert o["attempts"] >= 3 and o["text"] == "" and "connection error" in o["error"]
            resent = o["attempts"] - 3
            assert o["error"].endswith("(gave up after 3 attempts)" if not resent else
                                       f"(gave up after 3 attempts, and {resent} call{'s' * (resent > 1)} sent "
                                       "again at once on a connection found closed)"), o
        else:
            assert o["attempts"] >= 2
    scores = read_jsonl(tmp_path / s["folder"] / "scores.jsonl")
    assert all((x["score"] is None) == (x["status"] == "failed") for x in scores)


def test_hangs_past_the_timeout_are_retried_then_fail(tmp_path: Path, server: FakeServer, key: str) -> None:
    s, outputs = fault_run(tmp_path, server, [{"kind": "hang", "times": 9, "hang_s": 5}],
                           "--timeout", "0.3", "--attempts", "2")
    assert s["counts"] == {"ok": 0, "truncated": 0, "failed": 4}
    assert all(o["attempts"] == 2 and o["error"].startswith("timed out after 0.3 s") for o in outputs)


def test_truncation_is_recorded_apart_and_never_scored(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"replies": [{"match": "", "reply": "red red red"}], "faults": [{"kind": "truncate",
                                                                                     "times": 1}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    result = ok(bc(project, "run", "colour-ab"))
    assert "4 cells: 0 ok, 4 truncated, 0 failed" in result.stdout
    folder = only_run(project, "colour-ab")
    assert {(o["status"], o["finish_reason"]) for o in read_jsonl(folder / "outputs.jsonl")} == {("truncated",
                                                                                                   "length")}
    assert {(s["status"], s["score"]) for s in read_jsonl(folder / "scores.jsonl")} == {("truncated", None)}


@pytest.mark.parametrize(("kind", "said"), [
    ("malformed", "malformed response: HTTP 200 with a body that is not JSON"),
    ("html", "malformed response: HTTP 200 with a body that is not JSON"),
    ("shapeless", "malformed response: a 200 answer whose JSON is a list, not a chat completion")])
def test_a_200_that_is_not_json_is_retried_a_bounded_number_of_times(tmp_path: Path, server: FakeServer, key: str,
                                                                     kind: str, said: str) -> None:
    """A proxy's HTML page, a cut-off body or JSON of another shape is transport, not the model: retried like a 5xx,
    up to --attempts."""
    s, outputs = fault_run(tmp_path / "once", server, [{"kind": kind, "times": 1, "match": "number 0"}])
    cured = [o for o in outputs if o["fixture"] == "item-000"]
    assert len(cured) == 2 and all(o["status"] == "ok" and o["attempts"] == 2 for o in cured)
    assert s["counts"] == {"ok": 4, "truncated": 0, "failed": 0}
    s, outputs = fault_run(tmp_path / "always", server, [{"kind": kind, "times": 99, "match": "number 0"}],
                              "--attempts", "3")
    bad = [o for o in outputs if o["fixture"] == "item-000"]
    assert len(bad) == 2 and all(o["status"] == "failed" and o["attempts"] == 3 for o in bad)
    assert all(o["error"].startswith(said) for o in bad), bad
    assert all("gave up after 3 attempts" in o["error"] for o in bad)
    assert s["counts"] == {"ok": 2, "truncated": 0, "failed": 2}


@pytest.mark.parametrize(("body", "said"), [
    (b'{"choices": [{"message": {"content": "caf\xe9"}, "finish_reason": "stop"}]}',
     "(72 bytes, application/json: not UTF-8 at byte 41)"),
    (b"[" * 100_000 + b"]" * 100_000, "(200,000 bytes, application/json: nested too deeply to read)"),
], ids=["latin-1", "nested"])
def test_a_200_that_cannot_be_read_as_json_says_why(tmp_path: Path, key: str, body: bytes, said: str) -> None:
    """Hostile audit (wire20): a body in Latin-1 or nested past any reader's stack was told only as "a body that is
    not JSON", which a user looking at JSON in a proxy's log would not believe; the line now says which it was."""
    def answer(conn: socket.socket) -> None:
        with conn:
            read_request_body(conn, read_head(conn))
            send_json(conn, body)

    project, result = run_on_raw_server(tmp_path, answer, "--attempts", "2", fixtures=1, repetitions=1)
    ok(result)
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    url = json.loads((only_run(project, "colour-ab") / "manifest.json").read_text())["base_url"]
    assert {(r["status"], r["error"]) for r in rows} == {("failed", f"malformed response: HTTP 200 with a body that "
                                                         f"is not JSON {said} (POST {url}/chat/completions) (gave up "
                                                         "after 2 attempts)")}


@pytest.mark.parametrize(("garbage", "said"), [
    (b"[]", "a 200 answer whose JSON is a list, not a chat completion (an object with `choices`)"),
    (b'"ok"', "a 200 answer whose JSON is a string, not a chat completion (an object with `choices`)"),
    (b"null", "a 200 answer whose JSON is null, not a chat completion (an object with `choices`)"),
    (b'{"choices": [{"message": {"content": 5}, "finish_reason": "stop"}]}',
     "a 200 answer whose `choices[0].message.content` is a number, neither text nor a list of parts"),
])
def test_a_200_of_json_in_another_shape_is_retried_then_failed_never_scored(tmp_path: Path, key: str,
                                                                             garbage: bytes, said: str) -> None:
    """Hostile audit (wire20): a 200 whose JSON is not the API's shape failed its cell at once, where a body that is
    not JSON is retried: a flaky proxy's garbage either way. Sent to each cell's first call, every cell is answered
    at its second; sent to every call of one fixture, its cells fail after --attempts with one line saying what came,
    what was expected and which endpoint sent it, and are never scored."""
    lock = threading.Lock()
    seen: set[bytes] = set()

    def answer(conn: socket.socket) -> None:
        with conn:
            body = read_request_body(conn, read_head(conn))
            with lock:
                first = body not in seen
                seen.add(body)
            send_json(conn, garbage if first or b"number 0" in body else RED_REPLY)

    project, result = run_on_raw_server(tmp_path, answer, "--json", "--attempts", "3", fixtures=2, repetitions=1)
    [s] = summary(ok(result))["runs"]
    rows = {(r["fixture"], r["cell"]): r for r in read_jsonl(project.root / s["folder"] / "outputs.jsonl")}
    assert s["counts"] == {"ok": 2, "truncated": 0, "failed": 2}
    url = json.loads((project.root / s["folder"] / "manifest.json").read_text())["base_url"]
    for (fixture, _), row in rows.items():
        if fixture == "item-000":
            assert (row["status"], row["attempts"], row["text"]) == ("failed", 3, "")
            assert row["error"] == (f"malformed response: {said} (POST {url}/chat/completions) (gave up after 3 "
                                    "attempts)")
        else:
            assert (row["status"], row["attempts"], row["text"], row["error"]) == ("ok", 2, "red", None)
    scores = read_jsonl(project.root / s["folder"] / "scores.jsonl")
    assert sorted((x["fixture"], x["score"]) for x in scores if x["score"] is None) == [("item-000", None)] * 2


@pytest.mark.parametrize(("fault", "said"), [
    ("redirect", "error: HTTP 307: the server redirects the call to http://elsewhere.invalid/v1/chat/completions; "
                 "benchcard does not follow redirects"),
    ("bad_redirect", "error: HTTP 3xx: the server redirects the call to an address that is not a URL (Invalid port: "
                     "'x'); benchcard does not follow redirects"),
])
def test_a_redirect_is_neither_followed_nor_taken_for_an_answer(tmp_path: Path, server: FakeServer, key: str,
                                                                fault: str, said: str) -> None:
    """Hostile audit: a 307 to another host holding a valid answer in its body was scored as the model's answer,
    and a 307 whose Location no URL parser reads (httpx: 'Invalid URL in location header') was retried as a
    connection error, every cell, never saying the server pointed elsewhere. A redirect is never followed (the
    key would go with it): the run stops at once, in one line saying where it points (or that it points nowhere
    a URL can name), with the password in that address left out of everything."""
    server.configure({"default_reply": "negative", "faults": [{"kind": fault, "times": 5}]})
    project = probe_project(tmp_path, server.base_url, repetitions=3)
    result = bc(project, "run", PROBE, "--concurrency", "1")
    assert result.exit_code == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith(said), last
    assert "base_url" in last and "--resume" in last
    assert server.stats()["calls"] == 1  # not retried, and the other cells not called
    folder = only_run(project, PROBE)
    assert read_jsonl(folder / "outputs.jsonl") == []
    assert "hunter2" not in result.output + result.stderr
    assert not [p for p in folder.rglob("*") if p.is_file() and b"hunter2" in p.read_bytes()]


def test_a_compressed_bomb_is_refused_before_it_fills_the_memory(tmp_path: Path, server: FakeServer, key: str
                                                                 ) -> None:
    """Hostile audit: 8 KiB of zstd that inflates to 256 MiB was inflated whole in memory (1 GiB from 32 KiB held
    a gigabyte) before the 32 MiB cap was checked. benchcard asks for gzip or deflate only, inflates those a block
    at a time under the cap, and refuses an encoding it did not ask for."""
    import tracemalloc

    server.configure({"default_reply": "negative", "faults": [{"kind": "zstd_bomb"}]})
    project = probe_project(tmp_path, server.base_url)
    tracemalloc.start()
    try:
        result = bc(project, "run", PROBE, "--attempts", "1")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.stderr
    [row] = read_jsonl(only_run(project, PROBE) / "outputs.jsonl")
    assert row["status"] == "failed"
    assert row["error"] == ("the reply is compressed as 'zstd', which benchcard does not ask for (it asks for gzip, "
                            "deflate): refused")
    assert peak < 64 * 2**20


def test_token_counts_and_costs_past_any_real_call_are_read_as_none(tmp_path: Path, server: FakeServer, key: str
                                                                   ) -> None:
    """Hostile audit: a server billing 10**30 tokens and $1.5e308 a call made `run --json` print `Infinity` (not
    JSON) for three such costs, and `export` end in a traceback (pandas refuses such a count as int64). Such a
    figure is garbage, read as none, as a negative one is."""
    server.configure({"replies": [{"match": "", "reply": "negative", "reasoning_tokens": 10**30, "cost": 1.5e308}]})
    project = probe_project(tmp_path, server.base_url, repetitions=3)
    result = ok(bc(project, "run", PROBE, "--json"))

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    [out] = json.loads(result.stdout, parse_constant=refuse)["runs"]
    assert out["cost"] is None and out["counts"]["ok"] == 3
    folder = only_run(project, PROBE)
    rows = read_jsonl(folder / "outputs.jsonl")
    assert {(o["usage"]["output"], o["usage"]["reasoning"], o["cost"]) for o in rows} == {(0, 0, None)}
    ok(bc(project, "verdict", folder.name))
    ok(bc(project, "export", folder.name, "--format", "csv", "--out", str(tmp_path / "cells.csv")))
    table = (tmp_path / "cells.csv").read_text(encoding="utf-8").splitlines()
    assert len(table) == 4 and "10000000000" not in "".join(table)


@pytest.mark.parametrize("suffix", ["/v1", "/chat/completions"])
def test_a_base_url_that_reaches_nothing_is_named_where_the_run_stops(tmp_path: Path, server: FakeServer, key: str,
                                                                      suffix: str) -> None:
    """Hostile audit: a base_url with /v1 twice, or ending in the endpoint itself, stopped the run on
    'error: HTTP 404: Not Found', which did not say what was called."""
    project = probe_project(tmp_path, server.base_url + suffix)
    result = bc(project, "run", PROBE)
    assert result.exit_code == 1
    called = f"{server.base_url}{suffix}/chat/completions"
    assert result.stderr.splitlines()[-1].startswith(f"error: HTTP 404: Not Found (POST {called}); the run stopped")


def test_a_certificate_that_cannot_be_verified_stops_the_run_at_once_and_says_how_to_trust_it(
        tmp_path: Path, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit (round 12b): a server whose TLS certificate a private authority signed (a vLLM box behind
    its own CA) failed every attempt of 5 cells (20 handshakes) as a dropped connection would, and the run
    stopped saying "When the endpoint answers again", which it never would. A certificate that cannot be verified
    stops the run at the first attempt, naming why and the variable that trusts such an authority; with
    $SSL_CERT_FILE set to it, the same run goes through (verification is never turned off)."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    url, cert, seen, done = tls_server(tmp_path)
    try:
        project = probe_project(tmp_path / "p", url)
        result = bc(project, "run", PROBE)
        assert result.exit_code == 1
        host = url.removeprefix("https://").removesuffix("/v1")
        assert result.stderr.splitlines()[-1].startswith(
            f"error: TLS: the certificate of {host} cannot be verified (self-signed certificate): set $SSL_CERT_FILE "
            "to the certificate of the authority that signed it (checked against certifi's roots otherwise; never "
            "unchecked); the run stopped with 0 of 1 cells recorded."), result.stderr
        assert len(seen) == 1  # one handshake: not retried
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        folder = only_run(project, PROBE)
        resumed = bc(project, "run", PROBE, "--resume", folder.name)
        assert resumed.exit_code == 0, resumed.output
        assert [r["text"] for r in read_jsonl(folder / "outputs.jsonl")] == ["red"]
    finally:
        done.set()


def test_an_authentication_error_stops_the_run_for_resume(tmp_path: Path, server: FakeServer) -> None:
    """A 401 says nothing about a cell: the run stops and the cells stay missing, to be called on resume."""
    server.configure({"default_reply": "red", "require_key": True})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, key_env=None)  # an endpoint declared without a key
    result = bc(project, "run", "colour-ab", "--concurrency", "1")
    assert result.exit_code == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith("error: HTTP 401: missing API key") and "--resume" in last
    folder = only_run(project, "colour-ab")
    assert read_jsonl(folder / "outputs.jsonl") == []


def test_a_key_refused_while_a_cell_waits_to_call_again_stops_every_call(tmp_path: Path, server: FakeServer,
                                                                         key: str) -> None:
    """Two calls at once: the first the server receives is refused 429 with Retry-After: 590, the second 401 (a key
    revoked mid-run), which stops the run. Whichever the client hears first, the cell told to wait waits when the
    run stops, or is told after: it sends nothing more, is not recorded, and the run ends at the stop, not after its
    wait. Before (left22), that cell waited its wait out and then sent one more call with the refused key. The wait
    is 590 s (inside the 600 s a cell may wait), so that a run waiting it out is told from one that ends at the stop
    by the watchdog, never by a bound on the run's time (a 20 s wait against a 20 s bound before left25)."""
    server.configure({"default_reply": "red", "faults": [{"kind": "429", "times": 1, "total": 1, "retry_after": 590},
                                                         {"kind": "401", "times": 999}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    with watchdog(120, "the run waits out the 590 s its cell was told to wait after the stop"):
        result = bc(project, "run", "colour-ab", "--concurrency", "2")
    assert result.exit_code == 1
    folder = only_run(project, "colour-ab")
    assert result.stderr.splitlines()[-1] == (
        "error: HTTP 401: injected fault 401; the run stopped with 0 of 4 cells recorded. Fix the cause, then: "
        f"benchcard run colour-ab --resume {folder.name}")
    stats = server.stats(by_request=False)
    assert stats["by_status"] == {"429": 1, "401": 1}, stats
    assert stats["after_first"]["401"] == 0, stats  # no call reached the server after the one refused 401
    assert read_jsonl(folder / "outputs.jsonl") == []


def test_other_4xx_fail_only_their_cell(tmp_path: Path, key: str) -> None:
    project = ab_project(tmp_path, "http://fake.invalid/v1", fixtures=2, repetitions=1)

    def handler(request: httpx.Request) -> httpx.Response:
        if "number 0" in request.content.decode():
            return httpx.Response(400, json={"error": {"message": "context too long"}})
        return httpx.Response(200, json={"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]})

    [s] = run(project, "colour-ab", RunOptions(progress=False), transport=httpx.MockTransport(handler))
    assert s.counts == {"ok": 2, "truncated": 0, "failed": 2} and s.finished
    failed = [o for o in read_jsonl(project.root / s.folder / "outputs.jsonl") if o["status"] == "failed"]
    assert {o["error"] for o in failed} == {"HTTP 400: context too long"}


# ------------------------------------------------------------------------------------ pool, rate, price


def test_concurrency_is_a_bounded_pool(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "latency_ms": 60})
    project = ab_project(tmp_path, server.base_url, fixtures=10, repetitions=2)
    ok(bc(project, "run", "colour-ab", "--concurrency", "4", "--json"))
    stats = server.stats(by_request=False)
    assert stats["calls"] == 40 and stats["max_in_flight"] == 4


def test_workers_are_capped_at_the_providers_max_concurrency(tmp_path: Path, key: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    in_flight, peak = 0, 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json={"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]})

    def one_at_a_time(cfg: ProviderConfig, client: httpx.AsyncClient, model: str | None = None) -> Provider:
        provider = OpenAIProvider(cfg, client)
        provider.max_concurrency = 2
        return provider

    monkeypatch.setattr("benchcard.run._pool.make_provider", one_at_a_time)  # open_provider's
    project = ab_project(tmp_path, "http://fake.invalid/v1", fixtures=4, repetitions=2)
    [s] = run(project, "colour-ab", RunOptions(concurrency=8, progress=False), transport=httpx.MockTransport(handler))
    assert s.counts["ok"] == 16 and peak == 2 and s.concurrency == 2
    assert json.loads((project.root / s.folder / "manifest.json").read_text())["concurrency"] == 2
    assert workers_for(OpenAIProvider(BUILTIN["openai"], httpx.AsyncClient()), 8) == 8  # no cap stated


def recorded_slots(monkeypatch: pytest.MonkeyPatch) -> dict[int, list[float]]:
    """The start slots each rate limiter hands out, as it computes them: every value it stores as its next
    free slot (slot + interval), read back as the slot; one list per limiter, that is per run. Each limiter is
    kept alive here, so a later run's limiter cannot take a finished one's id (its address) and share its list."""
    runs: dict[int, list[float]] = {}
    stored: dict[int, float] = {}
    limiters: list[calls.RateLimiter] = []

    def get(self: calls.RateLimiter) -> float:
        return stored[id(self)]

    def put(self: calls.RateLimiter, value: float) -> None:
        if id(self) not in runs:
            limiters.append(self)
        stored[id(self)] = value
        slots = runs.setdefault(id(self), [])
        if value:
            slots.append(value - self.interval)

    monkeypatch.setattr(calls.RateLimiter, "_next", property(get, put), raising=False)
    return runs


def test_rpm_spaces_the_calls(tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = recorded_slots(monkeypatch)
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=1)
    ok(bc(project, "run", "colour-ab", "--rpm", "600", "--json"))  # one call start every 0.1 s
    assert server.stats()["calls"] == 6
    write_config(project.root, server.base_url, extra="")  # the provider's own limit in benchcard.yaml
    config = (project.root / "benchcard.yaml").read_text().replace("}", ", requests_per_minute: 600}")
    (project.root / "benchcard.yaml").write_text(config)
    ok(bc(project, "run", "colour-ab", "--json"))
    assert [len(slots) for slots in runs.values()] == [6, 6]
    for slots in runs.values():  # every call start has its own slot, each at least 0.1 s after the one before
        assert all(b - a >= 0.1 - 1e-9 for a, b in itertools.pairwise(slots))


def test_cost_from_the_provider_else_the_price_table(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"replies": [{"match": "number 0", "reply": "red", "cost": 0.25}, {"match": "", "reply": "red"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    s = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]
    assert s["cost"] == 0.5 and s["cost_unknown"] == 2
    unpriced = [o for o in read_jsonl(project.root / s["folder"] / "outputs.jsonl") if o["fixture"] == "item-001"]
    assert [o["cost"] for o in unpriced] == [None, None]
    write_config(project.root, server.base_url, extra="prices:\n  test/model: {input: 1000000, output: 2000000}\n")
    s = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]
    priced = [o for o in read_jsonl(project.root / s["folder"] / "outputs.jsonl") if o["fixture"] == "item-001"]
    assert all(o["cost"] == o["usage"]["input"] + 2 * o["usage"]["output"] for o in priced)
    assert s["cost_unknown"] == 0


CACHE_PRICE = "prices:\n  test/model: {input: 2.0, output: 8.0, cached_input: 0.5, cache_write: 2.5}\n"


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_input_read_from_the_prompt_cache_is_priced_at_the_cached_price(tmp_path: Path, server: FakeServer, key: str,
                                                                         api: str) -> None:
    """Through a real socket, each vendor's shape of a reply whose prompt was partly served from the cache (1,000
    tokens): OpenAI counts them inside `prompt_tokens`, Anthropic beside `input_tokens`. Both runs record the same
    usage for the same call and price those 1,000 tokens at `cached_input`, not `input`: the run's, the verdict's
    and the ledger's cost are the discounted one. Before, OpenAI's were priced in full and Anthropic's not at all."""
    server.configure({"replies": [{"match": "", "reply": "red", "cached_tokens": 1000}]})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, type_=api, extra=CACHE_PRICE)
    result = ok(bc(project, "run", "colour-ab", "--json"))
    s = summary(result)["runs"][0]
    rows = read_jsonl(project.root / s["folder"] / "outputs.jsonl")
    words = {o["usage"]["input"] - 1000 for o in rows}  # the prompt's own tokens: the fake counts its words
    assert all(o["usage"]["cached"] == 1000 and "cost_upper_bound" not in o for o in rows)
    assert all(o["cost"] == pytest.approx(((o["usage"]["input"] - 1000) * 2.0 + 1000 * 0.5
                                           + o["usage"]["output"] * 8.0) / 1e6) for o in rows)
    assert min(words) > 0 and s["cost"] == pytest.approx(sum(o["cost"] for o in rows), abs=1e-6)
    assert s["cost_upper_bound"] == 0 and s["cost_unknown"] == 0
    full_price = sum((o["usage"]["input"] * 2.0 + o["usage"]["output"] * 8.0) / 1e6 for o in rows)
    assert s["cost"] < full_price - 4 * 1000 * 1.5 / 1e6 + 1e-9  # 1,000 tokens a call at $0.5, not $2
    ok(bc(project, "verdict", s["run"]))
    verdict = json.loads((project.root / s["folder"] / "verdict.json").read_text())
    [row] = read_jsonl(project.root / "results" / "ledger.jsonl")
    assert verdict["cost"] == row["cost"] == pytest.approx(s["cost"], abs=1e-6)
    assert "cost_upper_bound" not in verdict and "cost_upper_bound" not in row


def test_without_a_cached_price_the_full_price_is_kept_and_said_to_be_an_upper_bound(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """A price table written before cache prices (no `cached_input`) keeps its figure, every input token at the
    full price, and the run, the verdict and the ledger say the cost is an upper bound: `≤` and one line naming
    the default used and the field that would price them."""
    server.configure({"replies": [{"match": "", "reply": "red", "cached_tokens": 1000}]})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, extra="prices:\n  test/model: {input: 2.0, output: 8.0}\n")
    result = ok(bc(project, "run", "colour-ab"))
    folder = only_run(project, "colour-ab")
    rows = read_jsonl(folder / "outputs.jsonl")
    assert all(o["cost_upper_bound"] is True and o["cost"] == pytest.approx(
        (o["usage"]["input"] * 2.0 + o["usage"]["output"] * 8.0) / 1e6) for o in rows)
    total = sum(o["cost"] for o in rows)
    assert f"4 cells: 4 ok, 0 truncated, 0 failed · ≤ ${total:,.4f}" in result.output
    assert ("cost ≤: 4 cells read input from the prompt cache, priced at the full input price (prices.test/model "
            "in benchcard.yaml gives no cached_input; the vendor bills them less)") in result.output
    ok(bc(project, "verdict", folder.name))
    verdict = json.loads((folder / "verdict.json").read_text())
    [row] = read_jsonl(project.root / "results" / "ledger.jsonl")
    assert verdict["cost_upper_bound"] is True and row["cost_upper_bound"] is True
    assert verdict["cost"] == pytest.approx(total)
    assert ok(bc(project, "ledger", "--verify")).exit_code == 0


def test_anthropic_cache_writes_are_priced_at_their_own_price_or_left_unknown(tmp_path: Path, server: FakeServer,
                                                                            key: str) -> None:
    """A Messages API reply that wrote 300 tokens to the cache, 100 of them to the 1-hour cache: with both write
    prices each is priced at its own; without the 1-hour one the cost is unknown (a write costs more than input:
    no figure below the bill is given), counted among the cells without a price."""
    server.configure({"replies": [{"match": "", "reply": "red", "cache_write_tokens": 300,
                                   "cache_write_1h_tokens": 100}]})
    project = ab_project(tmp_path, None, fixtures=1, repetitions=1)
    write_config(project.root, server.base_url, type_="anthropic",
                 extra=CACHE_PRICE.replace("}", ", cache_write_1h: 4.0}"))
    s = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]
    rows = read_jsonl(project.root / s["folder"] / "outputs.jsonl")
    assert all((o["usage"]["cache_write"], o["usage"]["cache_write_1h"]) == (300, 100) for o in rows)
    assert all(o["cost"] == pytest.approx(((o["usage"]["input"] - 300) * 2.0 + 200 * 2.5 + 100 * 4.0
                                           + o["usage"]["output"] * 8.0) / 1e6) for o in rows)
    write_config(project.root, server.base_url, type_="anthropic", extra=CACHE_PRICE)
    s = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]
    assert (s["cost"], s["cost_unknown"]) == (None, 2)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_an_answer_without_usage_has_an_unknown_cost_not_a_free_one(tmp_path: Path, server: FakeServer, key: str,
                                                                    api: str) -> None:
    """A reply that says nothing of the tokens it used (no `usage`, as some OpenAI-compatible servers and proxies
    send) costs what the price table does not know: unknown, counted so, never $0."""
    server.configure({"default_reply": "red", "faults": [{"kind": "no_usage", "times": 9, "match": "number 0"}]})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, type_=api,
                 extra="prices:\n  test/model: {input: 1000000, output: 2000000}\n")
    s = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]
    rows = read_jsonl(project.root / s["folder"] / "outputs.jsonl")
    silent = [o for o in rows if o["fixture"] == "item-000"]
    assert [(o["status"], o["cost"]) for o in silent] == [("ok", None), ("ok", None)]
    assert all(o["cost"] is not None and o["cost"] > 0 for o in rows if o["fixture"] == "item-001")
    assert s["cost_unknown"] == 2


# ------------------------------------------------------------------------------------------------- output


def test_model_output_is_stored_verbatim_and_never_run(tmp_path: Path, server: FakeServer, key: str) -> None:
    evil = "$(touch pwned) `touch pwned2` {{variant}} \x00\u202e\n</item>"
    server.configure({"default_reply": evil})
    project = ab_project(tmp_path, server.base_url, fixtures=1, repetitions=1)
    ok(bc(project, "run", "colour-ab", "--json"))
    outputs = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert [o["text"] for o in outputs] == [evil, evil]
    assert not list(Path.cwd().glob("pwned*")) and not list(project.root.glob("pwned*"))


# ------------------------------------------------------------------------------------------- blindness


def test_scoring_is_blind_to_assignment_requests_and_model(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Scoring needs outputs.jsonl, keys and fixtures only: it gives the same scores with sealed/ gone and the
    manifest unreadable, and the only files it opens are those."""
    copy_repo_card(tmp_path, "bench-01")
    project = seal_card(tmp_path, "bench-01")
    card = load_card(project.card_path("bench-01"), project)
    write_config(project.root, server.base_url)
    server.configure({"default_reply": json.dumps({"parties": ["Harbourline Freight Limited"]})})
    opts = RunOptions(provider="fake", progress=False, concurrency=16)
    [s] = run(project, "bench-01", opts)
    folder = project.root / s.folder
    before = (folder / "scores.jsonl").read_bytes()

    for p in (folder / "sealed").iterdir():
        p.unlink()
    (folder / "sealed").rmdir()
    (folder / "manifest.json").write_text("not json {")
    (folder / "scores.jsonl").unlink()

    opened: list[str] = []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and recording and isinstance(args[0], str | bytes | Path):
            opened.append(str(args[0]))

    recording = True
    sys.addaudithook(audit)
    try:
        written = score_blind(folder / "outputs.jsonl", folder / "scores.jsonl", card, project)
    finally:
        recording = False
    assert (folder / "scores.jsonl").read_bytes() == before
    rows = read_jsonl(folder / "scores.jsonl")
    assert written == len(rows)
    assert len(rows) == s.cells and any(r["score"] for r in rows)
    # scores.jsonl is written atomically: through its temporary sibling, then the folder is synced (opened, not read)
    allowed = (str(folder / "outputs.jsonl"), str(folder / "scores.jsonl"), str(folder))
    assert allowed[0] in opened and any("/keys/bench-01/" in p for p in opened)  # the hook saw the reads
    for path in opened:
        resolved = str(Path(path).resolve())
        name = Path(path).name
        temporary = Path(path).parent == folder and re.fullmatch(r"\.scores\.jsonl\.\d+-[0-9a-f]{8}\.tmp", name)
        assert (path in allowed or temporary or resolved.startswith(str((project.root / "keys" / "bench-01").resolve()))
                or resolved.startswith(str((project.root / "fixtures" / "bench-01").resolve()))
                or "site-packages" in resolved or resolved.startswith(sys.prefix)), path
    assert not any("sealed" in p or "manifest" in p or "requests" in p for p in opened)
    # and the outputs it reads name no variant, model or repetition
    for o in read_jsonl(folder / "outputs.jsonl"):
        assert set(o) == OUTPUT_KEYS


@pytest.mark.local_model
def test_a_local_override_records_no_effort(tmp_path: Path) -> None:
    """The card asks for effort low; the embedded model has no such setting, so its rig line claims none."""
    project = ab_project(tmp_path, None, fixtures=1, repetitions=1, effort="low")
    [s] = run(project, "colour-ab", RunOptions(provider="local", progress=False), stop_after=0)
    assert s.rig == "SmolLM2-135M-Instruct · local"
    manifest = json.loads((project.root / s.folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["rig"]["effort"] is None and manifest["rig"]["line"] == s.rig


@pytest.mark.local_model
def test_a_file_the_local_model_cannot_read_leaves_no_run(tmp_path: Path) -> None:
    """A .gguf that is not a model is refused in one line before the run plans or creates its folder, so
    `benchcard verdict CARD` cannot pick up an empty run afterwards."""
    project = ab_project(tmp_path, None, fixtures=1, repetitions=1)
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"GGUF but not really a model")
    result = bc(project, "run", "colour-ab", "--provider", "local", "--model", str(bad))
    assert result.exit_code == 1
    assert result.output.startswith("error: cannot load the local model") and result.output.count("\n") == 1
    results = project.root / "results"
    assert not results.exists() or not [p for p in results.rglob("*") if p.is_file() or p.name.startswith("2")]


# ------------------------------------------------------------------------------- errors inside a 200 answer

NOT_ANSWERS = [
    # (api, fake server config, --attempts, the error recorded) — every reply text would score 1 if scored
    ("openai", {"replies": [{"match": "", "reply": "", "finish_reason": "error"}]}, 1,
     "upstream error: a 200 answer with finish_reason error"),
    ("openai", {"default_reply": "negative", "faults": [{"kind": "error200", "code": 400, "times": 9}]}, 3,
     "upstream error 400: injected upstream error 400 (in a 200 answer)"),
    ("openai", {"default_reply": "negative", "faults": [{"kind": "error200", "code": 502, "times": 9}]}, 2,
     "upstream error 502: injected upstream error 502 (in a 200 answer) (gave up after 2 attempts)"),
    ("openai", {"replies": [{"match": "", "reply": "negative", "finish_reason": "content_filter"}]}, 1,
     "refused by the API: a content filter withheld the answer (stop reason content_filter)"),
    ("openai", {"replies": [{"match": "", "reply": "negative", "finish_reason": "tool_calls"}]}, 1,
     "not an answer: the model asked to call a tool"),
    ("openai", {"default_reply": "negative", "faults": [{"kind": "null", "times": 9}]}, 1,
     "not an answer: the message content is null"),
    ("anthropic", {"default_reply": "negative", "faults": [{"kind": "null", "times": 9}]}, 1,
     "not an answer: the reply holds no text block"),
    # a field of another JSON type (hostile audit, round 12b): a null part's text was the answer "None", scored;
    # a stop reason in a list was no reason, so an answer cut off was scored as whole
    ("openai", {"default_reply": "negative", "faults": [{"kind": "mistyped", "times": 9}]}, 1,
     "not an answer: the message content is a list whose text parts hold no text"),
    ("anthropic", {"default_reply": "negative", "faults": [{"kind": "mistyped", "times": 9}]}, 1,
     'not an answer: the stop reason is not text (["end_turn"]), so whether the answer was whole cannot be told'),
    ("anthropic", {"replies": [{"match": "", "reply": "negative", "finish_reason": "refusal"}]}, 1,
     "refused by the API: the API declined to answer (stop reason refusal)"),
    ("anthropic", {"replies": [{"match": "", "reply": "negative", "finish_reason": "pause_turn"}]}, 1,
     "not an answer: the API paused the turn before the answer was finished"),
    ("anthropic", {"replies": [{"match": "", "reply": "negative", "finish_reason": "tool_use"}]}, 1,
     "not an answer: the model asked to use a tool"),
    ("anthropic", {"default_reply": "negative", "faults": [{"kind": "error200", "code": 529, "times": 9}]}, 1,
     "API error overloaded_error: injected upstream error 529 (in a 200 answer)"),
    ("anthropic", {"default_reply": "negative", "faults": [{"kind": "error200", "code": 400, "times": 9}]}, 1,
     "API error invalid_request_error: injected upstream error 400 (in a 200 answer)"),
    # JSON of another shape (hostile audit, wire20): retried as a body that is not JSON, then failed
    ("openai", {"default_reply": "negative", "faults": [{"kind": "shapeless", "times": 9}]}, 2,
     "malformed response: a 200 answer whose JSON is a list, not a chat completion (an object with `choices`) (POST "),
    ("anthropic", {"default_reply": "negative", "faults": [{"kind": "shapeless", "times": 9}]}, 2,
     "malformed response: a 200 answer whose JSON is a list, not a Messages API message (an object with `content`) "
     "(POST "),
]


@pytest.mark.parametrize(("api", "config", "attempts", "error"), NOT_ANSWERS,
                         ids=[f"{a}-{i}" for i, (a, *_) in enumerate(NOT_ANSWERS)])
def test_an_error_or_refusal_inside_a_200_answer_is_failed_never_scored(
        tmp_path: Path, server: FakeServer, key: str, api: str, config: dict[str, Any], attempts: int,
        error: str) -> None:
    server.configure(config)
    project = probe_project(tmp_path, None)
    write_config(project.root, server.base_url, type_=api)
    result = ok(bc(project, "run", PROBE, "--attempts", str(attempts)))
    assert "1 cell: 0 ok, 0 truncated, 1 failed" in result.output
    folder = only_run(project, PROBE)
    [row] = read_jsonl(folder / "outputs.jsonl")
    assert row["status"] == "failed" and row["error"].startswith(error), row["error"]
    [score] = read_jsonl(folder / "scores.jsonl")
    assert score["status"] == "failed" and score["score"] is None


# ------------------------------------------------------------------- well-formed shapes real vendors send

def _shape(kind: str) -> dict[str, Any]:
    return {"default_reply": "negative", "faults": [{"kind": kind, "times": 9}]}


def _ending(reason: str) -> dict[str, Any]:
    return {"replies": [{"match": "", "reply": "negative", "finish_reason": reason}]}


VENDOR_SHAPES = [
    # (api, fake server config, the row's status, its error (its start), its text), each as the vendor's docs show
    ("openai", _shape("refusal"), "failed", "refused: I'm sorry, I can't help with that.", ""),
    ("anthropic", _shape("refusal"), "failed", "refused by the API: the API declined to answer (stop reason refusal)",
     "negative"),
    ("openai", _shape("tool_call"), "failed", "not an answer: the model asked to call a tool", ""),
    ("anthropic", _shape("tool_call"), "failed", "not an answer: the model asked to use a tool", ""),
    ("openai", _ending("function_call"), "failed", "not an answer: the model asked to call a function", "negative"),
    ("anthropic", _ending("stop_sequence"), "ok", None, "negative"),
    ("anthropic", _ending("model_context_window_exceeded"), "truncated", None, "negative"),
    ("openai", _shape("blocks"), "ok", None, "negative"),  # two text parts
    ("anthropic", _shape("blocks"), "ok", None, "negative"),  # thinking, redacted_thinking, then two text blocks
    ("openai", _shape("extras"), "ok", None, "negative"),  # system_fingerprint, cached tokens, unknown fields
    ("anthropic", _shape("extras"), "ok", None, "negative"),
    ("openai", _shape("choices"), "ok", None, "negative"),  # the choice of index 0, listed second
]


@pytest.mark.parametrize(("api", "config", "status", "error", "text"), VENDOR_SHAPES,
                         ids=[f"{a}-{i}" for i, (a, *_) in enumerate(VENDOR_SHAPES)])
def test_a_vendors_documented_answer_shape_is_recorded_as_what_it_is(
        tmp_path: Path, server: FakeServer, key: str, api: str, config: dict[str, Any], status: str,
        error: str | None, text: str) -> None:
    """Refusals and tool calls fail their cell, a cut answer is truncated, an answer in several parts or with fields
    benchcard does not read is scored whole: none is scored as wrong or right when it was cut or withheld."""
    server.configure(config)
    project = probe_project(tmp_path, None)
    write_config(project.root, server.base_url, type_=api)
    result = ok(bc(project, "run", PROBE, "--attempts", "1"))
    counts = {s: int(status == s) for s in ("ok", "truncated", "failed")}
    assert "1 cell: {ok} ok, {truncated} truncated, {failed} failed".format(**counts) in result.output
    folder = only_run(project, PROBE)
    [row] = read_jsonl(folder / "outputs.jsonl")
    assert (row["status"], row["text"]) == (status, text)
    assert row["error"] is None if error is None else row["error"].startswith(error), row["error"]
    [score] = read_jsonl(folder / "scores.jsonl")
    assert (score["score"] is None) == (status != "ok")


def test_a_null_answer_is_a_failed_cell_that_status_and_the_verdict_count(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    """An HTTP 200 whose `choices[0].message.content` is null (a refusal or a tool call, as OpenAI-compatible
    servers send them) was stored as an ok, empty answer and scored 0 in its arm: it is a failed cell, never scored,
    counted by `status`, and the verdict calls the grid incomplete (the card allows no failed cell)."""
    server.configure({"default_reply": "red", "faults": [{"kind": "null", "times": 99, "match": "number 0"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=4, repetitions=2)
    result = ok(bc(project, "run", "colour-ab"))
    assert "16 cells: 12 ok, 0 truncated, 4 failed" in result.output
    folder = only_run(project, "colour-ab")
    nulls = [o for o in read_jsonl(folder / "outputs.jsonl") if o["fixture"] == "item-000"]
    assert len(nulls) == 4 and all(o["status"] == "failed" and o["text"] == "" and o["error"].startswith(
        "not an answer: the message content is null") for o in nulls)
    assert all(s["score"] is None for s in read_jsonl(folder / "scores.jsonl") if s["fixture"] == "item-000")
    status = ok(bc(project, "status", folder.name))
    assert "16 cells: 12 ok, 0 truncated, 4 failed recorded" in status.output
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    assert "finding: incomplete → non-result" in verdict.output
    judged = json.loads((folder / "verdict.json").read_text())
    assert judged["counts"] == {"planned": 16, "scored": 12, "truncated": 0, "failed": 4, "missing": 0}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_passing_upstream_error_in_a_200_answer_is_retried(tmp_path: Path, server: FakeServer, key: str,
                                                             api: str) -> None:
    server.configure({"default_reply": "negative", "faults": [{"kind": "error200", "code": 502, "times": 1}]})
    project = probe_project(tmp_path, None)
    write_config(project.root, server.base_url, type_=api)
    result = ok(bc(project, "run", PROBE, "--attempts", "2"))
    assert "1 cell: 1 ok, 0 truncated, 0 failed" in result.output
    [row] = read_jsonl(only_run(project, PROBE) / "outputs.jsonl")
    assert row["status"] == "ok" and row["attempts"] == 2 and row["text"] == "negative"




@pytest.mark.parametrize(("models", "expected"), [
    (["test/model", "t\u0435st/model"], "error: --model 'test/model' and 'tеst/model' ('t\\u0435st/model') read the "
     "same; name models that look different"),
    (["test/model\u200b"], "error: --model 'test/model\\u200b' holds an invisible or control character"),
])
def test_model_names_that_read_the_same_are_refused_before_any_folder(tmp_path: Path, models: list[str],
                                                                      expected: str) -> None:
    from ..helpers_cli import bc as bc_at
    from ..helpers_cli import one_line_error

    project = ab_project(tmp_path, "http://127.0.0.1:9/v1")
    line = one_line_error(bc_at(tmp_path, "run", "colour-ab", *(a for m in models for a in ("--model", m))))
    assert line.startswith(expected), line
    assert not project.results_dir.exists()


def test_a_pass_ending_on_an_error_keeps_that_error_when_its_reply_models_cannot_be_written() -> None:
    """Review of 796acb3: the reply models are written as a pass ends, in a `finally`; a full disk there replaced
    the error that stopped the pass (an expired key, say) with its own. The pass's error stays; the counts go."""
    from collections import Counter
    from types import SimpleNamespace

    from benchcard.errors import ProviderError
    from benchcard.run._calls import Session

    written: list[tuple[dict[str, int], int, int]] = []

    def full(counts: dict[str, int], rows: int, before: int, judge: bool = False) -> None:
        raise OSError(28, "No space left on device")

    writer: Any = SimpleNamespace(written=3, before=0)
    provider: Any = SimpleNamespace(config=SimpleNamespace(type="openai"))
    session: Any = SimpleNamespace(replied=Counter({"other-model": 3}), store=SimpleNamespace(append_replies=full),
                                   provider=provider)
    with pytest.raises(ProviderError, match="key expired"):
        try:
            raise ProviderError("key expired")
        finally:
            Session.record_replies(session, writer)
    assert not session.replied
    # with no error in flight the write's own error is the one to see, and a good write is made
    session.replied.update({"other-model": 2})
    with pytest.raises(OSError, match="No space left"):
        Session.record_replies(session, writer)
    session.replied.update({"other-model": 1})
    session.store = SimpleNamespace(append_replies=lambda *a, judge=False: written.append(a))
    Session.record_replies(session, writer)
    assert written == [({"other-model": 1}, 3, 0)]
