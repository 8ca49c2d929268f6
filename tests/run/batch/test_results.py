"""A batch's result lines read into output rows: the statuses of an interactive call, each failure with its cause,
costs at the batch price."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from benchcard.errors import RunError
from benchcard.records.rows import Usage
from benchcard.run.batch._results import (
    Unread,
    anthropic_outcome,
    named_ids,
    openai_outcome,
    output_row,
    read_results,
    result_ids,
)
from benchcard.run.providers import Price
from benchcard.run.providers.base import Completion
from benchcard.testing.fakeserver import FakeServer

from ...helpers_batch import FAST, project_for
from ...helpers_run import bc, only_run, read_jsonl, write_config


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_partial_failures_and_truncations_are_recorded_never_scored(tmp_path: Path, server: FakeServer, key: str,
                                                                    vendor: str) -> None:
    server.configure({"default_reply": "red", "faults": [{"match": "number 1", "kind": "500"},
                                                         {"match": "number 2", "kind": "truncate"}]})
    project = project_for(tmp_path, server, vendor, fixtures=4)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["counts"] == {"ok": 4, "truncated": 2, "failed": 2}
    folder = only_run(project, "colour-ab")
    outputs = {o["cell"]: o for o in read_jsonl(folder / "outputs.jsonl")}
    failed = [o for o in outputs.values() if o["status"] == "failed"]
    assert all(o["fixture"] == "item-001" and o["error"].startswith("errored") for o in failed)
    for row in read_jsonl(folder / "scores.jsonl"):
        assert (row["score"] is None) == (outputs[row["cell"]]["status"] != "ok")


@pytest.mark.parametrize(("vendor", "end", "cause"), [("openai", "expired", "expired"),
                                                      ("anthropic", "expired", "expired"),
                                                      ("openai", "cancelled", "cancelled"),
                                                      ("anthropic", "cancelled", "cancelled"),
                                                      ("openai", "failed", "the batch failed")])
def test_expired_cancelled_and_failed_batches_fail_their_cells_with_the_cause(
        tmp_path: Path, server: FakeServer, key: str, vendor: str, end: str, cause: str) -> None:
    server.configure({"default_reply": "red", "batch": {"end": end, "done_fraction": 0.5}})
    project = project_for(tmp_path, server, vendor, fixtures=4)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    ran = 0 if end == "failed" else 4
    assert s["finished"] and s["counts"] == {"ok": ran, "truncated": 0, "failed": 8 - ran}
    folder = only_run(project, "colour-ab")
    failed = [o for o in read_jsonl(folder / "outputs.jsonl") if o["status"] == "failed"]
    assert all(o["error"].startswith(cause) for o in failed), failed[0]["error"]
    assert all(r["score"] is None for r in read_jsonl(folder / "scores.jsonl") if r["status"] == "failed")


def test_costs_are_at_the_batch_price(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    prices = "prices:\n  test/model: {input: 2.0, output: 4.0, batch_discount: 0.5}\n"
    project = project_for(tmp_path, server, "openai", fixtures=2, extra=prices)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    for o in read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl"):
        full = (o["usage"]["input"] * 2.0 + o["usage"]["output"] * 4.0) / 1e6
        assert o["cost"] == pytest.approx(full / 2)
    write_config(tmp_path, server.base_url, extra="prices:\n  test/model: {input: 2.0, output: 4.0}\n")
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    [s] = json.loads(result.stdout)["runs"]
    assert s["cost"] is None and s["cost_unknown"] == 4  # no batch_discount: unknown, not the interactive price


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_cached_input_in_result_lines_is_priced_at_the_cached_batch_price(tmp_path: Path, server: FakeServer, key: str,
                                                                          vendor: str) -> None:
    """A batch run through the fake batch API (a real socket) whose result lines say 1,000 input tokens a call
    came from the prompt cache, in each vendor's shape: each cell is priced at the cached price, the batch
    discount taken off the whole."""
    server.configure({"replies": [{"match": "", "reply": "red", "cached_tokens": 1000}]})
    prices = "prices:\n  test/model: {input: 2.0, output: 4.0, batch_discount: 0.5, cached_input: 0.2}\n"
    project = project_for(tmp_path, server, vendor, fixtures=2, extra=prices)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert len(rows) == 4 and all(o["usage"]["cached"] == 1000 for o in rows)
    for o in rows:
        plain = o["usage"]["input"] - 1000
        assert plain > 0 and o["cost"] == pytest.approx((plain * 2.0 + 1000 * 0.2 + o["usage"]["output"] * 4.0)
                                                        / 1e6 * 0.5)
    assert s["cost"] == pytest.approx(sum(o["cost"] for o in rows), abs=1e-6) and s["cost_upper_bound"] == 0


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_vendor_shapes_in_result_lines_are_recorded_as_interactive_answers_are(tmp_path: Path, server: FakeServer,
                                                                             key: str, vendor: str) -> None:
    """The shapes of the vendors' docs, inside result lines: a refusal and a tool call fail their cell, an answer
    split in blocks or with fields not read is scored whole, and one whose line says no usage has no cost (not
    $0), its cell counted among those without a price."""
    server.configure({"default_reply": "red", "faults": [
        {"match": "number 0", "kind": "refusal"}, {"match": "number 1", "kind": "tool_call"},
        {"match": "number 2", "kind": "blocks"}, {"match": "number 3", "kind": "no_usage"},
        {"match": "number 4", "kind": "extras"}]})
    prices = "prices:\n  test/model: {input: 2.0, output: 4.0, batch_discount: 0.5}\n"
    project = project_for(tmp_path, server, vendor, fixtures=6, extra=prices)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    refused = 0 if vendor == "openai" else 2  # the Messages API's refusal keeps the text written before it
    assert s["counts"] == {"ok": 8, "truncated": 0, "failed": 4} and s["cost_unknown"] == 2
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    by = {f"item-00{i}": [o for o in rows if o["fixture"] == f"item-00{i}"] for i in range(6)}
    assert all(o["status"] == "failed" and o["error"].startswith("refused") for o in by["item-000"])
    assert sum(o["text"] == "red" for o in by["item-000"]) == refused
    assert all(o["status"] == "failed" and "tool" in o["error"] for o in by["item-001"])
    assert all((o["status"], o["text"]) == ("ok", "red") for i in (2, 3, 4, 5) for o in by[f"item-00{i}"])
    assert [o["cost"] for o in by["item-003"]] == [None, None]
    assert all(o["cost"] > 0 for i in (2, 4, 5) for o in by[f"item-00{i}"])


# ------------------------------------------------------------------------------------- result lines, unit by unit


def _chat(text: str = "red", finish: str = "stop") -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4}}


def test_openai_lines_give_an_answer_or_the_cause() -> None:
    answer = openai_outcome({"custom_id": "c1", "response": {"status_code": 200, "body": _chat()}, "error": None})
    assert isinstance(answer, Completion) and (answer.text, answer.status) == ("red", "ok")
    cut = openai_outcome({"response": {"status_code": 200, "body": _chat("re", "length")}})
    assert isinstance(cut, Completion) and cut.status == "truncated"
    assert openai_outcome({"error": {"code": "batch_expired", "message": "ran  out\nof time"}}) == (
        "expired: ran out of time")
    assert openai_outcome({"error": {"code": "batch_cancelled", "message": ""}}) == "cancelled: "
    assert openai_outcome({"error": {"code": "rate_limited", "message": "slow down"}}) == (
        "errored (rate_limited): slow down")
    assert openai_outcome({"response": {"status_code": 500, "body": {"error": {"message": "boom"}}}}) == (
        "errored: HTTP 500: boom")
    assert openai_outcome({"response": {"status_code": 404, "body": None}}) == "errored: HTTP 404"


def test_anthropic_lines_give_an_answer_or_the_cause() -> None:
    message = {"type": "message", "content": [{"type": "text", "text": "red"}], "stop_reason": "max_tokens",
               "usage": {"input_tokens": 5, "output_tokens": 2}}
    answer = anthropic_outcome({"custom_id": "c1", "result": {"type": "succeeded", "message": message}})
    assert isinstance(answer, Completion) and (answer.text, answer.status) == ("red", "truncated")
    errored = {"type": "errored", "error": {"type": "error", "error": {"type": "overloaded_error",
                                                                        "message": "busy"}}}
    assert anthropic_outcome({"result": errored}) == "errored: overloaded_error: busy"
    flat = {"type": "errored", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    assert anthropic_outcome({"result": flat}) == "errored: invalid_request_error: prompt is too long"  # was "error: "
    assert anthropic_outcome({"result": {"type": "canceled"}}).startswith("cancelled: ")  # type: ignore[union-attr]
    assert anthropic_outcome({"result": {"type": "expired"}}).startswith("expired: ")  # type: ignore[union-attr]
    assert anthropic_outcome({"result": {"type": "paused"}}) == "errored: unknown result type 'paused'"
    # a vendor's word is kept to one short line, however long the line that carried it (hostile audit, round 12b)
    assert anthropic_outcome({"result": {"type": "p" * 10**6}}) == "errored: unknown result type '" + "p" * 59
    assert openai_outcome({"error": {"code": "\n" + "c" * 10**6}}) == "errored (" + "c" * 60 + "): "
    assert openai_outcome({"response": {"status_code": "5" * 10**6}}) == "errored: HTTP " + "5" * 20


def test_a_vendors_word_that_is_not_text_is_quoted_as_the_vendor_sent_it() -> None:
    """JSON's words, as in a batch's status (`vendor_word`, one function for results and the batch API): not
    Python's `None`, `True` or `{'a': 1}`."""
    assert openai_outcome({"error": {"code": True, "message": None}}) == "errored (true): null"
    assert openai_outcome({"response": {"status_code": None, "body": {"error": {"message": {"a": [1]}}}}}) == (
        'errored: HTTP null: {"a": [1]}')
    errored = {"type": "errored", "error": {"error": {"type": 7, "message": ["a", None]}}}
    assert anthropic_outcome({"result": errored}) == 'errored: 7: ["a", null]'


