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


def test_a_number_of_seconds_or_calls_that_is_no_finite_number_is_one_line(project: Project) -> None:
    """`--timeout inf` was taken and failed every call with OverflowError (the run stopped after 16 cells, each
    recorded failed), and `--timeout nan` or `--rpm nan` passed click's range, which no comparison with NaN fails.
    Each is refused before anything is read or written, as `--timeout 0` is."""
    before = sorted(project.root.rglob("*"))
    for command in (("run", "extract-ab", "--scratch"), ("replicate", "20261130T151200Z-3f9a")):
        for option, value in (("--timeout", "inf"), ("--timeout", "nan"), ("--rpm", "nan"),
                              ("--poll-interval", "inf")):
            if option == "--poll-interval" and command[0] == "replicate":
                continue
            result = bc(project.root, *command, option, value)
            assert result.exit_code != 0 and result.stderr.startswith(
                f"error: Invalid value for '{option}': '{value}' is not a finite number (see `"), result.output
            assert len(result.stderr.splitlines()) == 1
    assert sorted(project.root.rglob("*")) == before
