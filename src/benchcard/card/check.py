"""`benchcard check`: is every card well-formed, does its scorer grade its own worked examples correctly, and
does every sealed version still match its seal?

A rubric can fail in two directions that reading it will not reveal: accept everything, or reject everything.
The worked examples run through the real scorer catch both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchcard._util.hashing import canonical_json, digest
from benchcard._util.names import shown
from benchcard.card import seal as sealmod
from benchcard.card._defaults import ABSENT, holds
from benchcard.card.design import design_warnings, schedule_line
from benchcard.card.judgecheck import judge_example, metric_misses
from benchcard.card.load import check_unique_ids, load_card, resolve_card_path
from benchcard.card.model import Card, Example, FixtureValue
from benchcard.card.reader import field_locator
from benchcard.errors import BenchcardError, CardError
from benchcard.project import Project
from benchcard.records.answerkey import AnswerKey
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.judge import JudgeSpec
from benchcard.scoring.keys import describe, ignored_keys, key_fields, needs_key
from benchcard.scoring.rulelimit import PUMP_LIMIT, RULE_TIME_LIMIT, runaway
from benchcard.scoring.scorers import ExactSpec, RulesSpec, Score, fill_key_slots, score_output
from benchcard.scoring.textform import answer_problems, trimmed

#: The prompt's slots (`{{variant}}`, `{{fixture}}`, `{{fixture.<column>}}`): only the prompt's own text is filled.
PROMPT_SLOT = re.compile(r"\{\{(?:variant|fixture(?:\.[^{}]*)?)\}\}")


@dataclass(frozen=True)
class ExampleResult:
    label: str
    expect: str | Mapping[str, float]
    score: Score | None
    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class CardReport:
    """One card's check; `problems` holds one line each, already naming the file."""

    name: str
    card: Card | None
    examples: tuple[ExampleResult, ...] = ()
    seal: str = ""
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # what the design can never show (design.py); they do not fail the check
    # of those, each rule that backtracks catastrophically on a reply of its own characters (`runaway_rules`):
    # `seal` refuses a version not yet sealed that has one
    runaway: tuple[str, ...] = ()
    sequential: str = ""  # a sequential card's sealed looks, in one line (`Sequential.describe`)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class CheckReport:
    cards: tuple[CardReport, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cards)

    def to_json(self) -> dict[str, Any]:
        """What `benchcard check --json` prints."""
        return {
            "ok": self.ok,
            "cards": [
                {
                    "card": r.name,
                    "ok": r.ok,
                    "seal": r.seal,
                    "problems": list(r.problems),
                    "warnings": list(r.warnings),
                    **({"sequential": r.sequential} if r.sequential else {}),
                    "examples": [
                        {"label": e.label, "expect": e.expect, "ok": e.ok,
                         "score": e.score.score if e.score else None,
                         "metrics": e.score.metrics if e.score else None,
                         "rules": e.score.rules if e.score else None}
                        for e in r.examples
                    ],
                }
                for r in self.cards
            ],
        }

    def lines(self) -> list[str]:
        """What `benchcard check` prints, line by line."""
        out = []
        for r in self.cards:
            head = f"{r.card.id} v{r.card.version} ({r.card.kind}) · {r.seal}" if r.card else r.name
            out.append(("ok   " if r.ok else "FAIL ") + head)
            for e in r.examples:
                mark = "ok  " if e.ok else "FAIL"
                expect = e.expect if isinstance(e.expect, str) else "metrics"
                score = f"{e.score.score:.2f}" if e.score else "  - "
                out.append(f"  {mark} {score} expect {expect:<7} {e.label}")
                if e.score and e.score.rules:
                    rules = "  ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in e.score.rules.items())
                    out.append(f"             {rules}")
                elif e.score and not isinstance(e.expect, str):
                    shown = ", ".join(f"{m}={e.score.metrics.get(m, float('nan')):g}" for m in e.expect)
                    out.append(f"             {shown}")
            if r.sequential:
                out.append(f"  sequential: {r.sequential}")
            out.extend(f"  error: {p}" for p in r.problems)
            out.extend(f"  warning: {w}" for w in r.warnings)
        bad = sum(not r.ok for r in self.cards)
        out.append(f"{len(self.cards) - bad} card(s) ok, {bad} failed")
        return out


