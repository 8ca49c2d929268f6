"""A `benchcard run --batch` killed with SIGKILL at each step — during the upload, during the create, mid-poll,
mid-download — then `--resume`d, ends with every cell recorded exactly once and no cell submitted twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import KEY_ENV, ab_project, key, only_run, read_jsonl, server, write_config

__all__ = ["key", "server"]

BENCHCARD = str(Path(sys.executable).with_name("benchcard"))
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
    env = {**os.environ, KEY_ENV: "sk-test-0000"}
    proc = subprocess.Popen([BENCHCARD, "-C", str(root), "run", "colour-ab", "--batch", "--json",
                             "--poll-interval", "0.1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and proc.poll() is None and not ready():
            time.sleep(0.005)
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()!r}"  # type: ignore[union-attr]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


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
