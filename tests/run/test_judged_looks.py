"""A sequential judge card, as a user runs it: each stretch's outputs judged blind before its look (a judging
plan per stretch, sealed and digested before its first judge call), the run stopped by the look that decides,
a kill during a stretch's judging resumed at the same schedule, and `verdict` giving that look's decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.looks import look_at

from ..helpers_judge import CARD_ID, VARIANT_TEXT, card_text, judge_bodies, judge_project, script
from ..helpers_run import answer_every_held, bc, held_after, only_run, read_jsonl, run_and_kill, runs_of

# 16 fixtures × 2 variants × 9 repetitions, looks after 3, 6 and 9 repetitions (96, 192 and 288 cells)
SEQUENTIAL = {"repetitions: 2": "repetitions: 9\nsequential: {looks: 3}",
              "judgements: 3": "judgements: 1"}


def _project(root: Path, base_url: str) -> Project:
    return judge_project(root, base_url, fixtures=16, card_text=card_text(**SEQUENTIAL))


def test_a_judged_run_stops_at_the_look_its_judged_stretch_decides(tmp_path: Path, server: FakeServer,
                                                                    key: str) -> None:
    project = _project(tmp_path, server.base_url)
    checked = bc(project, "check", CARD_ID)
    assert checked.exit_code == 0, checked.output
    assert "sequential: 3 looks, after repetitions 3, 6, 9 of 9 (96, 192, 288 calls)" in checked.output
    server.configure(script({"reply": "GRADE: PASS"}))  # the variant's outputs name the colour, the baseline's not
    result = bc(project, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    assert "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in result.output
    assert ("judge test/judge · judge: 96 judgements (1 per ok output): 96 read as grades, 0 unreadable, "
            "0 truncated, 0 failed") in result.output
    folder = only_run(project, CARD_ID)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [look["decision"] for look in manifest["looks"]] == ["win"]
    assert manifest["judge"]["judgements"] == 96 and "judge_stretches" not in manifest
    # the judge saw the first stretch's outputs alone, blind, in a shuffled order, and nothing after the look
    requests = read_jsonl(folder / "sealed" / "judge-requests.jsonl")
    assignment = {a["cell"]: a for a in read_jsonl(folder / "sealed" / "assignment.jsonl")}
    assert {assignment[r["output"]]["repetition"] for r in requests} == {0, 1, 2}
    order = [assignment[r["output"]]["variant"] for r in requests]
    assert order != sorted(order) and order != sorted(order, reverse=True)
    for body in judge_bodies(server):
        text = json.dumps(body, ensure_ascii=False)
        assert VARIANT_TEXT.strip() not in text and "zz-colour-variant" not in text and folder.name not in text
    assert server.stats()["calls"] == 96 + 96
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    assert "finding: win → result" in verdict.output
    assert "looks: stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in verdict.output
    given = json.loads((folder / "verdict.json").read_text())
    assert given["judge"]["judgements"] == 96 and given["sequential"]["decision"] == "win"
    verified = bc(project, "ledger", "--verify")
    assert verified.exit_code == 0, verified.output
    site = bc(project, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    pages = [p.read_text() for p in (tmp_path / "site").rglob("*.html") if folder.name in p.read_text()]
    assert any("look 1 of 3: win" in p and "Krippendorff&#39;s alpha (with itself)" in p for p in pages)


def test_a_judged_run_killed_in_a_stretchs_judging_resumes_at_the_same_schedule(tmp_path: Path,
                                                                               server: FakeServer,
                                                                               key: str) -> None:
    """No effect the judge can see: every look goes on. Killed while the second stretch is judged, the run
    resumes without calling the model again for it, finishes that judging, takes look 2, and goes on to look 3."""
    project = _project(tmp_path, server.base_url)
    # every output judged alike: no gap. The judge's first 116 calls answered, then every one held: killed there
    server.configure(script({"reply": "GRADE: FAIL"}, faults=held_after(96 + 20, match="Rubric:")))

    def judging_stretch_2() -> bool:
        path = only_run(project, CARD_ID) / "judge-outputs.jsonl" if runs_of(project, CARD_ID) else None
        return path is not None and path.is_file() and path.read_bytes().count(b"\n") >= 96 + 20

    try:
        run_and_kill(project.root, [CARD_ID, "--concurrency", "2"], judging_stretch_2)
    finally:
        answer_every_held(server)
    folder = only_run(project, CARD_ID)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [look["decision"] for look in manifest["looks"]] == ["continue"] and "finished_at" not in manifest
    [stretch] = manifest["judge_stretches"]
    assert (stretch["look"], stretch["file"], stretch["judgements"]) == (2, "sealed/judge-requests-2.jsonl", 96)
    server.configure(script({"reply": "GRADE: FAIL"}))
    result = bc(project, "run", CARD_ID, "--resume", folder.name)
    assert result.exit_code == 0, result.output
    assert "every look taken (3 of 3): inconclusive; 288 calls" in result.output
    bodies = server.stats()["bodies"]
    assert len(bodies) - len(judge_bodies(server)) == 96  # the model: stretch 3 only
    assert len(read_jsonl(folder / "judge-outputs.jsonl")) == 288
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [look["decision"] for look in manifest["looks"]] == ["continue", "continue", "inconclusive"]
    assert [(s["look"], s["judgements"]) for s in manifest["judge_stretches"]] == [(2, 96), (3, 96)]
    planned = [r["output"] for name in ("judge-requests", "judge-requests-2", "judge-requests-3")
               for r in read_jsonl(folder / "sealed" / f"{name}.jsonl")]
    assert len(planned) == len(set(planned)) == 288  # each output planned once, in its own stretch's plan
    # a later stretch's plan edited after its judging is named, never used
    path = folder / "sealed" / "judge-requests-2.jsonl"
    sealed = path.read_bytes()
    path.write_bytes(sealed.replace(b"GRADE", b"Grade"))
    refused = bc(project, "verdict", folder.name)
    assert refused.exit_code == 1
    assert "sealed/judge-requests-2.jsonl changed after it was written" in refused.stderr, refused.stderr
    path.write_bytes(sealed)
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    assert "looks: every look taken (3 of 3): inconclusive; 288 calls" in verdict.output


def test_a_look_of_a_judged_run_is_computed_from_the_judged_scores(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    project = _project(tmp_path, server.base_url)
    server.configure(script({"reply": "GRADE: PASS"}))
    assert bc(project, "run", CARD_ID).exit_code == 0
    folder = only_run(project, CARD_ID)
    from benchcard.card.load import load_card

    again = look_at(load_card(project.card_path(CARD_ID), project), folder, 1)
    [recorded] = json.loads((folder / "manifest.json").read_text())["looks"]
    assert (again.decision, again.cells) == (recorded["decision"], recorded["cells"]) == ("win", 96)


def test_a_replication_of_a_stopped_judged_run_is_judged_at_its_own_looks(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """`benchcard replicate` sends the original's sealed requests again; the new run's stretches are judged
    afresh, each before its look, and the two decisions are compared."""
    project = _project(tmp_path, server.base_url)
    server.configure(script({"reply": "GRADE: PASS"}))
    assert bc(project, "run", CARD_ID).exit_code == 0
    original = only_run(project, CARD_ID)
    assert bc(project, "verdict", original.name).exit_code == 0
    again = bc(project, "replicate", original.name)
    assert again.exit_code == 0, again.output
    assert "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in again.stdout
    assert (f"replication of run {original.name}: replicated: win again, each at its own sealed looks (the "
            "original stopped at look 1 of 3: win, the new run stopped at look 1 of 3: win; gaps not compared)"
            ) in again.stdout
    assert len(judge_bodies(server)) == 96 + 96


def test_a_judged_run_killed_after_its_deciding_look_is_closed_by_the_resume(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed between the look that decided and the manifest's closing: the resume calls nothing, takes no look
    again, and closes the run with its judging's totals."""
    import benchcard.run.runner as runner

    project = _project(tmp_path, server.base_url)
    server.configure(script({"reply": "GRADE: PASS"}))

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(runner, "_close", killed)
        interrupted = bc(project, "run", CARD_ID)
    assert interrupted.exit_code == 1 and "interrupted; every finished cell is recorded" in interrupted.stderr
    folder = only_run(project, CARD_ID)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [look["decision"] for look in manifest["looks"]] == ["win"] and "finished_at" not in manifest
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(project, "run", CARD_ID, "--resume", folder.name)
    assert result.exit_code == 0, result.output
    assert "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in result.output
    assert "judge test/judge · judge: 96 judgements (1 per ok output): 96 read as grades" in result.output
    assert server.stats()["calls"] == 0
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(manifest["looks"]) == 1 and manifest["judge_counts"]["ok"] == 96 and "finished_at" in manifest
    assert bc(project, "verdict", folder.name).exit_code == 0


