"""The fake server's app, observed from a real HTTP client over real sockets as the runner will see it: both vendors'
shapes, every fault, the key check, the counters, latency, and its command line."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from benchcard._util.hashing import digest
from benchcard.cli import cli
from benchcard.testing.fakeserver import FakeServer

from ...helpers_fakeserver import SRC, chat, content
from ...helpers_run import PROBE, probe_project
from ...helpers_wait import wait_until

# ----------------------------------------------------------------------------------------------- shapes


def test_openai_shape(fake: FakeServer, client: httpx.Client) -> None:
    resp = client.post("/chat/completions", json=chat("one two three", model="gpt-x"))
    assert resp.status_code == 200
    data = resp.json()
    assert data["object"] == "chat.completion"
    assert data["id"] and isinstance(data["created"], int)
    assert data["model"] == "gpt-x"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "ok"}
    assert data["choices"][0]["finish_reason"] == "stop"
    usage = data["usage"]
    assert usage["prompt_tokens"] == 5  # "be brief" + "one two three"
    assert usage["completion_tokens"] == 1
    assert usage["total_tokens"] == 6
    assert usage["completion_tokens_details"] == {"reasoning_tokens": 0}
    assert "cost" not in usage


def test_responses_shape(fake: FakeServer, client: httpx.Client) -> None:
    """The Responses API (`/v1/responses`), as inspect_ai's `openai/` provider calls it: `input` as a string or
    as messages of `input_text` parts, `instructions`, `max_output_tokens`; errors and faults as chat's."""
    fake.configure({"replies": [{"match": "colour", "reply": "red and ripe", "reasoning_tokens": 2}]})
    body = {"model": "gpt-x", "instructions": "be brief",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "what colour is it"}]}]}
    data = client.post("/responses", json=body).json()
    assert data["object"] == "response" and data["status"] == "completed" and data["model"] == "gpt-x"
    assert data["id"].startswith("resp_") and isinstance(data["created_at"], int)
    assert data["incomplete_details"] is None and data["error"] is None and data["instructions"] == "be brief"
    [message] = data["output"]
    assert (message["type"], message["role"], message["status"]) == ("message", "assistant", "completed")
    assert message["content"] == [{"type": "output_text", "text": "red and ripe", "annotations": []}]
    assert data["usage"] == {"input_tokens": 6, "input_tokens_details": {"cached_tokens": 0},
                             "output_tokens": 3 + 2, "output_tokens_details": {"reasoning_tokens": 2},
                             "total_tokens": 11}
    short = client.post("/responses", json={"model": "gpt-x", "input": "what colour", "max_output_tokens": 2}).json()
    assert short["status"] == "incomplete" and short["incomplete_details"] == {"reason": "max_output_tokens"}
    assert short["output"][0]["content"][0]["text"] == "red and"
    fake.configure({"faults": [{"match": "colour", "kind": "429", "retry_after": 0}]})
    limited = client.post("/responses", json=body)
    assert limited.status_code == 429 and limited.json()["error"]["message"] == "injected fault 429"
    assert fake.stats()["by_endpoint"] == {"/v1/responses": 1}  # counted since the last configure


def test_anthropic_shape(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"replies": [{"match": "", "reply": "hello there", "reasoning_tokens": 3}]})
    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "system": "sys prompt",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi you"}]}],
    }
    data = client.post("/messages", json=body).json()
    assert data["type"] == "message" and data["role"] == "assistant" and data["model"] == "claude-x"
    assert data["content"] == [{"type": "text", "text": "hello there"}]
    assert data["stop_reason"] == "end_turn"
    assert data["usage"] == {"input_tokens": 4, "output_tokens": 2}

    thinking = client.post("/messages", json={**body, "thinking": {"type": "enabled", "budget_tokens": 1024}})
    blocks = thinking.json()["content"]
    assert [b["type"] for b in blocks] == ["thinking", "text"]
    assert blocks[1]["text"] == "hello there"
    assert thinking.json()["usage"]["output_tokens"] == 2 + 3

    fake.configure({"faults": [{"kind": "truncate"}], "default_reply": "a long enough reply"})
    cut = client.post("/messages", json=body).json()
    assert cut["stop_reason"] == "max_tokens"
    assert "a long enough reply".startswith(cut["content"][-1]["text"])
    assert cut["content"][-1]["text"] != "a long enough reply"