def _not_read(project: Project) -> list[tuple[str, str]]:
    """(shown path, stem) of each file in cards/ that looks like a card but that no command reads (`x.yml`,
    `x.YAML`): passed over in silence, it was never checked, sealed or run."""
    return [(project.relative(p), p.stem) for p in sorted(project.cards_dir.iterdir())
            if p.suffix.lower() in (".yaml", ".yml") and p.suffix != ".yaml" and not p.name.startswith(".")]


def check(project: Project, names: Sequence[str] = ()) -> CheckReport:
    """Check the named cards, or every card in `cards/`; never stops at the first bad card."""
    paths = [resolve_card_path(project, n) for n in names] if names else sorted(project.cards_dir.glob("*.yaml"))
    stray = [] if names else _not_read(project)
    if not paths and not stray:
        raise CardError(f"{project.relative(project.cards_dir)}: no cards (*.yaml) to check")
    reports: list[CardReport] = [
        CardReport(name=shown, card=None, problems=(f"{shown}: a card file's name is <id>.yaml; check, seal and run "
                                                    f"never read this one: rename it (cards/{stem}.yaml)",))
        for shown, stem in stray]
    loaded: list[Card] = []
    for path in paths:
        try:
            card = load_card(path, project)
        except BenchcardError as exc:
            reports.append(CardReport(name=project.relative_link(path), card=None, problems=(str(exc),)))
            continue
        loaded.append(card)
        reports.append(check_card(card, project))
    try:
        check_unique_ids(loaded, project)
    except CardError as exc:
        reports.append(CardReport(name="cards", card=None, problems=(str(exc),)))
    return CheckReport(tuple(reports))


def check_card(card: Card, project: Project, verify_seal: bool = True) -> CardReport:
    """One card's check: its answer keys, its worked examples, its variants and history, and its seal."""
    source = project.relative(card.path)
    problems: list[str] = []
    later: list[str] = []
    keys: Mapping[str, AnswerKey] | None = None
    try:
        keys = card.answer_keys(project.keys_dir(card.id))
    except BenchcardError as exc:
        problems.append(str(exc))
    other_case = card.keys_folder_miscased(project.keys_dir(card.id)) if keys is not None else None
    if other_case is not None:  # found as written, here (macOS, Windows): a clone on Linux finds no key
        later.append(other_case)
    problems += ignored_key_problems(card, project)
    problems += fixture_file_problems(card, project)
    unquoted = key_value_problems(card, keys or {})
    if sealmod.read(card.id, card.version, project) is None:
        problems += unquoted
    else:  # a version sealed before this check keeps its seal; the next version fixes its keys
        later += [f"{u} (v{card.version} was sealed before this check; fix it in v{card.version + 1})"
                  for u in unquoted]
    # keys that could not be read are said once above, not again as 'no answer key' for every worked example
    examples = () if keys is None and needs_key(card.scoring) else tuple(
        run_example(card, ex, keys or {}, i) for i, ex in enumerate(card.examples))
    at = field_locator(card.path, source)
    problems += [f"{at('examples', str(i))}: example '{r.label}': {r.reason}"
                 for i, r in enumerate(examples) if not r.ok]
    finite = sealmod.not_finite(card, project)
    if finite:  # nothing else can be hashed or compared byte for byte
        problems.append(finite)
    else:
        if card.is_ab:
            problems += slot_problems(card, source) or variant_problems(card, source)
        problems += history_problems(card, project, source)
    seal_state = ""
    if verify_seal and not finite:
        seal_state, broken = sealed_state(card, project)
        problems += broken
    schedule = schedule_line(card, project) or ""
    note = sealmod.rules_note(card, project) if schedule and not finite else None
    schedule += f"; {note}" if note else ""
    runaway = tuple(runaway_rules(card, source, at))
    return CardReport(name=card.id, card=card, examples=examples, seal=seal_state, problems=tuple(problems),
                      warnings=(*later_warnings(card), *escape_warnings(card, source), *later, *runaway,
                                *answer_warnings(card, keys or {}, source), *design_warnings(card, project)),
                      sequential=schedule, runaway=runaway)


