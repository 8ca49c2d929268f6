"""The figures below the top level of `verdict.json`, typed once: each metric's (`MetricFigures`, and per
variant `VariantFigures`), each clause's (`ClauseFigures`), each variant's finding (`VariantFindingFigures`), the
bootstrap and sign-flip settings, the human graders' block and the judge's. `verdictfile.py` declares the file
with them.

Every file benchcard has written reads back to the same bytes: fields are declared in the order the writers
(`verdict/findings.py`, `winrule.py`, `_agreement.py`, `judgefigures.py`) have always put them, a figure only
some verdicts carry (an error, the truncation bounds, the pairing, a holds clause's counts) is `UNSET` and so
absent when a file lacks it, and a figure that could not be computed is null, as written.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

#: A figure as the verdict wrote it: JSON keeps 3 and 3.0 apart, and so must a file or a row that is hashed.
Number = int | float
#: An interval as written: [low, high], either end null when unknown; null when there is none.
Interval = list[Number | None]
Maybe = Number | UnsetType | None
T = TypeVar("T")


def known(value: T | UnsetType) -> T | None:
    """A figure a verdict may not carry, as None when it does not (what the readers show as n/a)."""
    return None if isinstance(value, UnsetType) else value


def measured_bootstrap(pair: Interval | UnsetType | None) -> Interval | None:
    """A gap's bootstrap interval as it is shown: None when it has none, or one of no width. Resampling fixtures
    whose differences are all equal (or one fixture) gives the same mean every time, which measures nothing: the
    verdict writes null there since 2026-12-07, and a file or ledger row given before, which wrote `[x, x]`, is
    shown the same way (never a zero-width interval beside the calibrated one)."""
    if not isinstance(pair, list) or len(pair) != 2 or pair[0] is None or pair[1] is None:
        return None if not isinstance(pair, list) else pair
    return pair if pair[0] < pair[1] else None


def given(figures: msgspec.Struct | None) -> dict[str, Any]:
    """The figures a struct carries (its `UNSET` ones left out), to lay into a wider struct's fields: how a gap's
    figures become a clause's, a metric's or a variant's, which the file has always written flat."""
    if figures is None:
        return {}
    return {name: value for name in figures.__struct_fields__
            if (value := getattr(figures, name)) is not UNSET}


class GapFigures(msgspec.Struct, frozen=True, kw_only=True):
    """One gap as the writer computes it (`winrule.gap_figures`): the calibrated interval of the observed gap,
    its parts, and the bounds with truncated cells. Written flat into a clause, a metric or a variant; a figure
    that is not finite (no run-to-run spread from one repetition) is written null."""

    gap: float
    ci: list[float] | None  # None when every fixture moved alike: no t interval
    ci_bootstrap: list[float] | None
    p: float
    p_signflip: float
    noise_floor: float
    se: float
    se_fixture: float
    run_var: float
    df: float
    lower_one_sided: float | None
    upper_one_sided: float | None
    n_fixtures: int
    p_signflip_draws: int | UnsetType = UNSET
    truncated: int | UnsetType = UNSET
    bounded_gaps: list[float] | UnsetType = UNSET


class HoldsFigures(msgspec.Struct, frozen=True, kw_only=True):
    """A `holds` clause's counts as the writer computes them (`winrule.holds_clause`); only the first three when
    the metric or the fixture has no scored value."""

    k: int
    n: int
    planned: int
    rate: float | UnsetType | None = UNSET
    wilson: list[float] | UnsetType = UNSET
    baseline_k: int | UnsetType = UNSET
    baseline_n: int | UnsetType = UNSET


class VariantFigures(msgspec.Struct, frozen=True, kw_only=True):
    """One variant's gap on one metric against the baseline (`findings._gap_figures` + `_pairing`): a metric's
    `by_variant` entry when a card has several variants. Verdicts given before 2026-12-01 lack the detail from
    `se` to `means` here."""

    gap: Maybe = UNSET
    ci: Interval | UnsetType | None = UNSET
    ci_bootstrap: Interval | UnsetType | None = UNSET
    p: Maybe = UNSET
    error: str | UnsetType | None = UNSET  # why there is no gap (the scorer gave no such metric)
    p_signflip: Maybe = UNSET
    noise_floor: Maybe = UNSET
    se: Maybe = UNSET
    se_fixture: Maybe = UNSET
    run_var: Maybe = UNSET
    df: Maybe = UNSET
    lower_one_sided: Maybe = UNSET
    upper_one_sided: Maybe = UNSET
    n_fixtures: int | UnsetType = UNSET
    p_signflip_draws: int | UnsetType = UNSET  # draws taken when the sign-flip stopped early
    truncated: int | UnsetType = UNSET
    bounded_gaps: Interval | UnsetType = UNSET
    paired: int | UnsetType = UNSET
    of: int | UnsetType = UNSET
    left_out: dict[str, str] | UnsetType = UNSET  # fixture → why it is not paired
    means: dict[str, Number | None] | UnsetType = UNSET  # both arms over the paired fixtures
    tost_p: Maybe = UNSET