def test_non_json_body_is_400(fake: FakeServer, client: httpx.Client) -> None:
    resp = client.post("/chat/completions", content=b"not json", headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
    assert fake.stats()["by_status"] == {"400": 1}


# ---------------------------------------------------------------------------------------------- replies


# ----------------------------------------------------------------------------------------------- faults


def test_fault_429_sets_retry_after(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "429", "retry_after": 2}]})
    resp = client.post("/chat/completions", json=chat("x"))
    assert resp.status_code == 429
    assert resp.headers["Retry-After"] == "2"
    assert "error" in resp.json()
    fake.configure({"faults": [{"kind": 429, "retry_after": 0.25}]})
    assert client.post("/chat/completions", json=chat("x")).headers["Retry-After"] == "0.25"
    fake.configure({"faults": [{"kind": "429"}]})
    assert client.post("/chat/completions", json=chat("x")).headers["Retry-After"] == "1"


@pytest.mark.parametrize("kind", ["500", "503"])
def test_fault_5xx(fake: FakeServer, client: httpx.Client, kind: str) -> None:
    fake.configure({"faults": [{"kind": kind}]})
    assert client.post("/chat/completions", json=chat("x")).status_code == int(kind)
    anthropic = client.post("/messages", json=chat("x", max_tokens=10))
    assert anthropic.status_code == int(kind)
    assert anthropic.json()["type"] == "error"


def test_fault_401_refuses_the_key_and_counts_the_calls_after_it(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"match": "revoked", "kind": "401", "times": 9}]})
    assert content(client.post("/chat/completions", json=chat("fine"))) == "ok"
    refused = client.post("/chat/completions", json=chat("revoked"))
    assert refused.status_code == 401 and refused.json()["error"]["message"] == "injected fault 401"
    assert client.post("/messages", json=chat("revoked", max_tokens=5)).json()["type"] == "error"
    client.post("/chat/completions", json=chat("fine"))
    stats = fake.stats()
    assert stats["by_status"] == {"200": 2, "401": 2} and stats["by_fault"] == {"401": 2}
    assert stats["after_first"] == {"200": 3, "401": 2}  # the calls received after the first of each status


def test_fault_drop_is_a_transport_error(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "drop"}]})
    with pytest.raises(httpx.TransportError):
        client.post("/chat/completions", json=chat("x"))
    assert content(client.post("/chat/completions", json=chat("x"))) == "ok"  # the server survived
    stats = fake.stats()
    assert stats["by_status"] == {"drop": 1, "200": 1}
    assert stats["by_fault"] == {"drop": 1}


def test_fault_hang_exceeds_a_client_timeout(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "hang", "hang_s": 5}]})
    with pytest.raises(httpx.TimeoutException):  # the server still holds the call: the client gives up
        client.post("/chat/completions", json=chat("x"), timeout=0.3)
    assert content(client.post("/chat/completions", json=chat("x"))) == "ok"


def test_a_held_fault_answers_only_when_released(fake: FakeServer, client: httpx.Client) -> None:
    """A `held` call waits, with no timer, until the test releases it: then it gets its fault's answer. Other
    calls are answered meanwhile, and a call held after a release waits for the next one."""
    fake.configure({"faults": [{"match": "wait", "kind": "500", "times": 9, "held": True}]})
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        held = pool.submit(client.post, "/chat/completions", json=chat("wait"), timeout=60)
        wait_until(lambda: fake.stats()["held"] == 1, 60, "the fake server to hold the call")
        assert content(client.post("/chat/completions", json=chat("other"))) == "ok"
        assert not held.done() and fake.stats()["in_flight"] == 1
        assert fake.release() == 1
        assert held.result(timeout=30).status_code == 500
        later = pool.submit(client.post, "/chat/completions", json=chat("wait again"), timeout=60)
        wait_until(lambda: fake.stats()["held"] == 1, 60, "the fake server to hold the call after the release")
        assert not later.done()
        assert fake.release() == 1 and later.result(timeout=30).status_code == 500
    assert fake.release() == 0 and fake.stats()["held"] == 0


