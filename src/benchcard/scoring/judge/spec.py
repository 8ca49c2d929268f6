"""The `judge` scoring method as a card states it: the judge's rig, prompt template, rubric, scale and answer form.

All of it sits under the card's `scoring:` block, so the seal covers it like any other scorer: a change of the
judge's model, params, prompt, rubric, scale or parser is a change of the protocol, hence a new version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from benchcard._util.slots import slot_name, slots_in
from benchcard.errors import CardError

Fail = Callable[[Sequence[str | int], str], CardError]
#: Given a problem that only a check newer than some sealed cards finds (since 2026-12-07): the card reader keeps
#: it, and refuses the card for it unless the version's seal holds (card/load.py).
Newer = Callable[[CardError], None]

SLOTS = ("output", "fixture", "key", "rubric", "format")
#: A slot's name as a judge's prompt read it before 2026-12-07: `{{key.answer}}` and `{{a-b}}` were sent as text.
_NAME_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CRITERION_ID = re.compile(r"[a-z][a-z0-9_]*")
LABEL = re.compile(r"[A-Za-z]+")
JUDGE_FIELDS = frozenset({"method", "rig", "params", "prompt", "rubric", "scale", "answer", "judgements",
                          "agreement_floor"})
PARAMS: dict[str, tuple[type, ...]] = {"max_tokens": (int,), "temperature": (int, float), "top_p": (int, float),
                                       "seed": (int,)}
MAX_JUDGEMENTS = 25
#: What each optional field of a judge's `scoring:` block means when left out, by its path under `scoring`: the
#: parser reads these, and a seal holds a card the same written out or not (card/_defaults.py).
JUDGE_DEFAULTS: dict[tuple[str, ...], object] = {("answer",): "final_line", ("judgements",): 1,
                                                 ("agreement_floor",): None, ("rig", "effort"): None,
                                                 ("prompt", "system"): None}


@dataclass(frozen=True)
class Scale:
    """How a grade reads: `pass_fail` (PASS = 1, FAIL = 0) or the integers min..max mapped linearly to [0, 1]."""

    kind: Literal["pass_fail", "integer"]
    low: int = 0
    high: int = 1
    labels: tuple[str, str] = ("PASS", "FAIL")  # a pass/fail scale's words for pass and fail

    def value(self, grade: int) -> float:
        """A grade mapped to [0, 1]; pass/fail grades are 1 and 0 already."""
        return (grade - self.low) / (self.high - self.low)

    def describe(self) -> str:
        if self.kind == "pass_fail":
            return " or ".join(self.labels)
        return f"a whole number from {self.low} to {self.high}"

    @property
    def nominal(self) -> bool:
        return self.kind == "pass_fail"


@dataclass(frozen=True)
class Criterion:
    """One named criterion of a rubric; its grade is the metric `criterion.<id>`."""

    id: str
    ask: str


@dataclass(frozen=True)
class JudgeSpec:
    """A model judge: who judges (provider, model, params), what it is shown (the prompt template), how it
    grades (rubric, scale), how its answer is read (`final_line` or `json`), and how often (`judgements`)."""

    provider: str
    model: str
    effort: str | None
    params: Mapping[str, Any]
    system: str | None
    user: str
    rubric: str | tuple[Criterion, ...]
    scale: Scale
    answer: Literal["final_line", "json", "bare"]
    judgements: int = 1
    agreement_floor: float | None = None
    # whether a backslash before a slot escapes it (`_util/slots.py`): False in a version sealed before the escape,
    # read as it was sealed (`card.load`); not a field of the card, so the sealed digests are unchanged
    escapes: bool = True

    @property
    def criteria(self) -> tuple[Criterion, ...]:
        return self.rubric if isinstance(self.rubric, tuple) else ()

    def slots(self) -> set[str]:
        """The names of the slots the template fills (an escaped `\\{{key}}` is text, `_util/slots.py`)."""
        return {slot_name(s) for s in slots_in((self.system or "") + "\n" + self.user, escapes=self.escapes)}

    @property
    def uses_key(self) -> bool:
        return "key" in self.slots()

    @property
    def uses_fixture(self) -> bool:
        return "fixture" in self.slots()

    def metric_names(self) -> set[str]:
        return {"score"} | {f"criterion.{c.id}" for c in self.criteria}


def refuse(problem: CardError) -> None:
    """`newer`'s default: a problem of a newer check is raised as any other."""
    raise problem


