"""Text as the fields scorer compares it: every written form of a day is one token, ambiguous dates stay words,
and an answer that reproduces most of the excerpt is a restatement, not an extraction."""

from __future__ import annotations

import re

import pytest

from benchcard.scoring._fieldtext import norm as _norm
from benchcard.scoring._fieldtext import restates, within

from ..helpers_fields import excerpt, score, shapes


# ------------------------------------------------------------------ dates
@pytest.mark.parametrize(
    "written",
    ["3 February 2025", "2025-02-03", "the 3rd day of February 2025", "February 3, 2025", "Feb. 3, 2025",
     "3rd Feb 2025", "the third day of February 2025", "2025/02/03", "03 February, 2025"],
)
def test_dates_compare_equal_across_forms(written: str) -> None:
    assert _norm(written) == "d20250203"
    assert score("excerpt-07", f"Effective date: {written}")["field_recall.effective_date"] == 1.0


def test_date_forms_in_the_fixtures() -> None:
    assert _norm("the 28th of May 2024") == _norm("2024-05-28")
    assert _norm("the twenty-eighth day of May 2024") == _norm("May 28, 2024")
    assert _norm("12th day of September 2024") == _norm("12 September 2024")
    assert _norm("31 February 2024") == "31 february 2024"  # not a date: left as words
    assert _norm("03/02/2025") == "03 02 2025"  # ambiguous: not parsed


# ------------------------------------------------------------------ copying the excerpt
def test_copying_the_excerpt_scores_as_no_fields() -> None:
    for fixture in ("excerpt-03", "excerpt-09"):  # both carry "Label: value" lines of their own
        m = score(fixture, excerpt(fixture))
        assert m["field_recall"] == 0 and m["values_returned"] == 0 and m["abstains"] == 0


def test_copying_the_excerpt_after_a_good_answer_still_scores_as_no_fields() -> None:
    good = shapes()["markdown list"]
    assert score("excerpt-01", good)["field_recall"] == 1.0
    assert score("excerpt-01", good + "\n\nFull text for reference:\n\n" + excerpt("excerpt-01"))["field_recall"] == 0


def test_a_long_verbatim_answer_is_not_a_restatement() -> None:
    text = excerpt("excerpt-01")
    clauses = [line for line in text.splitlines() if re.match(r"6\.[123] |9\.[12] ", line)]
    out = "**Parties:** " + " ".join(text.splitlines()[4:7]) + "\n**Termination rights:**\n" + "\n".join(
        f"- {c}" for c in clauses if c.startswith("9")) + "\n**Obligations:**\n" + "\n".join(
        f"- {c}" for c in clauses if c.startswith("6"))
    m = score("excerpt-01", out)
    assert m["field_recall"] > 0.8 and m["unsupported_values"] == 0


def test_norm_lowers_case_and_makes_every_run_of_punctuation_one_space() -> None:
    assert _norm("  The **Supplier**, \u201cShall\u201d -- PAY_now!  ") == "the supplier shall pay now"
    assert _norm("Signed 1 March 2024, effective 2024-03-01.") == "signed d20240301 effective d20240301"


def test_within_is_whole_word_containment() -> None:
    hay = f" {_norm('Tallow & Reed Manufacturing Limited')} "
    assert within(_norm("Reed Manufacturing"), hay)
    assert not within(_norm("Reed Manufactur"), hay)  # part of a word is not the word
    assert not within("", hay)


def test_restates_is_true_from_the_declared_share_of_the_excerpts_five_word_runs() -> None:
    text = "one two three four five six seven eight nine ten"  # six five-word runs
    assert restates(text, text)
    assert restates("one two three four five six seven eight nine", text)  # 5 of 6 runs: over 75%
    assert not restates("one two three four five six seven eight", text)  # 4 of 6
    assert restates("one two three four five six seven eight", text, share=0.6)
    assert not restates("one two three four", "one two three four")  # under five words: no run to restate
