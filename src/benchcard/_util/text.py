"""Text shown to people (pages, grading sheets) from text stored as it came (model replies).

A reply may hold a lone surrogate, which `outputs.jsonl` keeps losslessly as a JSON escape but which no UTF-8
file can hold: where such text is shown, each lone surrogate becomes U+FFFD, the replacement character.
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def displayable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text)