def test_a_judge_below_its_agreement_floor_turns_a_stopped_win_inconclusive(tmp_path: Path, server: FakeServer,
                                                                            key: str) -> None:
    """The look decides on the grades; the floor says whether they can carry a result, after the look, as for a
    fixed run: the run stops at its win, and the verdict is inconclusive, naming the judge's agreement."""
    changes = {**SEQUENTIAL, "judgements: 3": "judgements: 2\n  agreement_floor: 0.8"}
    project = judge_project(tmp_path, server.base_url, fixtures=16, card_text=card_text(**changes))
    # each description naming the colour is graded pass, then fail, then pass …: the judge cannot repeat itself
    server.configure(script({"replies_cycle": ["GRADE: PASS", "GRADE: FAIL"]}))
    result = bc(project, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    folder = only_run(project, CARD_ID)
    taken = json.loads((folder / "manifest.json").read_text())["looks"]
    assert taken[-1]["decision"] == "win"  # each fixture's mean is 0.5 against 0: the gap is plain at some look
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    assert "finding: inconclusive → non-result" in verdict.output
    assert "the judge's agreement with itself (Krippendorff's alpha) was " in verdict.output
    assert "below the declared floor 0.8: grades the judge cannot repeat cannot carry a result" in verdict.output
    [looks] = [line for line in verdict.output.splitlines() if line.startswith("looks: ")]
    said = f"stopped at look {len(taken)} of 3: win;" if len(taken) < 3 else "every look taken (3 of 3): win;"
    assert said in looks


def test_a_batch_judged_run_submits_one_batch_per_stretch_and_judges_each_before_its_look(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    project = _project(tmp_path, server.base_url)
    server.configure({**script({"reply": "GRADE: FAIL"}), "batch": {"validating_s": 0.05, "in_progress_s": 0.1}})
    result = bc(project, "run", CARD_ID, "--batch", "--poll-interval", "0.05")
    assert result.exit_code == 0, result.output
    assert "every look taken (3 of 3): inconclusive; 288 calls" in result.output
    stats = server.stats()
    assert stats["batch"]["batches"] == 3 and stats["batch"]["submitted"] == 288
    folder = only_run(project, CARD_ID)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [look["cells"] for look in manifest["looks"]] == [96, 192, 288]
    assert [(s["look"], s["judgements"]) for s in manifest["judge_stretches"]] == [(2, 96), (3, 96)]


def test_a_judged_stretch_with_failed_cells_names_the_resume_a_judge_card_accepts(tmp_path: Path,
                                                                                 server: FakeServer,
                                                                                 key: str) -> None:
    """More failed cells than allowed stop the run before its look; a judge card's run cannot be retried
    (`--retry-failed` does not re-judge), so the message names the plain resume alone, and that resume works."""
    project = _project(tmp_path, server.base_url)
    server.configure({**script({"reply": "GRADE: PASS"}),
                      "faults": [{"match": "number 1<", "kind": "500", "times": 999}]})  # fixture 1's model calls
    stopped = bc(project, "run", CARD_ID, "--attempts", "1")
    folder = only_run(project, CARD_ID)
    run_ = f"benchcard run {CARD_ID} --resume {folder.name}"
    assert stopped.exit_code == 1
    assert stopped.stderr.strip().splitlines()[-1] == (
        "error: 6 cell(s) before look 1 failed (6 in all, more than win.allow_failed, 0); the look is not taken yet, "
        f"and once taken it is final. `--retry-failed` does not re-judge a judge card's run; `{run_}` takes the "
        "look with them failed")
    server.configure(script({"reply": "GRADE: PASS"}))
    resumed = bc(project, "run", CARD_ID, "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output
    looks = json.loads((folder / "manifest.json").read_text())["looks"]
    assert looks[0]["look"] == 1 and looks[0]["cells"] == 96
