"""Reading a judge's answer, strictly: one declared form, or the answer counts as unreadable.

`final_line`: the last non-empty line is `GRADE: <value>` (with criteria: the last lines are `<id>: <value>`,
one per criterion, in the rubric's order). `bare`: the whole reply is the value (one final period allowed).
`json`: the whole answer (or one ```json fence around it) is one object holding exactly the grade keys
(`grade`, or one per criterion, each once) and optionally `reason`. Values are the scale's pass/fail words (PASS/FAIL
unless declared, any case; JSON true/false too) or whole numbers within the scale. Anything else raises
`UnreadableAnswer`: a judge that answers off-form is a failure of the judge, counted, never guessed at.
"""

from __future__ import annotations

import re
from typing import Any

from benchcard._util.safeio import strict_json
from benchcard._util.text import ascii_int
from benchcard.errors import JsonProblem, UnreadableAnswer
from benchcard.records.rows import OutputRow
from benchcard.records.runreader import JudgeReader
from benchcard.scoring.judge.spec import JudgeSpec

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.S)
_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*:\s*(\S+)$")


def read_answer(spec: JudgeSpec, text: str) -> dict[str, float]:
    """The metrics one judge answer gives: `score` in [0, 1], and `criterion.<id>` for each criterion."""
    names = [c.id for c in spec.criteria]
    if spec.answer == "bare":
        return {"score": _bare(spec, text)}
    raw = _json_grades(spec, text, names) if spec.answer == "json" else _line_grades(spec, text, names)
    if not names:
        return {"score": raw["grade"]}
    metrics = {f"criterion.{n}": raw[n] for n in names}
    return {"score": sum(metrics.values()) / len(metrics), **metrics}


def _line_grades(spec: JudgeSpec, text: str, names: list[str]) -> dict[str, float]:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    wanted = names or ["grade"]
    if len(lines) < len(wanted):
        raise UnreadableAnswer(f"expected {len(wanted)} final line(s) `{wanted[0]}: <grade>`, got {len(lines)}")
    out: dict[str, float] = {}
    for name, line in zip(wanted, lines[-len(wanted):], strict=True):
        m = _LINE.match(line)
        if m is None or m.group(1).lower() != name.lower():
            raise UnreadableAnswer(f"expected a line `{name.upper() if not names else name}: <grade>`, "
                                   f"got {line[:60]!r}")
        out[name] = _value(spec, m.group(2))
    return out


def _json_grades(spec: JudgeSpec, text: str, names: list[str]) -> dict[str, float]:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:  # strictly: a grade key written twice (`{"grade": 1, "grade": 5}`) was read as its last, silently
        obj = strict_json(body)
    except JsonProblem as exc:
        raise UnreadableAnswer(f"expected one JSON object, each key once and every number finite ({exc})") from None
    except (ValueError, RecursionError):
        raise UnreadableAnswer("expected one JSON object and nothing else") from None
    if not isinstance(obj, dict):
        raise UnreadableAnswer("expected a JSON object")
    wanted = names or ["grade"]
    extra = sorted(set(obj) - set(wanted) - {"reason"})
    missing = [k for k in wanted if k not in obj]
    if extra or missing:
        raise UnreadableAnswer(f"expected the keys {', '.join(wanted)} (and optionally reason); "
                               + (f"missing {missing[0]}" if missing else f"unexpected {extra[0]}"))
    if "reason" in obj and not isinstance(obj["reason"], str):
        raise UnreadableAnswer("expected reason to be text")
    return {k: _value(spec, obj[k]) for k in wanted}


def _bare(spec: JudgeSpec, text: str) -> float:
    """The whole reply is the grade: surrounding whitespace and one final period aside, nothing else."""
    word = text.strip()
    word = word[:-1] if word.endswith(".") else word
    if not word or any(ch.isspace() for ch in word):
        raise UnreadableAnswer(f"expected only {spec.scale.describe()}, got {text.strip()[:40]!r}")
    return _value(spec, word)


def _value(spec: JudgeSpec, value: Any) -> float:
    scale = spec.scale
    if scale.nominal:
        passed, failed = (label.casefold() for label in scale.labels)
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, str) and value.casefold() in (passed, failed):
            return 1.0 if value.casefold() == passed else 0.0
        raise UnreadableAnswer(f"expected {scale.describe()}, got {str(value)[:30]!r}")
    if isinstance(value, str) and (number := _signed(value)) is not None:  # not int()'s '٣' or '1_2'
        value = number
    if isinstance(value, int) and not isinstance(value, bool) and scale.low <= value <= scale.high:
        return scale.value(value)
    raise UnreadableAnswer(f"expected {scale.describe()}, got {str(value)[:30]!r}")


def _signed(text: str) -> int | None:
    """A grade written as a whole number, with one sign or none (`-2`, `+1`, `3`), in ASCII digits."""
    magnitude = ascii_int(text[1:] if text.startswith(("+", "-")) else text)
    return None if magnitude is None else -magnitude if text.startswith("-") else magnitude


def read_judgements(spec: JudgeSpec, judged: JudgeReader) -> dict[str, list[dict[str, float] | None]]:
    """Per judged output, its judgements in order k = 0..: the metrics of a readable answer, None otherwise
    (failed, truncated, unreadable or not yet made). The judge's pass scores with this, and the verdict's
    agreement figures read it."""
    rows: dict[str, OutputRow] = {row.cell: row for row in judged.iter_outputs()}
    out: dict[str, list[dict[str, float] | None]] = {}
    for req in judged.iter_judge_requests():
        grades = out.setdefault(req.output, [None] * spec.judgements)
        row = rows.get(req.cell)
        if row is None or row.status != "ok":
            continue
        try:
            grades[req.judgement] = read_answer(spec, row.text)
        except UnreadableAnswer:
            continue
    return out
