"""`benchcard plan` as the terminal shows it: the cost lines, then the power of the rule from a pilot or from
declared assumptions (forecast.py builds the data; this only words it), and the plan as the command line reports
it (`PlanReport`: its JSON and its lines, as every command's result)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msgspec import UnsetType

from benchcard._util.numfmt import dollars, fixed
from benchcard.planning.result import (
    AssumedPlan,
    ClausePlan,
    ModelDescription,
    NormalModel,
    PilotPlan,
    Plan,
    SequentialPlan,
)
from benchcard.project import Price
from benchcard.run.judging import judge_plan_lines


@dataclass(frozen=True)
class PlanReport:
    """`benchcard plan`'s result as the command line prints it: `--json` the plan's fields, else its lines."""

    plan: Plan

    def to_json(self) -> dict[str, Any]:
        return self.plan.fields()

    def lines(self) -> list[str]:
        return plan_lines(self.plan)

    def told(self) -> list[str]:
        """What the command says on stderr, with the plan or its JSON: that the card planned is not the version
        sealed (a card, fixture or key file changed after `seal`), in `check`'s words and with its remedy."""
        p = self.plan
        if isinstance(p.seal_broken, UnsetType):
            return []
        return [f"warning: {p.card} v{p.version} is planned as its files are now, not as sealed: {p.seal_broken}"]


def _f(x: float | None, digits: int = 3) -> str:
    """`plan`'s figures: `numfmt.fixed` with the ASCII minus `plan` has always printed."""
    return fixed(x, digits, minus="-")


def model_line(model: ModelDescription, source: str) -> str:
    """What the simulation drew its runs from, in the words of `plan`'s options."""
    if isinstance(model, NormalModel):
        return (f"simulated as a normal model of the gap {source}: variance components fixture "
                f"{model.fixture:.4g}, run {model.run:.4g}, cell {model.cell:.4g}")
    k = model.levels
    scores = ("pass/fail scores" if k == 1 else f"scores in steps of 1/{k}" if source == "as declared" else
              f"scores as spread within a fixture as the pilot's (each cell drawn as the mean of {k} pass/fail trials)")
    drawn = ("" if source == "as declared" else "; the pilot's estimates: each simulated run draws its own rate, "
             "fixture sd and run sd around them (assumes:), so a pilot whose fixtures looked alike plans for more "
             "spread")
    return (f"simulated as {scores} {source}: baseline rate {model.baseline_rate:.3f}, fixture sd "
            f"{model.fixture_sd:.3f}, run sd {model.run_sd:.3f}, effect sd {model.effect_sd:.3f}{drawn}")


def clause_lines(c: ClausePlan, repetitions: int, source: str) -> list[str]:
    """One clause's figures (and, indented under it, the model it was simulated from and its power curve)."""
    name = f"{c.metric} {c.test}" + (f" on {c.fixture}" if c.fixture else "")
    head = f"    {name} ({c.variant})"
    if not isinstance(c.note, UnsetType):
        return [f"{head}: {c.note}"]
    if c.test == "holds":
        return [f"{head}: pilot {c.k} of {c.n} → all {repetitions} repetitions hold with probability ≈ "
                f"{_f(_set(c.chance_all_hold), 2)} at the pilot's rate, {_f(_set(c.chance_all_hold_low), 2)} at "
                "its Wilson lower bound"]
    if c.never:
        return [f"{head}: {c.never}"]
    size = f"{c.fixtures} fixtures × {c.repetitions} repetitions"
    if c.needed_gap is None:  # inf, made null by strict JSON
        out = [f"{head}: {size} → no true gap the scores allow wins in 80% of simulated runs"]
    elif not isinstance(c.needed_gap, UnsetType):
        line = f"{head}: {size} → a true gap of {_f(c.needed_gap)} holds in 80% of simulated runs"
        if not isinstance(c.needed_gap_range, UnsetType):
            lo, hi = c.needed_gap_range
            line += f" (pilot uncertainty: {_f(lo)} to {'no gap at all' if hi is None else _f(hi)})"
        out = [line]
    else:
        side, limit = (("below", c.passes_if_true_gap_below) if c.test == "not_rises"
                       else ("above", c.passes_if_true_gap_above))
        out = [f"{head}: {size} → the guard (margin {c.margin:g}) holds in 80% of simulated runs only if the "
               f"true gap is {side} {_f(_set(limit))}"]
    if not isinstance(c.model, UnsetType):
        out.append(f"      {model_line(c.model, source)}")
    if c.power_at:
        out.append("      power at a true gap of " + ", ".join(f"{g:.2f}: {_f(p, 2)}" for g, p in c.power_at))
    return out


def _set(x: float | UnsetType | None) -> float | None:
    return None if isinstance(x, UnsetType) else x


