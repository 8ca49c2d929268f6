"""Seals: the digests that lock a version's protocol, fixtures and keys before the first call.

A seal is written once per version. `check`, `run` and `verdict` recompute it; any difference names the file
that changed and both digests, so a sealed version cannot change silently.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.files import write_atomic
from benchcard._util.hashing import digest, file_digest
from benchcard._util.safeio import listing, present
from benchcard._util.slots import ESCAPE_RULE
from benchcard.card._defaults import DEFAULT_SPENDING, DEFAULTS, as_sealed, sealed_defaults
from benchcard.card._sealfile import ALGORITHM, SealFile, decode_seal, encode_seal
from benchcard.card.judgecheck import judge_example_problems
from benchcard.card.model import Card
from benchcard.card.schedule import card_rules, legacy_rules
from benchcard.errors import CardError, NotCanonicalError, SealError
from benchcard.project import Project, version_named
from benchcard.records.rows import LEGACY_SPENDING, MANIFEST, Rules, manifest_or_none
from benchcard.scoring.judge import JudgeSpec
from benchcard.scoring.textform import ALL_KEYS_RULE, JS_SPACE_RULE, NFC_RULE


@dataclass(frozen=True)
class SealContent:
    """What a seal covers, recomputed from the files as they are now."""

    protocol: str
    protocol_fields: dict[str, str]
    fixtures: dict[str, str]
    keys: dict[str, str]
    root: str
    sequential: Rules | None = None
    slots: str | None = None  # the slot rule the root covers (`SealFile.slots`); None for a seal without one
    unicode: str | None = None  # the text rule the root covers (`SealFile.unicode`); None for a seal without one
    whitespace: str | None = None  # the trim rule the root covers (`SealFile.whitespace`); None: a seal without one
    json_keys: str | None = None  # the JSON rule the root covers (`SealFile.json_keys`); None: a seal without one


def compute(card: Card, project: Project, sealed: SealFile | None = None) -> SealContent:
    """Digest the card's protocol, every fixture file and every key file of this version, a sequential card's
    rule parameters: those `sealed` records (a seal without them: none, as it was written), else this benchcard's,
    and the slot and text rules (`SealFile.slots`, `SealFile.unicode`: each left out against a `sealed` written
    without it, as it was written).
    Against `sealed`, the protocol is read as it was written then where it differs only by fields at their
    default written out or left out (`_defaults.as_sealed`): the same protocol, so the same seal."""
    problem = not_finite(card, project)
    if problem:
        raise CardError(problem)
    protocol = card.protocol()
    if sealed is not None and digest(protocol) != sealed.protocol:
        protocol = as_sealed(protocol, sealed.protocol_fields, defaults_of(sealed))
    fields = {name: digest(value) for name, value in sorted(protocol.items())}
    root = os.path.join(project.root.resolve(), "")
    fixtures = {_relative(p, root, project): file_digest(p) for _, p in sorted(card.fixtures.items())}
    keys: dict[str, str] = {}
    keys_dir = project.keys_dir(card.id)
    if keys_dir.is_dir() and card.dataset is None:  # a data file's keys are in its rows, sealed with it
        keys_real = str(keys_dir.resolve())
        entries = listing(keys_dir, project.relative(keys_dir), CardError)  # one listing, not a stat per fixture
        for fixture_id in card.fixture_ids():  # a probe's one fixture is named after the card
            name = f"{fixture_id}.json"
            entry = entries.get(name)
            if entry is None:
                continue
            if not entry.is_symlink() and entry.is_file():  # its real path is the folder's real path and its name
                keys[_relative(os.path.join(keys_real, name), root, project)] = file_digest(entry.path)
            elif entry.is_symlink() and os.path.isfile(entry.path):
                keys[project.relative(keys_dir / name)] = file_digest(entry.path)
    body: dict[str, object] = {"card": card.id, "version": card.version, "protocol": digest(protocol),
                               "fixtures": fixtures, "keys": keys}
    rules = _rules(card, sealed)
    if rules is not None:
        body["sequential"] = msgspec.to_builtins(rules)
    named = _text_rules(sealed)
    body |= named
    return SealContent(digest(protocol), fields, fixtures, keys, digest(body), rules, named.get("slots"),
                       named.get("unicode"), named.get("whitespace"), named.get("json_keys"))


#: The rules a seal records of how its text is read, by seal field: the slot, text, trim and JSON rules.
TEXT_RULES = {"slots": ESCAPE_RULE, "unicode": NFC_RULE, "whitespace": JS_SPACE_RULE, "json_keys": ALL_KEYS_RULE}


def _text_rules(sealed: SealFile | None) -> dict[str, str]:
    """The slot, text, trim and JSON rules a seal covers, by seal field: today's for a new seal; against `sealed`, each
    only if it names it (a seal written before a rule was recorded is recomputed as it was written)."""
    return {name: rule for name, rule in TEXT_RULES.items()
            if sealed is None or not isinstance(getattr(sealed, name), UnsetType)}


def _rules(card: Card, sealed: SealFile | None) -> Rules | None:
    """The rule parameters a seal of `card` covers: `sealed`'s own when it is given, else this benchcard's."""
    if sealed is not None:
        return None if isinstance(sealed.sequential, UnsetType) else sealed.sequential
    if card.sequential is None:
        return None
    return card_rules(card.sequential, card.is_ab)


def defaults_of(sealed: SealFile) -> Mapping[tuple[str, ...], Any]:
    """The defaults a left-out field of `sealed`'s card meant: this benchcard's, but for the spending of a card that
    names none, which is the one its rules record (obrien-fleming before 2026-12-06)."""
    if isinstance(sealed.sequential, UnsetType):
        return sealed_defaults(LEGACY_SPENDING, None)
    spending, gamma = sealed.sequential.spending
    return DEFAULTS if (spending, gamma) == DEFAULT_SPENDING else sealed_defaults(spending, gamma)


def sequential_rules(card: Card, project: Project) -> Rules | None:
    """The rule parameters a run of `card` follows: those its seal records (a later benchcard's defaults never
    change a sealed rule; a seal written before it recorded them, 2026-12-05, those every benchcard gave it until
    2026-12-06: `schedule.legacy_rules`); None (this benchcard's) for a card not sequential or unsealed."""
    if card.sequential is None:
        return None
    sealed = read(card.id, card.version, project)
    if sealed is None:
        return None
    if isinstance(sealed.sequential, UnsetType):
        return legacy_rules(card.sequential.futility and card.is_ab)
    return sealed.sequential


def rules_note(card: Card, project: Project) -> str | None:
    """A line for `check` when the seal's rule parameters are not this benchcard's defaults (None when alike, or
    when the seal cannot be read: `check` names that)."""
    try:
        sealed = sequential_rules(card, project)
    except SealError:
        return None
    if sealed is None or card.sequential is None:
        return None
    differs = sealed.changed(card_rules(card.sequential, card.is_ab), spending=card.sequential.spending is None)
    return None if differs is None else f"sealed with {differs}: its runs follow the seal"


def not_finite(card: Card, project: Project) -> str | None:
    """The card's field holding a NaN or an infinity, said in one line; None when its protocol has a canonical
    form (a seal digests canonical JSON, which holds finite numbers only)."""
    try:
        digest(card.protocol())
    except NotCanonicalError as exc:
        return (f"{project.relative(card.path)}: field '{exc.path}': expected a finite number, got NaN or an "
                "infinity")
    return None


def _relative(real: Path | str, root: str, project: Project) -> str:
    """`project.relative` of a resolved path, given the project's resolved root as text ending in a separator:
    the same name, without resolving each of thousands of fixture paths again."""
    text = str(real)
    if text.startswith(root):
        return text[len(root):]
    return project.relative(Path(real))


def sealed_versions(card_id: str, project: Project) -> list[int]:
    """The versions sealed for a card, in order: the files named as `seal` names them, `v<N>.seal.json`. Another
    file there (`vbackup.seal.json`, `v1_0.seal.json`) is no seal; int() read the last as v10 and the first
    ended in a traceback."""
    seals = project.keys_dir(card_id).glob("v*.seal.json")
    return sorted(v for v in (version_named(p.name.removesuffix(".seal.json")) for p in seals) if v is not None)


def read(card_id: str, version: int, project: Project) -> SealFile | None:
    """The seal of that version, or None when it has none; SealError naming the file and field if it is not one."""
    path = project.seal_path(card_id, version)
    if not present(path, project.relative(path), SealError):  # a folder in its place is said, never 'not sealed'
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SealError(f"{project.relative(path)}: unreadable seal: {exc}") from None
    return decode_seal(data, project.relative(path))


def seal(card: Card, project: Project) -> tuple[Path, SealFile, bool]:
    """Write `keys/<id>/v<N>.seal.json`; returns (path, seal, written). Refuses to reseal different content."""
    if isinstance(card.scoring, JudgeSpec):
        failing = judge_example_problems(card, project)
        if failing:
            raise SealError(f"{failing[0]} — a judge is sealed only once it grades its worked examples right")
    existing = read(card.id, card.version, project)
    content = compute(card, project, existing)
    path = project.seal_path(card.id, card.version)
    newer = sealed_versions(card.id, project)
    if newer and newer[-1] > card.version:
        raise SealError(
            f"{project.relative(card.path)}: version {card.version} is older than the sealed v{newer[-1]}; "
            "a card's version only goes up"
        )
    if existing is not None:
        return _sealed_already(card, project, existing, content)
    run_on = run_on_another_root(card, project, content.root)
    if run_on is not None:
        raise SealError(
            f"{project.relative(card.path)}: v{card.version} has no seal file, but {run_on[1]} was run on "
            f"v{card.version} sealed with root {run_on[0]}, and the card now seals to {content.root}: "
            f"v{card.version}'s sealed content changed (its seal file was removed); put the seal file back and "
            "undo the change, or make a new version: raise `version` and add a history note"
        )
    data = SealFile(
        card=card.id,
        version=card.version,
        sealed_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        algorithm=ALGORITHM,
        protocol=content.protocol,
        protocol_fields=content.protocol_fields,
        fixtures=content.fixtures,
        keys=content.keys,
        root=content.root,
        sequential=UNSET if content.sequential is None else content.sequential,
        slots=UNSET if content.slots is None else content.slots,
        unicode=UNSET if content.unicode is None else content.unicode,
        whitespace=UNSET if content.whitespace is None else content.whitespace,
        json_keys=UNSET if content.json_keys is None else content.json_keys,
    )
    try:
        write_atomic(path, encode_seal(data), overwrite=False)  # another `seal` at once may have written it
    except FileExistsError:
        again = read(card.id, card.version, project)
        if again is None:
            raise
        return _sealed_already(card, project, again, content)
    return path, data, True


def _sealed_already(card: Card, project: Project, existing: SealFile,
                    content: SealContent) -> tuple[Path, SealFile, bool]:
    """A version sealed already: unchanged (not written again), or a SealError naming what differs."""
    if existing.root == content.root:
        return project.seal_path(card.id, card.version), existing, False
    problem = describe_difference(existing, content, card, project)
    raise SealError(
        f"{project.relative(card.path)}: v{card.version} is already sealed and its content differs "
        f"({problem}); make a new version: raise `version` and add a history note"
    )


def verify(card: Card, project: Project) -> str:
    """The seal root if the card's current material matches its seal; SealError naming the change if not."""
    existing = read(card.id, card.version, project)
    if existing is None:
        raise SealError(
            f"{project.relative(card.path)}: v{card.version} is not sealed; run `benchcard seal {card.id}` first "
            f"(or try it unsealed: `benchcard run {card.id} --scratch`, a trial never entered in the ledger)"
        )
    content = compute(card, project, existing)
    if existing.root != content.root:
        raise SealError(f"{describe_difference(existing, content, card, project)}; a sealed version never changes: "
                        f"undo the change, or make it v{card.version + 1} (raise `version` in "
                        f"{project.relative(card.path)}, add a history note, `benchcard seal {card.id}`)")
    edited = _edited_digest(existing, content)
    if edited is not None:
        where = project.relative(project.seal_path(card.id, card.version))
        raise SealError(f"{where}: {edited} is {_edited_value(existing, edited)} but the sealed material's is "
                        f"{_edited_value(content, edited)}, while the file's root still matches: the seal file was "
                        "edited by hand; put it back as `benchcard seal` wrote it")
    run_on = run_on_another_root(card, project, existing.root)
    if run_on is not None:
        raise SealError(f"{project.relative(project.seal_path(card.id, card.version))}: root {existing.root}, but "
                        f"{run_on[1]} was run on v{card.version} sealed with root {run_on[0]}: the seal file was "
                        "replaced after runs were made (a sealed version never changes); put the sealed file "
                        f"back, or make v{card.version + 1}")
    return existing.root


def _edited_digest(sealed: SealFile, now: SealContent) -> str | None:
    """The first digest a seal file lists that is not the one its (matching) root was made from, as a field path
    (`fixtures.<file>`, `keys.<file>`, `protocol`, `protocol_fields.<field>`): a digest changed in the file by hand
    left `check` saying the seal held, since only the root is compared."""
    pairs = [("protocol", {"": sealed.protocol}, {"": now.protocol}), ("fixtures", sealed.fixtures, now.fixtures),
             ("keys", sealed.keys, now.keys)]
    if sealed.protocol_fields:  # written by every seal since protocol fields were named
        pairs.append(("protocol_fields", sealed.protocol_fields, now.protocol_fields))
    for kind, old, new in pairs:
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                return f"{kind}.{name}" if name else kind
    return None


def _edited_value(seal: SealFile | SealContent, path: str) -> str:
    """A digest of `seal` by its field path (`_edited_digest`), or "missing"."""
    kind, _, name = path.partition(".")
    table = getattr(seal, kind)
    value = table if isinstance(table, str) else table.get(name)
    return str(value) if value is not None else "missing"


def run_on_another_root(card: Card, project: Project, root: str) -> tuple[str, str] | None:
    """(root, run folder) of the first run of this version that was made under a seal other than `root`, if any:
    a sealed run records the root it verified, so a seal file removed and written again over changed content
    (`seal` then had nothing to compare with, and `check` and `run` took the new one) is seen there. Scratch
    runs are left out: a trial of a version not yet sealed records the root its draft would have had."""
    for path in sorted((project.results_dir / card.id / f"v{card.version}").glob(f"*/{MANIFEST}")):
        manifest = manifest_or_none(path)
        if manifest is not None and not manifest.scratch and manifest.seal_root and manifest.seal_root != root:
            return manifest.seal_root, project.relative(path.parent)
    return None


def root_for_scratch(card: Card, project: Project, scratch: bool) -> str:
    """`verify`, except that a scratch run (a trial, never in the ledger) may use a version not sealed yet: its
    root is then the one the material would be sealed with, so the run still records what it ran on."""
    if scratch and read(card.id, card.version, project) is None:
        return compute(card, project).root
    return verify(card, project)


def describe_difference(sealed: SealFile, now: SealContent, card: Card, project: Project) -> str:
    """The first thing that differs from the seal: which file (and field), with both digests."""
    source = project.relative(card.path)
    if sealed.protocol != now.protocol:
        old_fields = sealed.protocol_fields
        changed = sorted(k for k in set(old_fields) | set(now.protocol_fields)
                         if old_fields.get(k) != now.protocol_fields.get(k))
        which = f" (field '{changed[0]}')" if changed else ""
        return (f"{source}{which} changed after sealing v{card.version}: sealed {sealed.protocol}, "
                f"now {now.protocol}")
    for old, new in ((sealed.fixtures, now.fixtures), (sealed.keys, now.keys)):
        for name in sorted(set(old) | set(new)):
            if name not in new:
                return f"{name} was sealed in v{card.version} and is now missing"
            if name not in old:
                return f"{name} was added after sealing v{card.version} (now {new[name]})"
            if old[name] != new[name]:
                return (f"{name} changed after sealing v{card.version}: sealed {old[name]}, now {new[name]}"
                        f"{_line_endings(project.root / name, old[name])}")
    return f"{project.relative(project.seal_path(card.id, card.version))}: root does not match its contents"


def _line_endings(path: Path, sealed: str) -> str:
    """When a changed file differs from its sealed bytes only by its line endings, a note saying so and where such a
    change comes from (a git checkout on Windows converts LF to CRLF: core.autocrlf); else "". The file is read
    only when a seal does not hold."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    lf = data.replace(b"\r\n", b"\n")
    if data != lf and digest(lf) == sealed:
        change = "LF when sealed, CRLF now"
    elif data == lf and b"\n" in data and digest(data.replace(b"\n", b"\r\n")) == sealed:
        change = "CRLF when sealed, LF now"
    else:
        return ""
    return (f" (only its line endings: {change}, as git converts them in a checkout with core.autocrlf, the default "
            "of Git for Windows; `* -text` in .gitattributes, which `benchcard init` writes, keeps the bytes as "
            "sealed)")