def test_fault_hang_eventually_answers(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "hang", "hang_s": 0.2}]})
    started = time.monotonic()
    assert content(client.post("/chat/completions", json=chat("x"))) == "ok"
    assert time.monotonic() - started >= 0.2


def test_fault_truncate(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"default_reply": "the full answer is here", "faults": [{"kind": "truncate"}]})
    data = client.post("/chat/completions", json=chat("x")).json()
    assert data["choices"][0]["finish_reason"] == "length"
    text = data["choices"][0]["message"]["content"]
    assert "the full answer is here".startswith(text) and len(text) < len("the full answer is here")
    full = client.post("/chat/completions", json=chat("x")).json()["choices"][0]
    assert full["finish_reason"] == "stop" and full["message"]["content"] == "the full answer is here"


def test_fault_null_answers_without_text_in_every_shape(fake: FakeServer, client: httpx.Client) -> None:
    """A 200 with no text, still `stop`: chat's `content: null`, no Messages text block, no Responses output."""
    fake.configure({"default_reply": "red", "faults": [{"kind": "null", "times": 1}]})
    choice = client.post("/chat/completions", json=chat("x")).json()["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": None} and choice["finish_reason"] == "stop"
    message = client.post("/messages", json={"model": "m", "max_tokens": 9, "messages": [
        {"role": "user", "content": "y"}]}).json()
    assert message["content"] == [] and message["stop_reason"] == "end_turn"
    response = client.post("/responses", json={"model": "m", "input": "z"}).json()
    assert response["output"] == [] and response["status"] == "completed"
    assert content(client.post("/chat/completions", json=chat("x"))) == "red"  # `times` per body, as every fault


def test_fault_mistyped_answers_with_a_field_of_another_type_in_every_shape(fake: FakeServer,
                                                                           client: httpx.Client) -> None:
    fake.configure({"default_reply": "red", "faults": [{"kind": "mistyped", "times": 1}]})
    choice = client.post("/chat/completions", json=chat("x")).json()["choices"][0]
    assert choice["message"]["content"] == [{"type": "text", "text": None}] and choice["finish_reason"] == "stop"
    message = client.post("/messages", json={"model": "m", "max_tokens": 9, "messages": [
        {"role": "user", "content": "y"}]}).json()
    assert message["content"] == [{"type": "text", "text": "red"}] and message["stop_reason"] == ["end_turn"]
    response = client.post("/responses", json={"model": "m", "input": "z"}).json()
    assert response["output"][0]["content"][0]["text"] is None and response["status"] == "completed"
    assert content(client.post("/chat/completions", json=chat("x"))) == "red"


def test_fault_malformed_is_not_json(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "malformed"}]})
    resp = client.post("/chat/completions", json=chat("x"))
    assert resp.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(resp.content)


def test_fault_redirect_points_elsewhere_with_an_answer_in_its_body(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "redirect"}]})
    resp = client.post("/chat/completions", json=chat("x"))
    assert resp.status_code == 307
    assert resp.headers["location"] == "http://mirror:hunter2@elsewhere.invalid/v1/chat/completions"
    assert resp.json()["choices"][0]["message"]["content"] == "redirected"


def test_fault_bad_redirect_points_to_an_address_that_is_not_a_url(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "bad_redirect"}]})
    with pytest.raises(httpx.RemoteProtocolError, match="Invalid URL in location header: Invalid port: 'x'"):
        client.post("/chat/completions", json=chat("x"))