def later_warnings(card: Card) -> list[str]:
    """Each problem of a check newer than the card's seal (`Card.later_checks`): a warning, not a failure, since the
    version it was sealed in stays as it is; the next version must fix it."""
    return [f"{problem} (v{card.version} was sealed before this check and is read as sealed; fix it in "
            f"v{card.version + 1})" for problem in card.later_checks]


def escape_warnings(card: Card, source: str) -> list[str]:
    """A prompt of a version sealed before the slot escape (`Card.slot_escapes`) whose backslash before a slot is
    read as text, as when it was sealed, where the next version would read an escape: a warning naming the field,
    so that the author writes v{N+1} by today's rule (docs/cards.md)."""
    if card.slot_escapes:
        return []
    return [f"{source}: field '{name}': a backslash right before a slot is text here, as when v{card.version} was "
            "sealed (before the slot escape of 2026-12-07 15:49 UTC); in a later version it escapes the slot: write "
            f"two (C:\\\\{{{{fixture}}}}) for a backslash then the slot, in v{card.version + 1}"
            for name in card.escaped_fields()]


def runaway_rules(card: Card, source: str, at: Callable[..., str] | None = None) -> list[str]:
    """Each rule that takes longer than `PUMP_LIMIT` on a reply of its own characters repeated and a failing
    tail (`rulelimit.runaway`), one line naming the file, the rule and the input's length: a run would leave
    such replies unscored (`RULE_TIME_LIMIT`), so the rule is rewritten before sealing."""
    if not isinstance(card.scoring, RulesSpec):
        return []
    lines = []
    for i, rule in enumerate(card.scoring.rules):
        found = runaway(fill_key_slots(rule.pattern, dict.fromkeys(rule.key_fields, "x")))
        if found is not None:
            where = source if at is None else at("scoring", "rules", str(i), rule.kind)
            lines.append(f"{where}: field 'scoring.rules.{i}.{rule.kind}': rule {rule.id!r} took longer than "
                         f"{PUMP_LIMIT:g} s on an input of {len(found)} characters ({shown(found[:6])}… and "
                         f"{shown(found[-1])}: its own characters repeated, then one that fails it), so a reply "
                         f"like it, a little longer, runs past the {RULE_TIME_LIMIT:g} s limit and is left "
                         "unscored; rewrite the pattern without a quantifier nested in a quantifier, such as (a+)+")
    return lines


#: The most answers `answer_warnings` names one by one; the rest are counted in one more line.
ANSWERS_NAMED = 3


def answer_warnings(card: Card, keys: Mapping[str, AnswerKey], source: str) -> list[str]:
    """Each answer a reply typed as it reads would not match (`textform.answer_problems`), one line naming its file
    and field: a decomposed (NFD) answer where the scorer compares text as stored (a version sealed before
    2026-12-08, or a rule: rules match as JavaScript does), and a look-alike character (a no-break space, a
    zero-width character, a full-width digit). A warning: the answer may mean it."""
    spec = card.scoring
    said: list[tuple[str, str, bool, bool]] = []  # where, the answer, compared in NFC, spaces count
    if isinstance(spec, ExactSpec):
        def trim(text: str) -> str:
            return trimmed(text, spec.js_trim) if spec.trim else text
        if spec.expected is not None:
            said.append((f"{source}: field 'scoring.expected': the answer", trim(spec.expected), spec.nfc, True))
        said += [(f"{key.where(name)}: the answer", trim(answer), spec.nfc, True) for _, key in sorted(keys.items())
                 for name in key_fields(spec) for answer in _answers(key.get(name))]
    elif isinstance(spec, RulesSpec):
        said += [(f"{source}: field 'scoring.rules.{i}.{rule.kind}': the pattern", rule.pattern, False, True)
                 for i, rule in enumerate(spec.rules)]
        said += [(f"{key.where(name)}: the answer", answer, False, True) for _, key in sorted(keys.items())
                 for name in key_fields(spec) for answer in _answers(key.get(name))]
    elif isinstance(spec, FieldsSpec):
        said += [(f"{key.where(name)}: the answer", form, spec.nfc, False) for _, key in sorted(keys.items())
                 for name in spec.fields for entry in key.get(name) or []
                 for form in (entry["value"], *entry["accept"])]
    lines = [f"{where} {shown(text)} {problem}; {_answer_advice(card, problem)}"
             for where, text, nfc, spaces in said for problem in answer_problems(text, normalised=nfc, spaces=spaces)]
    more = len(lines) - ANSWERS_NAMED
    return lines[:ANSWERS_NAMED] + ([f"{source}: and {more} more answers so"] if more > 0 else [])


