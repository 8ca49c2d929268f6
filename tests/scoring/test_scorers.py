"""The exact and rules scorers, and every worked example of the four published probes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.errors import CardError
from benchcard.project import Project
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.scorers import ExactSpec, metric_names, parse_scoring, score_output, score_run

from ..helpers_project import PROBES, REPO, SEEDS


def _card(name: str) -> Card:
    return load_card(REPO / "cards" / f"{name}.yaml", Project(REPO))


def _seed_text(name: str) -> str:
    return next(SEEDS.glob(f"{PROBES[name]}_*.txt")).read_text(encoding="utf-8")


EXAMPLES = [(name, i) for name in PROBES for i in range(len(_card(name).examples))]


@pytest.mark.parametrize(("name", "index"), EXAMPLES, ids=[f"{n}-{i}" for n, i in EXAMPLES])
def test_seed_worked_example(name: str, index: int) -> None:
    """Each worked example on a seed page: the correct output scores exactly 1, every rejected one below 1."""
    card = _card(name)
    example = card.examples[index]
    assert example.output in _seed_text(name), "the example must be the seed page's text, verbatim"
    assert example.label.split(" — ")[0] in ("Correct", "Rejected")
    score = score_output(card.scoring, example.output)
    if example.expect == "pass":
        assert score.score == 1.0
    else:
        assert score.score < 1.0


def test_every_seed_example_is_carried() -> None:
    """No worked example on a seed page is missing from its card."""
    for name in PROBES:
        text = _seed_text(name)
        section = text.split("Worked examples", 1)[1].split("Version history", 1)[0]
        labels = [line for line in section.splitlines() if line.startswith(("Correct —", "Rejected —"))]
        carried = {e.label for e in _card(name).examples}
        assert len(labels) == len(carried)
        for label in labels:
            short = label.replace(" — must score 1.00", "")
            assert short in carried, f"{name}: {short!r} not in the card"


def test_rules_report_each_rule() -> None:
    card = _card("six-step-chain")
    output = "BEGIN-7731\n- Jupiter\n- Saturn\n- Uranus\nCOUNT: 3\nPluto!\nCHECKSUM: 6\nEND-7731"
    score = score_output(card.scoring, output)
    assert score.rules is not None
    assert score.rules["step_4_no_pluto"] is False
    assert sum(score.rules.values()) == 5
    assert score.score == pytest.approx(5 / 6)
    assert score.metrics["rule.step_4_no_pluto"] == 0.0


def test_javascript_dollar_decides_step_six() -> None:
    """A final newline after END-7731 is whitespace: `\\s*$` passes in JavaScript and here."""
    card = _card("six-step-chain")
    score = score_output(card.scoring, "BEGIN-7731\n- Jupiter\n- Saturn\n- Uranus\nCOUNT: 3\nCHECKSUM: 6\nEND-7731\n")
    assert score.score == 1.0


@pytest.mark.parametrize(
    ("spec", "output", "expected"),
    [
        (ExactSpec("negative", trim=True, case_sensitive=False), "  Negative\n", 1.0),
        (ExactSpec("negative", trim=True, case_sensitive=True), "Negative", 0.0),
        (ExactSpec("negative", trim=False, case_sensitive=True), " negative", 0.0),
        (ExactSpec("A: X\nB: X", trim=True, case_sensitive=True), "\nA: X\nB: X\n\n", 1.0),
    ],
)
def test_exact_options(spec: ExactSpec, output: str, expected: float) -> None:
    assert score_output(spec, output).score == expected


def _fail(where: object, expected: str) -> CardError:
    return CardError(f"{where}: {expected}")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"method": "regex"}, "unknown scoring method 'regex'"),
        ({"method": "exact"}, "expected exactly one of expected .* or expected_from_key"),
        ({"method": "exact", "expected": 3}, "expected the exact expected output as text, got 3"),
        ({"method": "rules", "rules": [{"id": "a", "must_match": "/(/", "why": "x"}]}, "rule 'a'"),
        ({"method": "rules", "rules": [{"id": "a", "why": "x"}]}, "exactly one of must_match"),
        ({"method": "rules", "rules": [{"id": "a", "must_match": "/a/"}]}, "expected the reason"),
        ({"method": "exact", "expected": "x", "trim": "yes"}, "expected true or false"),
        # a misspelt field of a rule is refused, not sealed unread (a `why:` with a comma in a flow mapping
        # makes one of its second half)
        ({"method": "rules", "rules": [{"id": "a", "must_match": "/a/", "why": "x", "in Cyrillic.": None}]},
         r"\('rules', 0, 'in Cyrillic.'\): unknown field; expected id, must_match, must_not_match or why"),
    ],
)
def test_scoring_block_errors(raw: dict[str, object], message: str) -> None:
    with pytest.raises(CardError, match=message):
        parse_scoring(raw, _fail)


def test_metric_names() -> None:
    assert metric_names(_card("emit-terminator").scoring) >= {"score", "rule.no_preamble"}


def test_score_run_streams_every_row_and_leaves_no_file_when_it_fails(tmp_path: Path) -> None:
    outputs, scores = tmp_path / "outputs.jsonl", tmp_path / "scores.jsonl"
    rows = [{"cell": f"c{i}", "fixture": "f", "status": status, "text": text}
            for i, (status, text) in enumerate([("ok", "red"), ("truncated", "re"), ("ok", "blue")])]
    outputs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert score_run(outputs, scores, ExactSpec("red"), {}, {}) == 3
    written = [json.loads(line) for line in scores.read_text(encoding="utf-8").splitlines()]
    assert [(r["cell"], r["status"], r["score"]) for r in written] == [("c0", "ok", 1.0), ("c1", "truncated", None),
                                                                        ("c2", "ok", 0.0)]
    # a fields scorer without the fixture's key fails on the first ok row: no partial scores.jsonl is left
    with pytest.raises(CardError, match="answer key"):
        score_run(outputs, scores, FieldsSpec(("parties",), None), {}, {})
    assert not scores.exists()
