"""Blind, deterministic scorers: they see an output, its fixture id, its key and the fixture text, nothing else.

Nothing here can know which variant, model, repetition or request produced an output; `score_run` reads only
`outputs.jsonl`, the keys and the fixtures, which a test checks.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

from benchcard._util.files import AtomicFile, discard
from benchcard._util.lastrow import last_per_cell
from benchcard.errors import CardError, RuleTimeout
from benchcard.records.answerkey import AnswerKey
from benchcard.records.rows import OutputRow, ScoreRow, decode_rows, dumps_line, iter_rows
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.jsregex import JsRegex, compile_js
from benchcard.scoring.judge.spec import JUDGE_DEFAULTS, JudgeSpec, Newer, parse_judge, refuse
from benchcard.scoring.rulelimit import test_rules
from benchcard.scoring.textform import compared, trimmed

Fail = Callable[[Sequence[str | int], str], CardError]


@dataclass(frozen=True)
class ExactSpec:
    """One literal answer for the whole card (`expected`), or each fixture's own (`expected_from_key`: the
    field of `keys/<id>/<fixture>.json` that holds it)."""

    expected: str | None
    trim: bool = True
    case_sensitive: bool = True
    expected_from_key: str | None = None
    # whether the answer and the reply are compared in NFC (`textform.py`): kept out of the protocol, set by the
    # version's seal (`card/load.py`: False for a seal made before 2026-12-08, which compared them as stored)
    nfc: bool = True
    # whether `trim` removes JavaScript's white space (`textform.JS_SPACE`, a leading U+FEFF too) or Python's: set
    # by the seal as `nfc` is (False for a seal without `whitespace: js`, which trimmed as Python does)
    js_trim: bool = True


@dataclass(frozen=True)
class Rule:
    id: str
    kind: Literal["must_match", "must_not_match"]
    pattern: str
    why: str
    regex: JsRegex
    key_fields: tuple[str, ...] = ()
    """The key fields the pattern names as `{{key.<field>}}`: filled per fixture, regex-escaped."""


@dataclass(frozen=True)
class RulesSpec:
    rules: tuple[Rule, ...]


ScoringSpec = ExactSpec | RulesSpec | FieldsSpec | JudgeSpec
METHODS = ("exact", "rules", "fields", "judge")
#: What each optional field of a `scoring:` block means when left out, by its path under `scoring`: the parsers
#: read these, and a seal holds a card the same written out or not (card/_defaults.py).
SCORING_DEFAULTS: dict[tuple[str, ...], object] = {("trim",): True, ("case_sensitive",): True,
                                                   ("abstain_field",): None, ("first_screen_chars",): None,
                                                   **JUDGE_DEFAULTS}


@dataclass(frozen=True)
class Score:
    """One output's score: `score` in [0, 1], named metrics, and for rule scoring each rule's pass or fail."""

    score: float
    metrics: dict[str, float]
    rules: dict[str, bool] | None = None


def parse_scoring(raw: Mapping[str, Any], fail: Fail, newer: Newer = refuse, escapes: bool = True) -> ScoringSpec:
    """Validate a card's `scoring:` block; `fail(where, expected)` builds the error that names the line, and
    `newer` is handed the problems of a check added after cards were sealed without it (by default, raised);
    `escapes`: a judge prompt's slot rule (`_util/slots.py`)."""
    method = raw.get("method")
    if method not in METHODS:
        raise fail(("method",), f"unknown scoring method {method!r}; expected one of {', '.join(METHODS)}")
    if method == "judge":
        return parse_judge(raw, fail, newer, escapes)
    allowed = {
        "exact": {"method", "expected", "expected_from_key", "trim", "case_sensitive"},
        "rules": {"method", "rules"},
        "fields": {"method", "fields", "abstain_field", "first_screen_chars"},
    }[method]
    extra = sorted(set(raw) - allowed)
    if extra:
        raise fail((extra[0],), f"unknown field for {method} scoring; expected {', '.join(sorted(allowed))}")
    if method == "exact":
        return _parse_exact(raw, fail)
    if method == "rules":
        return RulesSpec(tuple(_parse_rules(raw.get("rules"), fail, newer)))
    return _parse_fields(raw, fail)


