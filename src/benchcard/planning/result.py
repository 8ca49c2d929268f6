"""`benchcard plan`'s result, typed once: built by forecast.py (with power.py's figures), worded by _report.py
and printed by `--json` as `Plan.fields()` (both through `_report.PlanReport`).

Fields are declared in the order `--json` has always printed them; a field only some plans or clauses have is
UNSET when absent and then not printed. Figures are strict JSON values: an infinite or undefined one (no gap
wins, a guard that can never hold) is None, printed null.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.hashing import strict
from benchcard.project import Price
from benchcard.run.judging import JudgeEstimate

#: A figure as computed: an int where it came as one (a price of 3 prints `3`, not `3.0`).
Number = int | float


class NormalModel(msgspec.Struct, frozen=True, tag_field="model", tag="normal"):
    """A normal model of the gap, fitted to a pilot: its variance components."""

    fixture: Number
    run: Number
    cell: Number


class RatesModel(msgspec.Struct, frozen=True, tag_field="model", tag="rates"):
    """Scores in steps of 1/levels around a baseline rate, with the spreads `plan`'s options declare."""

    levels: int
    baseline_rate: Number
    fixture_sd: Number
    run_sd: Number
    effect_sd: Number


ModelDescription = NormalModel | RatesModel


class ClausePlan(msgspec.Struct, frozen=True, kw_only=True):
    """One clause of the win rule for one variant: what it would take to hold in 80% of simulated runs.

    A `holds` clause has the pilot's k of n and the chance all repetitions hold; a gap clause its simulated size,
    the model (from a pilot), then a `rises`/`falls` clause's needed gap (its range, its power curve for a rates
    model) or a guard's limit; `never` says why a design can never win, `note` why a clause has no figures."""

    metric: str
    test: str
    fixture: str | None
    margin: Number | None
    variant: str
    k: int | UnsetType = UNSET
    n: int | UnsetType = UNSET
    rate: Number | UnsetType | None = UNSET
    chance_all_hold: Number | UnsetType | None = UNSET
    chance_all_hold_low: Number | UnsetType | None = UNSET
    fixtures: int | UnsetType = UNSET
    repetitions: int | UnsetType = UNSET
    simulated_runs: int | UnsetType = UNSET
    note: str | UnsetType = UNSET
    model: ModelDescription | UnsetType = UNSET
    pilot_df: Number | UnsetType | None = UNSET
    power_at: list[list[Number | None]] | UnsetType = UNSET  # [true gap, power]
    needed_gap: Number | UnsetType | None = UNSET
    needed_gap_range: list[Number | None] | UnsetType = UNSET
    passes_if_true_gap_below: Number | UnsetType | None = UNSET
    passes_if_true_gap_above: Number | UnsetType | None = UNSET
    never: str | UnsetType | None = UNSET


class PilotPlan(msgspec.Struct, frozen=True, kw_only=True):
    """The rule's power from a pilot run's scores, and the cost per call it observed."""

    run: str
    version: int
    power: Number
    method: str
    assumption: str
    """What the simulation assumes of the pilot (power.PILOT_ASSUMPTION), printed as the plan's `assumes:` line."""
    clauses: list[ClausePlan]
    notes: list[str]
    observed_cost_per_call: Number | UnsetType | None = UNSET
    expected_cost: Number | UnsetType | None = UNSET
    observed_output_tokens_per_call: Number | UnsetType | None = UNSET


class AssumedPlan(msgspec.Struct, frozen=True, kw_only=True):
    """The first clause's power from declared assumptions (no pilot)."""

    power: Number
    method: str
    model: ModelDescription
    fixtures: int
    repetitions: int
    clauses: list[ClausePlan]
    notes: list[str]


class Expected(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential card's simulated runs at one true gap: the calls and cost they are expected to spend (the
    fixed design's times `share`), where they stop (the share of runs at each look), and how often they win or
    give any result, beside the fixed design's wins on the same runs."""

    true_gap: Number
    calls: Number
    share: Number
    max_cost: Number | None
    expected_cost: Number | None
    stops: list[Number]
    wins: Number
    results: Number
    fixed_wins: Number


class SequentialPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential card's looks (stats/sequential.py): the schedule, its boundaries (z per look, None where
    nothing can be decided; the two-sided nominal level the rule is decided at), and the expected calls and cost
    under no effect and at the fixed design's 80% gap, beside the fixed design's calls and cost."""

    looks: list[int]
    spending: str
    futility: bool
    futility_effect: Number | None
    alpha: Number
    boundaries: list[Number | None]
    nominal: list[Number]
    fixed_calls: int
    fixed_max_cost: Number | None
    fixed_expected_cost: Number | None
    simulated_runs: int
    method: str
    expected: list[Expected]
    notes: list[str]
    gamma: Number | UnsetType = UNSET  # Hwang–Shih–DeCani's γ (`spending: hsd` only)


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """What a run of a card will take (calls, tokens, cost ceiling) and, from a pilot or from assumptions,
    what it can hope to detect."""

    card: str
    version: int
    kind: str
    rig: str
    model: str
    variants: int
    fixtures: int
    repetitions: int
    calls: int
    input_tokens: int
    input_tokens_method: str
    max_output_tokens: int
    max_tokens: int
    price: Price | None
    max_cost: Number | None
    input_cost: Number | None
    pilot: PilotPlan | None = None
    assumed: AssumedPlan | None = None
    judge: JudgeEstimate | None = None  # a judge card's judging
    warnings: list[str] = []
    sequential: SequentialPlan | UnsetType = UNSET  # a sequential card's expected calls and cost
    # without a pilot or assumptions (whose notes say it), an ab card's best power at the planned size: "the most this
    # design can show: …" (power.reach_note), so that a plan of a design says whether any effect can win there
    reach: str | UnsetType = UNSET
    # the card's version is sealed but no longer matches its seal (a card, fixture or key file changed after `seal`):
    # the problem as `check` names it (`check.sealed_state`), which `run` refuses; the plan is of the card as edited
    seal_broken: str | UnsetType = UNSET

    def fields(self) -> dict[str, Any]:
        """The plan as `--json` prints it."""
        data: dict[str, Any] = msgspec.to_builtins(self)
        if self.price is not None:  # as printed before the project's Price served here: no batch_discount
            data["price"] = {"input": self.price.input, "output": self.price.output, "unit": Price.unit}
            if self.price.cached_input is not None:  # the price of an input token read from the prompt cache
                data["price"]["cached_input"] = self.price.cached_input
        return data


def strict_plan(plan: Plan) -> Plan:
    """The plan with every figure strict JSON (NaN and ±inf None, numpy scalars plain numbers)."""
    return msgspec.convert(strict(msgspec.to_builtins(plan, enc_hook=_scalar)), Plan)


def _scalar(obj: Any) -> Any:
    item = getattr(obj, "item", None)  # a numpy scalar
    if callable(item):
        return item()
    raise TypeError(f"not JSON data: {type(obj).__name__}")
