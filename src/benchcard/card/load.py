"""Finding and loading card files: by id or path, one or all, with duplicate ids refused."""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from msgspec import UnsetType

from benchcard._util.names import differ_by
from benchcard._util.names import shown as shown_name
from benchcard._util.safeio import given, miscased, read_regular_text
from benchcard._util.slots import ESCAPE_SINCE
from benchcard._util.yamlread import MAX_YAML_BYTES
from benchcard.card import seal as sealmod
from benchcard.card._names import check_names
from benchcard.card.model import Card
from benchcard.card.reader import ID_PATTERN, read_card
from benchcard.errors import BenchcardError, CardError, SealError
from benchcard.project import Project
from benchcard.records.rows import Manifest
from benchcard.scoring.fields import FieldsSpec
from benchcard.scoring.scorers import ExactSpec


def load_card(path: Path, project: Project) -> Card:
    """Read and validate one card file. A problem only a check newer than some seals finds (`Card.later_checks`)
    refuses the card unless its version's seal holds: a version sealed before the check keeps its verdict, resume,
    status and pages (editing it to pass would break its seal), while an unsealed one is fixed before it is sealed."""
    source = project.relative(path)
    # a link to itself or to nothing named (the link, not where it leads) as `check loop` says it, not "cannot read"
    given(path, project.relative_link(path), CardError)
    text = read_regular_text(path, source, CardError, max_bytes=MAX_YAML_BYTES)
    card = _by_text_rule(_read_as_sealed(text, source, project, path), project)
    leaving = card.keys_leaving(project.keys_dir(card.id))
    if not (card.later_checks or leaving):
        return card
    if not _seal_holds(card, project):
        if card.later_checks:
            raise CardError(card.later_checks[0])
        return card  # a key that leaves the project is refused where keys are read (check, seal, scoring)
    return dataclasses.replace(card, later_checks=(*card.later_checks, *leaving))


def _read_as_sealed(text: str, source: str, project: Project, path: Path) -> Card:
    """The card read by the slot rule its version was sealed under (`_util/slots.py`): a version whose seal holds
    and was made before the escape (`ESCAPE_SINCE`) reads a backslash as plain text, so that `C:\\{{fixture}}` still
    loads and sends `C:\\` and the fixture, as when it was sealed; any other reads the escape. A card whose prompts
    hold no backslash before a slot (`Card.escaped_fields`) reads alike by both rules, and is read once."""
    try:
        card: Card | None = check_names(read_card(text, source, project, path), source)
        problem: CardError | None = None
    except CardError as exc:
        card, problem = None, exc
    # YAML writes a backslash in a value only with one in the text
    if "\\" in text and (card is None or card.escaped_fields()):
        old = card if card is not None else _read_plain(text, source, project, path)
        if old is not None and _sealed_before_escape(old, project):
            old = old if card is None else _read_plain(text, source, project, path)
            if old is not None and _seal_holds(old, project):
                return old
    if card is None:
        assert problem is not None
        raise problem
    return card


def _by_text_rule(card: Card, project: Project) -> Card:
    """The card's scorer set to compare text by its version's rule (`scoring/textform.py`): a version sealed before
    seals named one (2026-12-08, no `unicode` in its seal) compares answers and replies as stored, as its runs were
    scored; any other (sealed since, or not yet sealed) in NFC. So with the trim rule (`whitespace`) and a fields
    reply's JSON rule (`json_keys`): each left out of an older seal reads as its runs were scored."""
    if not isinstance(card.scoring, ExactSpec | FieldsSpec):
        return card
    try:
        sealed = sealmod.read(card.id, card.version, project)
    except BenchcardError:  # a broken seal: its own check names it, and no run takes it
        return card
    if sealed is None:
        return card
    nfc, js_trim = not isinstance(sealed.unicode, UnsetType), not isinstance(sealed.whitespace, UnsetType)
    if isinstance(card.scoring, FieldsSpec):
        return dataclasses.replace(card, scoring=dataclasses.replace(
            card.scoring, nfc=nfc, js_trim=js_trim, all_keys=not isinstance(sealed.json_keys, UnsetType)))
    return dataclasses.replace(card, scoring=dataclasses.replace(card.scoring, nfc=nfc, js_trim=js_trim))