def test_fault_zstd_bomb_is_a_small_body_that_inflates_to_256_mib(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "zstd_bomb"}]})
    with client.stream("POST", "/chat/completions", json=chat("x")) as resp:
        raw = b"".join(resp.iter_raw())
    assert resp.status_code == 200 and resp.headers["content-encoding"] == "zstd"
    assert len(raw) < 10_000
    import zstandard  # a dev dependency, only to read it back: the server builds it by hand

    assert zstandard.ZstdDecompressor().decompressobj().decompress(raw) == b" " * (256 * 2**20)


def test_fault_times_count_per_distinct_body(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"kind": "503", "times": 2}]})
    codes_a = [client.post("/chat/completions", json=chat("A")).status_code for _ in range(3)]
    codes_b = [client.post("/chat/completions", json=chat("B")).status_code for _ in range(3)]
    assert codes_a == [503, 503, 200]
    assert codes_b == [503, 503, 200]
    # Same body with keys in a different order is the same request (canonical JSON).
    fake.reset()
    reordered = {"messages": chat("A")["messages"], "model": "m-1"}
    codes = [client.post("/chat/completions", json=b).status_code for b in (chat("A"), reordered, chat("A"))]
    assert codes == [503, 503, 200]


def test_faults_match_and_chain(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure(
        {"faults": [{"match": "flaky", "kind": "429", "retry_after": 0}, {"match": "flaky", "kind": "500"}]}
    )
    codes = [client.post("/chat/completions", json=chat("a flaky one")).status_code for _ in range(3)]
    assert codes == [429, 500, 200]
    assert client.post("/chat/completions", json=chat("steady")).status_code == 200
    assert fake.stats()["by_fault"] == {"429": 1, "500": 1}


# ------------------------------------------------------------------------------------------ keys, stats


def test_require_key(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"require_key": True})
    assert client.post("/chat/completions", json=chat("x")).status_code == 401
    assert (
        client.post("/chat/completions", json=chat("x"), headers={"Authorization": "Bearer"}).status_code
        == 401
    )
    ok = client.post("/chat/completions", json=chat("x"), headers={"Authorization": "Bearer sk-secret-1"})
    assert ok.status_code == 200
    anth = client.post("/messages", json=chat("x", max_tokens=5), headers={"x-api-key": "sk-secret-2"})
    assert anth.status_code == 200
    stats = fake.stats()
    assert stats["with_key"] == 2 and stats["without_key"] == 2
    assert stats["by_status"] == {"401": 2, "200": 2}
    assert "sk-secret" not in json.dumps(stats)


def test_stats_counts(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"faults": [{"match": "bad", "kind": "500"}]})
    bodies = [chat("good"), chat("good"), chat("bad"), chat("bad")]
    for body in bodies:
        client.post("/chat/completions", json=body, headers={"Authorization": "Bearer sk-top-secret"})
    client.post("/messages", json=chat("good", max_tokens=3))
    stats = fake.stats()
    assert stats["calls"] == 5
    assert stats["distinct_requests"] == 3
    assert stats["by_request"] == {
        digest(chat("good")): 2,
        digest(chat("bad")): 2,
        digest(chat("good", max_tokens=3)): 1,
    }
    assert stats["by_status"] == {"200": 4, "500": 1}
    assert stats["by_endpoint"] == {"/v1/chat/completions": 4, "/v1/messages": 1}
    assert stats["with_key"] == 4 and stats["without_key"] == 1
    assert stats["in_flight"] == 0
    assert "bodies" not in stats
    assert "sk-top-secret" not in json.dumps(stats)

    assert "by_request" not in fake.stats(by_request=False)
    fake.reset()
    assert fake.stats()["calls"] == 0
    assert client.post("/chat/completions", json=chat("bad")).status_code == 500  # config kept, budget reset


def test_record_bodies(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"record_bodies": True})
    client.post("/chat/completions", json=chat("first"))
    client.post("/messages", json=chat("second", max_tokens=1))
    assert fake.stats()["bodies"] == [chat("first"), chat("second", max_tokens=1)]


