"""The validating reader behind `load_card`: a card's YAML text to a `Card`, field by field.

Every error is one line naming the file, the field, its line and what was expected (`cards/x.yaml:12: field
'win.alpha': expected …`), because a card is written by hand and a traceback teaches nothing.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from benchcard._util.names import folded, hidden_problem, length_problem, name_problem, shown, windows_name_problem
from benchcard._util.slots import slots_in
from benchcard._util.text import ascii_int
from benchcard._util.yamlread import load_yaml, yaml_number
from benchcard.card._dataset import DataFile, card_data_file, input_slot, is_data_file
from benchcard.card._defaults import SPENDINGS, default_of
from benchcard.card._fixtures import data_file_problems, fixture_files, later_name_problems, miscased_problem
from benchcard.card.model import (
    FIXTURE_SLOT,
    GAMMA_LIMIT,
    PROSE_FIELDS,
    VARIANT_SLOT,
    Card,
    Clause,
    Example,
    HistoryEntry,
    Prompt,
    Rig,
    Sequential,
    WinRule,
)
from benchcard.errors import CardError
from benchcard.project import Project
from benchcard.scoring.judge.spec import JudgeSpec
from benchcard.scoring.scorers import ScoringSpec, metric_names, metric_range, parse_scoring

ID_PATTERN = re.compile(r"[a-z0-9-]+")
#: A run published outside benchcard (`history[].published_runs[].run`): it names its folder in the site, which
#: `site` builds for such a name alone (`publish/_runs.published_runs`).
PUBLISHED_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: The longest card id: it names the folders of the card's every path (`names.MAX_PATH_CHARS`).
MAX_CARD_ID = 64
EFFORTS = (None, "low", "medium", "high")
TESTS = ("rises", "falls", "not_rises", "not_falls", "holds")
GUARDS = ("not_rises", "not_falls")
WIN_FIELDS = frozenset({"all", "alpha", "equivalence_margin", "min_effect", "allow_failed", "accept_cannot_win"})
#: The most calls (variants × fixtures × repetitions) a card may plan: a run's grid is drawn, and its requests
#: written and sealed, whole before the first call, so a larger one would hang there (10× the largest grid
#: measured, docs/scale.md).
MAX_CALLS = 1_000_000
#: The most looks a sequential card may take: each is a boundary computed over those before it (1,000 looks took
#: `check` 30 s, docs/cards.md), and no design gains from more.
MAX_LOOKS = 50
#: The largest `max_tokens`: more than any model answers; a larger one only inflates `plan`'s ceiling and cost.
MAX_TOKENS = 1_000_000
PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "max_tokens": (int,),
    "temperature": (int, float),
    "top_p": (int, float),
    "seed": (int,),
    "stop": (list,),
}
_PARAM_WHAT = {"max_tokens": "a whole number", "temperature": "a number", "top_p": "a number",
               "seed": "a whole number", "stop": "a list of texts"}
# The fields a card may have: the protocol ones (sealed) and the prose ones (`card.PROSE_FIELDS`).
PROBE_FIELDS = frozenset({"id", "version", "kind", "rig", "params", "prompt", "repetitions", "scoring",
                          "sequential"})
AB_FIELDS = PROBE_FIELDS | {"variants", "baseline", "fixtures", "win"}
PROBE_ONLY_FIELDS = frozenset({"gate"})  # a probe's sealed CI gate; an ab card's gate is its win rule
TOP_FIELDS = AB_FIELDS | PROBE_ONLY_FIELDS | PROSE_FIELDS
# A history entry may carry any protocol field of its version that differs from the current card.
CHANGEABLE_FIELDS = (AB_FIELDS | PROBE_ONLY_FIELDS) - {"id", "version"}
HISTORY_FIELDS = frozenset({"version", "note", "date", "published_runs"}) | CHANGEABLE_FIELDS


def read_card(text: str, source: str, project: Project, path: Path, escapes: bool = True) -> Card:
    """Parse and validate one card's text; `source` is the file as errors name it, `escapes` whether a backslash
    before a slot escapes it (False: a version sealed before the escape, `_util/slots.py`, `load.load_card`)."""
    raw, lines = load_yaml(text, source, CardError)
    return _Reader(raw, lines, source, project, path, escapes).card()


def parse_yaml(text: str, source: str) -> tuple[Any, dict[tuple[str, ...], int]]:
    """A card's YAML (strict and bounded, `_util/yamlread.py`) and the line of every mapping key."""
    return load_yaml(text, source, CardError)


def field_locator(path: Path, source: str) -> Callable[..., str]:
    """`at(*field)`: `source:LINE` of a card's field (`at("examples", "0")`), or `source` alone when the file no
    longer parses (a race with an editor loses only the line number), for a line `check` prints after loading."""
    try:
        _, lines = parse_yaml(path.read_text(encoding="utf-8"), source)
    except (OSError, ValueError, CardError):
        lines = {}

    def at(*field: str) -> str:
        line = lines.get(tuple(field))
        return f"{source}:{line}" if line else source

    return at


def _slot_found(slot: str, slots: list[str]) -> str:
    """What an ab prompt holds instead of `slot` (twice, or a slot misspelt: `{{varaint}}`), to end its line."""
    if slots.count(slot) > 1:
        return f" (it holds it {slots.count(slot)} times)"
    others = [other for other in dict.fromkeys(slots)
              if other not in (VARIANT_SLOT, FIXTURE_SLOT) and not other.startswith("{{fixture.")]
    return f" (it holds {', '.join(others)}: misspelt?)" if others else ""


