"""A run's commands as a user types them: `status` in words and under --json, `set-aside` recorded and said."""

from __future__ import annotations

import json

from benchcard.project import Project

from ..helpers_cli import bc
from ..helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, make_run, the_card


def test_status_in_words_and_under_json(project: Project) -> None:
    run = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR)).name
    words = bc(project.root, "status", run, "--no-poll")
    assert words.exit_code == 0, words.output
    assert words.stdout == (f"{run} · extract-ab v1 · interactive → results/extract-ab/v1/{run}\n"
                            "  36 cells: 36 ok, 0 truncated, 0 failed recorded\n  finished\n")
    as_json = bc(project.root, "status", run, "--no-poll", "--json").stdout
    shown = json.loads(as_json)
    assert shown["recorded"] == {"ok": 36, "truncated": 0, "failed": 0} and shown["state"] == "finished"
    assert as_json == json.dumps(shown, indent=2) + "\n" and as_json.isascii()  # escaped, as status always was
    assert shown == {"run": run, "card": "extract-ab", "version": 1, "folder": f"results/extract-ab/v1/{run}",
                     "mode": "interactive", "cells": 36, "recorded": {"ok": 36, "truncated": 0, "failed": 0},
                     "finished": True, "state": "finished", "batches": [], "note": None, "refused": [],
                     "scratch": None, "replicates": None, "replies": None, "judge_replies": None,
                     "looks": None}  # a fixed run has no looks (a sequential one: its looks so far)


def test_set_aside_says_what_was_recorded(project: Project) -> None:
    run = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR)).name
    result = bc(project.root, "set-aside", run, "--why", "a trial", "--json")
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert (done["run"], done["why"], done["folder"]) == (run, "a trial", f"results/extract-ab/v1/{run}")
