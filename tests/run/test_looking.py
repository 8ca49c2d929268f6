"""A sequential card's run against the fake server: the grid called stretch by stretch, a look after each sealed
block and nowhere else, every look in the manifest, a stop on a decision, a kill between looks resumed at the
same schedule, and one batch per stretch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchcard.project import Project
from benchcard.records.rows import AssignmentRow, iter_rows
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.run.store import RunStore
from benchcard.run.summary import RunSummary
from benchcard.testing.fakeserver import FakeServer

from ..helpers_batch import FAST, journal
from ..helpers_cli import one_line_error
from ..helpers_run import (
    answer_every_held,
    bc,
    held_after,
    holding,
    only_run,
    read_jsonl,
    run_and_kill,
    runs_of,
    write_config,
)
from ..helpers_sequential import clear_win, no_effect, sequential_ab

PER_LOOK = 96  # 16 fixtures × 2 variants × 3 repetitions


def _manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text())
    return data


def test_the_plan_puts_each_stretch_before_the_next(tmp_path: Path) -> None:
    project = sequential_ab(tmp_path)
    from benchcard.card.load import load_card
    from benchcard.run.grid import plan_cells

    cells = plan_cells(load_card(project.card_path("colour-ab"), project), seed=7)
    stretch = [c.repetition // 3 for c in cells]
    assert stretch == sorted(stretch) and len(cells) == 3 * PER_LOOK


def test_a_clear_win_stops_at_the_first_look(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    result = bc(project, "run", "colour-ab", "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["missing"] == 0 and s["called"] == PER_LOOK
    assert s["looks"] == "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)"
    assert s["cells"] == 288 and s["uncalled"] == 192
    # the counts add up to the cells: those the stop left uncalled are said, not left to subtract
    assert "  288 cells: 96 ok, 0 truncated, 0 failed, 192 never called (the run stopped at a look) · " in "\n".join(
        RunSummary(**s).lines())
    folder = only_run(project, "colour-ab")
    manifest = _manifest(folder)
    assert manifest["sequential"] == {"looks": [3, 6, 9], "cells": [96, 192, 288], "spending": "obrien-fleming",
                                      "futility": True, "alpha": 0.05, "futility_level": 0.035, "decide_from": 3,
                                      "grid": {"points": 801, "sds": 9.0, "cap": 12.0}}
    [look] = manifest["looks"]
    assert (look["look"], look["repetitions"], look["cells"], look["decision"]) == (1, 3, 96, "win")
    assert look["statistic"] >= look["boundary"]
    # only the first stretch's cells were called: repetitions 0 and 1
    called = {r["cell"] for r in read_jsonl(folder / "outputs.jsonl")}
    reps = {a.cell: a.repetition for a in iter_rows(folder / "sealed" / "assignment.jsonl", AssignmentRow)}
    assert len(called) == PER_LOOK and {reps[c] for c in called} == {0, 1, 2}
    assert server.stats()["calls"] == PER_LOOK
    assert len(read_jsonl(folder / "scores.jsonl")) == PER_LOOK
    printed = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert printed.exit_code == 0 and "stopped at look 1 of 3: win" in printed.output
    assert server.stats()["calls"] == PER_LOOK  # a finished sequential run calls nothing more


def test_every_look_is_taken_when_none_decides(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(no_effect())
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3}\n")
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 0, result.output
    assert "every look taken (3 of 3): inconclusive; 288 calls" in result.output
    manifest = _manifest(only_run(project, "colour-ab"))
    looks = manifest["looks"]
    assert [(lk["look"], lk["cells"], lk["decision"]) for lk in looks] == [
        (1, 96, "continue"), (2, 192, "continue"), (3, 288, "inconclusive")]
    assert looks[0]["scores_to"] < looks[1]["scores_to"] < looks[2]["scores_to"]


def _resume_with_its_own_seed_only(project: Project, folder: Path, server: FakeServer) -> None:
    """Another seed would name other stretches: it was accepted and silently ignored; now one line, nothing called.
    The run's own seed resumes it."""
    seed = _manifest(folder)["seed"]
    calls = server.stats()["calls"]
    assert one_line_error(bc(project, "run", "colour-ab", "--resume", folder.name, "--seed", str(seed + 1))) == (
        f"error: results/colour-ab/v1/{folder.name}: the run was planned with seed {seed}; a resumed run keeps its "
        "sealed order of calls (drop --seed)")
    assert server.stats()["calls"] == calls
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--seed", str(seed), "--json")
    assert result.exit_code == 0, result.output