def _read_plain(text: str, source: str, project: Project, path: Path) -> Card | None:
    """The card read by the rule before the escape (a backslash is text), or None when it does not read so."""
    try:
        return check_names(read_card(text, source, project, path, escapes=False), source)
    except CardError:
        return None


def _sealed_before_escape(card: Card, project: Project) -> bool:
    """Whether the card's version has a seal written before the escape landed: one naming no slot rule (every
    seal since names it, whatever the clock said) whose `sealed_at` (UTC) is earlier than `ESCAPE_SINCE`."""
    try:
        sealed = sealmod.read(card.id, card.version, project)
        if sealed is None or not isinstance(sealed.slots, UnsetType):
            return False
        return datetime.fromisoformat(sealed.sealed_at) < datetime.fromisoformat(ESCAPE_SINCE)
    except (BenchcardError, ValueError, TypeError):  # a broken seal or time: the seal's own check names it
        return False


def _seal_holds(card: Card, project: Project) -> bool:
    """Whether the card's version is sealed as `seal.verify` decides it for a run: a seal file whose root its
    material (card, fixtures, keys) still has, whose listed digests were not edited by hand, and that no sealed run
    of the version contradicts. Comparing the root alone read as sealed a card every run would refuse."""
    try:
        sealmod.verify(card, project)
    except BenchcardError:  # no seal, a broken one, or unreadable material: the check's own problem is named
        return False
    return True


def load_named(project: Project, name: str) -> Card:
    """One card named by id or path, as a command names it."""
    return load_card(resolve_card_path(project, name), project)


def load_cards(project: Project, names: Sequence[str] = ()) -> list[Card]:
    """Load the named cards (ids or paths), or every card; a duplicate id is an error naming both files."""
    paths = [resolve_card_path(project, n) for n in names] if names else sorted(project.cards_dir.glob("*.yaml"))
    cards = [load_card(p, project) for p in paths]
    if not names:
        check_unique_ids(cards, project)
    return cards


def check_unique_ids(cards: Sequence[Card], project: Project) -> None:
    seen: dict[str, Card] = {}
    for card in cards:
        if card.id in seen:
            raise CardError(
                f"{project.relative(card.path)}: field 'id': duplicate card id '{card.id}', "
                f"also in {project.relative(seen[card.id].path)}"
            )
        seen[card.id] = card


