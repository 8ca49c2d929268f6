"""The figures below verdict.json's top level, typed: a figure a verdict lacks reads as None and stays out of
what a wider struct is given, one variant's flat figures read as that variant's, and a figure of the wrong
type is named by its path."""

from __future__ import annotations

import msgspec
import pytest
from msgspec import UNSET

from benchcard.records.verdictfigures import (
    GapFigures,
    MetricFigures,
    SignFlip,
    VariantFigures,
    clause_words,
    given,
    known,
)


def test_known_turns_an_absent_figure_into_none_and_keeps_every_other_value() -> None:
    assert known(UNSET) is None
    assert known(0.0) == 0.0 and known(None) is None and known([0.1, None]) == [0.1, None]


def test_given_lays_out_only_the_figures_a_struct_carries_in_field_order() -> None:
    gap = GapFigures(gap=0.2, ci=None, ci_bootstrap=None, p=0.03, p_signflip=0.02, noise_floor=0.1, se=0.05,
                     se_fixture=0.04, run_var=0.001, df=11.0, lower_one_sided=0.1, upper_one_sided=None, n_fixtures=12,
                     truncated=2)
    laid = given(gap)
    assert list(laid) == [*GapFigures.__struct_fields__[:13], "truncated"]  # p_signflip_draws, bounded_gaps unset
    assert laid["ci"] is None and laid["upper_one_sided"] is None and laid["truncated"] == 2
    assert given(None) == {} and given(VariantFigures()) == {}
    assert list(given(MetricFigures(means={}, p=0.2, gap=0.1))) == ["means", "gap", "p"]


def test_one_variants_flat_figures_are_that_variants_and_several_come_from_by_variant() -> None:
    flat = MetricFigures(means={"baseline": 0.4, "A": 0.6}, gap=0.2)
    assert flat.per_variant("A") == {"A": flat}
    a, b = VariantFigures(gap=0.2), VariantFigures(gap=-0.1)
    several = MetricFigures(means={"baseline": 0.4, "A": 0.6, "B": 0.3}, by_variant={"A": a, "B": b})
    assert several.per_variant("A") == {"A": a, "B": b}


def test_a_figure_of_the_wrong_type_is_named_by_its_path() -> None:
    decoded = msgspec.json.decode(b'{"means": {"A": 0.5}, "ci": [0.1, null], "n_fixtures": 12}', type=MetricFigures)
    assert decoded.ci == [0.1, None] and decoded.n_fixtures == 12 and decoded.gap is UNSET
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int`, got `float` - at `\$.n_fixtures`"):
        msgspec.json.decode(b'{"means": {}, "n_fixtures": 1.5}', type=MetricFigures)
    with pytest.raises(msgspec.ValidationError, match=r"Object missing required field `means`"):
        msgspec.json.decode(b'{"gap": 0.1}', type=MetricFigures)
    assert msgspec.json.decode(b'{"draws": "exact"}', type=SignFlip) == SignFlip("exact")
    with pytest.raises(msgspec.ValidationError, match=r"at `\$.draws`"):
        msgspec.json.decode(b'{"draws": 1.5}', type=SignFlip)


def test_a_ledger_rows_clause_reads_as_the_verdict_wrote_it() -> None:
    """One wording of a clause: a page showing a ledger row's clause (which has no text) says what verdict.json's
    `text` says, margin included, to the same precision; a row's holds clause has no value to name."""
    from benchcard.card.model import Clause
    from benchcard.records.ledgerrow import ClauseOutcome

    for card_clause in (Clause("unsupported_values", "not_rises", margin=0.05),
                        Clause("acc", "not_falls", fixture="ex-01", margin=0.125), Clause("f1", "rises")):
        row = ClauseOutcome("A", card_clause.metric, card_clause.test, card_clause.fixture, card_clause.margin, True)
        assert clause_words(row.metric, row.test, row.fixture, row.margin) == card_clause.text
    assert clause_words("tokens", "not_rises", None, 0.05) == "tokens does not rise (margin 0.05)"  # not 0.050
    assert clause_words("abstains", "holds", "ex-06", None) == "abstains holds on ex-06"