def parse_judge(raw: Mapping[str, Any], fail: Fail, newer: Newer = refuse, escapes: bool = True) -> JudgeSpec:
    """Validate `scoring: {method: judge, ...}`; `fail(where, expected)` builds the one-line error, `newer` is
    handed a problem of a check added after cards were sealed without it (by default, raised); `escapes`: whether a
    backslash before a slot escapes it (False: a version sealed before the escape, `_util/slots.py`)."""
    extra = sorted(set(map(str, raw)) - JUDGE_FIELDS)
    if extra:
        raise fail((extra[0],), f"unknown field for judge scoring; expected {', '.join(sorted(JUDGE_FIELDS))}")
    provider, model, effort = _rig(raw, fail)
    params = _params(_mapping(raw, "params", fail, "the judge's params, e.g. {max_tokens: 200, temperature: 0.7}"),
                     fail)
    system, user = _prompt(raw, fail, newer, escapes)
    scale = _scale(raw.get("scale"), fail)
    answer = raw.get("answer", JUDGE_DEFAULTS[("answer",)])
    if answer not in ("final_line", "json", "bare"):
        raise fail(("answer",), f"expected final_line, json or bare, got {answer!r}")
    rubric = _rubric(raw.get("rubric"), fail)
    if answer == "bare" and isinstance(rubric, tuple):
        raise fail(("answer",), "a bare answer is one grade; criteria need final_line or json")
    judgements = raw.get("judgements", JUDGE_DEFAULTS[("judgements",)])
    if isinstance(judgements, bool) or not isinstance(judgements, int) or not 1 <= judgements <= MAX_JUDGEMENTS:
        raise fail(("judgements",), f"expected how many times each output is judged (1 to {MAX_JUDGEMENTS}), "
                                    f"got {judgements!r}")
    floor = raw.get("agreement_floor")
    if floor is not None:
        if isinstance(floor, bool) or not isinstance(floor, int | float) or not -1.0 <= floor <= 1.0:
            raise fail(("agreement_floor",), f"expected Krippendorff's alpha between -1 and 1, got {floor!r}")
        if judgements < 2:
            raise fail(("agreement_floor",), "a floor on the judge's agreement with itself needs judgements: 2 or "
                                             "more (one judgement per output cannot disagree with itself)")
        floor = float(floor)
    return JudgeSpec(provider=provider, model=model, effort=effort, params=params, system=system, user=user,
                     rubric=rubric, scale=scale, answer=answer, judgements=judgements,
                     agreement_floor=floor, escapes=escapes)


def _rig(raw: Mapping[str, Any], fail: Fail) -> tuple[str, str, str | None]:
    """The judge's rig: provider, model and effort (null, low, medium or high)."""
    rig = _mapping(raw, "rig", fail, "the judge's rig: {provider, model}")
    bad = sorted(set(map(str, rig)) - {"provider", "model", "effort"})
    if bad:
        raise fail(("rig", bad[0]), "unknown field; expected provider, model or effort")
    provider, model = (_text(rig, ("rig", name), fail) for name in ("provider", "model"))
    effort = rig.get("effort")
    if effort not in (None, "low", "medium", "high"):
        raise fail(("rig", "effort"), f"expected null, low, medium or high, got {effort!r}")
    return provider, model, effort


def _prompt(raw: Mapping[str, Any], fail: Fail, newer: Newer, escapes: bool) -> tuple[str | None, str]:
    """The judge's prompt: an optional system text and the user text, their slots checked."""
    prompt = _mapping(raw, "prompt", fail, "the judge's prompt: {system, user} with {{output}}")
    bad = sorted(set(map(str, prompt)) - {"system", "user"})
    if bad:
        raise fail(("prompt", bad[0]), "unknown field; expected system or user")
    system = prompt.get("system")
    if system is not None and not isinstance(system, str):
        raise fail(("prompt", "system"), "expected text")
    user = _text(prompt, ("prompt", "user"), fail)
    _check_slots(system, user, fail, newer, escapes)
    return system, user


def _mapping(raw: Mapping[str, Any], name: str, fail: Fail, what: str) -> Mapping[str, Any]:
    value = raw.get(name)
    if not isinstance(value, Mapping):
        raise fail((name,), f"missing; expected {what}")
    return value