def _answer_advice(card: Card, problem: str) -> str:
    """What to do about one `answer_problems` phrase: a form, or a look-alike."""
    if not problem.startswith("is not in NFC"):
        return "a reply that types what it looks like scores as another text: write the character meant"
    if isinstance(card.scoring, RulesSpec):
        return ("a rule matches the text as it is, as in JavaScript, so a reply in the composed form does not match "
                "it: write it in NFC")
    return (f"v{card.version} was sealed before answers and replies were compared in NFC (2026-12-08), so a "
            f"reply of this text composed scores as another text: make it v{card.version + 1}, whose seal compares "
            "them in NFC")


def ignored_key_problems(card: Card, project: Project) -> list[str]:
    """An answer key the scorer never reads would be sealed all the same: each one is a problem, saying why."""
    problems = []
    keys_dir = project.keys_dir(card.id)
    try:
        ignored = ignored_keys(card.scoring, keys_dir, () if card.dataset else card.fixture_ids(),
                               project.relative(keys_dir))
    except BenchcardError as exc:
        return [str(exc)]
    for path in ignored:
        if card.dataset is not None:
            reads = f"reads each fixture's key from {card.dataset.shown}"
        elif needs_key(card.scoring):
            reads = f"reads keys only for its fixtures, and there is no fixture '{path.stem}'"
        else:
            reads = "reads no answer key (use expected_from_key or {{key.<field>}} in a rule to read one)"
        problems.append(f"{project.relative(path)}: {describe(card.scoring)} {reads}; "
                        "the file would be sealed and never read: remove it")
    return problems


def sealed_state(card: Card, project: Project) -> tuple[str, list[str]]:
    """The current version's seal in a few words, and the problem a broken seal makes: `check`'s, and `plan`'s
    warning that it plans the card as edited, not as sealed (the wording `run`'s refusal has, from `seal.verify`)."""
    if sealmod.read(card.id, card.version, project) is None:
        run_on = sealmod.run_on_another_root(card, project, "")
        if run_on is not None:  # a sealed run of this version, whose seal file is gone
            return f"v{card.version} seal MISSING", [
                f"{project.relative(project.seal_path(card.id, card.version))}: missing, but {run_on[1]} was run on "
                f"v{card.version} sealed with root {run_on[0]}: put the seal file back (`benchcard seal {card.id}` "
                "writes it again only over the content it sealed)"]
        return f"v{card.version} not sealed", []
    try:
        root = sealmod.verify(card, project)
    except BenchcardError as exc:
        return f"v{card.version} seal BROKEN", [str(exc)]
    return f"v{card.version} sealed {root[:19]}…", []


def history_problems(card: Card, project: Project, source: str) -> list[str]:
    """Each older sealed version must still be described by the history: a sealed field that differs from the
    current card must be carried, unchanged, by that version's history entry, or its runs lose their meaning."""
    problems = []
    entries = {h.version: h for h in card.history}
    at = field_locator(card.path, source)
    lines = {h.version: at("history", str(i)) for i, h in enumerate(card.history)}
    current = card.protocol()
    for version in sealmod.sealed_versions(card.id, project):
        sealed = sealmod.read(card.id, version, project) if version < card.version else None
        if not sealed:
            continue
        fields, table = sealed.protocol_fields, sealmod.defaults_of(sealed)
        entry = entries.get(version)
        if entry is None:
            problems.append(f"{at('history')}: field 'history': v{version} is sealed but has no history entry "
                            f"(add one: `- {{version: {version}, note: …}}`)")
            continue
        for name, sealed_digest in sorted(fields.items()):
            if name == "version":
                continue
            if name in entry.changes:
                if not holds((name,), entry.changes[name], sealed_digest, table):
                    problems.append(
                        f"{lines[version]}: field 'history' v{version} '{name}' is not what v{version} sealed: "
                        f"sealed {sealed_digest}, history {digest(entry.changes[name])}"
                    )
            elif not holds((name,), current.get(name, ABSENT), sealed_digest, table):
                problems.append(
                    f"{lines[version]}: field 'history' v{version} must carry '{name}': it differs from the "
                    f"current card, and v{version}'s runs keep their meaning only if the card says what it was: "
                    f"add `{name}:` to that entry, written as v{version} had it (checked against v{version}'s seal)"
                )
    return problems