def test_record_headers(fake: FakeServer, client: httpx.Client) -> None:
    """Each call's headers, names in lower case, in order; none kept unless asked."""
    client.post("/chat/completions", json=chat("unrecorded"), headers={"X-Route": "a"})
    assert "headers" not in fake.stats()
    fake.configure({"record_headers": True})
    client.post("/chat/completions", json=chat("first"), headers={"X-Route": "b"})
    client.post("/messages", json=chat("second", max_tokens=1), headers={"anthropic-beta": "c"})
    seen = fake.stats()["headers"]
    assert [(h.get("x-route"), h.get("anthropic-beta")) for h in seen] == [("b", None), (None, "c")]


def test_latency_and_concurrency(fake: FakeServer) -> None:
    """64 calls at 200 ms are all in flight at once: the server holds many together, it does not queue them."""
    fake.configure({"latency_ms": 200, "latency_jitter_ms": 20, "seed": 1})

    async def run() -> list[int]:
        limits = httpx.Limits(max_connections=64)
        async with httpx.AsyncClient(base_url=fake.base_url, limits=limits, trust_env=False, timeout=10) as c:
            resps = await asyncio.gather(
                *(c.post("/chat/completions", json=chat(f"q{i}")) for i in range(64))
            )
        return [r.status_code for r in resps]

    codes = asyncio.run(run())
    assert codes == [200] * 64
    stats = fake.stats()
    assert stats["calls"] == 64 and stats["distinct_requests"] == 64
    assert stats["max_in_flight"] >= 32


# -------------------------------------------------------------------------------------------------- CLI


def test_cli_prints_listening_line_and_serves(tmp_path: Path) -> None:
    config = tmp_path / "fake.json"
    config.write_text(json.dumps({"default_reply": "from file"}), encoding="utf-8")
    cmd = [sys.executable, "-m", "benchcard.testing.fakeserver", "--port", "0", "--config", str(config)]
    with subprocess.Popen(
        [*cmd, "--latency-ms", "1"], stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": SRC, "PATH": ""}
    ) as proc:
        assert proc.stdout is not None
        try:
            line = proc.stdout.readline()
            match = re.fullmatch(r"listening (http://127\.0\.0\.1:(\d+)) · base URL \1/v1 \(OpenAI chat completions "
                                 r"and responses, Anthropic messages\)\n", line)
            assert match, line
            assert int(match.group(2)) > 0
            with httpx.Client(base_url=match.group(1), trust_env=False, timeout=5) as c:
                started = time.monotonic()
                assert content(c.post("/v1/chat/completions", json=chat("x"))) == "from file"
                assert time.monotonic() - started >= 0.001
        finally:
            proc.terminate()
        assert proc.wait(timeout=5) == 0  # SIGTERM is a clean shutdown
        assert proc.stdout.read() == ""  # nothing printed per request


def test_cli_rejects_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"faults": [{"kind": "boom"}]}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "benchcard.testing.fakeserver", "--port", "0", "--config", str(config)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": SRC, "PATH": ""},
        timeout=15,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "kind" in done.stderr