def _parse_exact(raw: Mapping[str, Any], fail: Fail) -> ExactSpec:
    """`method: exact`: one expected text for every fixture, or the key field holding each fixture's."""
    expected, from_key = raw.get("expected"), raw.get("expected_from_key")
    if ("expected" in raw) == ("expected_from_key" in raw):
        raise fail(("expected",), "expected exactly one of expected (one answer for every fixture) or "
                                  "expected_from_key (the key field holding each fixture's answer)")
    if "expected" in raw and not isinstance(expected, str):
        raise fail(("expected",), f"expected the exact expected output as text, got {repr(expected)[:80]}")
    if isinstance(expected, str) and KEY_SLOT.search(expected):
        raise fail(("expected",), "is compared literally, {{key.…}} is not filled in; to take each "
                                  "fixture's answer from its key, write expected_from_key: <field>")
    if "expected_from_key" in raw:
        _check_key_field(from_key, ("expected_from_key",), fail)
    for flag in ("trim", "case_sensitive"):
        if flag in raw and not isinstance(raw[flag], bool):
            raise fail((flag,), f"expected true or false, got {raw[flag]!r}")
    return ExactSpec(expected, trim=raw.get("trim", SCORING_DEFAULTS[("trim",)]),
                     case_sensitive=raw.get("case_sensitive", SCORING_DEFAULTS[("case_sensitive",)]),
                     expected_from_key=from_key)


def _parse_fields(raw: Mapping[str, Any], fail: Fail) -> FieldsSpec:
    """`method: fields`: the field names, the one an abstention is written in, the first screen's length."""
    fields = raw.get("fields")
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
        raise fail(("fields",), "expected a list of field names")
    abstain = raw.get("abstain_field")
    if abstain is not None and abstain not in fields:
        raise fail(("abstain_field",), f"expected one of the fields ({', '.join(fields)})")
    screen = raw.get("first_screen_chars")
    if screen is not None and (not isinstance(screen, int) or screen < 1):
        raise fail(("first_screen_chars",), "expected a positive number of characters")
    return FieldsSpec(tuple(fields), abstain, screen)


#: What a rule may hold: anything else is refused, as at every other level of a card, so that a misspelt field
#: (`must_match_flags:`, `whyy:`) cannot be sealed and published while no scorer reads it. A problem `newer` is
#: handed: a version sealed before 2026-12-07 with such a field still reads (`Card.later_checks`).
RULE_FIELDS = frozenset({"id", "must_match", "must_not_match", "why"})


def _parse_rules(items: Any, fail: Fail, newer: Newer = refuse) -> list[Rule]:
    if not isinstance(items, list) or not items:
        raise fail(("rules",), "expected a list of rules with id, must_match or must_not_match, and why")
    rules: list[Rule] = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise fail(("rules", i), "expected a mapping with id, must_match or must_not_match, and why")
        if extra := sorted(set(map(str, item)) - RULE_FIELDS):
            newer(fail(("rules", i, extra[0]), "unknown field; expected id, must_match, must_not_match or why"))
        rule_id = item.get("id")
        if not isinstance(rule_id, str) or not rule_id:
            raise fail(("rules", i, "id"), "missing; expected a rule id")
        if rule_id in {r.id for r in rules}:
            raise fail(("rules", i, "id"), f"duplicate rule id {rule_id!r}")
        kinds = [k for k in ("must_match", "must_not_match") if k in item]
        if len(kinds) != 1:
            raise fail(("rules", i), f"rule {rule_id!r}: expected exactly one of must_match or must_not_match")
        kind: Literal["must_match", "must_not_match"] = "must_match" if kinds[0] == "must_match" else "must_not_match"
        literal, regex, fields = _rule_pattern(item[kind], ("rules", i, kind), rule_id, fail)
        why = item.get("why")
        if not isinstance(why, str):
            said = "missing; expected the reason for the rule" if why is None else (
                f"expected the reason for the rule as text, got {why!r}")
            raise fail(("rules", i, "why"), f"rule {rule_id!r}: {said}")
        rules.append(Rule(rule_id, kind, literal, why, regex, fields))
    return rules


def _rule_pattern(literal: Any, where: tuple[str | int, ...], rule_id: str, fail: Fail
                  ) -> tuple[str, JsRegex, tuple[str, ...]]:
    """A rule's /pattern/flags literal: the text, its compiled regex (slots filled with a stand-in), and the key
    fields its {{key.…}} slots name."""
    if not isinstance(literal, str):
        raise fail(where, f"rule {rule_id!r}: expected a /pattern/flags literal")
    fields = tuple(dict.fromkeys(m.group(1) for m in KEY_SLOT.finditer(literal)))
    for name in fields:
        _check_key_field(name, where, fail)
    try:
        regex = compile_js(fill_key_slots(literal, {f: "x" for f in fields}))
    except ValueError as exc:
        raise fail(where, f"rule {rule_id!r}: {exc}") from None
    return literal, regex, fields


KEY_SLOT = re.compile(r"\{\{\s*key\.([^{}\s]*)\s*\}\}")
"""`{{key.<field>}}` in a rule's pattern: the fixture's answer, taken from its key file."""
_JS_SYNTAX = re.compile(r"[\\^$.*+?()[\]{}|/]")


