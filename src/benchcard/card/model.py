"""Cards: one YAML file per experiment, held as frozen values before anything is sealed or sent.

Here are the values a card is made of, finding and loading card files, and the messages a card renders; the
field-by-field validation of the YAML, with its one-line errors, is `cardreader.py`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchcard._util.names import one_file_on
from benchcard._util.names import shown as shown_name
from benchcard._util.safeio import miscased, read_regular_text
from benchcard._util.slots import fill_slots
from benchcard.card._dataset import DataFile, input_slot
from benchcard.card._defaults import ANY, DEFAULTS
from benchcard.errors import CardError
from benchcard.records.answerkey import AnswerKey
from benchcard.records.rows import rig_line
from benchcard.records.verdictfigures import clause_words
from benchcard.scoring.judge import JudgeSpec
from benchcard.scoring.keys import load_keys, needs_key
from benchcard.scoring.scorers import ScoringSpec

FixtureValue = str | Mapping[str, str]
#: The most bytes one fixture file may hold: about four million tokens, twice the longest context any model
#: reads. Every cell sends and seals its fixture, so a 100 MB one (accepted before) took `check` 17 s and 0.6 GB
#: and would have written 100 MB into sealed/requests.jsonl per cell.
MAX_FIXTURE_BYTES = 16 << 20
VARIANT_SLOT = "{{variant}}"
FIXTURE_SLOT = "{{fixture}}"


# Fields that describe a card to people; everything else is protocol and is sealed.
PROSE_FIELDS = frozenset(
    {"category", "title", "summary", "rubric", "rubric_intro", "question", "variable", "page", "history", "examples"}
)


@dataclass(frozen=True)
class Rig:
    """The model a card names; a run may use another and records the one it used."""

    provider: str
    model: str
    effort: str | None = None
    surface: str | None = None

    def line(self) -> str:
        """The rig line of the pages and the ledger, e.g. `claude-fable-5-1 · effort high · Claude API`."""
        return rig_line(self.model, self.effort, self.surface, self.provider)


@dataclass(frozen=True)
class Prompt:
    system: str | None
    user: str


@dataclass(frozen=True)
class Example:
    """A worked example: `expect` is 'pass' (must score 1), 'fail' (must score < 1) or metric → value.

    On a judge card, `judge_answers` are the judge's recorded answers for this output, which `check` reads with
    the card's parser offline (`check --live` asks the judge itself)."""

    label: str
    output: str
    expect: str | Mapping[str, float]
    fixture: str | None = None
    judge_answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clause:
    metric: str
    test: str
    fixture: str | None = None
    margin: float | None = None
    equals: float = DEFAULTS["win", "all", ANY, "equals"]

    @property
    def text(self) -> str:
        """The clause in words, as `check`, verdict.json and the pages say it (`clause_words`, which words a
        ledger row's clause too)."""
        return clause_words(self.metric, self.test, self.fixture, self.margin, self.equals)


@dataclass(frozen=True)
class WinRule:
    """The predeclared rule (docs/verdict.md); `min_effect` is the smallest gap of the first clause worth a win."""

    clauses: tuple[Clause, ...]
    alpha: float = DEFAULTS["win", "alpha"]
    equivalence_margin: float | None = None
    allow_failed: int = DEFAULTS["win", "allow_failed"]
    min_effect: float = DEFAULTS["win", "min_effect"]
    accept_cannot_win: bool = DEFAULTS["win", "accept_cannot_win"]
    """The card knows its design cannot show a win reliably (a pure A/A card, a pilot): `seal` accepts it."""


#: Hwang–Shih–DeCani's γ a card may seal (`spending: hsd` needs one, never 0): −4 spends like O'Brien–Fleming,
#: 1 like Pocock; beyond ±GAMMA_LIMIT nearly all α goes to the first or the last look.
GAMMA_LIMIT = 20.0


@dataclass(frozen=True)
class Sequential:
    """A sequential card's sealed schedule (`sequential:`, docs/cards.md): the sealed rule is computed after each
    block of repetitions in `looks` (cumulative counts, the last being the card's `repetitions`), α is spent
    across them as `spending` says (`gamma`: Hwang–Shih–DeCani's γ, with `hsd` only; None for both: the card names
    no spending, and spends the one its seal's rules say, else this benchcard's: `card.schedule.spending_of`), and
    the grid may stop for futility when `futility` is true."""

    looks: tuple[int, ...]
    spending: str | None = None
    futility: bool = DEFAULTS["sequential", "futility"]
    gamma: float | None = None

    def describe(self, repetitions: int, cells_per_repetition: int, spending: str) -> str:
        """One line: where the looks are, how α is spent (`spending`, as `spending_text` says it), whether
        futility stops (what `check` prints)."""
        at = ", ".join(str(r) for r in self.looks)
        calls = ", ".join(f"{r * cells_per_repetition:,}" for r in self.looks)
        futile = "may stop for futility" if self.futility else "never stops for futility"
        named = "" if self.spending is not None else " (the default)"
        return (f"{len(self.looks)} looks, after repetitions {at} of {repetitions} ({calls} calls); α spent "
                f"{spending}{named}; {futile}")


