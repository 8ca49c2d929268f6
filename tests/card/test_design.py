"""The design warnings `check` gives before anything is sealed or paid for: too few fixtures or repetitions to
ever win, and runs of this version cut off at max_tokens; each names the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

from benchcard.card.design import fewest_fixtures

from ..conftest import AB_CARD, make_ab_project
from ..helpers_cli import exit_and_streams as _run


def test_check_warns_when_the_design_can_never_win(tmp_path: Path) -> None:
    text = AB_CARD.replace("repetitions: 3", "repetitions: 1")
    project = make_ab_project(tmp_path, text, n_fixtures=5)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0, out  # a warning, not a failure: the card may be a pilot
    lines = text.splitlines()
    fixtures_line = 1 + next(i for i, ln in enumerate(lines) if ln.startswith("fixtures:"))
    reps_line = 1 + next(i for i, ln in enumerate(lines) if ln.startswith("repetitions:"))
    assert (f"  warning: cards/tiny-ab.yaml:{fixtures_line}: field 'fixtures': 5 fixture(s) can never win at "
            "α = 0.05: the exact sign-flip p is at least 0.0625 > α (a win needs 6 fixtures or more") in out
    assert (f"  warning: cards/tiny-ab.yaml:{reps_line}: field 'repetitions': 1 repetition can never win") in out
    two = make_ab_project(tmp_path / "two", AB_CARD.replace("repetitions: 3", "repetitions: 2"), n_fixtures=6)
    code, out, _ = _run(two, "check", "tiny-ab")
    assert code == 0 and "with 2 repetitions the run-to-run spread rests on one degree of freedom" in out
    assert "fixture(s) can never win" not in out
    fine = make_ab_project(tmp_path / "fine", AB_CARD, n_fixtures=6)
    code, out, _ = _run(fine, "check", "tiny-ab", "--json")
    assert code == 0 and json.loads(out)["cards"][0]["warnings"] == []


def test_check_warns_when_a_run_was_cut_off_by_max_tokens(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path, AB_CARD, n_fixtures=6)
    run = project / "results" / "tiny-ab" / "v1" / "20261130T151200Z-3f9a"
    run.mkdir(parents=True)
    manifest = {"run": run.name, "card": "tiny-ab", "version": 1, "kind": "ab", "seal_root": "sha256:" + "a" * 64,
                "params": {"max_tokens": 50, "temperature": 0.7}, "repetitions": 6, "cells": 36,
                "started_at": "2026-11-30T15:12:00Z", "finished_at": "2026-11-30T15:20:00Z",
                "counts": {"ok": 33, "truncated": 3, "failed": 0}}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, out, _ = _run(project, "check", "tiny-ab")
    line = 1 + next(i for i, ln in enumerate(AB_CARD.splitlines()) if ln.startswith("params:"))
    assert code == 0
    assert (f"  warning: cards/tiny-ab.yaml:{line}: field 'params.max_tokens': run 20261130T151200Z-3f9a had 3 of 36 "
            "cell(s) cut off at max_tokens 50") in out


def test_the_fewest_fixtures_that_can_win_is_where_two_over_two_to_the_f_reaches_alpha() -> None:
    assert [fewest_fixtures(a) for a in (0.5, 0.25, 0.1, 0.0625, 0.05, 0.01)] == [2, 3, 5, 5, 6, 8]
    for alpha in (0.2, 0.05, 0.001):
        f = fewest_fixtures(alpha)
        assert 2 / 2 ** f <= alpha < 2 / 2 ** (f - 1)
