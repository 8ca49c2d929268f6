"""Server pools: a provider listing several base_urls spreads its cells over them, least-loaded first, takes a
failing server out and tries it again later, records which server answered, and refuses a pool of models."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from benchcard._util.hashing import digest
from benchcard.cli import cli
from benchcard.project import Endpoint, Project
from benchcard.run._pool import PoolProvider
from benchcard.testing.fakeserver import FakeServer

from ..helpers_providers import OPENAI, SEEN, client_for
from ..helpers_run import (
    KEY_ENV,
    RED_REPLY,
    ab_project,
    only_run,
    read_head,
    read_jsonl,
    read_request_body,
    runs_of,
    send_json,
    serve_raw,
)
from ..helpers_wait import watchdog

MODEL = "test/model"


@pytest.fixture(scope="module")
def servers() -> Iterator[list[FakeServer]]:
    """Three fake servers, each in its own process on its own port."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(FakeServer()) for _ in range(3)]


def configure(servers: list[FakeServer], **extra: object) -> None:
    for s in servers:
        s.configure({"default_reply": "red", "models": [MODEL], "record_bodies": True, **extra})


def pool_config(root: Path, servers: list[FakeServer], concurrency: int = 2, pool: str = "") -> None:
    urls = "\n".join(f"      - {{url: '{s.base_url}', concurrency: {concurrency}}}" for s in servers)
    (root / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n{urls}\n{pool}",
        encoding="utf-8")


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def test_cells_spread_over_the_pool_with_byte_identical_bodies(tmp_path: Path, servers: list[FakeServer],
                                                               key: str) -> None:
    configure(servers, latency_ms=20)
    project = ab_project(tmp_path, fixtures=30, repetitions=1)
    pool_config(tmp_path, servers)
    result = bc(project, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)["runs"]
    assert summary["counts"] == {"ok": 60, "truncated": 0, "failed": 0} and summary["concurrency"] == 6
    folder = only_run(project, "colour-ab")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["endpoints"] == [s.base_url for s in servers]
    outputs = read_jsonl(folder / "outputs.jsonl")
    used = {o["endpoint"] for o in outputs}
    assert used == {s.base_url for s in servers}  # least-loaded: every server took cells
    planned = {digest(r["body"]) for r in read_jsonl(folder / "sealed" / "requests.jsonl")}
    sent = [digest(b) for s in servers for b in s.stats()["bodies"]]
    assert sorted(sent) == sorted(planned)  # each sealed body sent once, unchanged, whichever server took it
    for s in servers:
        assert 0 < s.stats()["max_in_flight"] <= 2  # each server's own concurrency


def test_a_failing_server_is_taken_out_and_no_cell_is_lost(tmp_path: Path, servers: list[FakeServer],
                                                           key: str) -> None:
    configure(servers, latency_ms=10)
    bad = servers[1]
    bad.configure({"models": [MODEL], "faults": [{"match": "", "kind": "500", "times": 1000}]})
    project = ab_project(tmp_path, fixtures=40, repetitions=1)
    pool_config(tmp_path, servers, pool="    pool: {fail_after: 2, out_for_s: 30}\n")
    result = bc(project, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)["runs"]
    assert summary["counts"] == {"ok": 80, "truncated": 0, "failed": 0}
    outputs = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert bad.base_url not in {o["endpoint"] for o in outputs}
    assert any(o["attempts"] > 1 for o in outputs)  # the cells it failed were retried elsewhere
    # out after two failures in a row: only the calls already in flight on it failed besides
    assert bad.stats()["calls"] <= 2 + 2


