"""The win rule of a comparison: from a small YAML file or from the command line, in the card's clause syntax.

A file holds what a card's `win:` block holds (with or without the `win:` key):

    all:
      - {metric: accuracy, test: rises}
      - {metric: refusals, test: not_rises, margin: 0.02}
    alpha: 0.05
    equivalence_margin: 0.02

On the command line each `--win` is one clause, `METRIC TEST [MARGIN]` (`"accuracy rises"`, `"refusals
not_rises 0.02"`), at α 0.05 with an equivalence margin of 0.05. Both go through the card reader's own checks, so
an error names the file (or `--win`), the field and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchcard.card.model import WinRule
from benchcard.card.reader import parse_yaml, read_win_rule
from benchcard.errors import CardError, CompareError

MAX_RULE_BYTES = 64_000  # a win rule is a few lines; a larger file is not one


def rule_from_file(path: Path, known: set[str], fixtures: Mapping[str, Any]) -> WinRule:
    """The win rule in a YAML file, checked against the metrics and sample ids of the logs."""
    try:
        if path.stat().st_size > MAX_RULE_BYTES:
            raise CompareError(f"{path}: {path.stat().st_size} bytes; a win rule file is a few lines "
                               f"(at most {MAX_RULE_BYTES})")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(f"{path}: unreadable: {exc}") from None
    raw, lines = parse_yaml(text, str(path))
    if isinstance(raw, Mapping) and set(raw) == {"win"}:
        raw = raw["win"]
        lines = {k[1:]: v for k, v in lines.items() if k[:1] == ("win",)}
    lines = {("win", *k): v for k, v in lines.items()}
    if not isinstance(raw, Mapping):
        raise CompareError(f"{path}: expected a mapping with all: [clauses] (a card's win block)")
    return _checked(raw, lines, str(path), known, fixtures)


def rule_from_options(clauses: Sequence[str], alpha: float, equivalence_margin: float, allow_failed: int,
                      known: set[str], fixtures: Mapping[str, Any]) -> WinRule:
    """The win rule of `--win "METRIC TEST [MARGIN]"`… options."""
    items = []
    for text in clauses:
        parts = text.split()
        if len(parts) not in (2, 3):
            raise CompareError(f"--win {text!r}: expected METRIC TEST [MARGIN], e.g. --win 'accuracy rises'")
        item: dict[str, Any] = {"metric": parts[0], "test": parts[1]}
        if len(parts) == 3:
            try:
                item["margin"] = float(parts[2])
            except ValueError:
                raise CompareError(f"--win {text!r}: margin {parts[2]!r} is not a number") from None
        items.append(item)
    raw = {"all": items, "alpha": alpha, "equivalence_margin": equivalence_margin, "allow_failed": allow_failed}
    return _checked(raw, {}, "--win", known, fixtures)


def _checked(raw: Mapping[str, Any], lines: dict[tuple[str, ...], int], source: str, known: set[str],
             fixtures: Mapping[str, Any]) -> WinRule:
    try:
        return read_win_rule(raw, lines, source, known, fixtures)
    except CardError as exc:
        raise CompareError(str(exc).replace("the scorer yields", "the logs have")) from None