@pytest.mark.parametrize(("host", "said"), [
    ("10.0.0.1", "fakeserver: --host: 10.0.0.1 is not a loopback address; the fake server answers this machine only"),
    ("localhost", "fakeserver: --host: expected a loopback address such as 127.0.0.2 or ::1, got 'localhost'"),
])
def test_cli_listens_on_a_loopback_address_only(host: str, said: str) -> None:
    done = subprocess.run([sys.executable, "-m", "benchcard.testing.fakeserver", "--port", "0", "--host", host],
                          capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": ""}, timeout=15)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said + "\n")


def test_cli_says_in_one_line_that_its_port_is_taken_or_out_of_range() -> None:
    """docs/compare.md starts the server on --port 8765 twice (its first recipe, then its end-to-end one): the
    second found the port taken and printed a traceback ending in `Address already in use`."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for given, said in [(port, f"fakeserver: --port {port}: cannot listen on 127.0.0.1:{port} (Address already "
                                   "in use); stop the server already there, or choose another port (--port 0 picks "
                                   "a free one)"),
                            (99999, "fakeserver: --port 99999: expected a port from 0 to 65535 (0 picks a free one)")]:
            done = subprocess.run([sys.executable, "-m", "benchcard.fakeserver", "--port", str(given)],
                                  capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": ""}, timeout=15)
            assert (done.returncode, done.stdout, done.stderr) == (2, "", said + "\n")


def test_the_command_line_explains_its_options_and_config() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "benchcard.fakeserver", "--help"], capture_output=True, text=True,
                          timeout=60, check=True)
    for text in ("usage: python -m benchcard.fakeserver", "--port PORT", "--config CONFIG", "--latency-ms",
                 "Fault kinds: 400 (a request refused)", "html (200, a proxy's HTML page)",
                 "redirect (307 to another host", "zstd_bomb (200, zstd",
                 "shapeless (200, JSON of another shape: [])", "POST /v1/chat/completions",
                 'base_url: "http://127.0.0.1:PORT/v1"', "It prints its base URL (…/v1)"):
        assert text in done.stdout
    assert "``" not in done.stdout and ":class:" not in done.stdout and "Why it exists" not in done.stdout


def test_the_provider_its_help_shows_runs_a_card_as_pasted(fake: FakeServer, tmp_path: Path) -> None:
    """`--help`'s benchcard.yaml block, pasted with PORT filled in, runs a card with no key in the environment:
    until 2026-12-07 it named `api_key_env: FAKE_KEY`, so the run stopped at `FAKE_KEY is not set`, and a key of
    fewer than 8 characters (`x`) was refused."""
    shown = subprocess.run([sys.executable, "-m", "benchcard.fakeserver", "--help"], capture_output=True, text=True,
                           timeout=60, check=True).stdout
    block = shown[shown.index("  providers:\n"):shown.index("\nEndpoints:")]
    probe_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(block.replace("PORT", str(fake.port)) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "run", PROBE, "--provider", "fake", "--json"])
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.stdout)["runs"]
    assert run["finished"] and fake.stats()["calls"] == 1


def test_a_reply_rule_sends_the_prompt_caches_tokens_in_each_vendors_shape(fake: FakeServer,
                                                                           client: httpx.Client) -> None:
    """`cached_tokens`, `cache_write_tokens` and `cache_write_1h_tokens` stand for a cached prefix in front of the
    prompt's words, and every endpoint describes the same call in its own vendor's words: chat's and the
    Responses API's input counts them all and names the read ones; the Messages API's `input_tokens` counts only
    the words, the cache's tokens in their own fields, the writes split by lifetime."""
    fake.configure({"replies": [{"match": "", "reply": "red", "cached_tokens": 1000, "cache_write_tokens": 300,
                                 "cache_write_1h_tokens": 100}]})
    usage = client.post("/chat/completions", json=chat("one two three")).json()["usage"]
    assert (usage["prompt_tokens"], usage["prompt_tokens_details"]["cached_tokens"]) == (5 + 1300, 1000)
    responses = client.post("/responses", json={"model": "m", "instructions": "be brief",
                                                "input": "one two three"}).json()["usage"]
    assert (responses["input_tokens"], responses["input_tokens_details"]) == (5 + 1300, {"cached_tokens": 1000})
    message = client.post("/messages", json={"model": "c", "system": "be brief", "max_tokens": 9, "messages": [
        {"role": "user", "content": "one two three"}]}).json()["usage"]
    assert message == {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 1000,
                       "cache_creation_input_tokens": 300,
                       "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 100}}
    fake.configure({"replies": [{"match": "", "reply": "red", "cached_tokens": 7}],
                    "faults": [{"match": "", "kind": "extras", "times": 9}]})
    extras = client.post("/messages", json={"model": "c", "max_tokens": 9, "messages": [
        {"role": "user", "content": "one two three"}]}).json()["usage"]
    assert (extras["cache_read_input_tokens"], extras["cache_creation_input_tokens"]) == (7, 0)
    chat_extras = client.post("/chat/completions", json=chat("one two three")).json()["usage"]
    assert chat_extras["prompt_tokens_details"]["cached_tokens"] == 7  # the rule's, not the shape's whole prompt
