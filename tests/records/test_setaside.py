"""`benchcard set-aside RUN --why …`: a run started on the wrong endpoint is kept, recorded as set aside
(append-only), never resumed or judged, off the pages' headline and the ledger's resume hints, and shown as set
aside where it is listed. Over the fake server, as a user meets it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.runreader import set_aside_of
from benchcard.records.setaside import set_aside
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import one_line_error
from ..helpers_run import ab_project, bc, next_second, ok, read_jsonl, summary

WHY = "started on the vendor's endpoint by mistake"


def _wrong_endpoint_run(project: Project, server: FakeServer) -> str:
    """A run pointed elsewhere with --base-url (scratch), stopped after 3 calls: unfinished."""
    [stopped] = run(project, "colour-ab", RunOptions(base_url=server.base_url + "/", progress=False), stop_after=3)
    assert not stopped.finished
    return stopped.run


def test_a_run_on_the_wrong_endpoint_is_set_aside_and_never_offered_again(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    wrong = _wrong_endpoint_run(project, server)
    before = ok(bc(project, "ledger")).stdout
    assert (f"colour-ab v1 · run {wrong}: scratch run, unfinished (3 of 12 cells) — benchcard run colour-ab "
            f"--resume {wrong}") in before

    said = ok(bc(project, "set-aside", wrong, "--why", WHY)).stdout.strip()
    folder = project.results_dir / "colour-ab" / "v1" / wrong
    assert said == (f"run {wrong} set aside {time.strftime('%Y-%m-%d', time.gmtime())} ({WHY}); kept in "
                    f"results/colour-ab/v1/{wrong}/, recorded in set-aside.jsonl there")
    [row] = read_jsonl(folder / "set-aside.jsonl")
    assert row["why"] == WHY and row["at"].endswith("Z")
    assert len(read_jsonl(folder / "outputs.jsonl")) == 3  # kept as it was

    after = ok(bc(project, "ledger")).stdout
    assert f"--resume {wrong}" not in after
    assert f"colour-ab v1 · run {wrong}: scratch run, unfinished (3 of 12 cells), set aside " in after
    assert WHY in after

    status = ok(bc(project, "status", wrong)).stdout
    assert f"{wrong} · colour-ab v1 · interactive · scratch → " in status and "  scratch run (--base-url " in status
    assert f"  set aside {row['at'][:10]} ({WHY}): kept as it is, never resumed or judged" in status
    assert "--resume" not in status
    assert "was set aside" in one_line_error(bc(project, "run", "colour-ab", "--resume", wrong))
    assert "was set aside" in one_line_error(bc(project, "verdict", wrong))
    assert "already set aside" in one_line_error(bc(project, "set-aside", wrong, "--why", "again"))
    assert one_line_error(bc(project, "set-aside", "colour-ab", "--why", "again")) == (
        "error: colour-ab is a card; name the run to set aside by its id (`benchcard ledger` lists the unfinished "
        "ones)")
    assert len(read_jsonl(folder / "set-aside.jsonl")) == 1

    # the card's name no longer stands for it: a command acting on "the card's run" finds none, then the next
    assert "every run of the card is set aside (1)" in one_line_error(bc(project, "status", "colour-ab"))
    next_second()  # run ids are to the second
    good = str(summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]["run"])
    assert good in ok(bc(project, "status", "colour-ab")).stdout

    out = tmp_path / "site"
    ok(bc(project, "site", "--out", str(out)))
    page = (out / "cards" / "colour-ab" / "index.html").read_text(encoding="utf-8")
    headline = page.split('class="result-line')[1].split("</p>")[0]
    assert good in headline and wrong not in headline
    assert f"Set aside on {row['at'][:10]}: {WHY}. Kept as it is; never resumed, judged or taken as the card's " \
           "result." in page.replace("&#39;", "'")
    evidence = (out / "runs" / "colour-ab" / "v1" / wrong / "index.html").read_text(encoding="utf-8")
    assert "Set aside on" in evidence and f"--resume {wrong}" not in evidence


def test_a_ledgered_run_is_never_set_aside_and_a_reason_is_required(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    done = str(summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]["run"])
    assert "--why" in one_line_error(bc(project, "set-aside", done, "--why", "  "))
    assert "--why" in one_line_error(bc(project, "set-aside", done))
    seq = json.loads(ok(bc(project, "verdict", done, "--json")).stdout)["ledger"]["seq"]
    assert one_line_error(bc(project, "set-aside", done, "--why", WHY)) == (
        f"error: run {done} is in the ledger (seq {seq}); a ledgered verdict is the record and is never set aside")
    assert not (project.results_dir / "colour-ab" / "v1" / done / "set-aside.jsonl").exists()
    next_second()  # run ids are to the second
    other = str(summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]["run"])
    said = json.loads(ok(bc(project, "set-aside", other, "--why", WHY, "--json")).stdout)
    assert (said["run"], said["why"], said["folder"]) == (other, WHY, f"results/colour-ab/v1/{other}")


def test_the_command_s_core_finds_the_run_and_refuses_a_card_s_name(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    """`benchcard set-aside RUN` calls one core function, `set_aside`, which takes the run as the command does: an
    id (or folder), never a card's name; a run set aside reads back through `runreader.set_aside_of`."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    wrong = _wrong_endpoint_run(project, server)
    with pytest.raises(RunError, match=r"^colour-ab is a card; name the run to set aside by its id"):
        set_aside(project, "colour-ab", WHY)
    folder = project.results_dir / "colour-ab" / "v1" / wrong
    assert set_aside_of(folder) is None
    done = set_aside(project, wrong, WHY)
    assert done.run == wrong and done.where == f"results/colour-ab/v1/{wrong}"
    assert set_aside_of(folder) == done.entry