def test_result_files_are_read_line_by_line_and_a_malformed_answer_fails_its_cell(tmp_path: Path) -> None:
    path = tmp_path / "result-0.jsonl"
    lines = [{"custom_id": "c1", "response": {"status_code": 200, "body": _chat()}},
             {"custom_id": "c2", "response": {"status_code": 200, "body": {"choices": []}}}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    (first_cell, first), (second_cell, second) = read_results([path], anthropic=False)
    assert first_cell == "c1" and isinstance(first, Completion) and first.text == "red"
    assert second_cell == "c2" and isinstance(second, str) and second.startswith("errored: malformed")


@pytest.mark.parametrize(("content", "why", "named"), [
    (b'{"custom_id":"c1"}\n{"custom_id": \n', "is not JSON", ()),
    (b'{"custom_id":"c1"}\n["c1"]\n', "is not a JSON object", ()),
    (b'{"custom_id":"c1"}\n{"custom_id": "c1", "result": {\n', "is not JSON", ("c1",)),
])
def test_a_damaged_result_line_is_named_and_the_others_read(tmp_path: Path, content: bytes, why: str,
                                                            named: tuple[str, ...]) -> None:
    path = tmp_path / "result-0.jsonl"
    path.write_bytes(content)
    unread: list[Unread] = []
    assert result_ids([path], unread) == {"c1": [(path, 1)]} and unread == [Unread(path, 2, why, named)]
    assert [cell for cell, _ in read_results([path], anthropic=True)] == ["c1"]


def test_output_rows_carry_the_batch_the_cause_and_the_batch_price() -> None:
    prices = {"m": Price(2.0, 4.0, batch_discount=0.5)}
    failed = output_row("c1", "f1", "expired: too late", "batch_9", "m", prices)
    assert (failed.status, failed.error, failed.text, failed.cost, failed.batch) == (
        "failed", "expired: too late", "", None, "batch_9")
    answer = Completion("red", "stop", "ok", Usage(input=1000, output=500, reasoning=100))
    row = output_row("c2", "f1", answer, "batch_9", "m", prices)
    assert (row.status, row.text, row.finish_reason, row.batch, row.attempts) == ("ok", "red", "stop", "batch_9", 1)
    assert (row.usage.input, row.usage.output, row.usage.reasoning) == (1000, 500, 100)
    assert row.cost == pytest.approx((1000 * 2.0 + 500 * 4.0) / 1e6 * 0.5)
    assert output_row("c2", "f1", answer, "b", "other", prices).cost is None  # no price: unknown, never 0


def test_result_ids_names_every_line_answering_each_custom_id(tmp_path: Path) -> None:
    a, b = tmp_path / "results-0.jsonl", tmp_path / "results-1.jsonl"
    a.write_bytes(b'{"custom_id": "c1-t", "result": {}}\n\n{"result": {}, "custom_id": "c2-t"}\n')
    b.write_bytes(b'{"custom_id": "c1-t"}\n{"no_id": 1}\n')
    assert result_ids([a, b]) == {"c1-t": [(a, 1), (b, 1)], "c2-t": [(a, 3)], "None": [(b, 2)]}
    b.write_bytes(b'[1, 2]\n')
    with pytest.raises(RunError) as info:
        result_ids([a, b])
    assert str(info.value) == f"{b}: line 1 is not a JSON object"
    b.write_bytes(b'{"custom_id": \n')
    with pytest.raises(RunError) as info:
        result_ids([b])
    assert str(info.value) == f"{b}: line 1 is not JSON; delete the file and resume to download it again"


def test_a_line_that_cannot_be_read_names_the_ids_its_bytes_hold_as_keys_only() -> None:
    """A line that is not JSON may still be a cell's answer (or its second one): the ids it holds as a key are
    read from its bytes, each once; one quoted inside a string (its quotes escaped) is no key."""
    line = b'{"custom_id": "c1-t", "pad": [[[ "said \\"custom_id\\": \\"c9-t\\"", "custom_id":"c\\u00e9"'
    assert named_ids(line) == ("c1-t", "c\u00e9")
    assert named_ids(b'{"custom_id":"c1-t"} {"custom_id": "c1-t"') == ("c1-t",)
    assert named_ids(b"<html>502 Bad Gateway</html>") == ()


def test_a_result_file_is_read_a_line_at_a_time_whatever_its_size(tmp_path: Path) -> None:
    """A batch's results are downloaded to disk and read a line at a time, by the pass over the ids and by the
    collection alike: what is held grows with the cells (their ids), never with the answers' text (10,000 answers
    of 2 kB here, 22 MB)."""
    import tracemalloc

    path = tmp_path / "results-0.jsonl"
    body = _chat("x" * 2000)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(10_000):
            fh.write(json.dumps({"custom_id": f"c{i:08x}-t", "response": {"status_code": 200, "body": body}}) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        ids = result_ids([path], [])
        answered = sum(1 for _, outcome in read_results([path], anthropic=False) if isinstance(outcome, Completion))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (len(ids), answered) == (10_000, 10_000)
    assert peak < size / 4, (peak, size)


def test_result_lines_carry_the_prompt_caches_tokens_and_rows_price_them_at_the_batch_price() -> None:
    """A batch's result line holds the answer in its interactive shape, cache fields included: OpenAI's cached
    tokens inside prompt_tokens, Anthropic's beside input_tokens; the row prices them at the cached price, with
    the batch discount taken off the whole, or marks the cost an upper bound without a cached price."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}}
    line = {"custom_id": "c1", "response": {"status_code": 200, "body": {
        "choices": [{"index": 0, "message": {"content": "red"}, "finish_reason": "stop"}], "usage": usage}}}
    chat = openai_outcome(line)
    assert isinstance(chat, Completion) and (chat.usage.input, chat.usage.cached_tokens) == (1000, 800)
    message = {"content": [{"type": "text", "text": "red"}], "stop_reason": "end_turn",
               "usage": {"input_tokens": 200, "output_tokens": 10, "cache_read_input_tokens": 800}}
    claude = anthropic_outcome({"custom_id": "c1", "result": {"type": "succeeded", "message": message}})
    assert isinstance(claude, Completion) and claude.usage == chat.usage  # the same call, in either shape
    prices = {"m": Price(2.0, 4.0, batch_discount=0.5, cached_input=0.2)}
    for outcome in (chat, claude):
        row = output_row("c1", "f1", outcome, "batch_9", "m", prices)
        assert row.cost == pytest.approx((200 * 2.0 + 800 * 0.2 + 10 * 4.0) / 1e6 * 0.5)
        assert row.cost_upper_bound is msgspec.UNSET
        full = output_row("c1", "f1", outcome, "batch_9", "m", {"m": Price(2.0, 4.0, batch_discount=0.5)})
        assert full.cost == pytest.approx((1000 * 2.0 + 10 * 4.0) / 1e6 * 0.5) and full.cost_upper_bound is True