class MetricFigures(msgspec.Struct, frozen=True, kw_only=True):
    """One metric (or a metric on one fixture): the means of every arm, the baseline's spread, and the gap's
    figures, flat for one variant or `by_variant` for several."""

    means: dict[str, Number | None]
    baseline_noise_floor: Maybe = UNSET
    baseline_run_means: list[Number | None] | UnsetType | None = UNSET
    noise_floor: Maybe = UNSET
    by_variant: dict[str, VariantFigures] | UnsetType = UNSET
    gap: Maybe = UNSET
    ci: Interval | UnsetType | None = UNSET
    ci_bootstrap: Interval | UnsetType | None = UNSET
    p: Maybe = UNSET
    error: str | UnsetType | None = UNSET
    p_signflip: Maybe = UNSET
    se: Maybe = UNSET
    se_fixture: Maybe = UNSET
    run_var: Maybe = UNSET
    df: Maybe = UNSET
    lower_one_sided: Maybe = UNSET
    upper_one_sided: Maybe = UNSET
    n_fixtures: int | UnsetType = UNSET
    p_signflip_draws: int | UnsetType = UNSET
    truncated: int | UnsetType = UNSET
    bounded_gaps: Interval | UnsetType = UNSET
    paired: int | UnsetType = UNSET
    of: int | UnsetType = UNSET
    left_out: dict[str, str] | UnsetType = UNSET
    tost_p: Maybe = UNSET

    def per_variant(self, first: str) -> dict[str, VariantFigures | MetricFigures]:
        """Each variant's figures: `by_variant`, or the flat figures as `first`'s when there is one variant."""
        if isinstance(self.by_variant, UnsetType):
            return {first: self}
        return dict(self.by_variant)


#: A win rule's tests in words.
TEST_WORDS = {"rises": "rises", "falls": "falls", "not_rises": "does not rise", "not_falls": "does not fall",
              "holds": "holds"}


def clause_words(metric: str, test: str, fixture: str | None, margin: float | None,
                 equals: float | None = None) -> str:
    """A clause in words, as verdict.json's `text` holds it and the pages show it (a ledger row's clause has no
    text and no `equals`: its holds clause is said without the value)."""
    if test == "holds" and equals is not None:
        return f"{metric} = {equals:g} on {fixture} in every repetition"
    text = f"{metric or '?'} {TEST_WORDS.get(test, test) or '?'}"
    if fixture:
        text += f" on {fixture}"
    if margin is not None:
        text += f" (margin {margin:g})"
    return text


class ClauseFigures(msgspec.Struct, frozen=True, kw_only=True):
    """One clause for one variant (`winrule.ClauseResult` as written): a gap clause's figures, or a `holds`
    clause's counts and Wilson interval; `why` says it in words."""

    variant: str
    metric: str
    test: str
    fixture: str | None
    margin: Number | None
    text: str
    holds: bool
    gap: Maybe = UNSET
    ci: Interval | UnsetType | None = UNSET
    ci_bootstrap: Interval | UnsetType | None = UNSET
    p: Maybe = UNSET
    p_signflip: Maybe = UNSET
    noise_floor: Maybe = UNSET
    se: Maybe = UNSET
    se_fixture: Maybe = UNSET
    run_var: Maybe = UNSET
    df: Maybe = UNSET
    lower_one_sided: Maybe = UNSET
    upper_one_sided: Maybe = UNSET
    n_fixtures: int | UnsetType = UNSET
    p_signflip_draws: int | UnsetType = UNSET
    truncated: int | UnsetType = UNSET
    bounded_gaps: Interval | UnsetType = UNSET
    k: int | UnsetType = UNSET  # a holds clause: repetitions where the condition held
    n: int | UnsetType = UNSET
    planned: int | UnsetType = UNSET
    rate: Maybe = UNSET
    wilson: Interval | UnsetType = UNSET
    baseline_k: int | UnsetType = UNSET
    baseline_n: int | UnsetType = UNSET
    why: str
    equals: Number | str | bool | UnsetType | None = UNSET  # a holds clause's condition
    broken: bool | UnsetType = UNSET  # a guard significantly broken


