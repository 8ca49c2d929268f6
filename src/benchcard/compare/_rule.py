"""The win rule of a comparison: from a small YAML file or from the command line, in the card's clause syntax.

A file holds what a card's `win:` block holds (with or without the `win:` key):

    all:
      - {metric: accuracy, test: rises}
      - {metric: refusals, test: not_rises, margin: 0.02}
    alpha: 0.05
    equivalence_margin: 0.02
    ranges: {score: [0, 100]}    # optional: a metric's lowest and highest value (compare --range)

On the command line each `--win` is one clause, `METRIC TEST [MARGIN]` (`"accuracy rises"`, `"refusals
not_rises 0.02"`), at α 0.05 with an equivalence margin of 0.05. Both go through the card reader's own checks, so
an error names the file (or `--win`), the field and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchcard._util.safeio import read_regular_text
from benchcard.card.model import WinRule
from benchcard.card.reader import parse_yaml, read_win_rule
from benchcard.errors import CardError, CompareError

MAX_RULE_BYTES = 64_000  # a win rule is a few lines; a larger file is not one
#: A metric's declared lowest and highest value, by metric: the gaps it can show are ±(highest − lowest), so its
#: intervals are cut there (a 0-1 metric needs none: its range is known).
Ranges = dict[str, tuple[float, float]]


def rule_from_file(path: Path, known: set[str], fixtures: Mapping[str, Any]) -> tuple[WinRule, Ranges]:
    """The win rule in a YAML file, and the metric ranges it declares, checked against the logs' metrics and
    sample ids."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CompareError(f"{path}: unreadable: {exc}") from None
    if size > MAX_RULE_BYTES:
        raise CompareError(f"{path}: {size} bytes; a win rule file is a few lines (at most {MAX_RULE_BYTES})")
    # a FIFO or a device passes the size (0): read as a card is, a regular file or one line, never a hang
    text = read_regular_text(path, str(path), CompareError, MAX_RULE_BYTES)
    raw, lines = parse_yaml(text, str(path))
    if isinstance(raw, Mapping) and set(raw) == {"win"}:
        raw = raw["win"]
        lines = {k[1:]: v for k, v in lines.items() if k[:1] == ("win",)}
    lines = {("win", *k): v for k, v in lines.items()}
    if not isinstance(raw, Mapping):
        raise CompareError(f"{path}: expected a mapping with all: [clauses] (a card's win block)")
    declared = raw.get("ranges", {})
    if not isinstance(declared, Mapping):
        raise CompareError(f"{path}: field 'ranges': expected a mapping of metric to [lowest, highest], e.g. "
                           "{score: [0, 100]}")
    ranges = {str(m): _range(str(m), v, f"{path}: field 'ranges.{m}'", known) for m, v in declared.items()}
    rule = {k: v for k, v in raw.items() if k != "ranges"}
    return _checked(rule, lines, str(path), known, fixtures), ranges


def ranges_from_options(texts: Sequence[str], known: set[str]) -> Ranges:
    """`--range 'METRIC LOWEST HIGHEST'`… options."""
    ranges: Ranges = {}
    for text in texts:
        parts = text.split()
        if len(parts) != 3:
            raise CompareError(f"--range {text!r}: expected METRIC LOWEST HIGHEST, e.g. --range 'score 0 100'")
        ranges[parts[0]] = _range(parts[0], parts[1:], f"--range {text!r}", known)
    return ranges


def _range(metric: str, value: Any, where: str, known: set[str]) -> tuple[float, float]:
    if metric not in known:
        raise CompareError(f"{where}: no metric {metric!r} in both logs (they have: {', '.join(sorted(known))})")
    try:
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise ValueError
        lo, hi = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        raise CompareError(f"{where}: expected the lowest and highest value, two numbers, got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise CompareError(f"{where}: expected two finite numbers, the lowest below the highest, got {lo:g} "
                           f"and {hi:g}")
    return lo, hi


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