def spending_text(spending: str, gamma: float | None) -> str:
    """A spending function's name, with Hwang–Shih–DeCani's γ when it has one."""
    return f"{spending} (γ = {gamma:g})" if gamma is not None else spending


@dataclass(frozen=True)
class HistoryEntry:
    """A version note; older entries carry what differed (prompt, scoring, params) so old runs keep meaning."""

    version: int
    note: str
    date: str | None = None
    changes: Mapping[str, Any] = field(default_factory=dict)
    published_runs: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Card:
    id: str
    version: int
    kind: str
    path: Path
    raw: Mapping[str, Any]
    rig: Rig
    params: Mapping[str, Any]
    prompt: Prompt
    repetitions: int
    scoring: ScoringSpec
    examples: tuple[Example, ...]
    history: tuple[HistoryEntry, ...]
    category: str = ""
    title: str = ""
    summary: str = ""
    rubric: tuple[str, ...] = ()
    rubric_intro: str = ""
    question: str = ""
    variable: str = ""
    variants: Mapping[str, str] = field(default_factory=dict)
    baseline: str | None = None
    fixtures_glob: str | None = None
    fixtures: Mapping[str, Path] = field(default_factory=dict)  # a data file's fixtures each map to the file
    dataset: DataFile | None = None  # fixtures from one CSV or JSONL file (card/_dataset.py)
    win: WinRule | None = None
    gate: float | None = None  # a probe's sealed pass threshold (`gate: {min_score: …}`); None: no gate
    # the error rate a sequential probe's gate is decided at (`gate: {alpha: …}`)
    gate_alpha: float = DEFAULTS["gate", "alpha"]
    sequential: Sequential | None = None  # the sealed looks (`sequential:`); None: the whole grid is run
    page: Mapping[str, Any] = field(default_factory=dict)
    # what the checks added after this version could be sealed would refuse (`reader._Reader.newer`), one line
    # each: the card is loaded only when its seal holds (`load.load_card`), and `check` warns of each
    later_checks: tuple[str, ...] = ()
    # whether a backslash before a slot escapes it (`_util/slots.py`): False in a version sealed before the escape,
    # which is read and sent as it was sealed (`load.load_card`); kept out of the protocol, so its digests hold
    slot_escapes: bool = True

    @property
    def is_ab(self) -> bool:
        return self.kind == "ab"

    @property
    def judge_spec(self) -> JudgeSpec | None:
        """The model judge's spec on a judge card (its scorer), None on any other card."""
        return self.scoring if isinstance(self.scoring, JudgeSpec) else None

    def protocol(self) -> dict[str, Any]:
        """The sealed part of the card: everything but the prose."""
        return {k: v for k, v in self.raw.items() if k not in PROSE_FIELDS}

    def escaped_fields(self) -> list[str]:
        """The prompt fields (`prompt.user`, `scoring.prompt.user`, …) holding a backslash right before a slot, which
        the slot escape reads otherwise than the rule before it (`_util/slots.py`, `slot_escapes`)."""
        judge = self.judge_spec
        texts = {"prompt.system": self.prompt.system, "prompt.user": self.prompt.user,
                 "scoring.prompt.system": judge.system if judge else None,
                 "scoring.prompt.user": judge.user if judge else None}
        return [name for name, text in texts.items() if text is not None and fill_slots(text, {}) != text]

    def fixture_ids(self) -> list[str]:
        """Fixture ids in a stable order; a probe has one implicit fixture named after the card."""
        return sorted(self.fixtures) if self.is_ab else [self.id]

    def answer_keys(self, keys_dir: Path, spec: ScoringSpec | None = None) -> dict[str, AnswerKey]:
        """Every fixture's answer key for `spec` (default: the card's scorer): from the data file's rows, or the
        key files in `keys_dir`, validated; none when the scorer reads no key."""
        spec = spec or self.scoring
        if self.dataset is None:
            if needs_key(spec):
                self._keys_inside(keys_dir)
                other_case = self.keys_folder_miscased(keys_dir)
                if other_case is not None and not os.path.lexists(keys_dir):
                    raise CardError(other_case)  # not found as written (Linux): the line that says why
            return load_keys(spec, keys_dir, self.fixture_ids(), self._shown)
        if not needs_key(spec):
            return {}
        return {f: row.key for f, row in self.dataset.rows.items() if row.key is not None}

    def keys_folder_miscased(self, keys_dir: Path) -> str | None:
        """The card's keys folder made by hand with a name in another case (`Keys/`, `keys/Hello-ab/`): macOS and
        Windows open it for keys/<id>/, so keys there are read and sealed, and Linux (a clone's CI) finds none.
        Where it is found (macOS, Windows) `check` warns, since a seal made so still holds there."""
        root = self.path.parent.parent  # the project: cards/<id>.yaml
        if not keys_dir.is_relative_to(root):
            return None
        written = keys_dir.relative_to(root).as_posix()
        found = miscased(root, written)
        if found is None:
            return None
        name, on_disk = found
        return (f"{written}/: the folder {shown_name(name)} is {shown_name(on_disk)} on disk, which is opened for it "
                f"on {one_file_on(name, on_disk)} and not on Linux, so a clone there finds no answer key; rename it "
                f"{shown_name(name)}")

    def _keys_inside(self, keys_dir: Path) -> None:
        """A key file that is a link out of the project (or in a keys folder that is one) was read, sealed and
        scored as the card's own, as a fixture that leaves the project is not: one line naming it. A version sealed
        with one before this check reads it (`keys_leaving`, a later check: `load.load_card`)."""
        for problem in self.keys_leaving(keys_dir):
            if problem not in self.later_checks:
                raise CardError(problem)

    def keys_leaving(self, keys_dir: Path) -> tuple[str, ...]:
        """One line for each answer key the card's scorer reads that is a link out of the project, or in a keys
        folder that is one (a check of 2026-12-07). Only links are resolved, so a card of many keys costs a
        listing of its keys folder."""
        if self.dataset is not None or not needs_key(self.scoring) or not _is_folder(keys_dir):
            return ()
        root = self.path.parent.parent.resolve()  # the project: cards/<id>.yaml
        names = {f"{fixture}.json" for fixture in self.fixture_ids()}
        folder_leaves = root not in keys_dir.resolve().parents
        try:
            with os.scandir(keys_dir) as entries:
                linked = sorted(Path(e.path) for e in entries if e.name in names and (folder_leaves or e.is_symlink()))
        except OSError:  # a folder that cannot be listed: the key readers name it
            return ()
        targets = {path: Path(os.path.realpath(path)) for path in linked}  # a link in a loop: where it ends, no error
        return tuple(f"{self._shown(path)}: leaves the project (a link to {target}); an answer key is a file of the "
                     "project's own, as a fixture is: copy it in" for path, target in targets.items()
                     if root not in target.parents)

    def _shown(self, path: Path) -> str:
        """A file of the card's as its errors name it: relative to the project (cards/<id>.yaml), as a user
        types it, when it is inside."""
        root = self.path.parent.parent
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

    def variant_names(self) -> list[str]:
        """Variants with the baseline first; a probe has the single variant `probe`."""
        if not self.is_ab:
            return ["probe"]
        assert self.baseline is not None
        return [self.baseline, *sorted(v for v in self.variants if v != self.baseline)]

    def fixture_text(self, fixture_id: str) -> str:
        """The fixture's text as scorers, judges and pages read it."""
        if not self.is_ab:
            return ""
        if self.dataset is not None:
            return self.dataset.text(fixture_id)
        path = self.fixtures[fixture_id]
        try:
            size = path.stat().st_size
        except OSError:
            size = 0  # read_regular_text names what is wrong with it
        if size > MAX_FIXTURE_BYTES:
            raise CardError(f"{self._shown(path)}: fixture '{fixture_id}' is {size:,} bytes, more than the "
                            f"{MAX_FIXTURE_BYTES:,} a fixture may hold (about four million tokens: more than any model "
                            "reads in one request)")
        return read_regular_text(path, self._shown(path), CardError, MAX_FIXTURE_BYTES)

    def fixture_value(self, fixture_id: str) -> FixtureValue:
        """What the prompt shows of the fixture: its text, or its inputs by column when it has several."""
        if self.dataset is not None and self.dataset.several:
            return self.dataset.rows[fixture_id].inputs
        return self.fixture_text(fixture_id)

    def messages(self, variant: str | None = None, fixture_text: FixtureValue | None = None) -> list[dict[str, str]]:
        """Exactly the chat messages the model receives for one (variant, fixture) (`fixture_value`)."""
        out: list[dict[str, str]] = []
        if self.prompt.system is not None:
            out.append({"role": "system", "content": self._fill(self.prompt.system, variant, fixture_text)})
        out.append({"role": "user", "content": self._fill(self.prompt.user, variant, fixture_text)})
        return out

    def _fill(self, text: str, variant: str | None, fixture_text: FixtureValue | None) -> str:
        if not self.is_ab:
            return text
        block = self.variants[variant or self.baseline or ""]
        if isinstance(fixture_text, Mapping):
            slots = {VARIANT_SLOT: block, **{input_slot(k): v for k, v in fixture_text.items()}}
        else:
            slots = {VARIANT_SLOT: block, FIXTURE_SLOT: fixture_text or ""}
        return fill_slots(text, slots, escapes=self.slot_escapes)


def _is_folder(path: Path) -> bool:
    """Whether `path` is a folder; one that cannot be reached (a folder above it that may not be opened) is left
    to the key readers, which name it, where `is_dir()` raised and the check ended on a bare 'Permission denied'."""
    try:
        return path.is_dir()
    except OSError:
        return False
