"""benchcard from Python: the steps of the command line as functions (docs/api.md), over the same core.

Each function takes a card or run the way the command does (an id, a prefix of a run id, or a path) and a
project (a `Project`, a folder, or None for the nearest folder with `cards/` above the current one). Errors are
the command's own `BenchcardError`s, one line each; nothing here prints (a run's notes go to `tell`, or to the
`benchcard` logger, as a library's do).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from typing import Any, Unpack

from benchcard.card.load import load_card as _load_card
from benchcard.card.load import resolve_card_path
from benchcard.card.model import Card
from benchcard.card.sealing import Sealed
from benchcard.card.sealing import seal_card as _seal_card
from benchcard.errors import CardError, PlanError, RunError
from benchcard.planning.forecast import plan as _plan
from benchcard.planning.power import Assumptions
from benchcard.planning.result import Plan
from benchcard.project import Project, ProjectLike, given_name
from benchcard.records.cardruns import find_run
from benchcard.records.rows import Manifest
from benchcard.records.runreader import read_manifest
from benchcard.run.options import RunFields, RunOptions
from benchcard.run.runner import run as _run
from benchcard.run.summary import RunSummary
from benchcard.verdict.give import Verdict, load_verdict
from benchcard.verdict.give import give_verdict as _give_verdict
from benchcard.verdict.looks import look_at


def load_card(card: str | os.PathLike[str], project: ProjectLike | None = None) -> Card:
    """A card by id (`one-word-sentiment`) or path, validated as `benchcard check` validates it."""
    p = Project.of(project)
    return _load_card(resolve_card_path(p, given_name(card, "card", CardError)), p)


def seal_card(card: str | os.PathLike[str], project: ProjectLike | None = None) -> Sealed:
    """`benchcard seal CARD`: the card checked (a problem, or a design that cannot win, refused as the command
    refuses it), then its version sealed; sealing a version again with the same content writes nothing."""
    return _seal_card(Project.of(project), given_name(card, "card", CardError))


def plan(card: str | os.PathLike[str], project: ProjectLike | None = None, pilot: str | os.PathLike[str] | None = None,
         assumed: Assumptions | None = None, fixtures: int | None = None,
         repetitions: int | None = None) -> Plan:
    """`benchcard plan CARD [--from RUN | --baseline-rate P …]`: calls, tokens and cost, and the detectable gap
    from a pilot run or from declared assumptions (`benchcard.assumptions(baseline_rate=…, fixture_sd=…)`)."""
    p = Project.of(project)
    run = None if pilot is None else given_name(pilot, "pilot", PlanError)
    return _plan(p, load_card(card, p), run, assumed, fixtures, repetitions)


def run_card(card: str | os.PathLike[str], project: ProjectLike | None = None, options: RunOptions | None = None,
             *, tell: Callable[[str], None] | None = None, **fields: Unpack[RunFields]) -> list[RunSummary]:
    """`benchcard run CARD`: one run per model; `options`, or the fields of `RunOptions` as keywords (`RunFields`),
    not both (a `RunError` names the keywords; the defaults are RunOptions', but no progress bar unless
    `progress=True`). `tell` takes the notes the CLI prints on stderr (keys read from .env, a resume's provider,
    …); by default they are INFO records of the `benchcard` logger, silent unless the caller configures logging."""
    if fields and options is not None:  # which should win is a guess, and ignoring either would be silent
        listed = ", ".join(fields)
        raise RunError(f"run_card() got options and the keywords {listed}, which are its fields: pass the "
                       f"keywords alone, or options=dataclasses.replace(options, {next(iter(fields))}=…) alone")
    return _run(Project.of(project), given_name(card, "card", CardError), options or _options(fields), looker=look_at,
                tell=tell or logging.getLogger("benchcard").info)


def _options(fields: RunFields) -> RunOptions:
    """The keywords given as `RunOptions`, its defaults for the rest but no progress bar; a keyword that is no field
    is the TypeError Python gives any function."""
    unknown = [name for name in fields if name not in RunFields.__annotations__]
    if unknown:
        raise TypeError(f"run_card() got an unexpected keyword argument {unknown[0]!r}")
    changes: dict[str, Any] = dict(fields)
    if "models" in changes and not isinstance(changes["models"], str):  # a str is refused by RunOptions, unsplit
        changes["models"] = tuple(changes["models"])
    return dataclasses.replace(RunOptions(progress=False), **changes)


def give_verdict(run: str | os.PathLike[str], project: ProjectLike | None = None, *,
                 allow_incomplete: bool = False) -> Verdict:
    """`benchcard verdict RUN`: unblind a finished run, apply its sealed rule, write verdict.json and table.csv,
    enter the ledger. A run already judged is refused; `load_verdict` reads its verdict."""
    p = Project.of(project)
    return _give_verdict(p, find_run(p, given_name(run, "run")), allow_incomplete=allow_incomplete)


def verdict_of(run: str | os.PathLike[str], project: ProjectLike | None = None) -> Verdict:
    """The verdict a run was given (`benchcard verdict RUN --show`); for a card's name, the card's result (its
    newest run with a ledger row)."""
    p = Project.of(project)
    return load_verdict(p, find_run(p, given_name(run, "run"), "result"))


def manifest_of(run: str | os.PathLike[str], project: ProjectLike | None = None) -> Manifest:
    """A run's manifest, typed (`benchcard.records.rows.Manifest`)."""
    p = Project.of(project)
    return read_manifest(find_run(p, given_name(run, "run")))
