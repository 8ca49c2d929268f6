"""`benchcard status RUN`: where a run stands, each batch polled when the key is at hand, else as last recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchcard.run.batch.status import BatchState, RunStatus, run_status
from benchcard.testing.fakeserver import FakeServer

from ...helpers_batch import FAST, project_for
from ...helpers_run import KEY_ENV, ab_project, bc, only_run, write_config
from ...helpers_wait import wait_until


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_no_wait_then_status_then_resume_from_another_process(tmp_path: Path, server: FakeServer, key: str,
                                                              vendor: str) -> None:
    # in progress for its first 3 retrievals (the `status` below and the first looks of the loop), whatever the
    # machine's load: no timer to outrun
    server.configure({"default_reply": "red", "batch": {"in_progress_polls": 3}})
    project = project_for(tmp_path, server, vendor)
    result = bc(project, "run", "colour-ab", "--batch", "--no-wait")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    assert f"benchcard status {folder.name}" in result.output and "--resume" in result.output
    shown = bc(project, "status", folder.name)
    assert shown.exit_code == 0, shown.output
    assert "in progress" in shown.output and "batch 0:" in shown.output

    def ended() -> dict[str, Any] | None:  # another process looks in now and then until the vendor says so
        st: dict[str, Any] = json.loads(bc(project, "status", folder.name, "--json").stdout)
        return st if st["batches"][0]["status"] in ("completed", "ended") else None

    st = wait_until(ended, 180, "`status --json` to say the batch has ended", every=0.2)
    assert st["mode"] == "batch"
    assert "collect the results" in st["state"] and not st["finished"]
    result = bc(project, "run", "colour-ab", "--resume", folder.name, *FAST, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["counts"]["ok"] == 12
    assert bc(project, "status", folder.name).output.splitlines()[2].strip() == "finished"
    assert server.stats()["batch"]["submitted"] == 12


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


@pytest.mark.parametrize(("value", "said"), [
    ("sk-abcd1234\r\nX-Injected: 1", "holds spaces, a newline or control characters"),
    ("sk-\u2010abcd1234", "holds a character outside ASCII"),
])
def test_status_never_sends_a_key_no_http_header_can_carry(tmp_path: Path, server: FakeServer, key: str,
                                                           monkeypatch: pytest.MonkeyPatch, value: str,
                                                           said: str) -> None:
    """`run` refuses such a key before any call, `status` sent it: a newline split the Authorization header
    (a header of the key's text injected into the request) and the poll's note blamed the vendor ('the answer
    is not JSON'). Now status says what is wrong with the key and shows the last recorded poll."""
    server.configure({"default_reply": "red", "batch": {"in_progress_s": 30}})
    project = project_for(tmp_path, server, "openai", fixtures=2)
    assert bc(project, "run", "colour-ab", "--batch", "--no-wait").exit_code == 0
    polls = server.stats()["by_endpoint"]
    monkeypatch.setenv(KEY_ENV, value)
    shown = bc(project, "status", "colour-ab")
    assert shown.exit_code == 0, shown.output
    assert f"note: could not poll: {KEY_ENV} {said}" in shown.output and "not JSON" not in shown.output
    assert "in_progress 0/4" in shown.output and server.stats()["by_endpoint"] == polls


def test_the_status_text_shows_each_batch_and_the_note() -> None:
    st = RunStatus(run="20261201T120000Z-ab12", card="colour-ab", version=2, folder="results/colour-ab/v2/x",
                   mode="batch", cells=10, recorded={"ok": 3, "truncated": 1, "failed": 0}, finished=False,
                   state="in progress 6/10; collect when done with: benchcard run colour-ab --resume x",
                   batches=(BatchState(0, "batch_1", "collected", 4, 4, 0, "2026-12-01T12:01:00Z"),
                            BatchState(1, None, "planned", 0, 6, 2, None)),
                   note="BENCHCARD_TEST_KEY is not set: showing the last recorded poll")
    assert st.lines() == [
        "20261201T120000Z-ab12 · colour-ab v2 · batch → results/colour-ab/v2/x",
        "  10 cells: 3 ok, 1 truncated, 0 failed recorded",
        "  in progress 6/10; collect when done with: benchcard run colour-ab --resume x",
        "  batch 0: batch_1 · collected 4/4 (polled 2026-12-01T12:01:00Z)",
        "  batch 1: - · planned 0/6, 2 failed",
        "  note: BENCHCARD_TEST_KEY is not set: showing the last recorded poll"]
    assert st.to_json()["batches"][1] == {"chunk": 1, "batch": None, "status": "planned", "done": 0, "cells": 6,
                                          "failed": 2, "polled_at": None}


def test_an_interactive_run_in_progress_says_how_to_continue(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "require_key": True})
    project = ab_project(tmp_path, None, fixtures=2, repetitions=1)
    write_config(project.root, server.base_url, key_env=None)  # no key sent: a 401 stops the run for a resume
    assert bc(project, "run", "colour-ab").exit_code == 1
    folder = only_run(project, "colour-ab")
    st = run_status(project, folder)
    assert run_status(project, folder.name) == run_status(project, "colour-ab") == st  # found as the command finds it
    assert (st.mode, st.cells, st.finished, st.batches) == ("interactive", 4, False, ())
    assert st.recorded == {"ok": 0, "truncated": 0, "failed": 0}
    assert st.state == f"0/4 cells recorded; continue with: benchcard run colour-ab --resume {folder.name}"