def _check_key_field(name: Any, where: Sequence[str | int], fail: Fail) -> None:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name) or name == "fixture":
        raise fail(where, f"expected the name of a field of the answer keys (letters, digits, _ or -; not "
                          f"'fixture'), got {name!r}")


def js_escape(text: str) -> str:
    """`text` as a JavaScript regex that matches exactly it, to be placed inside a /literal/."""
    escaped = _JS_SYNTAX.sub(lambda m: "\\" + m.group(0), text)
    return escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\u2028", "\\u2028").replace(
        "\u2029", "\\u2029")


def fill_key_slots(literal: str, values: Mapping[str, str | Sequence[str]]) -> str:
    """Each `{{key.<field>}}` replaced by the key's value (several accepted values become an alternation)."""
    def one(m: re.Match[str]) -> str:
        value = values[m.group(1)]
        options = [value] if isinstance(value, str) else list(value)
        return "(?:" + "|".join(js_escape(v) for v in options) + ")"
    return KEY_SLOT.sub(one, literal)


@functools.lru_cache(maxsize=4096)
def _compile_filled(literal: str) -> JsRegex:
    return compile_js(literal)


def key_answers(key: AnswerKey | None, field: str, what: str) -> list[str]:
    """A key field's accepted answers (a string, or a list of strings); a missing key or field is a CardError."""
    if key is None:
        raise CardError(f"{what} needs the fixture's answer key")
    value = key.get(field)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise key.fail(field, "expected the answer as text, or a list of accepted answers")


def rule_regex(rule: Rule, key: AnswerKey | None) -> JsRegex:
    """The rule's regex for one fixture: its `{{key.<field>}}` slots filled from that fixture's key."""
    if not rule.key_fields:
        return rule.regex
    values = {f: key_answers(key, f, f"rule {rule.id!r}") for f in rule.key_fields}
    try:
        return _compile_filled(fill_key_slots(rule.pattern, values))
    except ValueError as exc:
        raise CardError(f"rule {rule.id!r} filled from the key of {key and key.fixture!r}: {exc}") from None


def rule_literal(rule: Rule, key: AnswerKey | None) -> str:
    """The `/pattern/flags` a rule tests for one fixture (its key slots filled), checked to compile."""
    if not rule.key_fields:
        return rule.pattern
    rule_regex(rule, key)  # a fill that does not compile is a CardError naming the rule and fixture
    return fill_key_slots(rule.pattern, {f: key_answers(key, f, f"rule {rule.id!r}") for f in rule.key_fields})


def metric_names(spec: ScoringSpec) -> set[str]:
    """The metrics a scorer yields, so a win rule naming another is a card error before any call."""
    if isinstance(spec, RulesSpec):
        return {"score"} | {f"rule.{r.id}" for r in spec.rules}
    if isinstance(spec, FieldsSpec):
        per_field = {f"field_recall.{f}" for f in spec.fields}
        return {"score", "field_recall", "unsupported_values", "abstains", "values_returned"} | per_field
    if isinstance(spec, JudgeSpec):
        return spec.metric_names()
    return {"score"}


#: Metrics that count things (no upper bound); every other metric is a fraction in [0, 1].
COUNT_METRICS = frozenset({"unsupported_values", "values_returned"})
LOWER_IS_BETTER = frozenset({"unsupported_values"})
"""Metrics where a lower value is the better one (every other metric: higher is better, or no direction)."""


def metric_range(name: str) -> tuple[float, float | None]:
    """The lowest and highest value a metric can take (None: unbounded), for bounding truncated cells."""
    return (0.0, None) if name in COUNT_METRICS else (0.0, 1.0)