def test_a_run_killed_between_looks_resumes_at_the_same_schedule(tmp_path: Path, server: FakeServer,
                                                                 key: str) -> None:
    # the first look's calls (3 of each of the 32 bodies) and 10 more answered, the next 2 held: killed there
    server.configure({**no_effect(), "faults": held_after(10, each=3, held=2)})
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3}\n")

    def after_the_first_look() -> bool:
        runs = runs_of(project, "colour-ab")
        if not runs or not (runs[0] / "manifest.json").is_file():
            return False
        outputs = runs[0] / "outputs.jsonl"
        return bool(_manifest(runs[0]).get("looks")) and outputs.is_file() and \
            outputs.read_bytes().count(b"\n") >= PER_LOOK + 10 and holding(server, 2)

    try:
        run_and_kill(project.root, ["colour-ab", "--concurrency", "2"], after_the_first_look)
    finally:
        answer_every_held(server)
    folder = only_run(project, "colour-ab")
    first = _manifest(folder)["looks"]
    assert len(RunStore(folder).done_cells()) == PER_LOOK + 10
    assert len(first) == 1 and "finished_at" not in _manifest(folder)
    # `status` says where the looks stand, before the verdict as `run` does: the look taken and the next
    assert "  look 1 of 3 taken, it went on; look 2 comes after repetition 6 (192 of 288 calls)\n" in \
        bc(project, "status", folder.name).stdout
    _resume_with_its_own_seed_only(project, folder, server)
    manifest = _manifest(folder)
    looks = manifest["looks"]
    assert looks[0] == first[0]  # the look taken before the kill stands, unchanged
    assert [lk["look"] for lk in looks] == [1, 2, 3]
    assert [lk["cells"] for lk in looks] == [96, 192, 288]
    rows = read_jsonl(folder / "outputs.jsonl")
    assert len(rows) == len({r["cell"] for r in rows}) == 288
    assert len(read_jsonl(folder / "scores.jsonl")) == 288
    assert manifest["finished_at"]
    assert "  every look taken (3 of 3): " in bc(project, "status", folder.name).stdout


def test_a_kill_inside_the_first_stretch_resumes_to_its_look(tmp_path: Path, server: FakeServer, key: str) -> None:
    # no reply cycle: a call made twice (in flight at the kill) gives the same answer
    server.configure({"replies": [{"match": "Please.", "reply": "red"}, {"match": "", "reply": "blue"}],
                      "faults": held_after(10, held=2)})  # 10 calls answered, the next 2 held: killed there
    project = sequential_ab(tmp_path, server.base_url)

    def some_cells() -> bool:
        runs = runs_of(project, "colour-ab")
        outputs = runs[0] / "outputs.jsonl" if runs else None
        return outputs is not None and outputs.is_file() and outputs.read_bytes().count(b"\n") >= 10 \
            and holding(server, 2)

    try:
        run_and_kill(project.root, ["colour-ab", "--concurrency", "2"], some_cells)
    finally:
        answer_every_held(server)
    folder = only_run(project, "colour-ab")
    assert "looks" not in _manifest(folder) and len(RunStore(folder).done_cells()) == 10
    assert "  no look taken yet; look 1 comes after repetition 3 (96 of 288 calls)\n" in \
        bc(project, "status", folder.name).stdout
    _resume_with_its_own_seed_only(project, folder, server)
    [look] = _manifest(folder)["looks"]
    assert (look["look"], look["cells"], look["decision"]) == (1, 96, "win")
    assert len(RunStore(folder).done_cells()) == PER_LOOK
    status = bc(project, "status", folder.name, "--json")
    assert json.loads(status.stdout)["looks"] == "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)"


