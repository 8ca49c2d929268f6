"""A `benchcard run --batch` killed with SIGKILL at each step — during the upload, during the create, mid-poll,
mid-download — then `--resume`d, ends with every cell recorded exactly once and no cell submitted twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project, key, only_run, read_jsonl, run_and_kill, server, write_config

__all__ = ["key", "server"]

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


STEPS = {  # step: (the fake server's batch config, when to kill): each answer is held 1.5 s after the work is done
    "upload": ({"delay_s": {"upload": 1.5}}, lambda root, srv: seen(srv, "files") >= 1),
    "create": ({"delay_s": {"create": 1.5}}, lambda root, srv: seen(srv, "batches") >= 1),
    "poll": ({"in_progress_s": 1.5}, lambda root, srv: "poll" in events(root)),
    "download": ({"delay_s": {"download": 1.5}}, lambda root, srv: seen(srv, "downloads") >= 1),  # half sent
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