def test_a_set_aside_mark_written_by_hand_into_a_ledgered_run_hides_nothing(tmp_path: Path, server: FakeServer,
                                                                            key: str) -> None:
    """The command refuses to set a ledgered run aside, but the mark is a file: one written by hand into the run of
    a card's latest verdict made `verdict CARD --show` (and the site's headline) fall back to an earlier result,
    while `ledger --verify` said every judged run's evidence was unchanged (hostile audit, round 24). The row stays
    the card's result, and the mark is named as an edit of the evidence."""
    server.configure({"replies": [{"match": "Please.", "reply": "red"}], "default_reply": "blue"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    first = str(summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]["run"])
    ok(bc(project, "verdict", first))
    next_second()  # run ids are to the second
    server.configure({"default_reply": "red"})
    latest = str(summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"][0]["run"])
    seq = json.loads(ok(bc(project, "verdict", latest, "--json")).stdout)["ledger"]["seq"]
    folder = project.results_dir / "colour-ab" / "v1" / latest
    (folder / "set-aside.jsonl").write_text(json.dumps({"at": "2026-12-07T10:00:00Z", "why": WHY}) + "\n",
                                            encoding="utf-8")

    shown = bc(project, "verdict", "colour-ab", "--show")
    assert f"run {latest}" in shown.stdout and f"run {first}" not in shown.stdout
    verify = bc(project, "ledger", "--verify")
    assert verify.exit_code == 1
    assert (f"FAIL seq {seq} (run {latest}): results/colour-ab/v1/{latest}/set-aside.jsonl: a run in the ledger "
            "is never set aside; the mark was written after its verdict, and its row stays the record") in verify.output
    site = ok(bc(project, "site", "--out", str(tmp_path / "site")))
    assert f"results/colour-ab/v1/{latest}/set-aside.jsonl: a run in the ledger is never set aside" in site.output
    page = (tmp_path / "site" / "cards" / "colour-ab" / "index.html").read_text(encoding="utf-8")
    assert f'Result: <a href="#run-{latest}">' in page