def test_a_sequential_run_needs_its_looker(tmp_path: Path) -> None:
    project = sequential_ab(tmp_path)
    with pytest.raises(Exception, match="is a sequential card: its run takes the sealed looks"):
        run(project, "colour-ab", RunOptions(progress=False))


def test_a_ctrl_c_that_lands_during_the_deciding_look_names_the_verdict_not_a_resume(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """A Ctrl-C (or SIGTERM) read while a look is computed lets the look end and the run close; it said "Continue
    with: benchcard run … --resume", which had nothing to call. The line now says what the run folder holds: the run
    finished at its look, and its verdict is next. The SIGINT is sent from inside the look (the looker a run is given),
    where a user's Ctrl-C lands between the stretch's last call and the look's record."""
    import os
    import signal

    from benchcard.errors import RunError
    from benchcard.verdict.looks import look_at

    def interrupted_look(card: Any, run_dir: Path, look: int) -> Any:
        os.kill(os.getpid(), signal.SIGINT)  # asyncio's handler cancels the run at its next wait
        return look_at(card, run_dir, look)

    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal (the fixture restores it)
    with pytest.raises(RunError) as caught:
        run(project, "colour-ab", RunOptions(progress=False), looker=interrupted_look)
    folder = only_run(project, "colour-ab")
    assert _manifest(folder)["finished_at"] and [lk["decision"] for lk in _manifest(folder)["looks"]] == ["win"]
    assert str(caught.value) == (
        f"interrupted after run {folder.name} had finished (stopped at look 1 of 3: win; 96 of 288 calls (67 % "
        "saved)): every cell it needs has an outcome and is scored, so nothing is left to call. Its verdict: "
        f"benchcard verdict {folder.name}")
    judged = bc(project, "verdict", folder.name)
    assert judged.exit_code == 0 and "finding: win → result" in judged.stdout, judged.output


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_batch_run_submits_one_batch_per_stretch(tmp_path: Path, server: FakeServer, key: str,
                                                   vendor: str) -> None:
    server.configure({**no_effect(), "batch": {"validating_s": 0.05, "in_progress_s": 0.1}})
    project: Project = sequential_ab(tmp_path, fixtures=6, repetitions=4, block="sequential: {looks: 2}\n")
    write_config(tmp_path, server.base_url, type_=vendor)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    events = journal(folder)
    assert [e["event"] for e in events if e["event"] in ("planned", "added")] == ["planned", "added"]
    assert [len(e["chunks"]) for e in events if e["event"] in ("planned", "added")] == [1, 1]
    stats = server.stats()
    assert stats["batch"]["batches"] == 2 and stats["batch"]["submitted"] == 48
    assert [lk["cells"] for lk in _manifest(folder)["looks"]] == [24, 48]


def test_a_batch_that_expires_at_a_look_waits_for_the_choice_and_status_says_where_it_stands(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """The first stretch's batch expires with half its requests run: the run stops before look 1 (more failed cells
    than win.allow_failed). `status` said "every batch has ended; collect the results with: … --resume" of a batch
    already collected, and nothing of the looks; it now says no look is taken yet, where the next comes, and that
    every batch is collected. `--resume --retry-failed` submits the failed cells again, then takes the look. The
    batches' line on stderr counts the cells of the stretch, not those of the stretches after it."""
    server.configure({**clear_win(), "batch": {"validating_s": 0.05, "in_progress_s": 0.1, "end": "expired",
                                               "done_fraction": 0.5}})
    project = sequential_ab(tmp_path, server.base_url)
    stopped = bc(project, "run", "colour-ab", "--batch", *FAST)
    assert stopped.exit_code == 1 and "the look is not taken yet" in stopped.stderr, stopped.output
    # the batch's line counts the cells of this stretch, and its failures (it said "collected 288/288 · 0 failed")
    assert "1 batch · collected 96/288 · 48 failed · 0 truncated" in stopped.stderr, stopped.stderr
    folder = only_run(project, "colour-ab")
    status = bc(project, "status", folder.name, "--no-poll").stdout
    assert "  no look taken yet; look 1 comes after repetition 3 (96 of 288 calls)\n" in status, status
    run_ = f"benchcard run colour-ab --resume {folder.name}"
    assert (f"  96/288 cells recorded, every batch collected; continue with: {run_}; 48 failed cell(s) no look has "
            f"read yet: `{run_} --retry-failed` calls them again first, a plain resume takes the next look with them "
            "failed, and a look taken is final\n") in status, status
    assert "  288 cells: 48 ok, 0 truncated, 48 failed recorded" in status
    server.configure({**clear_win(), "batch": {"validating_s": 0.05, "in_progress_s": 0.1}})
    resumed = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", *FAST)
    assert resumed.exit_code == 0 and "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in resumed.stdout, \
        resumed.output
    assert "2 batches · collected 96/288 · 0 failed" in resumed.stderr, resumed.stderr
    assert "  stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)\n" in bc(project, "status", folder.name).stdout


def test_a_retry_calls_again_the_failed_cells_of_the_stretch_no_look_has_read(tmp_path: Path, server: FakeServer,
                                                                             key: str) -> None:
    """An outage inside the first stretch stops the run before its look; `--retry-failed` calls those cells
    again with the rest of the stretch, and the look is taken once, on the whole stretch."""
    server.configure({"faults": [{"kind": "503", "times": 999}]})
    project = sequential_ab(tmp_path, server.base_url)
    stopped = bc(project, "run", "colour-ab", "--concurrency", "1", "--attempts", "1")
    folder = only_run(project, "colour-ab")
    assert stopped.exit_code == 1
    assert stopped.stderr.strip().splitlines()[-1].endswith(
        f"5 of 288 cells recorded, 5 failed. When the endpoint answers again: benchcard run colour-ab --resume "
        f"{folder.name} --retry-failed")
    assert "looks" not in _manifest(folder)
    server.configure(clear_win())
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["called"] == PER_LOOK and s["counts"] == {"ok": PER_LOOK, "truncated": 0, "failed": 0}
    assert s["looks"] == "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)"
    [look] = _manifest(folder)["looks"]
    assert (look["look"], look["cells"], look["decision"]) == (1, PER_LOOK, "win")
    rows = read_jsonl(folder / "outputs.jsonl")
    assert len(rows) == PER_LOOK + 5 and all(r["status"] == "failed" for r in rows[:5])
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0 and "finding: win → result" in verdict.output, verdict.output


def test_a_retry_never_calls_again_a_cell_a_look_has_read(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Fixture 0 fails throughout the first stretch: the run stops before its look, and a plain resume takes the
    look with those failures; the endpoint then goes down inside the second stretch. `--retry-failed` calls the
    second stretch's failed cells again, never the first's: look 1 is final."""
    from benchcard.verdict.looks import look_at

    server.configure({**no_effect(), "faults": [{"match": "number 0<", "kind": "500", "times": 999}]})
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3}\n")

    def looker(card: Any, folder: Path, k: int) -> Any:
        look = look_at(card, folder, k)
        server.configure({"faults": [{"kind": "503", "times": 999}]})  # down after the first look
        return look

    with pytest.raises(Exception, match=r"6 cell\(s\) before look 1 failed \(6 in all, more than win.allow_failed, "
                                        r"0\); the look is not taken yet"):
        run(project, "colour-ab", RunOptions(concurrency=1, attempts=1, progress=False), looker=looker)
    folder = only_run(project, "colour-ab")
    assert "looks" not in _manifest(folder)
    with pytest.raises(Exception, match="5 cells in a row failed in transport"):  # a plain resume takes the look
        run(project, "colour-ab", RunOptions(resume=folder.name, concurrency=1, attempts=1, progress=False),
            looker=looker)
    [look] = _manifest(folder)["looks"]
    assert (look["look"], look["cells"], look["decision"]) == (1, PER_LOOK, "continue")
    reps = {a.cell: a.repetition for a in iter_rows(folder / "sealed" / "assignment.jsonl", AssignmentRow)}
    before = read_jsonl(folder / "outputs.jsonl")
    first = {r["cell"] for r in before if r["status"] == "failed" and reps[r["cell"]] < 3}
    second = {r["cell"] for r in before if r["status"] == "failed" and reps[r["cell"]] >= 3}
    assert len(first) == 6 and len(second) == 5  # fixture 0 × 2 variants × 3 repetitions; then the outage

    server.configure(no_effect())
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", "--json")
    assert result.exit_code == 0, result.output
    assert ("6 failed cell(s) were read by look 1, and a look taken is final: they are not called again (they "
            "count against win.allow_failed)") in result.stderr
    [s] = json.loads(result.stdout)["runs"]
    assert s["called"] == 2 * PER_LOOK and s["counts"]["failed"] == 6
    rows = read_jsonl(folder / "outputs.jsonl")
    again = [r["cell"] for r in rows[len(before):]]
    assert not first & set(again) and second <= set(again)  # the second stretch's failures called again, only
    assert [lk["look"] for lk in _manifest(folder)["looks"]] == [1, 2, 3]
    assert _manifest(folder)["looks"][0] == look  # the look taken stands as it was
    finished = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed")
    assert finished.exit_code == 0 and f"nothing to retry: run {folder.name} is finished" in finished.output
    assert "6 failed cell(s) were read by looks 1 to 3, and a look taken is final" in finished.output


def test_a_finished_run_with_failed_cells_read_by_its_looks_suggests_no_retry(tmp_path: Path, server: FakeServer,
                                                                             key: str) -> None:
    """A sequential probe's first call fails (one attempt), its gate passes at look 2 all the same. Its closing
    lines said '1 cell(s) failed: `benchcard run … --retry-failed` calls them again', and that retry calls nothing
    ('nothing to retry': a look taken is final). They now say the cell was read by a look and stays failed."""
    from ..helpers_sequential import sequential_probe

    server.configure({"default_reply": "negative", "faults": [{"match": "", "kind": "500", "times": 1}]})
    project = sequential_probe(tmp_path, server.base_url)
    result = bc(project, "run", "one-word-sentiment", "--attempts", "1", "--concurrency", "1")
    assert result.exit_code == 0, result.output
    assert "  stopped at look 2 of 4: pass; 20 of 40 calls (50 % saved)\n" in result.output
    assert ("  1 cell(s) failed, each read by a look, and a look taken is final: no retry calls them again (the "
            "verdict counts them failed)\n") in result.output
    assert "--retry-failed" not in result.output
    folder = only_run(project, "one-word-sentiment")
    calls = server.stats()["calls"]
    retried = bc(project, "run", "one-word-sentiment", "--resume", folder.name, "--retry-failed")
    assert retried.exit_code == 0 and f"nothing to retry: run {folder.name} is finished" in retried.output
    assert server.stats()["calls"] == calls


def test_a_stretch_with_more_failed_cells_than_allowed_waits_for_a_retry_before_its_look(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({**clear_win(), "faults": [{"match": "number 0<", "kind": "500", "times": 999}]})
    project = sequential_ab(tmp_path, server.base_url)
    stopped = bc(project, "run", "colour-ab", "--attempts", "1")
    folder = only_run(project, "colour-ab")
    run_ = f"benchcard run colour-ab --resume {folder.name}"
    assert stopped.exit_code == 1
    assert stopped.stderr.strip().splitlines()[-1] == (
        "error: 6 cell(s) before look 1 failed (6 in all, more than win.allow_failed, 0); the look is not taken yet, "
        f"and once taken it is final. `{run_} --retry-failed` calls them again first; `{run_}` takes the look with "
        "them failed")
    assert "looks" not in _manifest(folder)
    # `status` said 'continue with: <plain resume>' alone, which takes the look with the failures for good
    assert bc(project, "status", folder.name).stdout.splitlines()[-1] == (
        f"  96/288 cells recorded; continue with: {run_}; 6 failed cell(s) no look has read yet: `{run_} "
        "--retry-failed` calls them again first, a plain resume takes the next look with them failed, and a look "
        "taken is final")
    server.configure(clear_win())
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["called"] == 6 and s["counts"] == {"ok": PER_LOOK, "truncated": 0, "failed": 0}
    assert s["looks"] == "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)"
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0 and "finding: win → result" in verdict.output, verdict.output
