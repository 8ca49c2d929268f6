"""The power half of `benchcard plan`: one clause's figures from a simulated model, a pilot's or a declared one.

Both ways of planning go through here, so a plan from assumptions and a plan from a pilot say the same thing
about the same world: the smallest true gap at which the verdict's own rule wins in 80% of simulated runs
(simulate.py), the power at a few gaps, and for a guard the true gap below which it holds 80% of the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import msgspec
from msgspec import UNSET, UnsetType

from benchcard.errors import PlanError
from benchcard.planning.result import ClausePlan, ModelDescription, NormalModel, RatesModel
from benchcard.stats import reach, simulate
from benchcard.stats.simulate import Components, Model, Rates

POWER = simulate.POWER
SEED = 20261201  # the simulations are seeded: the same plan always prints the same figures
TOL = 0.01
"""The needed gap to within TOL × ½ (0.005 on a rate's scale: its Monte Carlo error is about as large)."""
RANGE_DRAWS = simulate.DRAWS // 2
PILOT_ASSUMPTION = (
    "the pilot's fixtures are a fair sample of those the run will have: the baseline rate is taken one standard "
    "error towards the rate where both arms are noisiest when the gap is harder to show there, and each "
    "simulated run draws its own "
    "rate around it and its fixture spread from what the pilot's fixture means leave uncertain (a scaled inverse "
    "χ² on fixtures − 1 degrees of freedom), and its run term from both arms' run-to-run spread (on 2 × "
    "(repetitions − 1)) whether the pilot shows one or not: none in a share of runs equal to its F test's p, "
    "as large as so few repetitions leave possible in the rest (a run term the pilot cannot show is planned "
    "for: where there is none, the gap planned is larger than needed); an effect spread the pilot shows is taken "
    "as measured; scores outside [0, 1] are simulated at the pilot's own variance components, their "
    "uncertainty shown as the range only")
"""The assumption a plan from a pilot rests on, as `plan` prints it (docs/statistics.md, "plan keeps its word")."""
RATE_SE = 1.0
"""How far (standard errors of the pilot's rate) a plan moves the baseline rate towards the noisiest one
(hardest_rate)."""
CURVE = (0.05, 0.10, 0.15, 0.20, 0.30)
"""True gaps (on the rate's scale) at which a `Rates` plan also prints the rule's power."""


@dataclass(frozen=True)
class Assumptions:
    """A plan without a pilot: the first clause's score declared rather than measured (docs/statistics.md)."""

    baseline_rate: float
    fixture_sd: float = 0.0
    run_sd: float = 0.0
    effect_sd: float = 0.0
    levels: int = 1

    def model(self) -> Rates:
        return Rates(rate=self.baseline_rate, fixture_sd=self.fixture_sd, run_sd=self.run_sd,
                     effect_sd=self.effect_sd, levels=self.levels)


def assumptions(baseline_rate: float | None = None, fixture_sd: float | None = None, run_sd: float | None = None,
                effect_sd: float | None = None, levels: int | None = None) -> Assumptions | None:
    """The declared assumptions, checked (one line naming the option when a value is out of range); None when
    none was given."""
    given = {"--fixture-sd": fixture_sd, "--run-sd": run_sd, "--effect-sd": effect_sd, "--levels": levels}
    if baseline_rate is None:
        named = [k for k, v in given.items() if v is not None]
        if named:
            raise PlanError(f"{named[0]} describes the score of a plan without a pilot: give --baseline-rate too "
                            "(the baseline's mean score, between 0 and 1)")
        return None
    if not 0.0 < baseline_rate < 1.0:
        raise PlanError(f"--baseline-rate: expected the baseline's mean score strictly between 0 and 1, "
                        f"got {baseline_rate:g}")
    for name in ("--fixture-sd", "--run-sd", "--effect-sd"):
        value = given[name]
        if value is not None and not (math.isfinite(value) and 0.0 <= value <= 0.5):
            raise PlanError(f"{name}: expected a standard deviation of a rate, from 0 to 0.5, got {value:g}")
    top = math.sqrt(baseline_rate * (1 - baseline_rate))
    if fixture_sd is not None and fixture_sd > top:
        raise PlanError(f"--fixture-sd: rates with mean {baseline_rate:g} spread at most {top:.3f} (every fixture "
                        f"always right or always wrong), got {fixture_sd:g}")
    if levels is not None and not 1 <= levels <= simulate.MAX_LEVELS:
        raise PlanError(f"--levels: expected scores in steps of 1/K with K from 1 (pass/fail) to "
                        f"{simulate.MAX_LEVELS}, got {levels}")
    return Assumptions(baseline_rate, fixture_sd or 0.0, run_sd or 0.0, effect_sd or 0.0, levels or 1)


def simulated_size(fixtures: int | None, repetitions: int | None, card_fixtures: int,
                   card_repetitions: int) -> tuple[int, int]:
    """The simulated run's size: the card's, or another one being considered."""
    if fixtures is not None and fixtures < 2:
        raise PlanError(f"--fixtures: expected at least 2 fixtures (a paired gap needs two), got {fixtures}")
    if repetitions is not None and repetitions < 1:
        raise PlanError(f"--repetitions: expected at least 1 repetition, got {repetitions}")
    return fixtures or card_fixtures, repetitions or card_repetitions


def bounded(size: tuple[int, int]) -> tuple[tuple[int, int], str | None]:
    """The size a plan's simulations draw: the design's own, or past stats/reach's bound (more than 200 fixtures
    or 10 repetitions) that cut, with the note saying so, as `check` and `seal` judge a large design: more of
    either only narrows the gap a design can detect, so the cut's figures are what the whole design reaches at
    the least, without drawing thousands of runs of every fixture of it."""
    cut = (min(size[0], reach.BOUND_FIXTURES), min(size[1], reach.BOUND_REPETITIONS))
    if cut == size:
        return size, None
    return cut, (f"simulated on a cut of the design, {cut[0]:,} fixtures × {cut[1]:,} repetitions of its "
                 f"{size[0]:,} × {size[1]:,}: more of either only narrows the gap it can detect, so the figures are "
                 "what the whole design reaches at the least")


def holm_level(alpha: float, variants: int, notes: list[str]) -> float:
    """The level one variant's clauses are simulated at: with several variants the verdict takes Holm's step
    across them, so a variant that works beside others that do not must reach α / variants (noted)."""
    if variants <= 1:
        return alpha
    notes.append(f"{variants} variants: each is planned at α/{variants} = {alpha / variants:.4g}, Holm's first "
                 "step across variants (the verdict's correction when one variant works and the others do not)")
    return alpha / variants


def reach_note(fixtures: int, repetitions: int, variants: int, alpha: float, min_effect: float = 0.0,
               rule: tuple[str | None, float | None] = (None, None)) -> str:
    """The best power the design can reach at all (stats/reach.py), and the smallest change when it is not
    reliable: what `check` and `seal` say of the card's own design, here for the planned one. `rule`: what the
    card's other clauses hold that effect to (`card.design.plain_rule`): a clause it breaks, or a guard's margin."""
    if rule[0] is not None:
        return f"the most this design can show: no win at all, whatever the data: {rule[0]}"
    variants = max(variants, 1)
    effect = f", min_effect {min_effect:g}" if min_effect > 0 else ""
    effect += f", the gap shown within a guard's margin {rule[1]:g}" if rule[1] is not None else ""
    shown = reach.share_text(fixtures, repetitions, variants, alpha, min_effect, rule[1])
    text = (f"the most this design can show: a treatment right every time against a baseline right about half the "
            f"time {shown} ({fixtures} × {repetitions}, {variants} variant(s), α {alpha:g}{effect})")
    if rule[1] is not None and not reach.reliable(fixtures, repetitions, variants, alpha, min_effect, rule[1]) \
            and reach.reliable(fixtures, repetitions, variants, alpha, min_effect):
        return text + f"; no effect can win reliably here ({reach.RELIABLE:.0%} needed): widen the guard's margin"
    if not reach.reliable(fixtures, repetitions, variants, alpha, min_effect, rule[1]):
        change = reach.smallest_change(fixtures, repetitions, variants, alpha, min_effect).text(
            fixtures, repetitions, variants)
        text += f"; no effect can win reliably here ({reach.RELIABLE:.0%} needed): {change}"
    return text


def never(fixtures: int, repetitions: int, alpha: float) -> str | None:
    """Why a design can never show an effect, or None."""
    if repetitions < 2:
        return "one repetition can never win: the run-to-run spread cannot be measured"
    if 2.0 / 2.0 ** fixtures > alpha:
        return (f"{fixtures} fixture(s) can never win: the exact sign-flip p is at least {2 / 2 ** fixtures:.4g} > "
                f"{alpha:.4g}")
    return None


def mirrored(model: Model, test: str) -> Model:
    """A `falls` clause is a `rises` of the scores turned upside down (1 − score): the same spreads, the rate
    mirrored. A normal model is symmetric already."""
    if test in ("falls", "not_falls") and isinstance(model, Rates):
        return replace(model, rate=1.0 - model.rate)
    return model


def describe(model: Model) -> ModelDescription:
    """The model as the plan shows it: what the simulation assumed, in the words of `plan`'s options."""
    if isinstance(model, Components):
        return NormalModel(model.fixture, model.run, model.cell)
    return RatesModel(model.levels, model.rate, model.fixture_sd, model.run_sd, model.effect_sd)


def effect_entry(clause: ClausePlan, model: Model, fixtures: int, repetitions: int, alpha: float,
                 min_effect: float = 0.0, ranged: bool = True) -> ClausePlan:
    """A `rises`/`falls` clause with its figures: the gap 80% power needs, its range over the pilot's
    uncertainty (`ranged`), and for a `Rates` model the power at the gaps of CURVE."""
    why = never(fixtures, repetitions, alpha)
    if why:
        return msgspec.structs.replace(clause, needed_gap=math.inf, needed_gap_range=[math.inf, math.inf],
                                       never=why)
    z = simulate.draws(model, fixtures, repetitions, SEED)
    bracket: tuple[float, float | None] = (0.0, None)
    power_at: list[list[float | None]] | UnsetType = UNSET
    if isinstance(model, Rates):  # the curve first: it brackets the needed gap, which saves half the bisection
        curve = [(g, simulate.effect_power(z, g, alpha, min_effect)) for g in CURVE]
        harder = hardest_rate(model, fixtures, repetitions, _crossing(curve))
        if harder is not model:  # the pilot's rate is within its error of one where the gap is harder to show
            model, z = harder, simulate.draws(harder, fixtures, repetitions, SEED)
            curve = [(g, simulate.effect_power(z, g, alpha, min_effect)) for g in CURVE]
        power_at = [list(point) for point in curve]
        short = [g for g, pw in curve if pw < POWER]
        bracket = (max(short, default=0.0), min((g for g, pw in curve if pw >= POWER), default=None))
    gap = simulate.needed_gap(z, alpha, POWER, min_effect, tol=TOL, bracket=bracket)
    gap_range: list[float | None] | UnsetType = UNSET
    if ranged and isinstance(model, Components):  # the decision is scale-free: the range is a factor
        lo, hi = simulate.pilot_range(model.df)
        gap_range = [gap * lo, gap * hi]
    elif ranged:  # the ends to a coarser grain (half the draws, 0.01 wide): they show a spread, not a figure
        ends = [simulate.needed_gap(simulate.draws(m, fixtures, repetitions, SEED, RANGE_DRAWS), alpha, POWER,
                                    min_effect, tol=0.02) for m in simulate.bounds(model)]
        gap_range = [min(gap, *ends), max(gap, *ends)]
    return msgspec.structs.replace(clause, power_at=power_at, needed_gap=gap, needed_gap_range=gap_range)


def hardest_rate(model: Model, fixtures: int, repetitions: int, gap: float) -> Model:
    """A pilot's `Rates` model at its own rate or at the one RATE_SE standard errors towards (1 − gap)/2, where
    both arms' binomial noise is largest, whichever shows a true gap near the one 80% power needs less well
    (simulate.signal, a smooth stand-in for the rule's power): a pass/fail variant's noise shrinks as its rate
    nears 1, so a pilot whose baseline came out high by chance planned too small a gap. The other way (a rate
    that came out low, where clipping at 1 makes the gap harder) is left to each run's drawn rate: guarding it too
    asked for gaps of power 0.89 on average in the issue's world (docs/statistics.md, "plan keeps its word")."""
    if not isinstance(model, Rates):
        return model
    noisiest = (1 - gap) / 2
    ends = [end for end in simulate.rate_ends(model, RATE_SE) if (end.rate - model.rate) * (noisiest - model.rate) > 0]
    if not ends:
        return model
    end = ends[0]
    if abs(end.rate - model.rate) > abs(noisiest - model.rate):  # not beyond the noisiest rate itself
        end = replace(end, rate=noisiest)
    return end if simulate.signal(end, fixtures, repetitions, gap, SEED) < simulate.signal(
        model, fixtures, repetitions, gap, SEED) else model


def _crossing(curve: list[tuple[float, float]]) -> float:
    """The gap at which a power curve crosses POWER, by linear interpolation between its points (its ends when it
    does not)."""
    below = [(g, pw) for g, pw in curve if pw < POWER]
    above = [(g, pw) for g, pw in curve if pw >= POWER]
    if not above:
        return curve[-1][0]
    if not below:
        return curve[0][0]
    (g0, p0), (g1, p1) = max(below), min(above)
    return g0 + (g1 - g0) * (POWER - p0) / (p1 - p0) if g1 > g0 and p1 > p0 else g1


def guard_entry(clause: ClausePlan, model: Model, fixtures: int, repetitions: int, margin: float, alpha: float,
                test: str) -> ClausePlan:
    """A guard with its figure: the true gap below (not_rises) or above (not_falls) which it holds in 80% of
    simulated runs."""
    if repetitions < 2:
        return msgspec.structs.replace(clause, passes_if_true_gap_below=-math.inf,
                                       never=never(fixtures, repetitions, alpha))
    limit = simulate.guard_limit(simulate.draws(model, fixtures, repetitions, SEED), margin, alpha, POWER)
    return msgspec.structs.replace(clause, passes_if_true_gap_below=limit if test == "not_rises" else None,
                                   passes_if_true_gap_above=-limit if test == "not_falls" else None)
