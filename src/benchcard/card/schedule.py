"""A sequential card's schedule: the one its run records (`schedule_record`), and the one `stats.sequential`
computes boundaries from, built by one function (`design`) from a card (`card_design`: this benchcard's rule
parameters or its seal's) or from a run's record (`run_design`: the parameters its manifest records, an older
one's inferred by `recorded_rules`).

The card's values (`model.Sequential`) and the records (`records.rows.Schedule`, `Rules`) stay plain typed data;
what turns them into boundaries, and what an older manifest that did not write its parameters down ran at, is
decided here, where the card stage already holds the seal's parameters (`seal.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from msgspec import UNSET, UnsetType

from benchcard.card._defaults import DEFAULT_SPENDING
from benchcard.card.model import Card, Sequential
from benchcard.errors import RunError
from benchcard.records.rows import (
    LEGACY_DECIDE_FROM,
    LEGACY_FUTILITY_LEVELS,
    LEGACY_GRID,
    LEGACY_SPENDING,
    IntegrationGrid,
    Look,
    Manifest,
    Rules,
    Schedule,
)

if TYPE_CHECKING:  # numpy and scipy load only where a rule's boundaries are computed
    from benchcard.stats import sequential as seq

_BEYOND = 40.0  # a look's z as the manifest holds it: at most ±40 (verdict/looks.py)


def current_rules(futility: bool, spending: str | None = None, *, probe: bool = False) -> Rules:
    """This benchcard's rule parameters for a card that spends α by `spending` (None: names none, so spends this
    benchcard's default), `futility`: whether the rule may stop for futility (its level is the spending's); a
    `probe`'s with its gate's bound (an ab card's record stays as it was)."""
    from benchcard.stats import sequential as seq

    default, gamma = DEFAULT_SPENDING
    level = seq.FUTILITY_BETAS[spending or default]
    return Rules(futility_level=level if futility else UNSET, decide_from=seq.MIN_REPETITIONS_TO_DECIDE,
                 grid=IntegrationGrid(points=seq.GRID_POINTS, sds=seq.GRID_SDS, cap=seq.Z_CAP),
                 default_spending=default, default_gamma=UNSET if gamma is None else gamma,
                 gate_bound=seq.GATE_BOUNDS[0] if probe else UNSET)


def card_rules(sequential: Sequential, is_ab: bool) -> Rules:
    """This benchcard's rule parameters for an unsealed card's `sequential` block (`is_ab`: futility may stop only
    an ab card)."""
    return current_rules(sequential.futility and is_ab, sequential.spending, probe=not is_ab)


def legacy_rules(futility: bool) -> Rules:
    """The rule parameters of a card sealed before its seal recorded them (2026-12-05T18:41Z), as every benchcard
    until 2026-12-06 judged it: α from 3 repetitions, the 801-point grid, futility level 0.035, obrien-fleming
    where the card names no spending."""
    level = LEGACY_FUTILITY_LEVELS[-1][0]
    return Rules(futility_level=level if futility else UNSET, decide_from=LEGACY_DECIDE_FROM, grid=LEGACY_GRID,
                 default_spending=LEGACY_SPENDING)


def spending_of(sequential: Sequential, rules: Rules) -> tuple[str, float | None]:
    """How `sequential` spends α and its γ: as the card names it, else as `rules` (its seal's, or this
    benchcard's) say a card that names none does."""
    if sequential.spending is None:
        return rules.spending
    return sequential.spending, sequential.gamma


def design(looks: Sequence[int], spending: str, gamma: float | None, *, alpha: float, futility: bool,
           rules: Rules) -> seq.Schedule:
    """The schedule `stats.sequential` computes boundaries from: the looks, the spending (`gamma`: None for the
    default γ), α, whether futility stops it, and the rule parameters `rules` (a futility level only where
    futility may stop the run)."""
    from benchcard.stats import sequential as seq

    level = seq.FUTILITY_BETAS[spending] if isinstance(rules.futility_level, UnsetType) else rules.futility_level
    return seq.Schedule(looks=tuple(looks), spending=spending, futility=futility, alpha=alpha,
                        gamma=seq.DEFAULT_GAMMA if gamma is None else gamma, futility_beta=level,
                        decide_from=rules.decide_from, grid_points=rules.grid.points, grid_sds=rules.grid.sds,
                        z_cap=rules.grid.cap, gate_bound=rules.bound)


def card_design(sequential: Sequential, alpha: float, futility: bool, rules: Rules | None = None, *,
                probe: bool = False) -> seq.Schedule:
    """A card's schedule at `alpha`, with futility only if `futility`, and the rule's parameters `rules` (a
    seal's: `seal.sequential_rules`; None: this benchcard's, a `probe`'s with its gate's bound)."""
    kept = rules if rules is not None else current_rules(futility, sequential.spending, probe=probe)
    spending, gamma = spending_of(sequential, kept)
    return design(sequential.looks, spending, gamma, alpha=alpha, futility=futility, rules=kept)


def schedule_record(card: Card, alpha: float, rules: Rules | None = None) -> Schedule | None:
    """The schedule a sequential card's run records in its manifest with its plan (None: not sequential), with
    every parameter its boundaries depend on: `rules` (a replication's original's, or the seal's), else this
    benchcard's, so that each look, the verdict and a resume compute them from the record alone (`run_design`)."""
    if card.sequential is None:
        return None
    per_rep = len(card.variant_names()) * len(card.fixture_ids())
    looks = card.sequential.looks
    futile = card.sequential.futility and card.is_ab
    kept = rules if rules is not None else current_rules(futile, card.sequential.spending, probe=not card.is_ab)
    spending, gamma = spending_of(card.sequential, kept)
    return Schedule(looks=list(looks), cells=[r * per_rep for r in looks], spending=spending,
                    futility=card.sequential.futility, alpha=alpha, gamma=UNSET if gamma is None else gamma,
                    futility_level=kept.futility_level if futile else UNSET, decide_from=kept.decide_from,
                    grid=kept.grid, gate_bound=UNSET if card.is_ab else kept.bound)


def recorded_rules(schedule: Schedule, kind: str, started_at: str | None = None, looks: Sequence[Look] = ()
                   ) -> Rules:
    """The parameters a run's boundaries were computed with: those its manifest records, else (a manifest
    written before 2026-12-05) those of the benchcard that planned it: the futility level its recorded looks show,
    else the one in force when it started (`LEGACY_FUTILITY_LEVELS`), else this benchcard's."""
    futile = schedule.futility and kind == "ab"
    decide_from = LEGACY_DECIDE_FROM if isinstance(schedule.decide_from, UnsetType) else schedule.decide_from
    grid = LEGACY_GRID if isinstance(schedule.grid, UnsetType) else schedule.grid
    level = schedule.futility_level
    if futile and isinstance(level, UnsetType):
        level = _legacy_level(schedule, Rules(decide_from=decide_from, grid=grid), started_at, looks)
    # the spending the run recorded is its card's, named or not: a replication of it spends the same
    return Rules(futility_level=level if futile else UNSET, decide_from=decide_from, grid=grid,
                 default_spending=schedule.spending, default_gamma=schedule.gamma,
                 gate_bound=UNSET if kind == "ab" else schedule.gate_bound)


def _legacy_level(schedule: Schedule, rules: Rules, started_at: str | None, looks: Sequence[Look]) -> float:
    from benchcard.stats import sequential as seq

    shown = [(lk.look - 1, lk.futility) for lk in looks if lk.futility is not None and lk.look < len(schedule.looks)]
    if shown:
        plan = _design_of(schedule, "ab", rules)
        level = seq.futility_level_shown(plan, shown, [lv for lv, _ in LEGACY_FUTILITY_LEVELS], _BEYOND)
        if level is not None:
            return level
    if started_at is not None:
        return next(lv for lv, until in LEGACY_FUTILITY_LEVELS if started_at < until)
    return LEGACY_FUTILITY_LEVELS[-1][0]


def _design_of(schedule: Schedule, kind: str, rules: Rules) -> seq.Schedule:
    return design(schedule.looks, schedule.spending, None if isinstance(schedule.gamma, UnsetType) else schedule.gamma,
                  alpha=schedule.alpha, futility=schedule.futility and kind == "ab", rules=rules)


def run_design(manifest: Manifest) -> seq.Schedule:
    """A sequential run's schedule as `stats.sequential` computes its boundaries: from the values its manifest
    records (an older one's inferred: `recorded_rules`), never from today's defaults."""
    if manifest.sequential is None:
        raise RunError(f"run {manifest.run}: its manifest records no schedule of looks")
    rules = recorded_rules(manifest.sequential, manifest.kind, manifest.started_at, manifest.looks or [])
    return _design_of(manifest.sequential, manifest.kind, rules)
