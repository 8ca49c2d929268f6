"""The fake server's batch APIs over real sockets: OpenAI's Files + Batches and Anthropic's Message Batches answer
each request as the interactive endpoints would, fail a faulted one inside the batch, end as configured (only
`done_fraction` of an expired batch ran) and count every submitted custom_id."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from benchcard.testing.fakeserver import FakeServer


def jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def chat(text: str) -> dict[str, Any]:
    return {"model": "m-1", "max_tokens": 20, "messages": [{"role": "user", "content": text}]}


def test_an_openai_batch_runs_every_request_and_fails_a_faulted_one_inside_it(fake: FakeServer,
                                                                                client: httpx.Client) -> None:
    fake.configure({"replies": [{"match": "sky", "reply": "blue"}], "faults": [{"match": "boom", "kind": "500"}]})
    rows = [{"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions", "body": chat(text)}
            for i, text in enumerate(["the sky", "a tomato", "boom"])]
    upload = client.post("/files", data={"purpose": "batch"},
                         files={"file": ("in.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())})
    assert upload.status_code == 200 and upload.json()["purpose"] == "batch"
    batch = client.post("/batches", json={"input_file_id": upload.json()["id"], "endpoint": "/v1/chat/completions",
                                          "completion_window": "24h", "metadata": {"run": "r1"}}).json()
    assert batch["status"] == "completed" and batch["metadata"] == {"run": "r1"}
    assert batch["request_counts"] == {"total": 3, "completed": 2, "failed": 1}
    assert client.get(f"/batches/{batch['id']}").json()["output_file_id"] == batch["output_file_id"]
    out = jsonl(client.get(f"/files/{batch['output_file_id']}/content").content)
    assert [r["custom_id"] for r in out] == ["c0", "c1", "c2"]
    assert out[0]["response"]["body"]["choices"][0]["message"]["content"] == "blue"
    assert out[1]["response"]["body"]["choices"][0]["message"]["content"] == "ok"  # the default reply
    assert out[2]["response"]["status_code"] == 500
    assert batch["error_file_id"] is None
    stats = fake.stats()["batch"]
    assert stats["files"] == 1 and stats["submitted"] == 3 and stats["submitted_twice"] == []


def test_an_expired_anthropic_batch_ran_only_its_done_fraction(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"default_reply": "red", "batch": {"end": "expired", "done_fraction": 0.5}})
    requests = [{"custom_id": f"c{i}", "params": chat(f"item {i}")} for i in range(4)]
    batch = client.post("/messages/batches", json={"requests": requests}).json()
    assert batch["processing_status"] == "ended"
    assert batch["request_counts"] == {"processing": 0, "succeeded": 2, "errored": 0, "canceled": 0, "expired": 2}
    results = jsonl(client.get(batch["results_url"]).content)
    assert [r["result"]["type"] for r in results] == ["succeeded", "succeeded", "expired", "expired"]
    assert results[0]["result"]["message"]["content"] == [{"type": "text", "text": "red"}]


def test_a_batch_in_progress_has_no_results_yet_and_a_resubmitted_cell_is_counted(fake: FakeServer,
                                                                                   client: httpx.Client) -> None:
    fake.configure({"batch": {"in_progress_s": 60}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c1", "params": chat("x")}]}).json()
    assert batch["processing_status"] == "in_progress" and batch["results_url"] is None
    early = client.get(f"/messages/batches/{batch['id']}/results")
    assert early.status_code == 400 and early.json()["error"]["message"] == "batch still processing"
    client.post("/messages/batches", json={"requests": [{"custom_id": "c1", "params": chat("x")}]})
    assert fake.stats()["batch"]["submitted_twice"] == ["c1"]
    assert [b["id"] for b in client.get("/messages/batches").json()["data"]][1] == batch["id"]  # newest first


def test_a_batch_stays_in_progress_for_its_first_retrievals_whatever_the_clock(fake: FakeServer,
                                                                            client: httpx.Client) -> None:
    """`in_progress_polls`: a test that must see a batch in progress, then ended, counts retrievals, not seconds."""
    fake.configure({"default_reply": "red", "batch": {"in_progress_polls": 2}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c1", "params": chat("x")}]}).json()
    assert batch["processing_status"] == "in_progress"
    seen = [client.get(f"/messages/batches/{batch['id']}").json()["processing_status"] for _ in range(3)]
    assert seen == ["in_progress", "in_progress", "ended"]
    assert client.get("/messages/batches").json()["data"][0]["processing_status"] == "ended"  # a list counts none
    results = jsonl(client.get(f"/messages/batches/{batch['id']}/results").content)
    assert [r["result"]["type"] for r in results] == ["succeeded"]


def test_delay_times_holds_only_each_steps_first_answers(fake: FakeServer, client: httpx.Client) -> None:
    """`delay_times` 1: the call a test kills its client inside is held; the same call made again (a resume's) is
    answered at once, so the test does not wait out the hold twice."""
    fake.configure({"default_reply": "red", "batch": {"delay_s": {"create": 30}, "delay_times": 1}})
    body = {"requests": [{"custom_id": "c1", "params": chat("x")}]}
    with pytest.raises(httpx.ReadTimeout):
        client.post("/messages/batches", json=body, timeout=0.5)
    again = client.post("/messages/batches", json=body, timeout=15)  # held again, it would time out
    assert again.status_code == 200 and fake.stats()["batch"]["batches"] == 2


def test_bad_batch_requests_are_refused_like_the_vendors_refuse_them(fake: FakeServer, client: httpx.Client) -> None:
    assert client.post("/files", data={"purpose": "fine-tune"}, files={"file": ("a", b"{}")}).status_code == 400
    assert client.post("/batches", json={"input_file_id": "file-missing"}).status_code == 404
    assert client.get("/batches/batch_404").status_code == 404
    refused = client.post("/messages/batches", json={"requests": []})
    assert refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_request_error"


def test_batch_lists_are_paged_newest_first_as_the_vendors_page_them(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"default_reply": "red"})
    made = [client.post("/messages/batches", json={"requests": [{"custom_id": f"c{i}", "params": chat("x")}]}
                        ).json()["id"] for i in range(3)]
    first = client.get("/messages/batches", params={"limit": 2}).json()
    assert [b["id"] for b in first["data"]] == made[:0:-1] and first["has_more"] and first["last_id"] == made[1]
    rest = client.get("/messages/batches", params={"limit": 2, "after_id": first["last_id"]}).json()
    assert [b["id"] for b in rest["data"]] == [made[0]] and not rest["has_more"]
    assert client.get("/batches", params={"limit": 2}).json() == {"object": "list", "data": [], "has_more": False,
                                                                   "first_id": None, "last_id": None}


def test_spoiled_result_files_answer_twice_or_answer_an_id_nobody_sent(fake: FakeServer,
                                                                       client: httpx.Client) -> None:
    for bad, ids in (("duplicate", ["c0", "c1", "c0", "c1"]), ("unknown", ["c0", "c1", "never-sent"])):
        fake.configure({"default_reply": "red", "batch": {"bad_results": bad}})
        requests = [{"custom_id": f"c{i}", "params": chat(f"item {i}")} for i in range(2)]
        batch = client.post("/messages/batches", json={"requests": requests}).json()
        assert [r["custom_id"] for r in jsonl(client.get(f"/messages/batches/{batch['id']}/results").content)] == ids


def test_a_huge_result_line_and_spoiled_polls(fake: FakeServer, client: httpx.Client) -> None:
    fake.configure({"default_reply": "red", "batch": {"bad_results": "huge", "bad_poll": "huge"}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c0", "params": chat("x")}]}).json()
    rows = jsonl(client.get(f"/messages/batches/{batch['id']}/results").content)
    assert [r["custom_id"] for r in rows] == ["c0", "never-sent"] and len(rows[1]["pad"]) == 2 * 2**20
    polled = client.get(f"/messages/batches/{batch['id']}").json()
    assert polled["id"] == batch["id"] and len(polled["pad"]) == 8 * 2**20
    fake.configure({"default_reply": "red", "batch": {"bad_results": "nested"}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c0", "params": chat("x")}]}).json()
    last = client.get(f"/messages/batches/{batch['id']}/results").content.splitlines()[-1]
    assert last == b'{"custom_id": "never-sent", "pad": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    fake.configure({"default_reply": "red", "batch": {"bad_poll": "trickled"}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c0", "params": chat("x")}]}).json()
    with client.stream("GET", f"/messages/batches/{batch['id']}") as resp:
        first = next(resp.iter_raw())
    assert resp.status_code == 200 and first == b" "  # then a byte every 0.2 s for a minute
    fake.configure({"default_reply": "red", "batch": {"bad_poll": "mistyped"}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c0", "params": chat("x")}]}).json()
    assert isinstance(batch["request_counts"], dict)  # only a poll is spoiled
    assert client.get(f"/messages/batches/{batch['id']}").json()["request_counts"] == [0, 1, 0, 0, 0]
    fake.configure({"default_reply": "red", "batch": {"bad_poll": "throttled"}})
    batch = client.post("/messages/batches", json={"requests": [{"custom_id": "c0", "params": chat("x")}]}).json()
    throttled = client.get(f"/messages/batches/{batch['id']}")
    assert (throttled.status_code, throttled.headers.get("retry-after")) == (429, "86400"), throttled.text
