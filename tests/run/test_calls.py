"""The calls of one run (`benchcard.run.calls`): what can be tested without a server. The retries, timeouts, rate
limit and pool are tested end to end over sockets in test_runner.py."""

from __future__ import annotations

import random
import time
from pathlib import Path

from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.run.calls import backoff_delay
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project, key, only_run, read_jsonl, server

__all__ = ["key", "server"]


def test_backoff_is_full_jitter_and_honours_retry_after() -> None:

    rng = random.Random(1)
    draws = [backoff_delay(3, None, 0.5, 30, rng) for _ in range(200)]
    assert min(draws) >= 0 and max(draws) <= 2.0 and max(draws) > 1.5
    assert max(backoff_delay(20, None, 0.5, 30, rng) for _ in range(50)) <= 30
    assert backoff_delay(1, 7.0, 0.5, 30, rng) == 7.0
    assert backoff_delay(1, 1e6, 0.5, 30, rng) == 600.0


def test_a_server_cannot_hold_a_cell_past_the_total_wait(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Retry-After of 700 s on every call: no cell waits (600 s in all per cell), and each says why it gave up."""
    server.configure({"default_reply": "red", "faults": [{"kind": "429", "retry_after": 700, "times": 10}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--json"])
    assert time.perf_counter() - started < 60
    assert result.exit_code == 0, result.output
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert len(rows) == 4 and {r["status"] for r in rows} == {"failed"}
    assert all("asked to wait 700 s more, past the 600 s one cell may wait in all" in r["error"] for r in rows)