class _Reader:
    """Validation of one card's raw mapping, field by field."""

    def __init__(self, raw: Any, lines: dict[tuple[str, ...], int], source: str, project: Project, path: Path,
                 escapes: bool = True):
        self.raw, self.lines, self.source, self.project, self.path = raw, lines, source, project, path
        self.escapes = escapes  # the slot rule (`_util/slots.py`)
        self.later: list[CardError] = []  # problems of the checks newer than some seals: `newer`

    def newer(self, problem: CardError) -> None:
        """Keep a problem that only a check added after cards were sealed without it finds (since 2026-12-07: a
        rule's unknown field, an id that is a Windows device name, an empty rig name, a probe's `futility: true`, a
        margin no gap of its metric can reach, a history entry of no version or of one twice):
        the card is read all the same, and `load.load_card` refuses it unless the version's seal holds, so that a
        version sealed before the check still gets its verdict, its resume, its status and its pages, and an
        unsealed one is refused."""
        self.later.append(problem)

    def fail(self, where: Sequence[str | int], expected: str) -> CardError:
        keys = tuple(str(w) for w in where)
        line = None
        for n in range(len(keys), 0, -1):
            if keys[:n] in self.lines:
                line = self.lines[keys[:n]]
                break
        loc = f":{line}" if line else ""
        name = ".".join(keys) or "(top level)"
        return CardError(f"{self.source}{loc}: field '{name}': {expected}{_quote_hint(_at(self.raw, keys), expected)}")

    def get(
        self, obj: Any, where: Sequence[str | int], types: tuple[type, ...], what: str, required: bool = True
    ) -> Any:
        value = obj.get(str(where[-1])) if isinstance(obj, Mapping) else None
        if value is None:
            if required:
                raise self.fail(where, f"missing; expected {what}")
            return None
        if isinstance(value, bool) and bool not in types:
            raise self.fail(where, f"expected {what}, got {value!r}")
        if not isinstance(value, types):
            raise self.fail(where, f"expected {what}, got {_show(value)}")
        if isinstance(value, float) and not math.isfinite(value):  # `.nan`, `.inf`: the seal's canonical JSON has
            raise self.fail(where, f"expected {what}, got {value} (not a finite number)")  # none, said without a line
        return value

    def optional(self, obj: Any, where: Sequence[str | int], types: tuple[type, ...], what: str) -> Any:
        """`get` of a field that may be left out (or null): then its value is the one `DEFAULTS` gives, the
        same a seal reads a left-out field as (card/_defaults.py)."""
        value = self.get(obj, where, types, what, required=False)
        return default_of(where) if value is None else value

    def card(self) -> Card:
        raw = self.raw
        if not isinstance(raw, Mapping):
            raise self.fail((), "expected a mapping of card fields")
        unknown = sorted(set(map(str, raw)) - TOP_FIELDS)
        if unknown:
            raise self.fail((unknown[0],), f"unknown field; expected one of {', '.join(sorted(TOP_FIELDS))}")
        card_id, version, kind = self._identity(raw)
        scoring = self.scoring()
        if kind == "probe" and isinstance(scoring, JudgeSpec) and (scoring.uses_fixture or scoring.uses_key):
            raise self.fail(("scoring", "prompt", "user"), "a probe has no fixtures or keys; expected a judge "
                                                           "prompt without {{fixture}} and {{key}}")
        common: dict[str, Any] = dict(
            id=card_id,
            version=version,
            kind=kind,
            path=self.path,
            raw=raw,
            rig=self.rig(),
            params=self.params(),
            prompt=self.prompt(kind),
            repetitions=self.repetitions(),
            scoring=scoring,
            examples=self.examples(scoring),
            history=self.history(version),
            category=self.get(raw, ("category",), (str,), "text", required=False) or "",
            title=self.get(raw, ("title",), (str,), "text"),
            summary=self.get(raw, ("summary",), (str,), "text", required=False) or "",
            rubric=tuple(self.strings(("rubric",), required=False)),
            rubric_intro=self.get(raw, ("rubric_intro",), (str,), "text", required=False) or "",
            question=self.get(raw, ("question",), (str,), "text", required=False) or "",
            variable=self.get(raw, ("variable",), (str,), "text", required=False) or "",
            page=self.get(raw, ("page",), (dict,), "a mapping of prose sections", required=False) or {},
        )
        if kind == "ab":
            if "gate" in raw:
                raise self.fail(("gate",), "only a probe card has a gate; an ab card's CI gate is its win rule")
            common.update(self.ab_fields(card_id, scoring))
        else:
            common["gate"], common["gate_alpha"] = self.gate()
            for name in sorted(AB_FIELDS - PROBE_FIELDS):
                if name in raw:
                    raise self.fail((name,), "only an ab card has this field (kind is probe)")
        self.check_size(len(common.get("variants", {})) or 1, len(common.get("fixtures", {})) or 1,
                        common["repetitions"], scoring.judgements if isinstance(scoring, JudgeSpec) else 0)
        common["sequential"] = self.sequential(kind, common["repetitions"], common.get("variants", {}),
                                               common.get("gate"))
        common["later_checks"] = tuple(map(str, self.later))
        common["slot_escapes"] = self.escapes
        return Card(**common)

    def check_size(self, variants: int, fixtures: int, repetitions: int, judgements: int = 0) -> None:
        """A grid of more than MAX_CALLS calls, a judge's among them (`judgements` per output), is one line naming
        the field that makes it so and the calls, before anything draws, writes or simulates it."""
        cells = variants * fixtures * repetitions
        calls = cells * (1 + judgements)
        if calls <= MAX_CALLS:
            return
        grid = f"{variants} variant(s) × {fixtures:,} fixture(s) × {repetitions:,} repetition(s) is {cells:,} calls"
        if judgements:
            grid += f" and {cells * judgements:,} judge calls ({judgements} per output), {calls:,} in all"
        limit = f"more than the {MAX_CALLS:,} a run may plan (its grid is drawn and sealed whole before the first call)"
        each = 1 + judgements
        fewer = f" (or fewer than {judgements} judgements per output)" if judgements > 1 else ""
        if variants * fixtures * each > MAX_CALLS:
            raise self.fail(("fixtures",), f"{grid}, {limit}; expected at most {MAX_CALLS // (variants * each):,} "
                                           f"fixtures{fewer}")
        raise self.fail(("repetitions",), f"{grid}, {limit}; expected at most "
                                          f"{MAX_CALLS // (variants * fixtures * each):,} repetitions{fewer}")

    def _identity(self, raw: Mapping[str, Any]) -> tuple[str, int, str]:
        """The card's id (matching its file name), version and kind."""
        card_id = self.get(raw, ("id",), (str,), "an id of [a-z0-9-]+")
        if not ID_PATTERN.fullmatch(card_id):  # `match` of `^…$` let a final newline through
            raise self.fail(("id",), f"expected [a-z0-9-]+, got {card_id!r}")
        device = windows_name_problem(card_id)
        if device is not None:
            self.newer(self.fail(("id",), f"the id {card_id!r} {device}, so a clone of the project there cannot "
                                          f"hold cards/{card_id}.yaml or its fixtures/, keys/ and results/ folders; "
                                          "choose another id"))
        elif card_id.startswith("-"):
            self.newer(self.fail(("id",), f"the id {card_id!r} starts with '-', so a command given it "
                                          f"(benchcard run {card_id}) reads it as an option; expected a letter or a "
                                          "digit first"))
        elif len(card_id) > MAX_CARD_ID:
            self.newer(self.fail(("id",), f"the id is {len(card_id)} characters long; expected at most "
                                          f"{MAX_CARD_ID}, since it names the folders of every path of the card "
                                          f"(results/{card_id[:8]}…/v<N>/<run>/…), which a Windows clone holds "
                                          "in 260 characters in all"))
        if self.path.stem != card_id:
            other = self.project.card_path(card_id)
            if other.is_file():
                raise self.fail(("id",), f"duplicate card id '{card_id}', also in {self.project.relative(other)}")
            raise self.fail(("id",), f"id '{card_id}' must match the file name ({self.path.stem}.yaml)")
        version = self.get(raw, ("version",), (int,), "a positive integer")
        if version < 1:
            raise self.fail(("version",), f"expected a positive integer, got {version}")
        kind = self.get(raw, ("kind",), (str,), "probe or ab")
        if kind not in ("probe", "ab"):
            raise self.fail(("kind",), f"expected probe or ab, got {kind!r}")
        return card_id, version, kind

    def repetitions(self) -> int:
        """Absent means 1; 0 or a negative count is an error, never quietly run as 1."""
        reps = self.optional(self.raw, ("repetitions",), (int,), "a positive integer")
        if reps < 1:
            raise self.fail(("repetitions",), f"expected a positive integer, got {reps}")
        return int(reps)

    def strings(self, where: tuple[str, ...], required: bool = True) -> list[str]:
        items = self.get(self.raw, where, (list,), "a list of text", required=required) or []
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail((*where, i), f"expected text, got {_show(item)}")
        return list(items)

    def gate(self) -> tuple[float | None, float]:
        """A probe's pass threshold for `--gate` (the run passes when its mean score reaches `min_score`), and
        the α a sequential probe decides it at (`alpha`, default 0.05)."""
        raw = self.get(self.raw, ("gate",), (dict,), "a mapping such as {min_score: 0.9}", required=False)
        if raw is not None and (extra := sorted(set(map(str, raw)) - {"min_score", "alpha"})):
            raise self.fail(("gate", extra[0]), "unknown field; expected min_score or alpha")
        value = None if raw is None else self.get(raw, ("gate", "min_score"), (int, float), "a number from 0 to 1")
        if value is not None and not 0 <= value <= 1:
            raise self.fail(("gate", "min_score"), f"expected a number from 0 to 1, got {value}")
        if value == 0:  # a check of 2026-12-07 (`newer`): a version sealed with it still reads
            self.newer(self.fail(("gate", "min_score"), f"a gate at {value} passes every run, every answer wrong; "
                                                        "expected a number above 0, up to 1"))
        alpha = default_of(("gate", "alpha")) if raw is None else self.optional(
            raw, ("gate", "alpha"), (int, float), "a number between 0 and 0.5 (exclusive)")
        if not 0 < alpha < 0.5:
            raise self.fail(("gate", "alpha"), f"expected a number between 0 and 0.5 (exclusive), got {alpha:g}")
        return (None if value is None else float(value)), float(alpha)

    def sequential(self, kind: str, repetitions: int, variants: Mapping[str, str],
                   gate: float | None) -> Sequential | None:
        """The sealed looks of a sequential card (`sequential: {looks, spending, gamma, futility}`), or None."""
        raw = self.get(self.raw, ("sequential",), (dict,), "a mapping such as {looks: 3, spending: obrien-fleming}",
                       required=False)
        if raw is None:
            return None
        where = ("sequential",)
        if extra := sorted(set(map(str, raw)) - {"looks", "spending", "gamma", "futility"}):
            raise self.fail((*where, extra[0]), "unknown field; expected looks, spending, gamma or futility")
        if kind == "probe" and gate is None:
            raise self.fail(where, "a sequential probe stops when its gate is decided: give gate: {min_score: …}")
        if kind == "ab" and len(variants) != 2:
            raise self.fail(where, f"a sequential card compares one variant with its baseline; this one has "
                                   f"{len(variants) - 1} variants (run one card per variant)")
        looks = self._looks(raw.get("looks"), repetitions, first=2 if kind == "ab" else 1)
        names = ", ".join(SPENDINGS[:-1]) + f" or {SPENDINGS[-1]}"
        spending = self.get(raw, (*where, "spending"), (str,), names, required=False)
        if spending is not None and spending not in SPENDINGS:
            raise self.fail((*where, "spending"), f"expected {names}, got {spending!r}")
        futility = self.optional(raw, (*where, "futility"), (bool,), "true or false")
        if futility and kind == "probe":  # since 2026-12-07: a probe sealed with it before still reads
            self.newer(self.fail((*where, "futility"), "a probe stops only once its gate is passed or failed, never "
                                                       "for futility (futility is an ab card's: drop it)"))
        return Sequential(looks=looks, spending=spending, futility=futility, gamma=self._gamma(raw, spending))

    def _gamma(self, raw: Mapping[str, Any], spending: str | None) -> float | None:
        """Hwang–Shih–DeCani's γ: required with `spending: hsd`, refused with any other spending and with none
        named (the default's γ is the seal's, not the card's: `card.schedule.spending_of`)."""
        where = ("sequential", "gamma")
        what = (f"Hwang–Shih–DeCani's γ, a number from -{GAMMA_LIMIT:g} to {GAMMA_LIMIT:g} other than 0 (-4 spends "
                "like obrien-fleming, 1 like pocock)")
        if spending != "hsd":
            if "gamma" in raw and spending is None:
                raise self.fail(where, "a gamma needs spending: hsd written beside it")
            if "gamma" in raw:
                raise self.fail(where, f"only spending: hsd takes a gamma (this card spends {spending})")
            return None
        gamma = self.get(raw, where, (int, float), what)
        if not math.isfinite(gamma) or gamma == 0 or abs(gamma) > GAMMA_LIMIT:
            raise self.fail(where, f"expected {what}, got {gamma:g}")
        return float(gamma)

    def _looks(self, value: Any, repetitions: int, first: int) -> tuple[int, ...]:
        """`looks`: a count K (looks after ⌈kR/K⌉ repetitions, k = 1…K) or the list of cumulative counts."""
        where = ("sequential", "looks")
        if value is None:
            raise self.fail(where, "missing; expected a number of looks (2 or more) or a list of repetition counts")
        if isinstance(value, int) and not isinstance(value, bool):
            if not 2 <= value <= min(repetitions, MAX_LOOKS):
                raise self.fail(where, f"expected 2 to {min(repetitions, MAX_LOOKS)} looks (one per block of "
                                       f"repetitions at most, and at most {MAX_LOOKS}), got {value:,}")
            looks = tuple(-(-k * repetitions // value) for k in range(1, value + 1))
        elif isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            looks = tuple(value)
            if len(looks) < 2 or any(b <= a for a, b in itertools.pairwise(looks)) or looks[-1] != \
                    repetitions or looks[0] < 1:
                raise self.fail(where, f"expected 2 or more increasing repetition counts ending at repetitions "
                                       f"({repetitions}), got {value}")
        elif isinstance(value, float | list):  # 2.5 looks, or a look after 3.5 repetitions: not whole
            raise self.fail(where, "expected a whole number of looks (2 or more) or a list of whole repetition "
                                   f"counts, got {_show(value)}")
        else:
            raise self.fail(where, f"expected a number of looks or a list of repetition counts, got {_show(value)}")
        if len(looks) > MAX_LOOKS:
            raise self.fail(where, f"{len(looks):,} looks, more than the {MAX_LOOKS} a card may take (each is a "
                                   "boundary computed over those before it)")
        if looks[0] < first:
            raise self.fail(where, f"the first look comes after {looks[0]} repetition(s); an ab card's rule needs "
                                   f"{first} to measure its run-to-run spread (fewer looks, or more repetitions)")
        return looks

    def rig(self) -> Rig:
        rig = self.get(self.raw, ("rig",), (dict,), "a mapping with provider and model")
        extra = sorted(set(map(str, rig)) - {"provider", "model", "effort", "surface"})
        if extra:
            raise self.fail(("rig", extra[0]), "unknown field; expected provider, model, effort or surface")
        effort = rig.get("effort")
        if effort not in EFFORTS:
            raise self.fail(("rig", "effort"), f"expected null, low, medium or high, got {effort!r}")
        model = self.named(rig, ("rig", "model"), "a model name")
        surface = self.get(rig, ("rig", "surface"), (str,), "text", required=False)
        self.shown_name("model", model, name_problem)
        self.shown_name("surface", surface, hidden_problem)
        return Rig(
            provider=self.named(rig, ("rig", "provider"), "a provider name"),
            model=model,
            effort=effort,
            surface=surface,
        )

    def named(self, obj: Any, where: Sequence[str | int], what: str) -> str:
        """A name the rig needs (its provider, its model): text, and not empty. `""`, a placeholder left to fill in,
        would be sealed and then sent, and name the rig on every page, as `--model ""` is refused for. A version
        sealed with one before 2026-12-07 still reads (`newer`): its runs name their own rig, and a new run of it
        must name a model (`run/_conventions.new_targets`)."""
        value: str = self.get(obj, where, (str,), what)
        if not value:
            self.newer(self.fail(where, f"empty; expected {what}"))
        return value

    def shown_name(self, field: str, value: str | None, problem_of: Callable[[str], str | None]) -> None:
        """A rig's model as `--model` takes it, and its surface: the rig line names them on every page, row and
        verdict, so a character that does not show or reorders what follows (a right-to-left override made
        `test/<RLO>ledom · fake` read `test/ekaf · model`) is refused (`_util/names.py`). The surface is free text
        and gets only that check: a name's other rules (Unicode normal form) would refuse a `™` or a non-breaking
        hyphen, which trick nobody, in cards sealed before the check."""
        problem = None if value is None else problem_of(value)
        if problem is not None:
            raise self.fail(("rig", field), f"{field} name {shown(str(value))} {problem}")

    def params(self) -> dict[str, Any]:
        params = self.get(self.raw, ("params",), (dict,), "a mapping such as {max_tokens: 1000, temperature: 0}")
        for name, value in params.items():
            if name not in PARAM_TYPES:
                raise self.fail(("params", name), f"unknown parameter; expected one of {', '.join(PARAM_TYPES)}")
            self.get(params, ("params", name), PARAM_TYPES[name], _PARAM_WHAT[name])
            if name == "max_tokens" and not 1 <= value <= MAX_TOKENS:
                raise self.fail(("params", name), f"expected a positive integer of at most {MAX_TOKENS:,} (more than "
                                                  f"any model answers), got {value:,}")
            if isinstance(value, float) and not math.isfinite(value):
                raise self.fail(("params", name), f"expected a finite number, got {value}")
            if name in ("temperature", "top_p") and value < 0:
                raise self.fail(("params", name), f"expected a number >= 0, got {value}")
            problem = _param_problem(name, value)
            if problem:  # a check of 2026-12-07 (`newer`): a version sealed with one still reads
                self.newer(self.fail(("params", name), problem))
        if "max_tokens" not in params:
            raise self.fail(("params", "max_tokens"), "missing; expected a positive integer")
        return dict(params)

    def prompt(self, kind: str) -> Prompt:
        prompt = self.get(self.raw, ("prompt",), (dict,), "a mapping with user (and optional system)")
        extra = sorted(set(prompt) - {"system", "user"})
        if extra:
            raise self.fail(("prompt", extra[0]), "unknown field; expected system or user")
        system = self.get(prompt, ("prompt", "system"), (str,), "text", required=False)
        user = self.get(prompt, ("prompt", "user"), (str,), "text")
        if kind == "ab":
            slots = slots_in(system or "", escapes=self.escapes) + slots_in(user, escapes=self.escapes)
            fixtures = self.raw.get("fixtures")
            inputs = fixtures.get("input") if isinstance(fixtures, Mapping) else None
            several = isinstance(inputs, list) and len(inputs) > 1
            for slot in (VARIANT_SLOT,) if several else (VARIANT_SLOT, FIXTURE_SLOT):
                if slots.count(slot) != 1:
                    raise self.fail(("prompt", "user"), f"an ab prompt must contain {slot} exactly once"
                                    + _slot_found(slot, slots))
            names = [str(v) for v in inputs] if several and isinstance(inputs, list) else []
            filled = {VARIANT_SLOT, *(map(input_slot, names) if several else (FIXTURE_SLOT,))}
            for part, text in (("system", system or ""), ("user", user)):
                self._unfilled_slot(part, text, filled)
        return Prompt(system=system, user=user)

    def _unfilled_slot(self, part: str, text: str, filled: set[str]) -> None:
        """A `{{name}}` of an ab prompt that no slot of the card fills (`{{label}}`, `{{fixture.id}}`, `{{ variant }}`)
        would reach the model as its braces, where its author meant a value: one line naming the card's slots and
        the escape that sends the braces as text (`\\{{x}}`, `_util/slots.py`). A check of 2026-12-07 (`newer`): a
        version sealed with such a prompt still reads."""
        for slot in slots_in(text, escapes=self.escapes):
            if slot not in filled:
                self.newer(self.fail(("prompt", part), f"holds {slot}, which no slot of this card fills: it would "
                                     f"reach the model as written; expected only {', '.join(sorted(filled))} (write "
                                     f"\\{slot} to send {slot} as text)"))
                return

    def scoring(self) -> ScoringSpec:
        raw = self.get(self.raw, ("scoring",), (dict,), "a mapping with a method")
        return parse_scoring(raw, fail=lambda where, expected: self.fail(("scoring", *where), expected),
                             newer=self.newer, escapes=self.escapes)

    def examples(self, scoring: ScoringSpec) -> tuple[Example, ...]:
        items = self.get(self.raw, ("examples",), (list,), "a list of worked examples")
        if not items:
            raise self.fail(("examples",), "expected at least one worked example")
        out = []
        judged = isinstance(scoring, JudgeSpec)
        for i, item in enumerate(items):
            where = ("examples", i)
            if not isinstance(item, Mapping):
                raise self.fail(where, "expected a mapping with label, output and expect")
            allowed = {"label", "output", "expect", "fixture"} | ({"judge_answers"} if judged else set())
            extra = sorted(set(map(str, item)) - allowed)
            if extra:
                raise self.fail((*where, extra[0]), f"unknown field; expected {', '.join(sorted(allowed))}")
            label = self.get(item, (*where, "label"), (str,), "text")
            output = self.get(item, (*where, "output"), (str,), "the output text")
            expect = self.expect(item, where)
            fixture = self.get(item, (*where, "fixture"), (str,), "a fixture id as text", required=False)
            answers = tuple(self.judge_answers(item, where)) if judged else ()
            out.append(Example(label=label, output=output, expect=expect, fixture=fixture, judge_answers=answers))
        return tuple(out)

    def expect(self, item: Mapping[str, Any], where: tuple[str | int, ...]) -> str | dict[str, float]:
        """An example's `expect`: pass, fail, or metric → a finite number (NaN is no value a metric is compared
        to: every score "met" it)."""
        if "expect" not in item or item["expect"] is None:
            raise self.fail((*where, "expect"), "missing; expected pass, fail or a mapping of metric values")
        expect = item["expect"]
        if isinstance(expect, Mapping):
            for metric, value in expect.items():
                if not isinstance(value, int | float) or isinstance(value, bool):
                    raise self.fail((*where, "expect", metric), f"expected a number, got {_show(value)}")
                if not _finite(value):
                    raise self.fail((*where, "expect", metric), f"expected a finite number, got {_show(value)}")
            return {str(k): float(v) for k, v in expect.items()}
        if expect not in ("pass", "fail"):
            raise self.fail((*where, "expect"), f"expected pass, fail or a mapping, got {_show(expect)}")
        return str(expect)

    def judge_answers(self, item: Mapping[str, Any], where: tuple[str | int, ...]) -> list[str]:
        """A judge example's recorded judge answers: text, or a list of texts (one per recorded judgement)."""
        value = item.get("judge_answers")
        if value is None:
            return []
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise self.fail((*where, "judge_answers"), f"expected the judge's answer as text or a list of texts, "
                                                        f"got {_show(value)}")
        return list(values)

    def history(self, version: int) -> tuple[HistoryEntry, ...]:
        items = self.get(self.raw, ("history",), (list,), "a list of version notes")
        out: list[HistoryEntry] = []
        for i, item in enumerate(items):
            where = ("history", i)
            if not isinstance(item, Mapping):
                raise self.fail(where, "expected a mapping with version and note")
            extra = sorted(set(map(str, item)) - HISTORY_FIELDS)
            if extra:
                expected = ", ".join(sorted(HISTORY_FIELDS))
                raise self.fail((*where, extra[0]), f"unknown field; expected one of {expected}")
            v = self.get(item, (*where, "version"), (int,), "a version number")
            # a check of 2026-12-07 (`newer`): a version sealed with such an entry still reads, as it did before
            if isinstance(v, bool) or not 1 <= v <= version:
                self.newer(self.fail((*where, "version"),
                                     f"expected a version from 1 to the current {version}, got {v!r}"))
            elif any(h.version == v for h in out):  # one entry per version: the checks read one of two, silently
                self.newer(self.fail((*where, "version"), f"v{v} has an entry already; keep one entry per version"))
            note = self.get(item, (*where, "note"), (str,), "text")
            date = item.get("date")
            changes = {k: item[k] for k in sorted(CHANGEABLE_FIELDS) if k in item}
            runs = self.get(item, (*where, "published_runs"), (list,), "a list of runs", required=False) or []
            self._published_runs(runs, (*where, "published_runs"))
            out.append(
                HistoryEntry(version=v, note=note, date=str(date) if date else None, changes=changes,
                             published_runs=tuple(runs))
            )
        if version not in {h.version for h in out}:
            raise self.fail(("history",), f"expected an entry for the current version {version}")
        return tuple(out)

    def _published_runs(self, runs: list[Any], where: tuple[str | int, ...]) -> None:
        """Each run published outside benchcard names a folder of the site (`runs/<card>/v<N>/<run>/`), so its
        `run` is a name every machine holds, one per version whatever the case (`Run-1` and `run-1` are one folder
        on macOS and Windows, and the second page written replaced the first); `site` skipped a run without an id
        and ended in a traceback on one that is no mapping (`- run-19`). Checks of 2026-12-07, newer than a seal."""
        seen: dict[str, str] = {}
        for i, item in enumerate(runs):
            run = item.get("run") if isinstance(item, Mapping) else None
            if isinstance(run, int) and not isinstance(run, bool):
                run = str(run)
            at = (*where, i, "run") if isinstance(item, Mapping) else (*where, i)
            if not isinstance(run, str) or not PUBLISHED_RUN.fullmatch(run):
                got = _show(run if run is not None else item)
                self.newer(self.fail(at, "expected a mapping whose run is a name of ASCII letters, digits, '.', '_' "
                                         f"and '-', a letter or a digit first (its folder in the site), got {got}"))
                continue
            problem = windows_name_problem(run) or length_problem(run)
            if problem is not None:
                self.newer(self.fail(at, f"the run {run!r} {problem}, and it names the run's folder in the site; "
                                         "choose another"))
                continue
            other = seen.setdefault(folded(run), run)
            if other != run:
                self.newer(self.fail(at, f"the runs {other!r} and {run!r} differ only by case: on macOS and Windows "
                                         "their folders in the site are one; rename one"))

    def ab_fields(self, card_id: str, scoring: ScoringSpec) -> dict[str, Any]:
        raw = self.raw
        variants = self.get(raw, ("variants",), (dict,), "a mapping of variant name to inserted text")
        for name, text in variants.items():
            if name == "":  # `"": text`: each request was said to differ from the baseline's outside the variable
                raise self.fail(("variants",), "a variant's name is empty; expected a name such as A or with_rubric")
            if not isinstance(text, str):
                raise self.fail(("variants", name), f"expected text, got {_show(text)}")
        if len(variants) < 2:
            raise self.fail(("variants",), "expected a baseline and at least one variant")
        baseline = self.get(raw, ("baseline",), (str,), "the name of the baseline variant")
        if baseline not in variants:
            raise self.fail(("baseline",), f"expected one of the variants ({', '.join(map(str, variants))})")
        pattern, fixtures, dataset = self.fixtures(card_id, scoring)
        return dict(
            variants={str(k): v for k, v in variants.items()},
            baseline=baseline,
            fixtures_glob=pattern,
            fixtures=fixtures,
            dataset=dataset,
            win=self.win(metric_names(scoring), fixtures),
        )

    def fixtures(self, card_id: str, scoring: ScoringSpec) -> tuple[str, dict[str, Path], DataFile | None]:
        """The card's fixtures glob (or data file, as written), its fixtures by id, and its data file if any. A
        path written with a name that is another on disk but for its case (`Fixtures/` for `fixtures/`) is the
        one line when nothing is found as written (Linux), else a check newer than a seal (macOS, Windows)."""
        raw = self.raw
        if is_data_file(raw.get("fixtures")):
            written = raw["fixtures"] if isinstance(raw["fixtures"], str) else raw["fixtures"].get("file")
            other_case = (miscased_problem(self.project, self.source, written, data_file=True)
                          if isinstance(written, str) else None)
            if other_case is not None and not os.path.lexists(self.project.root / written):
                raise other_case
            dataset = card_data_file(self.raw, self.project, self.source, scoring, self.fail, self.escapes)
            for problem in [*data_file_problems(self.project, self.source, dataset.path), *filter(None, [other_case])]:
                self.newer(problem)
            return dataset.shown, dict.fromkeys(dataset.rows, dataset.path), dataset
        pattern = self.get(raw, ("fixtures",), (str,), "a glob such as fixtures/<id>/*.txt, or a .csv or .jsonl data "
                           "file")
        other_case = miscased_problem(self.project, self.source, pattern)
        fixtures = self.fixture_files(pattern, card_id)
        if not fixtures:
            raise other_case or self.fail(("fixtures",), f"the glob {pattern!r} matches no file")
        if other_case is not None:
            self.newer(other_case)
        return pattern, fixtures, None

    def fixture_files(self, pattern: str, card_id: str) -> dict[str, Path]:
        found = fixture_files(self.project, self.source, pattern)
        for problem in later_name_problems(self.project, self.source, card_id, found):
            self.newer(problem)
        return found

    def win(self, known: set[str], fixtures: Mapping[str, Any]) -> WinRule:  # known: the metrics there are
        raw = self.get(self.raw, ("win",), (dict,), "a mapping with all: [clauses]")
        extra = sorted(set(map(str, raw)) - WIN_FIELDS)
        if extra:
            raise self.fail(("win", extra[0]), f"unknown field; expected one of {', '.join(sorted(WIN_FIELDS))}")
        clauses_raw = self.get(raw, ("win", "all"), (list,), "a list of clauses")
        if not clauses_raw:
            raise self.fail(("win", "all"), "expected at least one clause")
        clauses = []
        for i, item in enumerate(clauses_raw):
            clauses.append(self._win_clause(item, ("win", "all", i), known, fixtures))
        if clauses[0].test not in ("rises", "falls"):
            raise self.fail(("win", "all", 0, "test"), "the first clause must be rises or falls (the effect sought)")
        alpha = self.optional(raw, ("win", "alpha"), (int, float), "a number between 0 and 0.5 (exclusive)")
        if not 0 < alpha < 0.5:
            raise self.fail(("win", "alpha"), f"expected a number between 0 and 0.5 (exclusive), got {alpha:g}")
        eq = self.get(raw, ("win", "equivalence_margin"), (int, float), "a positive number")
        if not eq > 0:
            raise self.fail(("win", "equivalence_margin"), f"expected a positive number (the smallest effect that "
                            f"matters on the first clause's metric), got {eq:g}")
        self._within_range(clauses[0].metric, float(eq), ("win", "equivalence_margin"),
                           f"an equivalence margin of {eq:g} leaves no effect it could show to be none")
        min_effect = self.optional(raw, ("win", "min_effect"), (int, float), "a number ≥ 0")
        if not min_effect >= 0:
            raise self.fail(("win", "min_effect"), f"expected a number ≥ 0, got {min_effect:g}")
        allow = self.optional(raw, ("win", "allow_failed"), (int,), "a count of cells")
        if allow < 0:
            raise self.fail(("win", "allow_failed"), f"expected a count of cells ≥ 0, got {allow}")
        accept = self.optional(raw, ("win", "accept_cannot_win"), (bool,), "true or false")
        return WinRule(clauses=tuple(clauses), alpha=float(alpha), equivalence_margin=float(eq), allow_failed=allow,
                       min_effect=float(min_effect), accept_cannot_win=accept)

    def _margin(self, item: Mapping[str, Any], where: tuple[str | int, ...], metric: str, test: str) -> float | None:
        """A clause's margin: required on a guard, positive and within the metric's range; refused on any other
        test (read by nothing there, it must not be ignored in silence)."""
        margin = self.get(item, (*where, "margin"), (int, float), "a positive number", required=False)
        if test in GUARDS and margin is None:
            why = "noisy data must not pass a guard for free"
            raise self.fail((*where, "margin"), f"a {test} guard needs a margin; {why}")
        if margin is None:
            return None
        if test not in GUARDS:
            why = "the smallest gap worth a win is win.min_effect" if test in ("rises", "falls") else "holds compares"
            raise self.fail((*where, "margin"), f"only a not_rises or not_falls guard takes a margin ({why}"
                            + (" with equals" if test == "holds" else "") + ")")
        if not margin > 0:
            raise self.fail((*where, "margin"), f"expected a positive number (a guard at margin {margin:g} "
                            "can only fail or pass by noise), got " + f"{margin:g}")
        self._within_range(metric, float(margin), (*where, "margin"), f"a guard at margin {margin:g} can never be "
                           "broken")
        return float(margin)

    def _within_range(self, metric: str, value: float, where: tuple[str | int, ...], so: str) -> None:
        """A margin a gap of `metric` can never reach, since its values are bounded (a score in [0, 1]): a guard
        that can never be broken, an equivalence margin wider than any effect. Refused unless the version was
        sealed before this check (2026-12-07, `newer`); a count has no upper bound and is not checked."""
        low, high = metric_range(metric)
        if high is not None and value >= high - low:
            width = high - low
            self.newer(self.fail(where, f"expected less than {width:g}: a gap of {metric}, a value in [{low:g}, "
                                        f"{high:g}], is never beyond ±{width:g}, so {so}; got {value:g}"))

    def _win_clause(self, item: Any, where: tuple[str | int, ...], known: set[str], fixtures: Mapping[str, Any]
                    ) -> Clause:
        """One clause of `win.all`: a known metric, its test, and the margin, fixture and level it needs."""
        if not isinstance(item, Mapping):
            raise self.fail(where, "expected a mapping with metric and test")
        extra = sorted(set(map(str, item)) - {"metric", "test", "fixture", "margin", "equals"})
        if extra:
            raise self.fail((*where, extra[0]), "unknown field; expected metric, test, fixture, margin or equals")
        metric = self.get(item, (*where, "metric"), (str,), "a metric name")
        if metric not in known:
            yields = ", ".join(sorted(known))
            raise self.fail((*where, "metric"), f"unknown metric {metric!r}; the scorer yields {yields}")
        test = self.get(item, (*where, "test"), (str,), "rises, falls, not_rises, not_falls or holds")
        if test not in TESTS:
            raise self.fail((*where, "test"), f"expected one of {', '.join(TESTS)}, got {test!r}")
        margin = self._margin(item, where, metric, test)
        fixture = self.get(item, (*where, "fixture"), (str,), "a fixture id as text", required=test == "holds")
        if fixture is not None and fixture not in fixtures:
            raise self.fail((*where, "fixture"), f"no fixture {fixture!r} among {', '.join(sorted(fixtures))}")
        equals = self.get(item, (*where, "equals"), (int, float), "a number", required=False)
        if equals is not None and test != "holds":
            raise self.fail((*where, "equals"), f"only a holds clause takes equals (a {test} clause compares the "
                            "two arms' means)")
        return Clause(metric=metric, test=test, fixture=fixture, margin=margin,
                      equals=float(default_of((*where, "equals")) if equals is None else equals))


def read_win_rule(raw: Any, lines: dict[tuple[str, ...], int], source: str, known: set[str],
                  fixtures: Mapping[str, Any]) -> WinRule:
    """A win block outside a card (`benchcard compare`), checked as a card's; `lines` keyed under `win`."""
    return _Reader({"win": raw}, lines, source, Project(Path.cwd()), Path(source)).win(known, fixtures)


def _at(raw: Any, keys: tuple[str, ...]) -> Any:
    """The raw value a field's path leads to (None when the path does not lead to one)."""
    for key in keys:
        index = ascii_int(key, digits=None)
        if isinstance(raw, Mapping):
            raw = raw.get(key)
        elif isinstance(raw, list) and index is not None and index < len(raw):
            raw = raw[index]
        else:
            return None
    return raw


def _param_problem(name: str, value: Any) -> str:
    """What no endpoint can take in a parameter of a type the card allows ("" when none): a stop that is no text
    (llama.cpp failed every cell on `stop: [1]`; an API refuses it) or is empty (it stops every reply before its
    first word, so each was scored as a wrong answer), a seed past a 64-bit integer (an API refuses it)."""
    if name == "stop":
        bad = next((i for i, item in enumerate(value) if not isinstance(item, str) or not item), None)
        if bad is not None:
            return (f"expected a list of non-empty texts (an empty one stops every reply at once), got "
                    f"{_show(value[bad])} at item {bad}")
    if name == "seed" and not -(2**63) <= value < 2**63:
        return f"expected a whole number of 64 bits (-2**63 to 2**63 - 1, as an API reads a seed), got {value:,}"
    return ""


def _finite(value: float) -> bool:
    """Whether a number read from YAML is one a float holds: not .nan or .inf, nor an integer past 1.8e308."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _quote_hint(value: Any, expected: str) -> str:
    """How to write text YAML 1.1 reads as another type: an expected answer `no` is read as false, and the user
    sees their word refused as if it were not text."""
    if "text" not in expected or "a list of text" in expected:
        return ""
    if isinstance(value, bool):
        words = '"yes", "on"' if value else '"no", "off"'
        return ("; YAML 1.1 reads yes, no, on, off, true and false unquoted as true/false, not as text: quote the "
                f"word as written ({words})")
    if isinstance(value, (date, datetime)):
        return f"; YAML reads {value.isoformat()} unquoted as a date: quote it (\"{value.isoformat()}\")"
    if isinstance(value, (int, float)):
        return f"; YAML reads it unquoted as the number {value!r}: quote the text as written"
    return ""


def _show(value: Any) -> str:
    kind = {dict: "a mapping", list: "a list", str: "text", bool: "true/false", int: "a number", float: "a number"}
    return f"{kind.get(type(value), type(value).__name__)} ({value!r}{_as_number(value)})"[:160]


def _as_number(value: Any) -> str:
    """Why a number came as text: YAML 1.1 reads `1e3` and `7e-1` (an exponent without a dot and a sign) as text."""
    if not isinstance(value, str) or not re.fullmatch(r"[-+]?[0-9.]+[eE][-+]?[0-9]+", value.strip()):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    return f"; YAML 1.1 reads it as text, write {yaml_number(number)}" if math.isfinite(number) else ""