def plan_lines(p: Plan) -> list[str]:
    """The plan as the terminal shows it."""
    lines = [f"{p.card} v{p.version} ({p.kind}) · {p.rig}"]
    shape = (f"{p.variants} variants × {p.fixtures} fixtures × {p.repetitions} repetitions"
             if p.kind == "ab" else f"{p.repetitions} repetitions")
    lines.append(f"calls           {p.calls:,}  ({shape})")
    lines.append(f"input tokens    ~{p.input_tokens:,}  (estimate: {p.input_tokens_method})")
    lines.append(f"output tokens   ≤ {p.max_output_tokens:,}  (max_tokens {p.max_tokens:,} × "
                 f"{p.calls:,} calls)")
    if p.price is None:
        lines.append(f"cost            no price configured for {p.model} (add prices: {{{p.model}: "
                     "{input: USD, output: USD}} per million tokens to benchcard.yaml)")
    else:
        pr = p.price
        lines.append(f"cost            ≤ {dollars(p.max_cost)}  (input ~{dollars(p.input_cost)}; at ${pr.input:g} / "
                     f"${pr.output:g} per million input / output tokens, every call using all its max_tokens)")
        if pr.input > 0:
            lines.append(cached_input_line(p.model, pr))
    lines += judge_plan_lines(p.judge)
    lines += [f"warning: {w}" for w in p.warnings]
    if isinstance(p.reach, str):
        lines.append(f"note: {p.reach}")
    if p.pilot:
        lines += _pilot_lines(p.pilot, p.repetitions)
    elif p.assumed:
        lines += _assumed_lines(p.assumed)
    if not isinstance(p.sequential, UnsetType):
        lines += sequential_lines(p.sequential)
    return lines


def cached_input_line(model: str, price: Price) -> str:
    """What a run will price input tokens the vendor reads from its prompt cache at: the model's `cached_input`,
    or the full input price, its cost then an upper bound (docs/prices.md). The ceiling above prices all in full."""
    if price.cached_input is None:
        return (f"cached input    at the full input price: prices.{model} gives no cached_input, so a run whose "
                "replies say they read input from the prompt cache reports its cost as an upper bound (≤)")
    return f"cached input    ${price.cached_input:g} per million input tokens read from the prompt cache"


def sequential_lines(s: SequentialPlan) -> list[str]:
    """A sequential card's looks and what they are expected to spend, beside the fixed design."""
    at = ", ".join(str(r) for r in s.looks)
    futile = (f"stops for futility once a gap of {s.futility_effect:g} is ruled out" if s.futility
              else "never stops for futility")
    lines = [f"sequential: {len(s.looks)} looks, after repetitions {at} of {s.looks[-1]}; α {s.alpha:g} spent "
             f"{s.spending}{'' if isinstance(s.gamma, UnsetType) else f' (γ = {s.gamma:g})'}; {futile}",
             "  nominal level at each look: " + ", ".join(f"{a:.2g}" for a in s.nominal),
             f"  fixed design               {s.fixed_calls:,} calls{_cost(s.fixed_max_cost, s.fixed_expected_cost)}"]
    for e in s.expected:
        name = "under no effect" if e.true_gap == 0 else f"at a true gap of {e.true_gap:.3f}"
        said = (f"a result in {e.results:.1%} of runs" if e.true_gap == 0
                else f"wins {e.wins:.0%} of runs (the fixed design {e.fixed_wins:.0%})")
        lines.append(f"  {name:<26} expected {e.calls:,.0f} calls ({e.share:.0%} of the fixed design's)"
                     f"{_cost(e.max_cost, e.expected_cost)}; {said}")
    for note in s.notes:
        lines.append(f"  note: {note}")
    if s.expected:
        lines.append(f"  ({s.method})")
    return lines


def _cost(ceiling: float | None, expected: float | None) -> str:
    if ceiling is None:
        return ""
    text = f", cost ≤ {dollars(ceiling)}"
    return text + (f" (about {dollars(expected)} at the pilot's cost per call)" if expected is not None else "")


def _pilot_lines(pilot: PilotPlan, repetitions: int) -> list[str]:
    """What the pilot run measured: its cost per call, its notes, and the rule's power fitted to it."""
    lines = [f"pilot {pilot.run}:"]
    if not isinstance(pilot.expected_cost, UnsetType):
        lines.append(f"  observed {dollars(pilot.observed_cost_per_call, 5)} per call → about "
                     f"{dollars(pilot.expected_cost)} for this run")
    for note in pilot.notes:
        lines.append(f"  note: {note}")
    if pilot.clauses:
        lines.append(f"  assumes: {pilot.assumption}")
        lines.append(f"  power of the rule itself, {int(pilot.power * 100)}% ({pilot.method}):")
    for c in pilot.clauses:
        lines += clause_lines(c, repetitions, "fitted to the pilot")
    return lines


def _assumed_lines(assumed: AssumedPlan) -> list[str]:
    """The power resting on declared assumptions, when there is no pilot."""
    lines = ["assumed, no pilot: these figures rest on the declared assumptions below, not on measured "
             "scores; a pilot run (--from RUN) would measure them",
             f"  {model_line(assumed.model, 'as declared')}"]
    for note in assumed.notes:
        lines.append(f"  note: {note}")
    if assumed.clauses:
        lines.append(f"  power of the rule itself, {int(assumed.power * 100)}% ({assumed.method}):")
    for c in assumed.clauses:
        lines += clause_lines(c, assumed.repetitions, "as declared")
    return lines