def test_a_server_taken_out_is_tried_again_later(tmp_path: Path, servers: list[FakeServer], key: str) -> None:
    configure(servers, latency_ms=10)
    flaky = servers[2]  # fails its first two calls, then answers
    flaky.configure({"models": [MODEL], "latency_ms": 10, "default_reply": "red",
                     "faults": [{"match": "", "kind": "503", "times": 1, "total": 2}]})
    project = ab_project(tmp_path, fixtures=60, repetitions=1)
    pool_config(tmp_path, servers, concurrency=1, pool="    pool: {fail_after: 1, out_for_s: 0.05}\n")
    result = bc(project, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    outputs = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert all(o["status"] == "ok" for o in outputs) and len(outputs) == 120
    stats = flaky.stats()
    assert stats["by_status"].get("503", 0) >= 1  # it was taken out ...
    assert flaky.base_url in {o["endpoint"] for o in outputs}  # ... and came back for later cells


def test_a_pool_of_different_models_is_refused(tmp_path: Path, servers: list[FakeServer], key: str) -> None:
    configure(servers)
    servers[2].configure({"models": ["other/model"]})
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    pool_config(tmp_path, servers)
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and servers[2].base_url in result.stderr
    assert "serves other/model, not test/model" in result.stderr
    assert runs_of(project, "colour-ab") == [] and sum(s.stats()["calls"] for s in servers) == 0


def test_a_resumed_pool_keeps_each_servers_concurrency(tmp_path: Path, servers: list[FakeServer], key: str) -> None:
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    configure(servers)
    project = ab_project(tmp_path, fixtures=10, repetitions=1)
    urls = "\n".join(f"      - '{s.base_url}'" for s in servers)  # no concurrency of their own: --concurrency each
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n{urls}\n")
    [first] = run(project, "colour-ab", RunOptions(concurrency=2, progress=False), stop_after=5)
    assert first.concurrency == 6 and not first.finished
    result = bc(project, "run", "colour-ab", "--resume", first.run, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["concurrency"] == 6  # 2 on each of the 3 servers, as started
    assert max(srv.stats()["max_in_flight"] for srv in servers) <= 2


def test_each_server_keeps_its_own_rate_limit(tmp_path: Path, servers: list[FakeServer], key: str) -> None:
    configure(servers[:1])
    project = ab_project(tmp_path, fixtures=10, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n"
        f"      - {{url: '{servers[0].base_url}', concurrency: 4, requests_per_minute: 1200}}\n")
    result = bc(project, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    # 20 calls at most one every 50 ms: the last starts no sooner than 0.95 s after the first
    assert json.loads(result.stdout)["runs"][0]["wall_s"] >= 0.95


def test_a_pool_with_one_hung_server_runs_on_the_others(tmp_path: Path, servers: list[FakeServer], key: str) -> None:
    """One server of three takes each call and answers none: its calls time out, it is taken out after
    `fail_after` of them, and the cells it held are answered by the others. The silence rule does not stop the run:
    the other servers answer in between."""
    configure(servers, latency_ms=20)
    hung = servers[1]
    hung.configure({"models": [MODEL], "faults": [{"match": "", "kind": "hang", "times": 999, "hang_s": 5}]})
    project = ab_project(tmp_path, fixtures=20, repetitions=1)
    pool_config(tmp_path, servers, pool="    pool: {fail_after: 2, out_for_s: 30}\n")
    result = bc(project, "run", "colour-ab", "--json", "--timeout", "0.3")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)["runs"]
    assert summary["counts"] == {"ok": 40, "truncated": 0, "failed": 0} and summary["finished"]
    outputs = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert hung.base_url not in {o["endpoint"] for o in outputs}
    assert 1 <= hung.stats()["calls"] <= 2 + 2  # out after two timeouts: only the calls in flight on it besides


def test_a_pool_whose_every_server_hangs_stops_in_one_line(tmp_path: Path, servers: list[FakeServer],
                                                           key: str) -> None:
    """Every server of a pool takes calls and answers none: the run stops by the silence rule, as on one server,
    in one line naming the --resume that continues it, the cells in flight not recorded; the resume calls them."""
    configure(servers, faults=[{"match": "", "kind": "hang", "times": 999, "hang_s": 5}])
    project = ab_project(tmp_path, fixtures=10, repetitions=1)
    pool_config(tmp_path, servers, concurrency=2)
    result = bc(project, "run", "colour-ab", "--timeout", "0.3")
    assert result.exit_code == 1, result.output
    folder = only_run(project, "colour-ab")
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: the run stopped: 12 calls in a row over 6 cells timed out after 0.3 s and no "
                           "answer came for "), line
    assert " s: the server takes calls but answers none (if its answers only take longer, raise --timeout)" in line
    assert line.endswith(f"; 0 of 20 cells recorded, 0 failed. When the endpoint answers again: benchcard run "
                         f"colour-ab --resume {folder.name}"), line
    assert read_jsonl(folder / "outputs.jsonl") == []
    assert sum(s.stats()["calls"] for s in servers) <= 12 + 6  # as many as stop a run of 6 workers, and those in flight
    configure(servers)
    resumed = bc(project, "run", "colour-ab", "--resume", folder.name, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["runs"][0]["counts"] == {"ok": 20, "truncated": 0, "failed": 0}


def _limiting_server(most: int, answer_s: float = 0.1) -> tuple[str, dict[str, int], threading.Event]:
    """A chat-completions server on 127.0.0.1 taking `most` calls at once, answered in `answer_s`, and refusing the rest
    `429, Retry-After: 0.05` (a server's limit on calls in flight): its base URL, its counts (`refused`, `answered`)
    and the event that stops it. Its `GET /models` is a 404 (a pool lets such a server in)."""
    lock = threading.Lock()
    state = {"in_flight": 0, "refused": 0, "answered": 0}

    def answer(conn: socket.socket) -> None:
        with conn:
            head = read_head(conn)
            if head.startswith(b"GET"):
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                return
            read_request_body(conn, head)
            with lock:
                refused = state["in_flight"] >= most
                state["refused" if refused else "in_flight"] += 1
            if refused:
                body = b'{"error": {"message": "too many requests in flight"}}'
                conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0.05\r\nConnection: close\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                return
            try:
                time.sleep(answer_s)
                send_json(conn, RED_REPLY)
            finally:
                with lock:
                    state["in_flight"] -= 1
                    state["answered"] += 1

    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    serve_raw(listener, answer, done)
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", state, done


def test_a_server_refusing_for_load_narrows_its_own_calls_not_the_others(tmp_path: Path, servers: list[FakeServer],
                                                                          key: str) -> None:
    """A pool of two servers taking 4 calls each by benchcard.yaml, one of them taking 2 at once and refusing the
    rest 429. The calls in flight narrow on a refusal for the server that refused: the other keeps its 4 in
    flight. Before (wire21), the run had one width for the pool: each 429 of the one halved the calls of both,
    and the other, answering every call, got fewer at a time. Counted at the other server, from after the first
    refusals to the end."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    other = servers[0]
    other.configure({"default_reply": "red", "models": [MODEL], "latency_ms": 150})
    url, limited, done = _limiting_server(2)
    project = ab_project(tmp_path, fixtures=40, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n"
        f"      - {{url: '{url}', concurrency: 4}}\n      - {{url: '{other.base_url}', concurrency: 4}}\n"
        "    pool: {fail_after: 100}\n", encoding="utf-8")
    watched = threading.Event()

    def watch() -> None:  # the limited server's first refusals, then 12 calls more on the other: count anew
        while limited["refused"] < 2 or other.stats(by_request=False)["calls"] < 12:
            time.sleep(0.01)
        other.reset()
        watched.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        [summary] = run(project, "colour-ab", RunOptions(progress=False))
    finally:
        done.set()
    thread.join(timeout=5)
    assert summary.counts == {"ok": 80, "truncated": 0, "failed": 0}, summary
    assert watched.is_set() and other.stats(by_request=False)["calls"] >= 20, other.stats(by_request=False)
    assert other.stats(by_request=False)["max_in_flight"] == 4, limited  # its own width, whatever the other refused
    assert summary.narrowed is not None and summary.narrowed >= 4 + 1, summary.narrowed  # the other's 4 kept


def test_calls_held_back_by_a_narrowed_server_wait_outside_their_timeout(tmp_path: Path, servers: list[FakeServer],
                                                                         key: str) -> None:
    """A pool of a server taking 6 calls by benchcard.yaml but 1 at once (refusing the rest 429) and one taking 1,
    each answering in 0.25 s, at --timeout 0.6. Once the first narrows to 1, the run keeps 2 calls in flight, and
    the cells beyond wait for a slot outside their timeout, as over one server. Before (wire21), the run kept 7
    in flight and the 5 beyond waited in the pool for a server, inside their timeout: cells timed out that no
    server had taken: 5 to 7 attempts spent on calls never sent, so the rows' attempts were more than the calls
    the servers took."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    other = servers[0]
    other.configure({"default_reply": "red", "models": [MODEL], "latency_ms": 250})
    url, limited, done = _limiting_server(1, answer_s=0.25)
    project = ab_project(tmp_path, fixtures=12, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n"
        f"      - {{url: '{url}', concurrency: 6}}\n      - {{url: '{other.base_url}', concurrency: 1}}\n"
        "    pool: {fail_after: 100}\n", encoding="utf-8")
    try:
        [summary] = run(project, "colour-ab", RunOptions(progress=False, timeout=0.6, attempts=8))
    finally:
        done.set()
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert summary.counts == {"ok": 24, "truncated": 0, "failed": 0}, summary
    taken = limited["refused"] + limited["answered"] + other.stats(by_request=False)["calls"]
    assert sum(r["attempts"] for r in rows) == taken, ([r["attempts"] for r in rows], limited)


def test_calls_held_back_by_a_server_out_wait_outside_their_timeout(tmp_path: Path, servers: list[FakeServer],
                                                                    key: str) -> None:
    """A pool of a server taking 6 calls by benchcard.yaml whose first 2 calls fail 500, which takes it out for
    2 s (fail_after 2), and one taking 1, each answering in 0.25 s, at --timeout 0.6. While the first is out, the
    run keeps 1 call in flight, and the cells beyond wait for a slot outside their timeout. Before (pool21b), the
    run kept 7 in flight (no refusal narrowed a server) and the 6 beyond waited in the pool for the one server in,
    inside their timeout: cells timed out that no server had taken, so the rows' attempts were more than the calls
    the servers took."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    failing, other = servers[0], servers[1]
    failing.configure({"default_reply": "red", "models": [MODEL], "latency_ms": 250,
                       "faults": [{"match": "", "kind": "500", "times": 1, "total": 2}]})
    other.configure({"default_reply": "red", "models": [MODEL], "latency_ms": 250})
    project = ab_project(tmp_path, fixtures=12, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n"
        f"      - {{url: '{failing.base_url}', concurrency: 6}}\n      - {{url: '{other.base_url}', concurrency: 1}}\n"
        "    pool: {fail_after: 2, out_for_s: 2}\n", encoding="utf-8")
    [summary] = run(project, "colour-ab", RunOptions(progress=False, timeout=0.6, attempts=8))
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert summary.counts == {"ok": 24, "truncated": 0, "failed": 0}, summary
    took = [s.stats(by_request=False)["calls"] for s in (failing, other)]
    assert took[0] > 2, took  # the failing server was called again once back: it was out, not gone
    assert sum(r["attempts"] for r in rows) == sum(took), (sum(r["attempts"] for r in rows), took)


def _trickling_models_server(seconds: float, flood: int = 0, nested: int = 0) -> tuple[str, threading.Event]:
    """A server that answers a call at once but sends its `GET /models` list a byte every half second for
    `seconds` (within every read timeout), then a list naming only `other/model`, which would refuse the pool
    had the check waited for it. With `flood`, it sends at once such a list padded to `flood` bytes instead; with
    `nested`, such a list beside lists nested `nested` deep."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def answer(conn: socket.socket) -> None:
        with conn:
            head = read_head(conn)
            if head.startswith(b"GET") and (flood or nested):
                listed = (b'{"data": [{"id": "other/model"}], "pad": "%s"}' % (b"x" * flood) if flood else
                          b'{"data": [{"id": "other/model"}], "pad": %s}' % (b"[" * nested + b"]" * nested))
                with contextlib.suppress(OSError):
                    send_json(conn, listed)
                return
            if head.startswith(b"GET"):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline and not done.is_set():
                    with contextlib.suppress(OSError):
                        conn.sendall(b"1\r\n \r\n")
                    time.sleep(0.5)
                listed = b'{"data": [{"id": "other/model"}]}'
                with contextlib.suppress(OSError):  # then a whole list, which a reader still waiting would act on
                    conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(listed), listed))
                return
            read_request_body(conn, head)
            send_json(conn, RED_REPLY)

    serve_raw(listener, answer, done)
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", done


