"""What the judge is shown: the card's template filled with one output, its fixture, its key and the rubric.

Nothing else can reach the judge: the template's slots are fixed (`spec.SLOTS`), and `blind_output` removes any
verbatim echo of a variant's inserted text from the output first, so an output that quotes its own instruction
cannot tell the judge which variant it came from. Slots are filled in one pass, so an output containing
`{{key}}` stays text and never pulls the key in; an escaped slot of the template (`\\{{x}}`) reaches the judge as
its braces (`{{x}}`), as in an ab prompt (`_util/slots.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from benchcard._util.slots import fill_slots, slot_name, slots_in
from benchcard.scoring.judge.spec import JudgeSpec

REDACTED = "[…]"
MIN_ECHO_CHARS = 12  # shorter lines of a variant's text ("Answer:") are too common to mean an echo


@dataclass(frozen=True)
class Blinded:
    text: str
    removed: int  # how many echoes of a variant's text were removed


def rubric_text(spec: JudgeSpec) -> str:
    if isinstance(spec.rubric, str):
        return spec.rubric.strip()
    return "\n".join(f"- {c.id}: {c.ask.strip()}" for c in spec.rubric)


def format_text(spec: JudgeSpec) -> str:
    """The answer form the parser accepts, said to the judge in one or two sentences."""
    values = spec.scale.describe()
    if spec.answer == "json":
        keys = [c.id for c in spec.criteria] or ["grade"]
        shape = ", ".join(f'"{k}": <{values}>' for k in keys)
        return (f'Reply with only one JSON object, nothing before or after it: {{{shape}, "reason": "<one '
                'sentence>"}.')
    if spec.answer == "bare":
        return f"Reply with only {values}, nothing else."
    if spec.criteria:
        lines = "\n".join(f"{c.id}: <{values}>" for c in spec.criteria)
        return f"End your reply with these {len(spec.criteria)} lines, in this order and nothing after them:\n{lines}"
    return f"End your reply with one final line `GRADE: <{values}>` and nothing after it."


def blind_output(text: str, variant_texts: Iterable[str]) -> Blinded:
    """The output with every verbatim echo of a variant's text (whole, or any line of it) replaced by […]."""
    pieces: set[str] = set()
    for block in variant_texts:
        if len(block.strip()) >= MIN_ECHO_CHARS:
            pieces.add(block.strip())
        pieces.update(line.strip() for line in block.splitlines() if len(line.strip()) >= MIN_ECHO_CHARS)
    removed = 0
    for piece in sorted(pieces, key=len, reverse=True):  # the whole block before its lines
        count = text.count(piece)
        if count:
            removed += count
            text = text.replace(piece, REDACTED)
    return Blinded(text, removed)


def judge_messages(spec: JudgeSpec, output: str, fixture_text: str = "", key_text: str = "") -> list[dict[str, str]]:
    """Exactly the chat messages the judge receives for one output."""
    values = {"output": output, "fixture": fixture_text, "key": key_text, "rubric": rubric_text(spec),
              "format": format_text(spec)}

    def fill(template: str) -> str:
        slots = slots_in(template, escapes=spec.escapes)
        return fill_slots(template, {s: values[slot_name(s)] for s in slots if slot_name(s) in values},
                          escapes=spec.escapes)

    messages = []
    if spec.system is not None:
        messages.append({"role": "system", "content": fill(spec.system)})
    messages.append({"role": "user", "content": fill(spec.user)})
    return messages