def _text(raw: Mapping[str, Any], where: tuple[str, ...], fail: Fail) -> str:
    value = raw.get(where[-1])
    if not isinstance(value, str) or not value.strip():
        raise fail(where, "missing; expected text")
    return value


def _params(params: Mapping[str, Any], fail: Fail) -> dict[str, Any]:
    for name, value in params.items():
        types = PARAMS.get(str(name))
        if types is None:
            raise fail(("params", str(name)), f"unknown parameter; expected one of {', '.join(PARAMS)}")
        if isinstance(value, bool) or not isinstance(value, types):
            raise fail(("params", str(name)), f"expected a {types[0].__name__}, got {value!r}")
    if not isinstance(params.get("max_tokens"), int) or params["max_tokens"] < 1:
        raise fail(("params", "max_tokens"), "missing; expected a positive integer")
    return dict(params)


def _check_slots(system: str | None, user: str, fail: Fail, newer: Newer, escapes: bool) -> None:
    """Only the blind slots may be filled: a `{{variant}}` (or any unknown slot) is a card error, which names the
    escape that sends its braces as text (`\\{{x}}`). A dotted or dashed name (`{{key.answer}}`), which the
    judge's prompt sent as text before 2026-12-07, is refused since (`newer`): the judge got braces for a value."""
    for where, text in ((("prompt", "system"), system or ""), (("prompt", "user"), user)):
        for slot in slots_in(text, escapes=escapes):
            name = slot_name(slot)
            if name not in SLOTS:
                why = " — the judge never sees which variant produced an output" if name == "variant" else ""
                problem = fail(where, f"unknown slot {slot}{why}; expected {', '.join('{{' + s + '}}' for s in SLOTS)} "
                                      f"(write \\{slot} to send {slot} as text)")
                if _NAME_BEFORE.fullmatch(name):
                    raise problem
                newer(problem)
    names = [slot_name(s) for s in slots_in((system or "") + "\n" + user, escapes=escapes)]
    if names.count("output") != 1:
        raise fail(("prompt", "user"), f"expected the slot {{{{output}}}} exactly once, found {names.count('output')}")
    if "rubric" not in names:
        raise fail(("prompt", "user"), "expected the slot {{rubric}}: the judge must be shown what it grades")


def _scale(raw: Any, fail: Fail) -> Scale:
    if raw == "pass_fail":
        return Scale("pass_fail")
    if isinstance(raw, Mapping) and set(map(str, raw)) == {"pass", "fail"}:
        words = (raw["pass"], raw["fail"])
        if (all(isinstance(w, str) and LABEL.fullmatch(w) for w in words)
                and str(words[0]).casefold() != str(words[1]).casefold()):
            return Scale("pass_fail", labels=(str(words[0]), str(words[1])))
        quote = (" (quote them: YAML reads an unquoted Yes or No as true or false)"
                 if any(isinstance(w, bool) for w in words) else "")
        raise fail(("scale",), f"expected two different words for pass and fail, such as {{pass: \"Yes\", fail: "
                               f"\"No\"}}, got {raw!r}{quote}")
    if isinstance(raw, Mapping) and set(map(str, raw)) == {"min", "max"}:
        low, high = raw["min"], raw["max"]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) and low < high:
            return Scale("integer", low, high)
    raise fail(("scale",), f"expected pass_fail, {{pass: \"Yes\", fail: \"No\"}} or {{min: 1, max: 5}} (whole numbers, "
                           f"min < max), got {raw!r}")


def _rubric(raw: Any, fail: Fail) -> str | tuple[Criterion, ...]:
    if isinstance(raw, str) and raw.strip():
        return raw
    if not isinstance(raw, list) or not raw:
        raise fail(("rubric",), "expected the rubric as text (one grade) or a list of {id, ask} criteria")
    out: list[Criterion] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or set(map(str, item)) != {"id", "ask"}:
            raise fail(("rubric", i), "expected a criterion {id, ask}")
        cid, ask = item["id"], item["ask"]
        if not isinstance(cid, str) or not CRITERION_ID.fullmatch(cid):
            raise fail(("rubric", i, "id"), f"expected an id of [a-z][a-z0-9_]*, got {cid!r}")
        if cid in {c.id for c in out}:
            raise fail(("rubric", i, "id"), f"duplicate criterion id {cid!r}")
        if not isinstance(ask, str) or not ask.strip():
            raise fail(("rubric", i, "ask"), "missing; expected what the judge checks")
        out.append(Criterion(cid, ask))
    return tuple(out)
