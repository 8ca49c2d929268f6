"""A `benchcard run --batch` killed with SIGKILL at each step — during the upload, during the create, mid-poll,
mid-download — then `--resume`d, ends with every cell recorded exactly once and no cell submitted twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project, only_run, read_jsonl, run_and_kill, write_config

CELLS = 16


def events(root: Path) -> list[str]:
    runs = runs_of_root(root)
    path = runs[0] / "batch" / "journal.jsonl" if runs else None
    if path is None or not path.is_file():
        return []
    return [json.loads(line)["event"] for line in path.read_bytes().splitlines(keepends=True) if line.endswith(b"\n")]


def runs_of_root(root: Path) -> list[Path]:
    return sorted(p for p in (root / "results").glob("colour-ab/v*/*") if p.is_dir())


def kill_when(root: Path, ready: Callable[[], bool]) -> None:
    """Start `benchcard run --batch` in a subprocess and SIGKILL it the moment `ready()` holds."""
    run_and_kill(root, ["colour-ab", "--batch", "--json", "--poll-interval", "0.1"], ready)


def seen(srv: FakeServer, counter: str) -> int:
    return int((srv.stats(by_request=False).get("batch") or {}).get(counter, 0))


STEPS = {  # step: (the fake server's batch config, when to kill): the killed call's answer is held 1.5 s after the
    # work is done (the resume's own call of that step is not held again: delay_times 1)
    "upload": ({"delay_s": {"upload": 1.5}, "delay_times": 1}, lambda root, srv: seen(srv, "files") >= 1),
    "create": ({"delay_s": {"create": 1.5}, "delay_times": 1}, lambda root, srv: seen(srv, "batches") >= 1),
    "poll": ({"in_progress_s": 1.5}, lambda root, srv: "poll" in events(root)),
    "download": ({"delay_s": {"download": 1.5}, "delay_times": 1},
                 lambda root, srv: seen(srv, "downloads") >= 1),  # half sent
}


@pytest.mark.parametrize(("vendor", "step"), [("openai", "upload"), ("openai", "create"), ("anthropic", "create"),
                                              ("openai", "poll"), ("anthropic", "poll"), ("openai", "download"),
                                              ("anthropic", "download")])
def test_a_batch_run_killed_at_any_step_resumes_without_submitting_twice(
        tmp_path: Path, server: FakeServer, key: str, vendor: str, step: str) -> None:
    config, ready = STEPS[step]
    server.configure({"default_reply": "red", "batch": config})
    project = ab_project(tmp_path, fixtures=CELLS // 2, repetitions=1)
    write_config(tmp_path, server.base_url, type_=vendor)
    kill_when(tmp_path, lambda: ready(tmp_path, server))
    folder = only_run(project, "colour-ab")
    assert "finished_at" not in json.loads((folder / "manifest.json").read_text())
    at_kill = events(tmp_path)

    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "run", "colour-ab", "--resume", folder.name,
                                      "--poll-interval", "0.1", "--json"])
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["counts"] == {"ok": CELLS, "truncated": 0, "failed": 0}, (at_kill, s)
    cells = [o["cell"] for o in read_jsonl(folder / "outputs.jsonl")]
    planned = [r["cell"] for r in read_jsonl(folder / "sealed" / "assignment.jsonl")]
    assert sorted(cells) == sorted(planned)  # every cell, each exactly once
    stats = server.stats()["batch"]
    assert stats["batches"] == 1 and stats["submitted"] == stats["distinct_submitted"] == CELLS, (at_kill, stats)
    if step == "create":  # the batch made before the kill was found, not made again
        assert any(e.get("adopted") for e in read_jsonl(folder / "batch" / "journal.jsonl"))
    assert not list((folder / "batch").glob("*.part"))  # a download cut by the kill was made again, whole


def another_runs_batch(base_url: str, vendor: str, cells: list[str], tag: str) -> str:
    """A batch of the same size made by another run, under the same cell ids (two runs given the same --seed
    plan the same ids) with that run's own tag, as another `benchcard run --batch` would make it."""
    body = {"model": "test/model", "max_tokens": 5, "messages": [{"role": "user", "content": "another run"}]}
    ids = [f"{cell}-{tag}" for cell in cells]
    if vendor == "anthropic":
        made = httpx.post(f"{base_url}/messages/batches", timeout=30,
                          json={"requests": [{"custom_id": i, "params": body} for i in ids]})
        return str(made.json()["id"])
    lines = "".join(json.dumps({"custom_id": i, "method": "POST", "url": "/v1/chat/completions", "body": body})
                    + "\n" for i in ids)
    upload = httpx.post(f"{base_url}/files", data={"purpose": "batch"}, timeout=30,
                        files={"file": ("theirs.jsonl", lines.encode(), "application/jsonl")}).json()
    made = httpx.post(f"{base_url}/batches", timeout=30, json={
        "input_file_id": upload["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h",
        "metadata": {"benchcard_run": "20261204T000000Z-beef", "benchcard_chunk": "sha256:00"}})
    return str(made.json()["id"])


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
@pytest.mark.parametrize("reached", [True, False], ids=["create-reached-the-vendor", "create-lost"])
def test_a_resume_after_a_kill_between_creating_and_created_takes_only_its_own_batch(
        tmp_path: Path, server: FakeServer, key: str, vendor: str, reached: bool) -> None:
    """Killed after `creating` and before `created`, with two batches of the same size made by other runs since:
    the resume takes the batch its own create made (or, when that create never arrived, makes one), never
    another run's, and waits for a batch it cannot tell yet (still running) rather than guess."""
    hold = {"create": 1.5} if reached else {"receive": 1.5}  # the create held after, or before, it is made
    # the killed run's create and theirs are held (three creates, in whatever order they arrive), not the one a
    # resume makes when the killed run's create was lost
    server.configure({"default_reply": "red", "batch": {"delay_s": hold, "delay_times": 3, "in_progress_s": 1.0}})
    project = ab_project(tmp_path, fixtures=CELLS // 2, repetitions=1)
    write_config(tmp_path, server.base_url, type_=vendor)
    kill_when(tmp_path, (lambda: seen(server, "batches") >= 1) if reached else (lambda: "creating" in events(tmp_path)))
    folder = only_run(project, "colour-ab")
    assert events(tmp_path)[-1] == "creating"
    planned = [r["cell"] for r in read_jsonl(folder / "sealed" / "assignment.jsonl")]
    with ThreadPoolExecutor(2) as pool:  # at once: the server holds each create 1.5 s, theirs as well as ours
        theirs = set(pool.map(lambda tag: another_runs_batch(server.base_url, vendor, planned, tag * 16), "ef"))

    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "run", "colour-ab", "--resume", folder.name,
                                      "--poll-interval", "0.1", "--json"])
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["counts"] == {"ok": CELLS, "truncated": 0, "failed": 0}, s
    outputs = read_jsonl(folder / "outputs.jsonl")
    assert sorted(o["cell"] for o in outputs) == sorted(planned)  # every cell, each exactly once
    [batch] = {o["batch"] for o in outputs}
    assert batch not in theirs
    journal = read_jsonl(folder / "batch" / "journal.jsonl")
    created = [e for e in journal if e["event"] == "created"]
    assert [e["batch"] for e in created] == [batch] and bool(created[0].get("adopted")) is reached
    if vendor == "anthropic":  # no metadata there: each other batch was looked at, once ended, and set aside
        assert {e["batch"] for e in journal if e["event"] == "not_ours"} == theirs
    stats = server.stats()["batch"]
    assert stats["batches"] == 3 and stats["submitted"] == stats["distinct_submitted"] == 3 * CELLS, stats


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_create_whose_answer_is_lost_is_looked_for_not_sent_again(tmp_path: Path, server: FakeServer, key: str,
                                                                     vendor: str) -> None:
    """The batch is made but its answer comes after the client's timeout: the create is not resent blindly (two
    batches, every cell paid twice); the batch is looked for, found by what only this run put in it, and taken."""
    server.configure({"default_reply": "red", "batch": {"delay_s": {"create": 3.0}, "in_progress_s": 0.5}})
    project = ab_project(tmp_path, fixtures=CELLS // 2, repetitions=1)
    write_config(tmp_path, server.base_url, type_=vendor)
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "run", "colour-ab", "--batch", "--timeout", "1",
                                      "--poll-interval", "0.1", "--json"])
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["counts"] == {"ok": CELLS, "truncated": 0, "failed": 0}, s
    stats = server.stats()["batch"]
    assert stats["batches"] == 1 and stats["submitted"] == stats["distinct_submitted"] == CELLS, stats
    folder = only_run(project, "colour-ab")
    kinds = [e["event"] for e in read_jsonl(folder / "batch" / "journal.jsonl")]
    assert kinds.count("creating") == 1 and kinds.count("created") == 1
    assert any(e.get("adopted") for e in read_jsonl(folder / "batch" / "journal.jsonl"))
