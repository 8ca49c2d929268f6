"""A prompt's slots and the one way to write their braces as text, for both prompts benchcard fills: an ab card's
(`{{variant}}`, `{{fixture}}`, `{{fixture.<column>}}`) and a judge's (`{{output}}`, `{{rubric}}`, …). A backslash
right before one (`\\{{x}}`, as Handlebars writes it) makes it text, and the model receives it without the backslash
(`{{x}}`), so a prompt that asks for a template can show one. A card is sealed as written, backslash and all.
Filling is one pass: what a slot puts in is never read again. Here, below both the card and the judge, so that
the two read a prompt alike."""

from __future__ import annotations

import re
from collections.abc import Mapping

#: What a prompt's author would write to be filled: `{{name}}`, `{{ name }}`, `{{fixture.column}}`.
_SLOT_LIKE = r"\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}"
_ESCAPED = re.compile(rf"\\({_SLOT_LIKE})")
_SLOT = re.compile(rf"(?<!\\){_SLOT_LIKE}")


def slots_in(text: str) -> list[str]:
    """Every slot-like `{{…}}` of `text` as written, in order, but those written as text (`\\{{x}}`)."""
    return _SLOT.findall(text)


def slot_name(slot: str) -> str:
    """The name a slot holds: `output` for `{{output}}` and `{{ output }}`."""
    return slot[2:-2].strip()


def text_after(text: str, slot: str) -> str | None:
    """What follows the first `slot` of `text` that is a slot (an escaped `\\{{x}}` before it is text); None when
    `text` holds none."""
    for m in _SLOT.finditer(text):
        if m.group(0) == slot:
            return text[m.end():]
    return None


def fill_slots(text: str, slots: Mapping[str, str]) -> str:
    """`text` with each of its slots (as written: `{{variant}}`) replaced and each escaped one (`\\{{x}}`) written as
    its braces (`{{x}}`), in one pass: what a substitution put in (a fixture holding `{{variant}}` or `\\{{x}}`) is
    never read again. A slot `slots` does not name stays as written."""
    names = "|".join(map(re.escape, sorted(slots, key=len, reverse=True)))
    pattern = re.compile(f"{_ESCAPED.pattern}|{names}" if names else _ESCAPED.pattern)
    return pattern.sub(lambda m: m.group(1) or slots[m.group(0)], text)
