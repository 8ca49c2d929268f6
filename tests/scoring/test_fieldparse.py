"""A `fields` answer read into per-field lines and value pieces, whatever shape it takes (JSON, markdown lists,
headings, tables, prose), without seeing the key or the excerpt."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from benchcard.scoring._fieldparse import parse, pieces

from ..helpers_cli import bc
from ..helpers_fields import PARTIES_01, SPEC, score, shapes
from ..helpers_project import copy_project


@pytest.mark.parametrize("shape", list(shapes()))
def test_every_shape_of_a_verbatim_answer_scores_full_recall_and_nothing_unsupported(shape: str) -> None:
    m = score("excerpt-01", shapes()[shape])
    assert m["field_recall"] == 1.0, (shape, m)
    assert m["unsupported_values"] == 0, (shape, m)
    assert m["abstains"] == 0
    assert m["values_returned"] >= 8


def test_prose_answer_is_read_sentence_by_sentence() -> None:
    out = ("The parties are Brackenfield Components Ltd and Tallow & Reed Manufacturing Limited. "
           "The agreement is effective from 1 March 2024. Either party may terminate after the Initial Term on "
           "90 days' written notice, or immediately for material breach. The Supplier must keep a buffer stock "
           "and report any quality non-conformance within 48 hours; the Buyer must send a rolling 12-month forecast.")
    m = score("excerpt-01", out)
    assert m["field_recall"] == 1.0
    assert m["values_returned"] == 6  # 2 parties, the date, the termination sentence, 2 obligation clauses
    assert m["unsupported_values"] == 3  # the three paraphrased clauses


def test_field_labels_are_matched_by_synonym() -> None:
    out = ("Contracting parties: Brackenfield Components Ltd\nCommencement date: 1 March 2024\n"
           "Right to terminate: material breach\nDuties: buffer stock")
    m = score("excerpt-01", out)
    assert all(m[f"field_recall.{f}"] > 0 for f in SPEC.fields)


def test_sub_headings_and_sub_labels_are_not_values() -> None:
    out = ("## Parties\n### Supplier\nBrackenfield Components Ltd\n**Buyer**\nTallow & Reed Manufacturing Limited\n"
           "## Termination rights\n### For convenience after the Initial Term\n- 90 days' notice\n")
    m = score("excerpt-01", out)
    assert m["values_returned"] == 3 and m["unsupported_values"] == 1  # only "90 days' notice" is not verbatim
    assert m["field_recall.parties"] == 1.0 and m["field_recall.termination_rights"] == 0.5


def test_commentary_outside_the_fields_is_ignored() -> None:
    out = (f"Sure — here is what I found:\n\n- **Parties:** {PARTIES_01[0]}\n\n"
           "I hope this helps! Let me know if you would like anything else.\n\n"
           "**Governing law:** England and Wales (inferred)")
    m = score("excerpt-01", out)
    assert m["values_returned"] == 1 and m["unsupported_values"] == 0


FIELDS = ["parties", "effective_date", "termination_rights", "obligations"]


def test_a_json_answer_is_read_by_field_and_an_empty_value_reads_as_not_stated() -> None:
    recall, values = parse('{"parties": ["A Ltd", "B plc"], "effective_date": null, "governing_law": "x"}', FIELDS)
    assert recall == {"parties": ["A Ltd", "B plc"], "effective_date": ["not stated"]}
    assert values == [("parties", "A Ltd"), ("parties", "B plc"), ("effective_date", "not stated")]


@pytest.mark.parametrize("answer", ["## Parties\n- A Ltd\n- B plc\n## Notes\nNone.",
                                    "| Field | Value |\n|---|---|\n| Parties | A Ltd |\n| Parties | B plc |"])
def test_headings_and_tables_give_each_field_its_lines_and_leave_other_sections_out(answer: str) -> None:
    recall, values = parse(answer, FIELDS)
    assert recall == {"parties": ["A Ltd", "B plc"]}
    assert values == [("parties", "A Ltd"), ("parties", "B plc")]


def test_prose_is_attributed_sentence_by_sentence_to_the_field_it_speaks_of() -> None:
    recall, values = parse("The parties are A Ltd and B plc. The agreement is effective from 1 March 2024.", FIELDS)
    assert values == [("parties", "The parties are A Ltd and B plc."),
                      ("effective_date", "The agreement is effective from 1 March 2024.")]
    assert set(recall) == {"parties", "effective_date"}


@pytest.mark.parametrize(("line", "expected"), [
    ("- **Supplier:** A Ltd", ["A Ltd"]),  # a sub-label is not a value
    ("1. A Ltd; B plc", ["A Ltd", "B plc"]),
    ("The parties are A Ltd and B plc.", ["A Ltd and B plc"]),  # the lead-in dropped; names split later, by fields
    ("  * `clause 4` ", ["clause 4"]),
    ("and the Buyer.", ["the Buyer"]),
    ("", []),
    ("...", []),
])
def test_a_line_becomes_clean_value_pieces(line: str, expected: list[str]) -> None:
    assert pieces(line) == expected


def test_a_json_answer_nested_near_the_stack_limit_is_scored_not_a_traceback(tmp_path: Path) -> None:
    """`json.loads` reads an answer nested ~990 deep; walking its values recursed a little deeper still, so an
    output nested just past where the walk's stack ran out (wherever the caller's stack stands: every depth from
    800 to 999 is tried) ended `check`, and a run's blind scoring, in a RecursionError traceback."""
    root = copy_project(tmp_path / "proj", ("bench-01",))
    card = root / "cards" / "bench-01.yaml"
    def example(depth: int) -> str:
        output = json.dumps('{"parties": ' + "[" * depth + '"Acme"' + "]" * depth + "}")
        return f"  - {{label: nested {depth}, fixture: excerpt-01, output: {output}, expect: {{field_recall: 0}}}}\n"

    nested = (example(depth) for depth in range(800, 1000))
    card.write_text(card.read_text(encoding="utf-8").replace("examples:\n", "examples:\n" + "".join(nested), 1),
                    encoding="utf-8")
    result = bc(root, "check", "bench-01")
    assert result.exit_code == 0, result.output
    assert "ok   0.00 expect metrics nested 999" in result.output and "1 card(s) ok, 0 failed" in result.output


