"""Runs that can be finished: `--retry-failed` calls failed cells again and keeps every earlier attempt; an
endpoint that stops answering stops the run instead of failing the grid; a resume keeps the run's own limits,
and says so when there is nothing to call; a reply with a lone surrogate is stored losslessly."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from benchcard._util.hashing import file_digest
from benchcard.cli import cli
from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import KEY_ENV, ab_project, answer_every_held, only_run, read_jsonl
from ..helpers_wait import wait_until, watchdog


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def summary(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, (result.output, result.exception)
    [s] = json.loads(result.stdout)["runs"]
    return s  # type: ignore[no-any-return]


FAIL_FIXTURE_0 = [{"kind": "500", "times": 999, "match": "number 0"}]


def test_retry_failed_calls_the_failed_cells_again_and_keeps_each_attempt(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server.configure({"default_reply": "red", "faults": FAIL_FIXTURE_0})
    project = ab_project(tmp_path, server.base_url, fixtures=4, repetitions=1)
    first = summary(bc(project, "run", "colour-ab", "--json", "--attempts", "1"))
    assert first["counts"] == {"ok": 6, "truncated": 0, "failed": 2} and first["finished"]
    folder = only_run(project, "colour-ab")
    before = (folder / "outputs.jsonl").read_bytes()
    scored_before = (folder / "scores.jsonl").read_bytes()
    failed = {o["cell"]: o for o in read_jsonl(folder / "outputs.jsonl") if o["status"] == "failed"}
    old_digest = file_digest(folder / "outputs.jsonl")

    # a plain resume of a finished run calls nothing, says why and what --retry-failed would do, asks no key
    monkeypatch.delenv(KEY_ENV)
    result = bc(project, "run", "colour-ab", "--resume", first["run"])
    assert result.exit_code == 0, result.output
    assert (f"run {first['run']} is finished: nothing to call (8 of 8 cells have an outcome, 2 failed); "
            f"`benchcard run colour-ab --resume {first['run']} --retry-failed` would call the 2 failed cell(s) "
            "again, keeping the failed attempts in outputs.jsonl") in result.output
    monkeypatch.setenv(KEY_ENV, key)

    server.configure({"default_reply": "red"})
    again = summary(bc(project, "run", "colour-ab", "--resume", first["run"], "--retry-failed", "--json"))
    assert again["called"] == 2 and again["counts"] == {"ok": 8, "truncated": 0, "failed": 0} and again["finished"]
    after = (folder / "outputs.jsonl").read_bytes()
    assert after.startswith(before) and len(after) > len(before)  # appended to, nothing before it rewritten
    appended = [json.loads(line) for line in after[len(before):].splitlines()]
    assert sorted(o["cell"] for o in appended) == sorted(failed) and all(o["status"] == "ok" for o in appended)
    assert not (folder / "attempts.jsonl").exists()
    manifest = json.loads((folder / "manifest.json").read_text())
    [retry] = manifest["retries"]
    assert retry["cells"] == 2 and retry["from"] == len(before) and retry["closed"]["outputs_digest"] == old_digest
    assert retry["scores_from"] == len(scored_before)
    assert retry["closed"]["counts"] == {"ok": 6, "truncated": 0, "failed": 2}
    assert manifest["counts"] == {"ok": 8, "truncated": 0, "failed": 0}
    assert manifest["outputs_digest"] == file_digest(folder / "outputs.jsonl")
    scored_after = (folder / "scores.jsonl").read_bytes()
    assert scored_after.startswith(scored_before)  # the retried cells' scores appended, nothing rescored
    added = [json.loads(line) for line in scored_after[len(scored_before):].splitlines()]
    assert sorted(s["cell"] for s in added) == sorted(failed) and all(s["score"] == 1 for s in added)

    # the blind sheet, the verdict, the export and the pages read each cell's last row
    sheet = bc(project, "blind-sheet", first["run"], "--out", str(tmp_path / "sheet.csv"))
    assert sheet.exit_code == 0, sheet.output
    assert len((tmp_path / "sheet.csv").read_text().splitlines()) == 9  # a header and one row per cell
    verdict = bc(project, "verdict", first["run"])
    assert verdict.exit_code == 0, verdict.output
    assert "incomplete" not in verdict.output
    judged = json.loads((folder / "verdict.json").read_text())
    assert judged["counts"] == {"planned": 8, "scored": 8, "truncated": 0, "failed": 0, "missing": 0}
    table = (folder / "table.csv").read_text().splitlines()
    values = [line.split(",")[4] for line in table[1:]]
    assert len(values) % 8 == 0 and set(values) == {"1.0"}  # the retried cells scored: no value left empty
    assert bc(project, "ledger", "--verify").exit_code == 0
    exported = bc(project, "export", first["run"], "--out", str(tmp_path / "cells.csv"))
    assert exported.exit_code == 0 and exported.stdout.startswith("wrote 8 cells")
    assert bc(project, "site", "--out", str(tmp_path / "web")).exit_code == 0
    page = (tmp_path / "web" / "runs" / "colour-ab" / "v1" / first["run"] / "index.html").read_text()
    for cell, row in failed.items():  # each retried cell: its outcome, then its earlier attempt
        block = page[page.index(cell):]
        block = block[:block.index("earlier attempt 2") if "earlier attempt 2" in block else len(block)]
        assert "earlier attempt 1" in block and f"failed · {row['error']} · 1 call(s)" in block
    assert page.count("earlier attempt 1") == 2

    nothing = bc(project, "run", "colour-ab", "--resume", first["run"], "--retry-failed")
    assert nothing.exit_code == 0
    assert f"nothing to retry: run {first['run']} is finished and no cell failed" in nothing.output
    assert (folder / "outputs.jsonl").read_bytes() == after


def test_an_interrupted_retry_is_finished_by_resume(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A retry stopped after one of its cells: the other reopened cells are called by a plain --resume, the
    stopped run says how far it got, and retried cells that fail again can be retried again."""
    server.configure({"default_reply": "red", "faults": [*FAIL_FIXTURE_0, {**FAIL_FIXTURE_0[0], "match": "number 1"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=4, repetitions=1)
    first = summary(bc(project, "run", "colour-ab", "--json", "--attempts", "1"))
    assert first["counts"]["failed"] == 4
    folder = only_run(project, "colour-ab")
    server.configure({"default_reply": "red"})
    [stopped] = run(project, "colour-ab", RunOptions(resume=first["run"], retry_failed=True, attempts=1,
                                                    progress=False), stop_after=1)
    assert not stopped.finished and stopped.called == 1
    in_progress = bc(project, "verdict", first["run"])
    assert "is still in progress (5 of 8 cells recorded, not closed)" in in_progress.stderr
    ledger = bc(project, "ledger")
    assert f"colour-ab v1 · run {first['run']}: unfinished (5 of 8 cells)" in ledger.output
    status = json.loads(bc(project, "status", first["run"], "--json").stdout)
    assert status["recorded"] == {"ok": 5, "truncated": 0, "failed": 0} and not status["finished"]
    assert bc(project, "site", "--out", str(tmp_path / "web")).exit_code == 0
    assert "Unfinished (5 of 8 cells)" in (tmp_path / "web" / "cards" / "colour-ab" / "index.html").read_text()
    scores = folder / "scores.jsonl"
    scored = scores.read_bytes()
    with scores.open("ab") as fh:
        fh.write(b'{"cell":"c0')  # as if an earlier close had been killed while appending
    server.configure({"default_reply": "red", "faults": [{**FAIL_FIXTURE_0[0], "match": ""}]})  # down again
    resumed = summary(bc(project, "run", "colour-ab", "--resume", first["run"], "--json", "--attempts", "1"))
    assert resumed["called"] == 3 and resumed["finished"]
    assert scores.read_bytes().startswith(scored) and len(read_jsonl(scores)) == 8 + 4  # the torn tail cut off
    assert resumed["counts"] == {"ok": 5, "truncated": 0, "failed": 3}  # the three called failed again
    server.configure({"default_reply": "red"})
    last = summary(bc(project, "run", "colour-ab", "--resume", first["run"], "--retry-failed", "--json"))
    assert last["called"] == 3 and last["counts"] == {"ok": 8, "truncated": 0, "failed": 0}
    rows = read_jsonl(folder / "outputs.jsonl")
    assert len(rows) == 8 + 4 + 3 and [r["status"] for r in rows[8:]].count("failed") == 3
    assert len(read_jsonl(scores)) == 8 + 4 + 3
    assert [r["from"] for r in json.loads((folder / "manifest.json").read_text())["retries"]] == [
        len(b"".join((folder / "outputs.jsonl").read_bytes().splitlines(keepends=True)[:n])) for n in (8, 12)]
    assert bc(project, "verdict", first["run"]).exit_code == 0
    assert json.loads((folder / "verdict.json").read_text())["counts"]["scored"] == 8


def test_a_run_retried_the_old_way_still_verifies_and_reads(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Before 2026-12-01 a retry moved the failed rows to attempts.jsonl and rewrote outputs.jsonl without them;
    such a run is resumed, judged, verified and published as before, its earlier attempts shown."""
    server.configure({"default_reply": "red", "faults": FAIL_FIXTURE_0})
    project = ab_project(tmp_path, server.base_url, fixtures=4, repetitions=1)
    first = summary(bc(project, "run", "colour-ab", "--json", "--attempts", "1"))
    folder = only_run(project, "colour-ab")
    lines = (folder / "outputs.jsonl").read_bytes().splitlines(keepends=True)
    moved = [line for line in lines if json.loads(line)["status"] == "failed"]
    (folder / "attempts.jsonl").write_bytes(b"".join(moved))
    (folder / "outputs.jsonl").write_bytes(b"".join(line for line in lines if line not in moved))
    manifest = json.loads((folder / "manifest.json").read_text())
    closed = {k: manifest.pop(k) for k in ("finished_at", "outputs_digest", "scores_digest", "counts")}
    manifest["retries"] = [{"at": "2026-11-30T16:00:00Z", "cells": 2, "closed": closed}]
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    server.configure({"default_reply": "red"})
    resumed = summary(bc(project, "run", "colour-ab", "--resume", first["run"], "--json"))
    assert resumed["called"] == 2 and resumed["counts"] == {"ok": 8, "truncated": 0, "failed": 0}
    assert bc(project, "verdict", first["run"]).exit_code == 0
    assert bc(project, "ledger", "--verify").exit_code == 0
    assert bc(project, "site", "--out", str(tmp_path / "web")).exit_code == 0
    page = (tmp_path / "web" / "runs" / "colour-ab" / "v1" / first["run"] / "index.html").read_text()
    assert page.count("earlier attempt 1") == 2 and "failed · HTTP 500" in page


def test_a_judged_run_is_never_retried(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "faults": FAIL_FIXTURE_0})
    project = ab_project(tmp_path, server.base_url, fixtures=4, repetitions=1)
    first = summary(bc(project, "run", "colour-ab", "--json", "--attempts", "1"))
    assert bc(project, "verdict", first["run"]).exit_code == 0
    result = bc(project, "run", "colour-ab", "--resume", first["run"], "--retry-failed")
    assert result.exit_code == 1
    assert f"run {first['run']} already has a verdict" in result.stderr and "start a new run" in result.stderr
    assert "retries" not in json.loads((only_run(project, "colour-ab") / "manifest.json").read_text())


def test_retry_failed_needs_a_run(tmp_path: Path, server: FakeServer, key: str) -> None:
    project = ab_project(tmp_path, server.base_url)
    result = bc(project, "run", "colour-ab", "--retry-failed")
    assert result.exit_code == 1
    assert result.stderr.strip() == ("error: --retry-failed calls the failed cells of an earlier run: give that run "
                                     "with --resume RUN")


def test_an_endpoint_that_stops_answering_stops_the_run(tmp_path: Path, server: FakeServer, key: str) -> None:
    """The grid is not burnt: the run stops after a few transport failures, says so in one line, and is
    finished by --resume (cells not yet called) and --retry-failed (the failed ones)."""
    server.configure({"default_reply": "red", "faults": [{"kind": "503", "times": 999}]})
    project = ab_project(tmp_path, server.base_url, fixtures=5, repetitions=2)
    result = bc(project, "run", "colour-ab", "--concurrency", "1", "--attempts", "2")
    assert result.exit_code == 1
    line = result.stderr.strip().splitlines()[-1]  # after the progress bar: one line
    folder = only_run(project, "colour-ab")
    assert line.startswith("error: the run stopped: 5 cells in a row failed in transport (last: HTTP 503")
    assert line.endswith(f"5 of 20 cells recorded, 5 failed. When the endpoint answers again: "
                         f"benchcard run colour-ab --resume {folder.name} --retry-failed")
    assert server.stats()["calls"] == 10  # 5 cells × 2 attempts, not 20 × 2

    server.configure({"default_reply": "red"})
    resumed = summary(bc(project, "run", "colour-ab", "--resume", folder.name, "--json"))
    assert resumed["called"] == 15 and resumed["counts"] == {"ok": 15, "truncated": 0, "failed": 5}
    retried = summary(bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", "--json"))
    assert retried["called"] == 5 and retried["counts"] == {"ok": 20, "truncated": 0, "failed": 0}
    rows = read_jsonl(folder / "outputs.jsonl")
    assert len(rows) == 25 and len({r["cell"] for r in rows}) == 20  # the 5 failed attempts stay, first
    assert all(r["status"] == "failed" and "HTTP 503" in r["error"] for r in rows[:5])


def test_an_endpoint_asking_every_call_to_wait_a_day_stops_the_run(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    """Hostile audit (round 12b): a 429 asking for more than a cell may wait (an account's daily quota spent:
    `Retry-After: 86400` on every call) failed its cell at once, uncounted, so the run went on and recorded the
    whole grid failed in a second. It counts as a transport failure like the last attempt's: the run stops after
    as many in a row, saying what the server asked, and --resume finishes it when the quota is back."""
    server.configure({"default_reply": "red", "faults": [{"kind": "429", "times": 999, "retry_after": 86400}]})
    project = ab_project(tmp_path, server.base_url, fixtures=5, repetitions=2)
    result = bc(project, "run", "colour-ab", "--concurrency", "1")
    assert result.exit_code == 1
    line = result.stderr.strip().splitlines()[-1]
    folder = only_run(project, "colour-ab")
    assert line.startswith("error: the run stopped: 5 cells in a row failed in transport (last: HTTP 429: injected "
                           "fault 429; the server asked to wait 86400 s more, past the 600 s one cell may wait in all "
                           "(gave up after 1 attempt))"), line
    assert line.endswith(f"5 of 20 cells recorded, 5 failed. When the endpoint answers again: "
                         f"benchcard run colour-ab --resume {folder.name} --retry-failed")
    assert server.stats()["calls"] == 5


def refused_by(folder: Path) -> int:
    """How many cells, in call order, a run refused on every call records before it stops: at least 5 in a row
    (concurrency 1), over both variants and 3 fixtures."""
    rows = read_jsonl(folder / "sealed" / "assignment.jsonl")
    return next(k for k in range(5, len(rows) + 1)
                if len({r["variant"] for r in rows[:k]}) == 2 and len({r["fixture"] for r in rows[:k]}) >= 3)


def test_an_endpoint_that_refuses_every_request_alike_stops_the_run(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    """A 400 on every call (a parameter the model does not take) is about the request, not a cell: the run stops
    after as many refusals in a row as would stop a dead endpoint, over every variant and a few fixtures, instead
    of recording the grid failed."""
    server.configure({"default_reply": "red", "faults": [{"kind": "400", "times": 999}]})
    project = ab_project(tmp_path, server.base_url, fixtures=5, repetitions=2)
    result = bc(project, "run", "colour-ab", "--concurrency", "1")
    assert result.exit_code == 1
    line = result.stderr.strip().splitlines()[-1]
    folder = only_run(project, "colour-ab")
    n = refused_by(folder)
    assert line.startswith(f"error: the run stopped: {n} cells in a row were refused alike (last: HTTP 400")
    assert line.endswith(f"{n} of 20 cells recorded, {n} failed. Fix the cause (the card's request, the model or "
                         f"the account), then: benchcard run colour-ab --resume {folder.name} --retry-failed")
    assert server.stats()["calls"] == n  # a refusal is not retried, and the other cells were never called
    # refusals broken by an answer do not stop it: each is that cell's own
    server.configure({"default_reply": "red", "faults": [{"kind": "400", "times": 999, "match": "number 0"}]})
    resumed = summary(bc(project, "run", "colour-ab", "--resume", folder.name, "--json", "--concurrency", "1"))
    assert resumed["called"] == 20 - n and resumed["finished"]
    failed = resumed["counts"]["failed"]  # the first cells, and fixture 0's after them
    retried = summary(bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", "--json"))
    assert retried["called"] == failed and retried["counts"] == {"ok": 16, "truncated": 0, "failed": 4}
    rows = read_jsonl(folder / "outputs.jsonl")
    assert len({r["cell"] for r in rows}) == 20 and len(rows) == 20 + failed  # nothing lost, each attempt kept


@pytest.mark.parametrize(("match", "fixtures", "repetitions", "treatments", "refused"), [
    ("number 1<", 2, 10, 1, 20),  # one fixture of two refused (too long for the model), in both arms
    ("Please", 3, 6, 3, 54),  # every treatment's text refused (a content filter), the baseline answered
])
def test_refusals_of_one_fixture_or_of_the_treatments_never_stop_the_run(
        tmp_path: Path, server: FakeServer, key: str, match: str, fixtures: int, repetitions: int, treatments: int,
        refused: int) -> None:
    """Those refusals are that fixture's or those arms' outcome, not the request's: the grid is called whole, each
    refused cell recorded failed with its cause, however many of them come in a row."""
    server.configure({"default_reply": "red", "faults": [{"kind": "400", "times": 999, "match": match}]})
    project = ab_project(tmp_path, server.base_url, fixtures=fixtures, repetitions=repetitions, treatments=treatments)
    cells = (1 + treatments) * fixtures * repetitions
    done = summary(bc(project, "run", "colour-ab", "--concurrency", "1", "--seed", "3", "--json"))
    assert done["finished"] and done["called"] == cells
    assert done["counts"] == {"ok": cells - refused, "truncated": 0, "failed": refused}
    folder = only_run(project, "colour-ab")
    failed = {r["cell"] for r in read_jsonl(folder / "outputs.jsonl") if r["status"] == "failed"}
    assert all(r["error"].startswith("HTTP 400") for r in read_jsonl(folder / "outputs.jsonl") if r["cell"] in failed)
    order = "".join("x" if r["cell"] in failed else "." for r in read_jsonl(folder / "sealed" / "assignment.jsonl"))
    assert "xxxxx" in order  # refused cells came 5 in a row, as many as stop a run refused on every call


def test_a_resume_keeps_the_runs_own_concurrency_and_rate_limit(tmp_path: Path, server: FakeServer,
                                                               key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=2)
    [first] = run(project, "colour-ab", RunOptions(concurrency=2, rpm=6000, progress=False), stop_after=3)
    assert not first.finished
    manifest = json.loads((only_run(project, "colour-ab") / "manifest.json").read_text())
    assert manifest["concurrency"] == 2 and manifest["requests_per_minute"] == 6000
    resumed = summary(bc(project, "run", "colour-ab", "--resume", first.run, "--json"))
    assert resumed["concurrency"] == 2 and resumed["rpm"] == 6000 and resumed["finished"]
    # given again, the user's figures win
    [other] = run(project, "colour-ab", RunOptions(concurrency=2, progress=False), stop_after=3)
    resumed = summary(bc(project, "run", "colour-ab", "--resume", other.run, "--json", "--concurrency", "3"))
    assert resumed["concurrency"] == 3 and resumed["rpm"] is None


def test_verdict_on_a_run_in_progress_says_so(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=2)
    [first] = run(project, "colour-ab", RunOptions(progress=False), stop_after=5)
    result = bc(project, "verdict", first.run)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: run {first.run} is still in progress (5 of 12 cells recorded, not closed); a verdict waits for "
        f"the run to finish: `benchcard run colour-ab --resume {first.run}`")


def test_a_reply_with_a_lone_surrogate_is_stored_losslessly(tmp_path: Path, server: FakeServer, key: str) -> None:
    text = "red \ud800 and \udfff"
    server.configure({"default_reply": text})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    s = summary(bc(project, "run", "colour-ab", "--json"))
    assert s["counts"] == {"ok": 4, "truncated": 0, "failed": 0} and s["finished"]
    folder = only_run(project, "colour-ab")
    assert [o["text"] for o in read_jsonl(folder / "outputs.jsonl")] == [text] * 4
    sheet = bc(project, "blind-sheet", s["run"], "--out", str(tmp_path / "sheet.csv"))
    assert sheet.exit_code == 0, sheet.output
    assert "red \ufffd and \ufffd" in (tmp_path / "sheet.csv").read_text(encoding="utf-8")
    assert bc(project, "verdict", s["run"]).exit_code == 0
    built = bc(project, "site", "--out", str(tmp_path / "web"))
    assert built.exit_code == 0, built.output
    page = next((tmp_path / "web" / "runs").rglob("index.html")).read_text(encoding="utf-8")
    assert "red \ufffd and \ufffd" in page  # shown with the replacement character; the raw file keeps the escape


def test_a_server_that_takes_calls_and_answers_none_stops_the_run(tmp_path: Path, server: FakeServer,
                                                                  key: str) -> None:
    """Timeouts alone never stopped a run, so a server that accepts connections and never answers cost every
    cell its attempts times the timeout (4 × 120 s; 10,000 cells at 8 workers: 1.4 days). Calls timing out in a
    row, over several cells, with no answer for twice the timeout, stop it in one line; the cells in flight are
    not tried again, nor recorded, and a plain --resume calls the whole grid once the server answers."""
    server.configure({"default_reply": "red", "faults": [{"kind": "hang", "times": 999, "hang_s": 5}]})
    project = ab_project(tmp_path, server.base_url, fixtures=5, repetitions=2)
    result = bc(project, "run", "colour-ab", "--concurrency", "4", "--timeout", "0.3")
    assert result.exit_code == 1
    line = result.stderr.strip().splitlines()[-1]
    folder = only_run(project, "colour-ab")
    assert line.startswith("error: the run stopped: 8 calls in a row over 4 cells timed out after 0.3 s and no "
                           "answer came for "), line
    assert line.endswith(" s: the server takes calls but answers none (if its answers only take longer, raise "
                         "--timeout); 0 of 20 cells recorded, 0 failed. When the endpoint answers again: "
                         f"benchcard run colour-ab --resume {folder.name}"), line
    assert server.stats()["calls"] <= 8 + 4  # the 8, and at most the calls in flight then: not 20 × 4
    assert read_jsonl(folder / "outputs.jsonl") == []

    server.configure({"default_reply": "red"})
    resumed = summary(bc(project, "run", "colour-ab", "--resume", folder.name, "--json"))
    assert resumed["called"] == 20 and resumed["counts"] == {"ok": 20, "truncated": 0, "failed": 0}
    assert resumed["finished"] and len(read_jsonl(folder / "outputs.jsonl")) == 20


def test_a_slow_server_or_one_cell_timing_out_never_stops_the_run(tmp_path: Path, server: FakeServer,
                                                                  key: str) -> None:
    """Answers taking a fifth of the timeout, and one cell whose first 5 calls time out in a row (past the 5 calls
    and twice the timeout that stop a run when they span several cells): the grid is called whole. The server
    holds those 5 calls until the test releases them after the run, so they time out whatever the load; the others
    answer well inside the timeout (answers at 0.9 of it timed out under load: a cell's 3 attempts)."""
    server.configure({"default_reply": "red", "latency_ms": 200,
                      "faults": [{"kind": "hang", "times": 999, "total": 5, "hang_s": 0, "held": True,
                                  "match": "number 0"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    options = RunOptions(concurrency=1, timeout=1.0, attempts=6, backoff_base=0.01, progress=False)
    try:
        [done] = run(project, "colour-ab", options)
    finally:
        answer_every_held(server)
    assert done.finished and done.counts == {"ok": 4, "truncated": 0, "failed": 0}
    attempts = sorted(r["attempts"] for r in read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl"))
    assert attempts == [1, 1, 1, 6]


def test_a_cell_waiting_out_its_backoff_when_the_run_stops_sends_nothing_more(tmp_path: Path, server: FakeServer,
                                                                              key: str) -> None:
    """Two calls at once, 2 attempts each. The first call the server receives is refused 429, Retry-After: 590;
    every other call 500, so that the other worker's 5 cells fail in a row and stop the run while that cell waits
    out its 590 s: a stop then, not a race. The cell waiting sends nothing after the stop and is not recorded, and
    the run ends at once (a run that waits it out is stopped by the watchdog, not measured). Before 4eb9757, it woke
    when its wait was over and sent one more call (here, after 590 s: 12 calls); waited out to the end of a backoff
    of a few ms, it did so when the stop fell in that backoff, 2 runs in 50 of the silent server's case under load."""
    server.configure({"default_reply": "red", "faults": [{"kind": "429", "times": 1, "total": 1, "retry_after": 590},
                                                         {"kind": "500", "times": 999}]})
    project = ab_project(tmp_path, server.base_url, fixtures=5, repetitions=1)
    options = RunOptions(concurrency=2, attempts=2, backoff_base=0.01, progress=False)
    with watchdog(120, "the run waits out the 590 s its cell was told to wait after the stop"), \
            pytest.raises(RunError) as stopped:
        run(project, "colour-ab", options)
    folder = only_run(project, "colour-ab")
    assert str(stopped.value).startswith("the run stopped: 5 cells in a row failed in transport (last: HTTP 500: "
                                         "injected fault 500 (gave up after 2 attempts)); 5 of 10 cells recorded, "
                                         "5 failed."), str(stopped.value)
    rows = read_jsonl(folder / "outputs.jsonl")
    assert [r["attempts"] for r in rows] == [2] * 5 and all(r["status"] == "failed" for r in rows)
    stats = server.stats(by_request=False)
    assert stats["by_status"] == {"429": 1, "500": 10}, stats  # the 5 cells' calls, and the one told to wait: no more


def test_a_cells_last_attempt_ending_after_the_stop_is_not_recorded(tmp_path: Path, server: FakeServer,
                                                                    key: str) -> None:
    """Two calls at once, one attempt each. The first call the server receives is held; every other call is
    answered 500, so the other worker's 5 cells fail in a row and stop the run. Only once their 5 rows are on disk
    (the stop is set before the fifth is written) does the test release the held call, whose 500 is then its
    cell's last attempt ending after the stop: an order of events, not a race. That cell is not recorded, and the
    run says 5 of 10. Before 4eb9757 it was recorded failed ('6 of 10 cells recorded, 6 failed')."""
    server.configure({"default_reply": "red", "faults": [{"kind": "500", "times": 1, "total": 1, "held": True},
                                                         {"kind": "500", "times": 999}]})
    project = ab_project(tmp_path, server.base_url, fixtures=5, repetitions=1)
    options = RunOptions(concurrency=2, attempts=1, progress=False)
    watched: list[str] = []
    watcher = threading.Thread(target=_release_after_rows, args=(server, project, 5, watched))
    watcher.start()
    try:
        with pytest.raises(RunError) as stopped:
            run(project, "colour-ab", options)
    finally:
        watcher.join()
    assert watched == ["held 1, 5 rows on disk: released 1"]
    assert str(stopped.value).startswith("the run stopped: 5 cells in a row failed in transport (last: HTTP 500: "
                                         "injected fault 500 (gave up after 1 attempt)); 5 of 10 cells recorded, "
                                         "5 failed."), str(stopped.value)
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert len(rows) == 5 and all(r["status"] == "failed" for r in rows)
    assert server.stats(by_request=False)["by_status"] == {"500": 6}  # the 5 and the one held: no more


def _release_after_rows(server: FakeServer, project: Project, rows: int, said: list[str]) -> None:
    """Release the server's held call once the run's outputs.jsonl holds `rows` rows, saying what it saw in `said`.
    Not there within 180 s (a broken run), `said` says the wait gave up, and the call is released all the same: the
    run ends and the test fails on `said`, rather than hanging or reading the release as made on time."""

    def written() -> int:
        outputs = list((project.root / "results" / "colour-ab" / "v1").glob("*/outputs.jsonl"))
        return outputs[0].read_bytes().count(b"\n") if outputs else 0

    try:
        wait_until(lambda: written() >= rows, 180, f"{rows} rows in the run's outputs.jsonl")
    except AssertionError as gave_up:
        said.append(str(gave_up))
    held = server.stats(by_request=False)["held"]
    said.append(f"held {held}, {written()} rows on disk: released {server.release()}")
