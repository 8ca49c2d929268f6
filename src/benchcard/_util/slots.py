"""A prompt's slots and the one way to write their braces as text, for both prompts benchcard fills: an ab card's
(`{{variant}}`, `{{fixture}}`, `{{fixture.<column>}}`) and a judge's (`{{output}}`, `{{rubric}}`, …). Handlebars'
rule: a run of backslashes right before a slot is halved, and an odd run makes the slot text (`\\{{x}}` sends
`{{x}}`), an even one leaves it a slot (`C:\\\\{{fixture}}` sends `C:\\` and the fixture). A card is sealed as
written, backslashes and all. A version sealed before the escape (`ESCAPE_SINCE`) reads a backslash as plain text
(`escapes=False`), so that it sends what it sent when sealed. Filling is one pass: what a slot puts in is never
read again. Here, below both the card and the judge, so that the two read a prompt alike."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

#: When the escape landed (commit 1da72f4): a version sealed before it reads every backslash as text.
ESCAPE_SINCE = "2026-12-07T15:49:08Z"
#: The slot rule a seal records (`slots`) since 2026-12-07 20:30 UTC: a seal that names it reads the escape whatever
#: its `sealed_at` says, so a clock set back while sealing cannot make a version read as sealed before the escape.
ESCAPE_RULE = "escape"

#: What a prompt's author would write to be filled: `{{name}}`, `{{ name }}`, `{{fixture.column}}`.
_SLOT_LIKE = r"\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}"
_ESCAPING = re.compile(rf"(\\*)({_SLOT_LIKE})")  # the run of backslashes before a slot, then the slot
_PLAIN = re.compile(rf"()({_SLOT_LIKE})")  # the rule before the escape: no backslash is read


def _matches(text: str, escapes: bool) -> Iterator[re.Match[str]]:
    """Every slot-like `{{…}}` of `text` with the backslashes right before it (none read when not `escapes`)."""
    return (_ESCAPING if escapes else _PLAIN).finditer(text)


def _is_slot(m: re.Match[str]) -> bool:
    """Whether a match is a slot: an even run of backslashes (none included) before it."""
    return len(m.group(1)) % 2 == 0


def slots_in(text: str, *, escapes: bool = True) -> list[str]:
    """Every slot-like `{{…}}` of `text` as written, in order, but those written as text (`\\{{x}}`)."""
    return [m.group(2) for m in _matches(text, escapes) if _is_slot(m)]


def slot_name(slot: str) -> str:
    """The name a slot holds: `output` for `{{output}}` and `{{ output }}`."""
    return slot[2:-2].strip()


def text_after(text: str, slot: str, *, escapes: bool = True) -> str | None:
    """What follows the first `slot` of `text` that is a slot (an escaped `\\{{x}}` before it is text); None when
    `text` holds none."""
    for m in _matches(text, escapes):
        if _is_slot(m) and m.group(2) == slot:
            return text[m.end():]
    return None


def fill_slots(text: str, slots: Mapping[str, str], *, escapes: bool = True) -> str:
    """`text` with each of its slots (as written: `{{variant}}`) replaced, each escaped one (`\\{{x}}`) written as
    its braces (`{{x}}`) and each run of backslashes before a slot halved (`\\\\{{x}}`: a backslash, then the slot),
    in one pass: what a substitution put in (a fixture holding `{{variant}}` or `\\{{x}}`) is never read again. A
    slot `slots` does not name stays as written."""

    def put(m: re.Match[str]) -> str:
        run, slot = m.group(1), m.group(2)
        kept = run[: len(run) // 2]
        return kept + (slots.get(slot, slot) if _is_slot(m) else slot)

    return (_ESCAPING if escapes else _PLAIN).sub(put, text)