def run_example(card: Card, example: Example, keys: Mapping[str, AnswerKey], index: int) -> ExampleResult:
    """Score one worked example with the real scorer and compare with what the card says it must get."""
    if isinstance(card.scoring, JudgeSpec):
        judged = judge_example(card, example, keys, index)
        return ExampleResult(example.label, example.expect, judged.score, judged.ok, judged.reason)
    key = None
    excerpt = ""
    if needs_key(card.scoring):
        fixture = example.fixture if card.is_ab else (example.fixture or card.id)
        if fixture is None or fixture not in card.fixture_ids():
            return ExampleResult(example.label, example.expect, None, False,
                                 f"field 'examples.{index}.fixture': expected one of the card's fixtures")
        key = keys.get(fixture)
        if key is None:
            return ExampleResult(example.label, example.expect, None, False, "its fixture has no answer key")
        excerpt = card.fixture_text(fixture)
    try:
        score = score_output(card.scoring, example.output, key, excerpt)
    except BenchcardError as exc:
        return ExampleResult(example.label, example.expect, None, False, str(exc))
    if example.expect == "pass":
        ok = score.score == 1.0
        reason = "" if ok else f"expected a score of exactly 1, got {score.score:.2f}{_failed_rules(score)}"
    elif example.expect == "fail":
        ok = score.score < 1.0
        reason = "" if ok else "expected a score below 1 (a rejected output), got 1.00: the scorer accepts it"
    else:
        assert isinstance(example.expect, Mapping)
        reason = metric_misses(example.expect, score.metrics)
        ok = not reason
    return ExampleResult(example.label, example.expect, score, ok, reason)


def _failed_rules(score: Score) -> str:
    if not score.rules:
        return ""
    failed = [k for k, v in score.rules.items() if not v]
    return f" (failed: {', '.join(failed)})"


def key_value_problems(card: Card, keys: Mapping[str, AnswerKey]) -> list[str]:
    """A key's answer that no faithful reply gives, said, not sealed: an `exact` answer that is blank where the
    scorer trims (`" "` in a data file's cell: trimmed as the reply is, an empty reply scored right; with
    `trim: false`, or in a rule, whitespace is compared as written, and may be the answer), and a fields key's
    `value` that its fixture does not hold word for word (`value` is copied verbatim from the fixture, other
    surface forms go under `accept`: a typo, a value of another fixture)."""
    trimmed = key_fields(card.scoring) if isinstance(card.scoring, ExactSpec) and card.scoring.trim else ()
    problems = [f"{key.where(name)}: the answer {answer!r} is blank, so an empty reply would be scored right; "
                "write the answer (an empty cell or a missing field is refused as such)"
                for _, key in sorted(keys.items()) for name in trimmed
                for answer in _answers(key.get(name)) if not answer.strip()][:1]
    if not isinstance(card.scoring, FieldsSpec) or not card.is_ab:
        return problems
    for fixture, key in sorted(keys.items()):
        text = card.fixture_text(fixture)
        for name in card.scoring.fields:
            for entry in key.get(name) or []:
                if entry["value"] not in text:
                    problems.append(f"{key.where(name)}: value {entry['value']!r} is not in fixture '{fixture}' "
                                    "word for word; a key's value is copied verbatim from its fixture (another "
                                    "form goes under accept)")
                    break
    return problems


