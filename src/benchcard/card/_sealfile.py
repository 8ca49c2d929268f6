"""`keys/<id>/v<N>.seal.json`, typed once: the struct `benchcard seal` writes and `check`, `run` and `verdict`
read back. The bytes are those every seal has had (indented two spaces, keys sorted, UTF-8 kept, a final
newline), so seals written before this module re-read and re-encode unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from benchcard._util.safeio import bom_said
from benchcard._util.slots import ESCAPE_RULE
from benchcard.errors import SealError
from benchcard.records.rows import Rules
from benchcard.scoring.textform import ALL_KEYS_RULE, JS_SPACE_RULE, NFC_RULE

#: The one digest algorithm a seal is written with (every digest is `sha256:<hex>`).
ALGORITHM = "sha256"


class SealFile(msgspec.Struct, frozen=True, kw_only=True):
    """A sealed version: the digest of its protocol (and of each protocol field, so that a change is named),
    of each fixture and key file, and the root over them all (with, for a sequential card, its rule's parameters:
    `Rules`). Every digest is `sha256:<hex>`."""

    card: str
    version: int
    sealed_at: str  # UTC, 2026-11-30T15:52:04Z
    algorithm: str
    protocol: str
    protocol_fields: dict[str, str]
    fixtures: dict[str, str]  # project-relative path → digest
    keys: dict[str, str]
    root: str
    # a sequential card's rule parameters benchcard holds, as resolved when it was sealed (covered by `root`);
    # absent from seals written before 2026-12-05 and from cards that are not sequential
    sequential: Rules | UnsetType = UNSET
    # the slot rule its prompts are read by (`_util/slots.py`), covered by `root`: "escape" in every seal written
    # since 2026-12-07 20:30 UTC; absent from older seals, whose rule `sealed_at` decides (a clock set back at
    # sealing must not turn a card's `\{{x}}` into a backslash and the slot filled)
    slots: str | UnsetType = UNSET
    # the text rule its scorers compare answers and replies by (`scoring/textform.py`), covered by `root`: "nfc" in
    # every seal written since 2026-12-08; absent from older seals, whose `exact` and `fields` scorers compare text
    # as stored (an NFD answer and an NFC reply differ), so that the scores of their runs stay as taken
    unicode: str | UnsetType = UNSET
    # the trim rule (`scoring/textform.py`), covered by `root`: "js" in every seal written since 2026-12-08 (score25),
    # `exact`'s trim removing what JavaScript's does (a leading U+FEFF too); absent from older seals, which trim as
    # Python's `str.strip` does, so that the scores of their runs stay as taken
    whitespace: str | UnsetType = UNSET
    # the JSON rule (`scoring/textform.py`), covered by `root`: "all" in every seal written since 2026-12-08
    # (score25), a key a fields reply writes twice read with all its values; absent from older seals, which read
    # only its last, as their runs were scored
    json_keys: str | UnsetType = UNSET

    def fields(self) -> dict[str, Any]:
        """The seal as plain JSON values (for `benchcard seal --json`)."""
        data: dict[str, Any] = msgspec.to_builtins(self)
        return data


def encode_seal(sealed: SealFile) -> bytes:
    """The seal file's bytes: the layout every seal on disk already has."""
    text = json.dumps(sealed.fields(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text.encode() + b"\n"


def decode_seal(data: bytes, where: Path | str) -> SealFile:
    """A seal from its bytes; one line naming the file (`where`, as the user sees it) and the bad field."""
    try:
        sealed: SealFile = msgspec.json.decode(data, type=SealFile)
    except msgspec.ValidationError as exc:
        raise SealError(f"{where}: not a seal: {exc}") from None
    except msgspec.DecodeError as exc:
        raise SealError(f"{where}: unreadable seal: {exc}{bom_said(data)}") from None
    newer = _newer_field(sealed)
    if newer is not None:
        field, what, known = newer
        raise SealError(f"{where}: field '{field}': {what} is not one this benchcard knows ({known!r}): the seal was "
                        "written by a newer benchcard; upgrade benchcard to read it")
    return sealed


def _newer_field(sealed: SealFile) -> tuple[str, str, str] | None:
    """The field whose value only a newer benchcard writes (field, the value as said, the one known), or None. A
    digest of another algorithm was read as sha256 and said to be a card changed after sealing (make a v2)."""
    if sealed.algorithm != ALGORITHM:
        return "algorithm", f"digest algorithm {sealed.algorithm!r}", ALGORITHM
    if not isinstance(sealed.slots, UnsetType) and sealed.slots != ESCAPE_RULE:
        return "slots", f"slot rule {sealed.slots!r}", ESCAPE_RULE
    if not isinstance(sealed.unicode, UnsetType) and sealed.unicode != NFC_RULE:
        return "unicode", f"text rule {sealed.unicode!r}", NFC_RULE
    if not isinstance(sealed.whitespace, UnsetType) and sealed.whitespace != JS_SPACE_RULE:
        return "whitespace", f"trim rule {sealed.whitespace!r}", JS_SPACE_RULE
    if not isinstance(sealed.json_keys, UnsetType) and sealed.json_keys != ALL_KEYS_RULE:
        return "json_keys", f"JSON rule {sealed.json_keys!r}", ALL_KEYS_RULE
    return None