def resolve_card_path(project: Project, name: str) -> Path:
    """A card named by id (`one-word-sentiment`) or by path (`cards/one-word-sentiment.yaml`): either way the file
    is the project's `cards/<id>.yaml`. A card file anywhere else (another folder, a subfolder of cards/, a `.yml`)
    is refused: its id would name this project's seal, runs and ledger rows, so `seal` would lock this project's
    version to another file's protocol and the project's own card would read as changed after sealing."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml"):
        path = candidate if candidate.is_absolute() else Path.cwd() / candidate
    else:
        path = project.card_path(name)
    shown = project.relative_link(path)
    other_case = _miscased(project, path)
    if other_case or not given(path, shown, CardError) or not path.is_file():  # a link to nothing is said as one
        hint = other_case or ("" if candidate.suffix else _cards_like(project, name))
        raise CardError(f"{name}: no such card (looked for {shown}{hint})")
    folder = Path(os.path.abspath(path)).parent  # `..` undone as written, then links resolved, as for the project
    if path.suffix != ".yaml" or folder.resolve() != project.cards_dir.resolve():
        raise CardError(f"{name}: not a card of this project: a card is read from cards/<id>.yaml "
                        f"({project.cards_dir}), where its seal, runs and ledger rows belong; copy it to "
                        f"{project.relative(project.card_path(path.stem))}, or name its project with -C")
    return path


#: The most card ids a missing card's line lists when none is near the name given.
LISTED_CARDS = 8


def _cards_like(project: Project, name: str) -> str:
    """What a card id given wrong (a typo, another project's card) can be told: the near ids, else the project's
    cards, so that the one line says what to type."""
    ids = sorted(path.stem for path in project.cards_dir.glob("*.yaml") if ID_PATTERN.fullmatch(path.stem))
    if not ids:
        return f"; {project.relative(project.cards_dir)}/ holds no card yet"
    near = difflib.get_close_matches(name, ids, n=3, cutoff=0.75)
    if near:
        return f"; did you mean {' or '.join(near)}?"
    shown = ", ".join(ids[:LISTED_CARDS]) + (f" and {len(ids) - LISTED_CARDS} more" if len(ids) > LISTED_CARDS else "")
    return f"; the cards here: {shown}"


def _miscased(project: Project, path: Path) -> str:
    """Where a card named in another case (`KAB` for cards/kab.yaml) is the file macOS and Windows open for it (and
    then read as a card whose id is not its file's name), what it is named: empty when nothing is named so."""
    if not path.is_relative_to(project.root):
        return ""
    found = miscased(project.root, path.relative_to(project.root).as_posix())
    if found is None:
        return ""
    written, on_disk = found
    card = Path(on_disk).stem if written == path.name else on_disk
    return (f"; {shown_name(on_disk)} differs from {shown_name(written)} only by {differ_by(written, on_disk)}: "
            f"name it {card}")


def card_of_run(project: Project, run: str, manifest: Manifest, error: type[BenchcardError],
                doing: str = "judge") -> Card:
    """The card run `run` was made with, loaded again for its verdict, its gate or its replication: refused
    (`error`, one line in the caller's family) when it is gone or is now another version or kind. Its seal is
    `check_seal_root`'s, apart, so that a caller may hash it meanwhile."""
    path = project.card_path(manifest.card)
    if not path.is_file():
        raise error(f"run {run}: its card {project.relative(path)} is not in this project; cannot check its seal (a "
                    f"run copied in needs its card, fixtures, keys and keys/{manifest.card}/v{manifest.version}"
                    ".seal.json)")
    card = load_card(path, project)
    if card.version != manifest.version:
        raise error(moved_text(project, run, manifest.card, manifest.version, card.version, doing))
    if card.kind != manifest.kind:
        raise error(f"run {run} is a {manifest.kind} run but {manifest.card} is now a {card.kind} card")
    return card


def moved_text(project: Project, run: str, card_id: str, version: int, now: int, doing: str) -> str:
    """What happened when cards/<id>.yaml is now another version than run `run`'s, and what to do, in one line.
    A run stays attached to its version (README's promise 5), and its card's text is not kept in the run: scoring,
    the verdict and a replication need the card as its version was sealed, which the seal checks. So `doing`
    (resume, judge, replicate) it takes that text back in the card's file; a run of the new version is the other
    way on."""
    path = project.relative(project.card_path(card_id))
    return (f"run {run} is of {card_id} v{version}, but {path} is now v{now}, whose text is not the one v{version} was "
            f"sealed with; a run is resumed, judged and replicated only by the version that produced it: to {doing} "
            f"it, put back {path} as v{version} was sealed (its seal, "
            f"{project.relative(project.seal_path(card_id, version))}, checks it), or start a run of v{now} with "
            f"`benchcard run {card_id}`")


def moved_on(project: Project, run: str, manifest: Manifest, doing: str) -> str | None:
    """`moved_text` when the run's card file is now another version, None when it is still the run's own (or cannot
    be read, which the command that needs it says on its own)."""
    try:
        now = load_card(project.card_path(manifest.card), project).version
    except BenchcardError:
        return None
    return None if now == manifest.version else moved_text(project, run, manifest.card, manifest.version, now, doing)


def check_seal_root(project: Project, run: str, card: Card, manifest: Manifest, root: Callable[[], str],
                    error: type[BenchcardError]) -> None:
    """The card's seal as it is now (`root()`, SealError when it no longer holds) must be the one run `run` was
    made under; `error` otherwise."""
    try:
        now = root()
    except SealError as exc:
        raise error(f"seal changed since run {run}: {exc}") from None
    if now != manifest.seal_root:
        raise error(f"seal changed since run {run}: {project.relative(project.seal_path(card.id, card.version))} has "
                    f"root {now} but the run was made under {manifest.seal_root}")
