"""A sequential rule's schedule for `stats.sequential`, built one way from a card and from a run's record: an
older manifest's parameters are inferred as the benchcard that wrote it used them, recorded ones are used as
recorded, and a card's schedule is the same `stats.sequential.Schedule` a run of it records."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from benchcard.card.model import Sequential
from benchcard.card.schedule import card_design, current_rules, design, recorded_rules, run_design, schedule_record
from benchcard.errors import RunError
from benchcard.records.rows import LEGACY_GRID, IntegrationGrid, Look, Manifest, Rules, Schedule, decode_manifest
from benchcard.stats import sequential as seq

from ..helpers_sequential import sequential_ab

OLD = {"looks": [3, 6, 9], "cells": [96, 192, 288], "spending": "obrien-fleming", "futility": True, "alpha": 0.05}


def _old_manifest(started_at: str) -> Manifest:
    raw = msgspec.json.encode({"run": "r", "card": "c", "version": 1, "kind": "ab", "seal_root": "s",
                               "started_at": started_at, "sequential": OLD})
    return decode_manifest(raw, "manifest.json")


def test_an_older_schedule_without_its_rule_parameters_reads_as_the_benchcard_that_wrote_it() -> None:
    plan = run_design(_old_manifest("2026-12-04T21:00:00Z"))
    assert (plan.futility_beta, plan.decide_from) == (0.025, 3)  # planned before 8c9f944: 0.025
    assert (plan.grid_points, plan.grid_sds, plan.z_cap) == (LEGACY_GRID.points, 9.0, 12.0)
    assert run_design(_old_manifest("2026-12-05T09:00:00Z")).futility_beta == 0.035
    # a recorded look's futility boundary shows the level it was taken at, whatever the date says
    z = seq.boundaries(seq.Schedule((3, 6, 9), futility_beta=0.035)).futility_z
    assert z is not None
    look = Look(look=1, repetitions=3, cells=96, statistic=0.0, boundary=3.7, futility=z[0], decision="continue",
                at="2026-12-04T21:10:00Z")
    schedule = Schedule(**OLD)  # type: ignore[arg-type]
    assert recorded_rules(schedule, "ab", "2026-12-04T21:00:00Z", [look]).futility_level == 0.035
    probe = Manifest(run="r", card="c", version=1, kind="probe", seal_root="s", sequential=schedule,
                     started_at="2026-12-04T21:00:00Z")
    assert run_design(probe).futility is False  # a probe never stops for futility
    assert recorded_rules(schedule, "probe").futility_level is msgspec.UNSET


def test_recorded_rule_parameters_are_the_ones_computed_with() -> None:
    rules = Rules(futility_level=0.1, decide_from=1, grid=IntegrationGrid(points=401, sds=8.0, cap=10.0),
                  default_spending="pocock")
    schedule = Schedule(looks=[2, 4], cells=[10, 20], spending="pocock", futility=True, alpha=0.05,
                        futility_level=0.1, decide_from=1, grid=rules.grid)
    assert recorded_rules(schedule, "ab") == rules
    plan = run_design(Manifest(run="r", card="c", version=1, kind="ab", seal_root="s", sequential=schedule))
    assert (plan.futility_beta, plan.decide_from, plan.grid_points, plan.grid_sds, plan.z_cap) == \
        (0.1, 1, 401, 8.0, 10.0)
    assert seq.boundaries(plan).efficacy[0] < 10  # look 1 spends α: decide_from 1, not this benchcard's 3
    assert current_rules(True, "pocock").changed(rules, spending=False) == \
        "futility level 0.035, this benchcard uses 0.1"
    assert current_rules(False).changed(current_rules(False)) is None
    # a card that names no spending: the seal's default spending is named first
    assert current_rules(True).changed(rules) == "α spent hsd (γ = -6), this benchcard uses pocock"


def test_a_card_and_its_run_give_one_schedule() -> None:
    card = Sequential(looks=(2, 4), spending="hsd", futility=True, gamma=-2.0)
    rules = current_rules(True)
    recorded = Schedule(looks=[2, 4], cells=[8, 16], spending="hsd", futility=True, alpha=0.05, gamma=-2.0,
                        futility_level=rules.futility_level, decide_from=rules.decide_from, grid=rules.grid)
    from_run = run_design(Manifest(run="r", card="c", version=1, kind="ab", seal_root="s", sequential=recorded))
    assert card_design(card, 0.05, True) == from_run == design((2, 4), "hsd", -2.0, alpha=0.05, futility=True,
                                                               rules=rules)
    default = card_design(Sequential(looks=(2, 4)), 0.05, True)  # no spending named: this benchcard's default
    assert (default.spending, default.gamma, default.futility_beta) == ("hsd", -6.0, 0.045)
    assert card_design(Sequential(looks=(2, 4), spending="obrien-fleming"), 0.05, False).gamma == seq.DEFAULT_GAMMA


def test_a_run_without_a_schedule_is_named() -> None:
    with pytest.raises(RunError, match="run r: its manifest records no schedule of looks"):
        run_design(Manifest(run="r", card="c", version=1, kind="ab", seal_root="s"))


def test_a_cards_run_records_the_schedule_its_boundaries_come_from(tmp_path: Path) -> None:
    from benchcard.card.load import load_card

    project = sequential_ab(tmp_path, fixtures=4, repetitions=9)
    card = load_card(project.root / "cards" / "colour-ab.yaml", project)
    assert card.sequential is not None and card.win is not None
    record = schedule_record(card, card.win.alpha)
    assert record is not None and (record.looks, record.cells) == ([3, 6, 9], [24, 48, 72])
    assert record.futility_level == seq.FUTILITY_BETAS["obrien-fleming"]  # this benchcard's parameters, written down
    manifest = Manifest(run="r", card="c", version=1, kind="ab", seal_root="s", sequential=record)
    assert run_design(manifest) == card_design(card.sequential, card.win.alpha, True)


def test_a_probe_records_its_gate_bound_and_one_run_before_keeps_wilsons(tmp_path: Path) -> None:
    """A sequential probe bounds its mean score exactly since 2026-12-08 (Wilson's erred up to 7.4% on a side at
    α/2 = 2.5%); its run records the bound, and a run (or a seal) from before, which records none, is judged again
    by Wilson's, so that `verdict` finds the looks it took as they were."""
    from benchcard.card.load import load_card
    from benchcard.card.seal import rules_note

    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path)
    card = load_card(project.root / "cards" / "one-word-sentiment.yaml", project)
    record = schedule_record(card, card.gate_alpha)
    assert record is not None and record.gate_bound == "exact"
    manifest = Manifest(run="r", card="c", version=1, kind="probe", seal_root="s", sequential=record)
    assert run_design(manifest).gate_bound == "exact"
    older = msgspec.structs.replace(record, gate_bound=msgspec.UNSET)
    assert run_design(msgspec.structs.replace(manifest, sequential=older)).gate_bound == "wilson"
    assert rules_note(card, project) is None  # sealed today: this benchcard's bound
    old_seal = msgspec.structs.replace(current_rules(False, probe=True), gate_bound=msgspec.UNSET)
    assert old_seal.changed(current_rules(False, probe=True), spending=False) == \
        "a probe's gate bound wilson, this benchcard uses exact"
    # an ab card's record and rules hold no bound: what they write is what they wrote before
    ab_project = sequential_ab(tmp_path / "ab")
    ab = schedule_record(load_card(ab_project.root / "cards" / "colour-ab.yaml", ab_project), 0.05)
    assert ab is not None and ab.gate_bound is msgspec.UNSET
    assert current_rules(True).gate_bound is msgspec.UNSET
