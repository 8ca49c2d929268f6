"""`benchcard run --batch` and `benchcard status` over real sockets against the fake server's batch APIs
(OpenAI Files + Batches, Anthropic Message Batches), as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard._util.hashing import digest
from benchcard.testing.fakeserver import FakeServer

from ..helpers_batch import FAST, journal, project_for
from ..helpers_run import bc, only_run, read_jsonl


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_batch_runs_replies_naming_another_model_are_recorded(tmp_path: Path, server: FakeServer, key: str,
                                                               vendor: str) -> None:
    server.configure({"default_reply": "red", "reply_model": "other-model", "batch": {"in_progress_s": 0.1}})
    project = project_for(tmp_path, server, vendor)
    result = bc(project, "run", "colour-ab", "--batch", *FAST)
    assert result.exit_code == 0, result.output
    assert "  warning: 12 of 12 replies named another model than test/model, the one asked: other-model (12)\n" \
        in result.output
    manifest = json.loads((only_run(project, "colour-ab") / "manifest.json").read_text())
    assert manifest["replied_models"] == [{"other-model": 12}]


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
    # the uploaded file is the sealed bodies, byte for byte, under each cell's id and the plan's own tag
    lines = read_jsonl(folder / "batch" / "chunk-000.jsonl")
    sealed = {r["cell"]: r["body"] for r in read_jsonl(folder / "sealed" / "requests.jsonl")}
    key_ = "body" if vendor == "openai" else "params"
    tag = journal(folder)[0]["tag"]
    assert {ln["custom_id"]: digest(ln[key_]) for ln in lines} == {f"{c}-{tag}": digest(b) for c, b in sealed.items()}
    stats = server.stats()
    assert stats["batch"]["submitted"] == stats["batch"]["distinct_submitted"] == 12 and stats["batch"]["batches"] == 1
    assert not any(p in stats["by_endpoint"] for p in ("/v1/chat/completions", "/v1/messages"))
    assert len(read_jsonl(folder / "scores.jsonl")) == 12 and batch.startswith(("batch_", "msgbatch_"))


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


@pytest.mark.parametrize(("batch", "message"), [({"end": "done"}, "config.batch.end"),
                                                 ({"done_fraction": 2}, "config.batch.done_fraction"),
                                                 ({"delay_s": {"poll": 1}}, "config.batch.delay_s: unknown key")])
def test_the_fake_servers_batch_config_is_checked(batch: dict[str, object], message: str) -> None:
    from benchcard.testing.fakeserver import FakeServerError, parse_config

    with pytest.raises(FakeServerError, match=message):
        parse_config({"batch": batch})


