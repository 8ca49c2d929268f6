"""A judge card's worked examples checked offline: each recorded judge answer read by the card's own parser must
give the grade the example expects. `check` reports these, and `seal` refuses a judge card that fails them, so a
judge whose parser or scale misreads its own examples is never sealed. (`check --live` asks the judge itself:
`benchcard.run.judgelive`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from benchcard.card.model import Card, Example
from benchcard.card.reader import field_locator
from benchcard.errors import BenchcardError, UnreadableAnswer
from benchcard.project import Project
from benchcard.records.answerkey import AnswerKey
from benchcard.scoring.judge import JudgeSpec, judge_messages, read_answer
from benchcard.scoring.judge.keys import key_text
from benchcard.scoring.scorers import Score

TOLERANCE = 1e-9


@dataclass(frozen=True)
class JudgeExample:
    """One example's outcome: the score of its first recorded answer, and the first problem found."""

    score: Score | None
    ok: bool
    reason: str = ""


def expectation_problem(expect: str | Mapping[str, float], metrics: Mapping[str, float]) -> str:
    """Why a grade misses what an example expects ("" when it meets it)."""
    score = metrics.get("score", float("nan"))
    if expect == "pass":
        return "" if score == 1.0 else f"expected a score of exactly 1, got {score:.2f}"
    if expect == "fail":
        return "" if score < 1.0 else "expected a score below 1 (a rejected output), got 1.00: the judge accepts it"
    assert isinstance(expect, Mapping)
    return metric_misses(expect, metrics)


def metric_misses(expect: Mapping[str, float], metrics: Mapping[str, float]) -> str:
    """Each metric an example expects that the grade misses, in a phrase ("" when every one is met): a NaN on
    either side meets nothing, since `abs(nan) > TOLERANCE` is false and read so an expected NaN passed any score."""
    wrong = [f"{m} expected {v:g}, got {metrics.get(m, float('nan')):g}" for m, v in expect.items()
             if not abs(metrics.get(m, float("nan")) - v) <= TOLERANCE]
    return "; ".join(wrong)


def example_prompt(card: Card, example: Example, keys: Mapping[str, AnswerKey]) -> list[dict[str, str]]:
    """The messages the judge receives for a worked example (what `check --live` sends)."""
    spec = card.scoring
    assert isinstance(spec, JudgeSpec)
    fixture = example.fixture
    text = card.fixture_text(fixture) if fixture and spec.uses_fixture else ""
    return judge_messages(spec, example.output, text, key_text(keys.get(fixture or "")) if spec.uses_key else "")


def fixture_problem(card: Card, example: Example, keys: Mapping[str, AnswerKey], index: int) -> str:
    spec = card.scoring
    assert isinstance(spec, JudgeSpec)
    if (spec.uses_fixture or spec.uses_key) and (example.fixture is None or example.fixture not in card.fixtures):
        return f"field 'examples.{index}.fixture': expected one of the card's fixtures (the judge's prompt shows it)"
    if spec.uses_key and example.fixture not in keys:
        return "its fixture has no answer key"
    return ""


def judge_example(card: Card, example: Example, keys: Mapping[str, AnswerKey], index: int) -> JudgeExample:
    """Read every recorded answer of one example with the card's parser and compare with its expectation."""
    spec = card.scoring
    assert isinstance(spec, JudgeSpec)
    problem = fixture_problem(card, example, keys, index)
    if problem:
        return JudgeExample(None, False, problem)
    if not example.judge_answers:
        return JudgeExample(None, False, f"field 'examples.{index}.judge_answers': missing; expected the judge's "
                                         "recorded answer (see `benchcard check --live`)")
    first: Score | None = None
    for n, answer in enumerate(example.judge_answers):
        try:
            metrics = read_answer(spec, answer)
        except UnreadableAnswer as exc:
            return JudgeExample(first, False, f"recorded judge answer {n + 1} is unreadable: {exc}")
        score = Score(metrics["score"], metrics)
        first = first or score
        problem = expectation_problem(example.expect, metrics)
        if problem:
            return JudgeExample(first, False, f"recorded judge answer {n + 1}: {problem}")
    return JudgeExample(first, True)


def judge_example_problems(card: Card, project: Project) -> list[str]:
    """Every failing worked example of a judge card, one line each naming the card file."""
    source = project.relative(card.path)
    try:
        keys = card.answer_keys(project.keys_dir(card.id))
    except BenchcardError as exc:
        return [str(exc)]
    at = field_locator(card.path, source)
    results = [(i, ex, judge_example(card, ex, keys, i)) for i, ex in enumerate(card.examples)]
    return [f"{at('examples', str(i))}: example '{ex.label}': {r.reason}" for i, ex, r in results if not r.ok]