class Equivalence(msgspec.Struct, frozen=True):
    """The TOST of the first clause's metric against ±margin, at level 1 − 2α (`winrule.finding_of`)."""

    margin: Number | None
    tost_p: Number | None
    ci: Interval | None
    level: Number


class VariantFindingFigures(msgspec.Struct, frozen=True, kw_only=True):
    """One variant against the baseline: its finding, why, its equivalence test and its clauses (verdict.json's
    `comparisons`, the on-disk name; "comparison" in code is `benchcard compare`'s)."""

    variant: str
    finding: str
    outcome: str
    why: str
    equivalence: Equivalence
    clauses: list[ClauseFigures]


class Bootstrap(msgspec.Struct, frozen=True, kw_only=True):
    """The cluster bootstrap's settings: resamples, the seed (from the seal root) and the method."""

    resamples: int
    seed: int
    method: str | UnsetType = UNSET


class SignFlip(msgspec.Struct, frozen=True):
    """The sign-flip's draws: "exact" (every sign pattern) or a count of seeded draws."""

    draws: int | str


class Disagreement(msgspec.Struct, frozen=True, kw_only=True):
    """A graded output where the human and the scorer differ (or any graded output with a note, `agrees`)."""

    sheet: str
    row: int | str
    cell: str
    fixture: str
    variant: str
    repetition: int
    auto_score: Number | None
    human_grade: str | Number | None
    note: str
    agrees: bool | UnsetType = UNSET


class SheetAgreement(msgspec.Struct, frozen=True):
    graded: int
    agreement: Number | None


class HumanGrades(msgspec.Struct, frozen=True, kw_only=True):
    """Blind human grades against the scorer (`verdict/_agreement.py`; the grades: `grading/sheets.py`,
    `benchcard grade`)."""

    graded: int
    agreement: Number | None
    kappa: Number | None
    pass_rule: str | UnsetType = UNSET
    disagreements: list[Disagreement]
    notes: list[Disagreement] | UnsetType = UNSET
    sheets: dict[str, SheetAgreement] | UnsetType = UNSET


class SelfAgreement(msgspec.Struct, frozen=True, kw_only=True):
    """The judge against itself: Krippendorff's alpha over outputs judged more than once, by metric."""

    alpha: Number | None
    level: str
    outputs: int
    exact: Number | None
    by_metric: dict[str, Number | None]


class JudgeNoise(msgspec.Struct, frozen=True):
    sd: Number | None
    share_of_gap_variance: dict[str, Number | None] | None


class Verbosity(msgspec.Struct, frozen=True):
    spearman_length_score: Number | None
    mean_chars: dict[str, Number | None]


class HumansSeen(msgspec.Struct, frozen=True):
    """The human grades' headline, repeated beside the judge's figures."""

    graded: int | None
    kappa: Number | None
    agreement: Number | None


class JudgeBlock(msgspec.Struct, frozen=True, kw_only=True):
    """A judge card's judge (`verdict/judgefigures.py`): its rig, how often it judged, what it cost, its
    agreement with itself against the card's floor, its noise and its taste for length."""

    rig: str | None
    per_output: int
    judgements: int | None
    counts: dict[str, int] | None
    cost: Number | None
    tokens: dict[str, int] | None
    self_agreement: SelfAgreement
    floor: Number | None
    floor_met: bool | None
    noise: JudgeNoise
    verbosity: Verbosity
    same_model_as_run: bool
    redacted: int
    humans: HumansSeen | UnsetType = UNSET
    # true when `cost` is an upper bound (the judge's cached input priced in full, docs/prices.md); absent otherwise
    cost_upper_bound: bool | UnsetType = UNSET


class RuleClause(msgspec.Struct, frozen=True, kw_only=True):
    """One clause of a comparison's win rule as its verdict.json records it (a fixture or margin only when set)."""

    metric: str
    test: str
    fixture: str | UnsetType = UNSET
    margin: Number | UnsetType = UNSET


class CompareRule(msgspec.Struct, frozen=True, kw_only=True):
    """The win rule a `benchcard compare` was judged by (`--win` clauses or `--rule FILE`), in its verdict.json:
    nothing sealed it, so the file says what it was."""

    all: list[RuleClause]
    alpha: Number
    equivalence_margin: Number | None
    allow_failed: int | None
    ranges: dict[str, list[Number]] | UnsetType = UNSET  # metrics' declared [lowest, highest] (compare --range)