def score_output(spec: ScoringSpec, output: str, key: AnswerKey | None = None, excerpt: str = "") -> Score:
    """Score one output text. The only other inputs are the fixture's key and text."""
    if isinstance(spec, ExactSpec):
        if spec.expected_from_key is not None:
            wants = key_answers(key, spec.expected_from_key, "exact scoring with expected_from_key")
        else:
            wants = [spec.expected or ""]
        got = compared(trimmed(output, spec.js_trim) if spec.trim else output, spec.nfc)
        if not spec.case_sensitive:
            got = got.casefold()
        value = 0.0
        for want in wants:
            want = compared(trimmed(want, spec.js_trim) if spec.trim else want, spec.nfc)
            if got == (want if spec.case_sensitive else want.casefold()):
                value = 1.0
        return Score(value, {"score": value})
    if isinstance(spec, RulesSpec):
        literals = [(rule.id, rule_literal(rule, key)) for rule in spec.rules]
        hits = test_rules(literals, output)  # in a child process, under a time limit (rulelimit.py)
        results = {rule.id: hit if rule.kind == "must_match" else not hit for rule, hit in zip(spec.rules, hits,
                                                                                               strict=True)}
        value = sum(results.values()) / len(results)
        metrics = {"score": value} | {f"rule.{k}": float(v) for k, v in results.items()}
        return Score(value, metrics, results)
    if isinstance(spec, JudgeSpec):
        raise CardError("a judge card is scored by calls to its judge (`benchcard run`), not by score_output")
    from benchcard.scoring.fields import score_fields

    if key is None:
        raise CardError("fields scoring needs the fixture's answer key")
    metrics = score_fields(output, key, excerpt, spec)
    metrics = {"score": metrics["field_recall"], **metrics}
    return Score(metrics["field_recall"], metrics)


def score_run(
    outputs_path: Path,
    scores_path: Path,
    spec: ScoringSpec,
    keys: Mapping[str, AnswerKey],
    fixture_texts: Mapping[str, str],
    *,
    latest: bool = False,
    since: tuple[int, int] | None = None,
) -> int:
    """Blind scoring of a run: reads `outputs.jsonl` only. Truncated and failed cells get no score, nor does an
    output a rule runs past its time limit on (its row says why: `ScoreRow.unscored`, and the run closes). `latest`
    (a run retried with `--retry-failed`): only each cell's last row is scored, the outcome that stands.

    Rows are streamed to `scores.jsonl` as they are scored (one flush, at the end), so memory does not grow with
    the grid; a scoring that fails part-way leaves no `scores.jsonl`. Returns the number of rows written.

    `since` (a retried run closing again): where the rows not yet scored begin in outputs.jsonl, and the size
    scores.jsonl had when the run was reopened. Only those rows are scored (the last of each cell), all of them
    before anything is written, then appended to scores.jsonl in one write, cut back to that size first so a
    close killed mid-write leaves no half row: what was scored before is never rewritten.
    """
    if since is not None and scores_path.is_file():
        return _score_appended(outputs_path, scores_path, since, spec, keys, fixture_texts)
    written = 0
    rows: Iterable[OutputRow] = iter_rows(outputs_path, OutputRow)
    if latest:
        rows = last_per_cell(rows, _cell)
    try:
        with AtomicFile(scores_path) as fh:
            for out in rows:  # scoring drives the loop: records reads and encodes a row, and returns
                fh.write(dumps_line(_score_row(spec, out, keys, fixture_texts)))
                written += 1
    except BaseException:
        discard(scores_path)
        raise
    return written


_cell = attrgetter("cell")


def _score_appended(outputs_path: Path, scores_path: Path, since: tuple[int, int], spec: ScoringSpec,
                    keys: Mapping[str, AnswerKey], fixture_texts: Mapping[str, str]) -> int:
    start, size = since
    with open(outputs_path, "rb") as fh:
        fh.seek(start)
        rows = last_per_cell(decode_rows(fh.read(), OutputRow, outputs_path), _cell)
    block = b"".join(dumps_line(_score_row(spec, out, keys, fixture_texts)) for out in rows)
    with open(scores_path, "r+b") as fh:
        fh.truncate(size)
        fh.seek(size)
        fh.write(block)
        fh.flush()
        os.fsync(fh.fileno())
    return len(rows)


def _score_row(spec: ScoringSpec, out: OutputRow, keys: Mapping[str, AnswerKey],
               fixture_texts: Mapping[str, str]) -> ScoreRow:
    if out.status != "ok":
        return ScoreRow(cell=out.cell, fixture=out.fixture, status=out.status, score=None, metrics={}, rules=None)
    try:
        s = score_output(spec, out.text, keys.get(out.fixture), fixture_texts.get(out.fixture, ""))
    except RuleTimeout as exc:  # the output stays unscored, the rule named: never a wrong, never a stopped run
        return ScoreRow(cell=out.cell, fixture=out.fixture, status=out.status, score=None, metrics={}, rules=None,
                        unscored=unscored_why(exc))
    return ScoreRow(cell=out.cell, fixture=out.fixture, status=out.status, score=s.score, metrics=dict(s.metrics),
                    rules=None if s.rules is None else dict(s.rules))


def unscored_why(exc: RuleTimeout) -> str:
    """What scores.jsonl records of an output a rule ran past its time limit on (`ScoreRow.unscored`): the rule
    and the limit, one phrase the verdict counts and quotes."""
    return f"rule {exc.rule!r} ran past its {exc.limit:g} s limit (catastrophic backtracking)"