def _run_beside(tmp_path: Path, servers: list[FakeServer], seconds: float, flood: int = 0,
                nested: int = 0) -> tuple[Project, Result]:
    """`benchcard run` over a pool of a fake server and `_trickling_models_server(seconds, flood, nested)`."""
    configure(servers)
    url, done = _trickling_models_server(seconds=seconds, flood=flood, nested=nested)
    try:
        project = ab_project(tmp_path, fixtures=2, repetitions=1)
        (tmp_path / "benchcard.yaml").write_text(
            f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n    base_urls:\n"
            f"      - {{url: '{servers[0].base_url}', concurrency: 1}}\n      - {{url: '{url}', concurrency: 1}}\n",
            encoding="utf-8")
        return project, bc(project, "run", "colour-ab")
    finally:
        done.set()


def test_a_server_trickling_its_model_list_cannot_hold_the_run(tmp_path: Path, servers: list[FakeServer], key: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit: a pool's check of its servers' models waited per read only, so a server sending its list a
    byte at a time held the run before its first call for as long as it liked; now MODELS_WAIT_S in all, and the
    server is let in as one that did not answer. The list it sends at last names another model: a check that
    waited for it refuses the pool, so the run's success shows the wait was cut, with no clock in the test. The
    list trickles for up to 120 s (it stops when the run is over), so that a wait of 1 s cut late under load is still
    told from one never cut (4 s before left25)."""
    from benchcard.run import _pool

    monkeypatch.setattr(_pool, "MODELS_WAIT_S", 1.0)
    project, result = _run_beside(tmp_path, servers, seconds=120.0)
    assert result.exit_code == 0, result.output
    assert len(read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")) == 4


def test_a_server_flooding_its_model_list_is_read_no_further_than_the_cap(tmp_path: Path, servers: list[FakeServer],
                                                                          key: str, monkeypatch: pytest.MonkeyPatch
                                                                          ) -> None:
    """Hostile audit: a pool's check read a server's GET /models whole, however large, into memory. It reads at
    most MODELS_BYTES (8 MiB; 1 MiB here) and lets a server whose list is larger in, unread, as one that did not
    answer: here a 16 MiB list naming another model, which read whole would have refused the pool."""
    from benchcard.run import _pool

    monkeypatch.setattr(_pool, "MODELS_BYTES", 2**20, raising=False)
    project, result = _run_beside(tmp_path, servers, seconds=0.0, flood=16 * 2**20)
    assert result.exit_code == 0, result.output
    assert "other/model" not in result.output + result.stderr
    assert len(read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")) == 4


def test_a_server_nesting_its_model_list_past_the_stack_is_let_in_unread(tmp_path: Path, servers: list[FakeServer],
                                                                         key: str) -> None:
    """Hostile audit (round 12b): a pool's check read a server's GET /models with json.loads, whose RecursionError
    on lists nested 100,000 deep (200 kB) no handler caught: `benchcard run` ended in a traceback before its first
    call. Such a list is read as one that is no JSON, and the server let in as one that did not answer (its list,
    read, would name another model and refuse the pool)."""
    project, result = _run_beside(tmp_path, servers, seconds=0.0, nested=100_000)
    assert result.exit_code == 0, result.output
    assert len(read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")) == 4


@pytest.mark.usefixtures("provider_keys")
def test_a_pool_s_models_call_sends_each_header_once_whatever_its_case() -> None:
    """A header of benchcard.yaml named as the key's but for its case (`authorization`) is replaced by the key's
    on each server's `GET /models`, as on a run's call (`base.sent_headers`): before (review21), both were sent."""
    config = dataclasses.replace(OPENAI, headers={"authorization": "Bearer gateway"},
                                 endpoints=(Endpoint("https://a.example/v1"), Endpoint("https://b.example/v1")))
    client = client_for(lambda r: httpx.Response(200, json={"data": [{"id": MODEL}]}))

    async def check() -> None:
        try:
            await PoolProvider(config, client, 2).check_models(MODEL)
        finally:
            await client.aclose()

    asyncio.run(check())
    assert [r.headers.get_list("authorization") for r in SEEN] == [["Bearer sk-openai-test"]] * 2


def test_a_call_no_server_can_take_waits_for_a_trial_outside_its_timeout(tmp_path: Path, servers: list[FakeServer],
                                                                         key: str) -> None:
    """Both servers of a pool fail their first 2 calls (500), which takes each out for 1.2 s (fail_after 2), and
    then answer, at --timeout 0.5. While every server is out, the calls wait for a server's trial before they are
    sent, outside their timeout. Before (left22), one call was let through and waited in the pool for the first
    server back inside its timeout, and timed out that no server had taken: the rows' attempts were more than the
    calls the servers took."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    for s in servers[:2]:
        s.configure({"default_reply": "red", "models": [MODEL], "latency_ms": 20,
                     "faults": [{"match": "", "kind": "500", "times": 1, "total": 2}]})
    project = ab_project(tmp_path, fixtures=4, repetitions=1)
    pool_config(tmp_path, servers[:2], concurrency=2, pool="    pool: {fail_after: 2, out_for_s: 1.2}\n")
    [summary] = run(project, "colour-ab", RunOptions(progress=False, timeout=0.5, attempts=8))
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert summary.counts == {"ok": 8, "truncated": 0, "failed": 0}, summary
    took = [s.stats(by_request=False)["calls"] for s in servers[:2]]
    assert all(t > 2 for t in took), took  # each answered once back: it was out, not gone
    assert sum(r["attempts"] for r in rows) == sum(took), ([r["attempts"] for r in rows], took)
    assert not any("timed out" in (r["error"] or "") for r in rows)


def test_a_pool_with_no_server_back_within_a_cells_wait_stops_in_one_line(tmp_path: Path, servers: list[FakeServer],
                                                                        key: str) -> None:
    """Both servers of a pool fail every call (500) and are out for 300 s (the most a pool allows) after one
    (fail_after 1), past the 2 s a cell may wait in all (max_wait): the run does not hold its cells for a trial that
    comes too late, nor spend their attempts or timeouts on calls no server takes; it stops in one line naming the
    --resume that continues it, the cells in flight not recorded, once the servers are taken out. A run that waited
    for the trial is stopped by the watchdog (out for 5 s against a 5 s bound on the run's time before left25)."""
    from benchcard.errors import RunError
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    configure(servers[:2], faults=[{"match": "", "kind": "500", "times": 999}])
    project = ab_project(tmp_path, fixtures=4, repetitions=1)
    pool_config(tmp_path, servers[:2], concurrency=1, pool="    pool: {fail_after: 1, out_for_s: 300}\n")
    with watchdog(120, "the run waits for a server out for 300 s"), pytest.raises(RunError) as stopped:
        run(project, "colour-ab", RunOptions(progress=False, timeout=1.0, max_wait=2.0))
    folder = only_run(project, "colour-ab")
    said = re.escape("the run stopped: every server of the pool is out after failures in a row, and none is back "
                     "to be tried within the ") + r"[12]\.\d s a cell may still wait \(of 2 s in all\): the first in " \
        r"(29\d|300)\.\d" + re.escape(f" s; 0 of 8 cells recorded, 0 failed. When the endpoint answers again: "
                                      f"benchcard run colour-ab --resume {folder.name}")
    assert re.fullmatch(said, str(stopped.value)), str(stopped.value)
    assert [s.stats(by_request=False)["calls"] for s in servers[:2]] == [1, 1]  # one call each took them out
    assert read_jsonl(folder / "outputs.jsonl") == []
    # review22: the --resume the line names calls each cell once, the two whose calls were refused among them
    configure(servers[:2])
    [resumed] = run(project, "colour-ab", RunOptions(resume=folder.name, progress=False, timeout=1.0, max_wait=2.0))
    rows = read_jsonl(folder / "outputs.jsonl")
    assert resumed.counts == {"ok": 8, "truncated": 0, "failed": 0}, resumed
    assert len(rows) == len({r["cell"] for r in rows}) == 8 and {r["attempts"] for r in rows} == {1}, rows
    assert sum(s.stats(by_request=False)["calls"] for s in servers[:2]) == 8
