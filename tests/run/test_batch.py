"""`benchcard run --batch` and `benchcard status` over real sockets against the fake server's batch APIs
(OpenAI Files + Batches, Anthropic Message Batches), as a user runs them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchcard._util.hashing import digest
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import KEY_ENV, ab_project, key, only_run, read_jsonl, server, write_config

__all__ = ["key", "server"]

FAST = ("--poll-interval", "0.05")


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def project_for(tmp_path: Path, server: FakeServer, vendor: str, fixtures: int = 6, extra: str = "") -> Project:
    project = ab_project(tmp_path, fixtures=fixtures, repetitions=1)
    write_config(tmp_path, server.base_url, type_=vendor, extra=extra)
    return project


def journal(folder: Path) -> list[dict[str, object]]:
    return read_jsonl(folder / "batch" / "journal.jsonl")


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_batch_run_submits_every_cell_once_and_scores_blind(tmp_path: Path, server: FakeServer, key: str,
                                                              vendor: str) -> None:
    server.configure({"default_reply": "red", "batch": {"validating_s": 0.1, "in_progress_s": 0.3}})
    project = project_for(tmp_path, server, vendor)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["batch"] and s["finished"] and s["counts"] == {"ok": 12, "truncated": 0, "failed": 0}
    folder = only_run(project, "colour-ab")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["batch"] is True and manifest["counts"] == s["counts"]
    [batch] = {o["batch"] for o in read_jsonl(folder / "outputs.jsonl")}
    events = [e["event"] for e in journal(folder)]
    assert events[0] == "planned" and events[-1] == "collected" and events.count("poll") >= 2
    assert ("uploaded" in events) == (vendor == "openai")
    # the uploaded file is the sealed bodies, byte for byte, under each cell's id
    lines = read_jsonl(folder / "batch" / "chunk-000.jsonl")
    sealed = {r["cell"]: r["body"] for r in read_jsonl(folder / "sealed" / "requests.jsonl")}
    key_ = "body" if vendor == "openai" else "params"
    assert {ln["custom_id"]: digest(ln[key_]) for ln in lines} == {c: digest(b) for c, b in sealed.items()}
    stats = server.stats()
    assert stats["batch"]["submitted"] == stats["batch"]["distinct_submitted"] == 12 and stats["batch"]["batches"] == 1
    assert not any(p in stats["by_endpoint"] for p in ("/v1/chat/completions", "/v1/messages"))
    assert len(read_jsonl(folder / "scores.jsonl")) == 12 and batch.startswith(("batch_", "msgbatch_"))


def test_a_large_grid_is_split_under_the_limits(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    extra = "    batch_limits: {requests: 7}\n"
    project = ab_project(tmp_path, fixtures=10, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    base_url: "
                                             f"'{server.base_url}'\n    api_key_env: {KEY_ENV}\n{extra}")
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    [planned] = [e for e in journal(folder) if e["event"] == "planned"]
    assert [c["cells"] for c in planned["chunks"]] == [7, 7, 6]  # type: ignore[index]
    assert server.stats()["batch"]["batches"] == 3 and server.stats()["batch"]["distinct_submitted"] == 20
    assert len({o["batch"] for o in read_jsonl(folder / "outputs.jsonl")}) == 3


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
def test_no_wait_then_status_then_resume_from_another_process(tmp_path: Path, server: FakeServer, key: str,
                                                              vendor: str) -> None:
    server.configure({"default_reply": "red", "batch": {"in_progress_s": 3.0}})
    project = project_for(tmp_path, server, vendor)
    result = bc(project, "run", "colour-ab", "--batch", "--no-wait")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    assert f"benchcard status {folder.name}" in result.output and "--resume" in result.output
    shown = bc(project, "status", folder.name)
    assert shown.exit_code == 0, shown.output
    assert "in progress" in shown.output and "batch 0:" in shown.output
    deadline = time.monotonic() + 20
    while True:  # another process looks in now and then until the vendor says the batch has ended
        st = json.loads(bc(project, "status", folder.name, "--json").stdout)
        if st["batches"][0]["status"] in ("completed", "ended") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert st["mode"] == "batch" and st["batches"][0]["status"] in ("completed", "ended")
    assert "collect the results" in st["state"] and not st["finished"]
    result = bc(project, "run", "colour-ab", "--resume", folder.name, *FAST, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["counts"]["ok"] == 12
    assert bc(project, "status", folder.name).output.splitlines()[2].strip() == "finished"
    assert server.stats()["batch"]["submitted"] == 12


def test_batch_is_refused_where_there_is_no_batch_api(tmp_path: Path, server: FakeServer, key: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red"})
    project = project_for(tmp_path, server, "openai", fixtures=2)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    result = bc(project, "run", "colour-ab", "--batch", "--provider", "openrouter")
    assert result.exit_code == 1 and "OpenRouter) has no batch API" in result.stderr
    assert bc(project, "run", "colour-ab", "--json").exit_code == 0
    folder = only_run(project, "colour-ab")
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--batch")
    assert result.exit_code == 1 and "started interactively" in result.stderr
    assert "interactive" in bc(project, "status", folder.name).output


def test_retry_failed_sends_the_failed_cells_in_a_new_batch(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "faults": [{"match": "number 1", "kind": "500"}]})
    project = project_for(tmp_path, server, "anthropic", fixtures=3)
    assert bc(project, "run", "colour-ab", "--batch", *FAST).exit_code == 0
    folder = only_run(project, "colour-ab")
    server.configure({"default_reply": "red"})
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["counts"] == {"ok": 6, "truncated": 0, "failed": 0}
    rows = read_jsonl(folder / "outputs.jsonl")
    assert [r["status"] for r in rows].count("failed") == 2 and len(rows) == 8  # the failed attempts stay
    assert [e["event"] for e in journal(folder)].count("added") == 1
    assert server.stats()["batch"]["submitted"] == 2  # only the two failed cells went again


def test_a_torn_journal_line_is_dropped_and_the_run_resumes(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "batch": {"in_progress_s": 0.3}})
    project = project_for(tmp_path, server, "openai", fixtures=2)
    assert bc(project, "run", "colour-ab", "--batch", "--no-wait").exit_code == 0
    folder = only_run(project, "colour-ab")
    with (folder / "batch" / "journal.jsonl").open("ab") as fh:
        fh.write(b'{"event":"poll","chunk":0,"sta')  # a kill in the middle of a write
    time.sleep(0.3)
    result = bc(project, "run", "colour-ab", "--resume", folder.name, *FAST, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["counts"]["ok"] == 4
    assert all(isinstance(e, dict) for e in journal(folder))  # every line whole again
    assert server.stats()["batch"]["submitted"] == 4


def test_the_progress_bar_counts_cells_done_and_status_works_without_a_key(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red", "batch": {"in_progress_s": 0.3}})
    project = project_for(tmp_path, server, "anthropic", fixtures=2)
    result = bc(project, "run", "colour-ab", "--batch", *FAST)
    assert result.exit_code == 0, result.output
    assert "run batch" in result.stderr and "4/4" in result.stderr and "1 batch · collected" in result.stderr
    folder = only_run(project, "colour-ab")
    server.configure({"default_reply": "red", "batch": {"in_progress_s": 30}})
    assert bc(project, "run", "colour-ab", "--batch", "--no-wait").exit_code == 0
    waiting = next(f for f in (tmp_path / "results" / "colour-ab" / "v1").iterdir() if f != folder)
    monkeypatch.delenv(KEY_ENV)
    shown = bc(project, "status", waiting.name)
    assert shown.exit_code == 0, shown.output
    assert f"{KEY_ENV} is not set: showing the last recorded poll" in shown.output
    assert "in_progress 0/4" in shown.output


@pytest.mark.parametrize(("batch", "message"), [({"end": "done"}, "config.batch.end"),
                                                 ({"done_fraction": 2}, "config.batch.done_fraction"),
                                                 ({"delay_s": {"poll": 1}}, "config.batch.delay_s: unknown key")])
def test_the_fake_servers_batch_config_is_checked(batch: dict[str, object], message: str) -> None:
    from benchcard.testing.fakeserver import FakeServerError, parse_config

    with pytest.raises(FakeServerError, match=message):
        parse_config({"batch": batch})


def test_a_grid_is_also_split_by_size_and_a_reported_cost_is_kept(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    server.configure({"replies": [{"match": "", "reply": "red", "cost": 0.25}]})
    project = ab_project(tmp_path, fixtures=5, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    base_url: "
                                             f"'{server.base_url}'\n    api_key_env: {KEY_ENV}\n"
                                             "    batch_limits: {bytes: 1200}\n")
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    [planned] = [e for e in journal(folder) if e["event"] == "planned"]
    chunks = planned["chunks"]  # type: ignore[index]
    assert len(chunks) > 1 and sum(c["cells"] for c in chunks) == 10
    assert all(c["bytes"] <= 1200 - 32 for c in chunks)  # each file under the limit, with room for the wrapper
    assert all(o["cost"] == 0.25 for o in read_jsonl(folder / "outputs.jsonl"))  # the answer's own cost
