"""An ab prompt's slots (`{{variant}}`, `{{fixture}}`, `{{fixture.<column>}}`) and the one way to write their braces
as text: a backslash right before one (`\\{{x}}`, as Handlebars writes it) makes it text, and the model receives it
without the backslash (`{{x}}`), so a prompt that asks for a template can show one. The card is sealed as written,
backslash and all. Filling is one pass: what a slot puts in is never read again."""

from __future__ import annotations

import re
from collections.abc import Mapping

#: What a prompt's author would write to be filled: `{{name}}`, `{{ name }}`, `{{fixture.column}}`.
_SLOT_LIKE = r"\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}"
_ESCAPED = re.compile(rf"\\({_SLOT_LIKE})")
_SLOT = re.compile(rf"(?<!\\){_SLOT_LIKE}")


def slots_in(text: str) -> list[str]:
    """Every slot-like `{{…}}` of `text` in order, but those written as text (`\\{{x}}`)."""
    return _SLOT.findall(text)


def fill_slots(text: str, slots: Mapping[str, str]) -> str:
    """`text` with each of its slots replaced and each escaped one (`\\{{x}}`) written as its braces (`{{x}}`), in
    one pass: what a substitution put in (a fixture holding `{{variant}}` or `\\{{x}}`) is never read again."""
    names = "|".join(map(re.escape, sorted(slots, key=len, reverse=True)))
    pattern = re.compile(f"{_ESCAPED.pattern}|{names}" if names else _ESCAPED.pattern)
    return pattern.sub(lambda m: m.group(1) or slots[m.group(0)], text)