def _answers(value: object) -> list[str]:
    """A small key's answer, or its list of accepted answers, as a list of texts (whatever else: none)."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, str)]


def fixture_file_problems(card: Card, project: Project) -> list[str]:
    """A fixture file the model would receive other than as its author sees it: empty (or only whitespace),
    opening with a byte-order mark (an editor's UTF-8 "with BOM", sent as a U+FEFF character), or holding a NUL
    (UTF-16 with no byte-order mark is valid UTF-8 with a NUL after every ASCII letter). A data file's rows
    are checked as they are read (card/_dataset.py)."""
    if not card.is_ab or card.dataset is not None:
        return []
    problems = []
    for fixture_id in card.fixture_ids():
        shown = project.relative(card.fixtures[fixture_id])
        try:
            text = card.fixture_text(fixture_id)
        except BenchcardError as exc:
            problems.append(str(exc))
            continue
        if not text.strip():
            problems.append(f"{shown}: fixture '{fixture_id}' holds no text (the file is empty or only whitespace); "
                            "expected the text the model is shown: write it, or remove the file")
        elif text.startswith("\ufeff"):
            problems.append(f"{shown}: fixture '{fixture_id}' starts with a byte-order mark (U+FEFF), which the "
                            "model would receive as a character; expected UTF-8 without one: save it without BOM")
        elif "\0" in text:
            wide = text.count("\0") * 3 >= len(text)  # every other byte: UTF-16 with no mark to say so
            problems.append(f"{shown}: fixture '{fixture_id}' holds a NUL character (U+0000) at character "
                            f"{text.index(chr(0)) + 1}, which the model would receive and no text file holds"
                            f"{' (it reads as UTF-16)' if wide else ''}; expected UTF-8 text: save it as UTF-8")
    return problems


def slot_problems(card: Card, source: str) -> list[str]:
    """A variant's text holding one of the prompt's slots: the prompt is filled in one pass (`model.fill_slots`),
    so the slot would reach the model as its braces, not as what its author meant; said rather than sent."""
    problems = []
    for name in card.variant_names():
        if found := PROMPT_SLOT.search(card.variants[name]):
            problems.append(f"{source}: field 'variants.{name}': holds {found.group(0)}, which is filled only where "
                            "the prompt holds it; expected the variant's own text (a variant is inserted as written: "
                            "move the slot into the prompt)")
    return problems


def variant_problems(card: Card, source: str) -> list[str]:
    """Every variant's request must be byte-identical to the baseline's except for the declared variable."""
    assert card.baseline is not None
    problems = []
    for fixture_id in card.fixture_ids():
        text = card.fixture_value(fixture_id)
        base = _request_bytes(card, card.baseline, text)
        base_block = _json_inner(card.variants[card.baseline])
        for name in card.variant_names()[1:]:
            other = _request_bytes(card, name, text)
            block = _json_inner(card.variants[name])
            where = single_edit_mismatch(base, other, base_block, block)
            if where is not None:
                problems.append(
                    f"{source}: variant '{name}' on fixture '{fixture_id}': its request differs from the "
                    f"baseline's outside the declared variable, at byte {where}"
                )
                break
    return problems


def _request_bytes(card: Card, variant: str, fixture_text: FixtureValue) -> bytes:
    return canonical_json({"messages": card.messages(variant, fixture_text), "params": dict(card.params),
                           "model": card.rig.model})


def _json_inner(text: str) -> bytes:
    return canonical_json(text)[1:-1]


def single_edit_mismatch(a: bytes, b: bytes, a_block: bytes, b_block: bytes) -> int | None:
    """None if `b` is `a` with `a_block` replaced by `b_block` at one place; else the first byte that differs."""
    prefix = 0
    limit = min(len(a), len(b))
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    if a == b:
        return None if a_block == b_block else prefix
    for start in range(max(0, prefix - max(len(a_block), len(b_block))), prefix + 1):
        if (a[start : start + len(a_block)] == a_block and b[start : start + len(b_block)] == b_block
                and a[:start] == b[:start] and a[start + len(a_block):] == b[start + len(b_block):]):
            return None
    return prefix