@pytest.mark.parametrize("output", ["Mr. " * 20_000, "(" * 400_000, "Parties (" * 60_000],
                         ids=["abbreviations", "parentheses", "party-names"])
def test_a_reply_stuck_repeating_itself_is_scored_in_linear_time(tmp_path: Path, output: str) -> None:
    """A model stuck repeating "Mr. " (40 kB of it) made one sentence of 10,000 pieces, and each piece searched
    the whole sentence so far for an abbreviation at its end (44 s); a line of 200,000 "(" was searched for its
    ")" from each of them (about 36 s), and so was 30,000 times "Parties (" as party names (about 40 s): `check`,
    and a run's blind scoring, took quadratic time in the length of one output (a reply may be 32 MiB). Now each
    search reads only what it can match. Twice those lengths here (minutes before, a second or two now), and a
    minute allowed, so that a loaded machine does not fail the test nor a fast one pass the old code."""
    root = copy_project(tmp_path / "proj", ("bench-01",))
    card = root / "cards" / "bench-01.yaml"
    stuck = '  - {label: stuck, fixture: excerpt-01, output: "' + output + '", expect: {field_recall: 0}}\n'
    card.write_text(card.read_text(encoding="utf-8").replace("examples:\n", "examples:\n" + stuck, 1),
                    encoding="utf-8")

    def too_slow(signum: int, frame: object) -> None:
        raise TimeoutError("still scoring after 60 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(60)
    try:
        result = bc(root, "check", "bench-01")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert result.exit_code == 0, (result.output, result.exception)
    assert "ok   0.00 expect metrics stuck" in result.output


def test_a_sentence_merged_over_a_million_abbreviations_is_read_in_linear_time() -> None:
    """The sentence splitter merged each "Mr." with what follows by copying the sentence so far (caa4cde searched
    only its end, but still copied it whole): 160,000 repeats took 35 s, 400,000 several minutes. Now a second or
    two; the alarm is a watchdog for the old behaviour (minutes), not a measure of speed."""
    def too_slow(signum: int, frame: object) -> None:
        raise TimeoutError("still splitting sentences after 60 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(60)
    try:
        got, values = parse("Mr. " * 400_000, ["parties"])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert got == {} and values == []
