"""What a card's design can never show, said by `benchcard check` before anything is sealed or paid for.

The verdict's rule (docs/verdict.md) needs an exact sign-flip p ≤ α over the fixtures, so F fixtures can
never win when 2/2^F > α; it counts the run-to-run spread from the repetitions, so one repetition can never
win and two make the run-level term a one-degree-of-freedom guess. Cells cut off by `max_tokens` count
against `allow_failed` and are bounded at the worst case; a card whose runs were cut off should raise it.
These are warnings, not errors: a card may be a pilot.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from benchcard.card.model import Card
from benchcard.card.reader import parse_yaml
from benchcard.project import Project
from benchcard.records.rows import manifest_or_none


def fewest_fixtures(alpha: float) -> int:
    """The fewest fixtures whose exact two-sided sign-flip p can reach alpha (2/2^F ≤ alpha)."""
    return max(2, math.ceil(1 + math.log2(1 / alpha)))


def _locator(card: Card, project: Project) -> Callable[..., str]:
    """`at(*field)`: the card's file and the line of a field, for a warning."""
    source = project.relative(card.path)
    try:
        _, lines = parse_yaml(card.path.read_text(encoding="utf-8"), source)
    except Exception:  # the card loaded a moment ago; a race with an editor only loses the line numbers
        lines = {}

    def at(*field: str) -> str:
        line = lines.get(tuple(field))
        return f"{source}:{line}" if line else source

    return at


def truncation_warnings(card: Card, project: Project) -> list[str]:
    """The runs of this version cut off at the card's max_tokens (`check` and `plan` both say so)."""
    return _truncation_warnings(card, project, _locator(card, project)("params", "max_tokens"))


def design_warnings(card: Card, project: Project) -> list[str]:
    """One line per thing this card's design cannot show, each naming the file, line and field."""
    at = _locator(card, project)
    out: list[str] = []
    if card.is_ab and card.win is not None:
        alpha = card.win.alpha
        n = len(card.fixture_ids())
        need = fewest_fixtures(alpha)
        if n < need:
            out.append(f"{at('fixtures')}: field 'fixtures': {n} fixture(s) can never win at α = {alpha:g}: the "
                       f"exact sign-flip p is at least {2 / 2 ** n:.4g} > α (a win needs {need} fixtures or more, "
                       "and more for power)")
        if card.repetitions == 1:
            out.append(f"{at('repetitions')}: field 'repetitions': 1 repetition can never win: the run-to-run "
                       "spread cannot be measured, and a gap it cannot measure is not shown real (use 3 or more)")
        elif card.repetitions == 2:
            out.append(f"{at('repetitions')}: field 'repetitions': with 2 repetitions the run-to-run spread rests "
                       "on one degree of freedom, so the verdict must allow for run shocks it cannot measure and "
                       "only a very large gap can win (use 3 or more, 5 or more for power)")
    out += _truncation_warnings(card, project, at("params", "max_tokens"))
    return out


def _truncation_warnings(card: Card, project: Project, where: str) -> list[str]:
    """Runs of this version that had cells cut off at the card's current max_tokens."""
    max_tokens = card.params.get("max_tokens")
    out = []
    folder = project.results_dir / card.id / f"v{card.version}"
    for manifest_path in sorted(folder.glob("*/manifest.json")) if folder.is_dir() else []:
        manifest = manifest_or_none(manifest_path)
        if manifest is None or manifest.counts is None:
            continue
        truncated = manifest.counts.truncated
        if truncated <= 0 or manifest.params.get("max_tokens") != max_tokens:
            continue
        total = manifest.cells
        of = f" of {total}" if total is not None else ""
        out.append(f"{where}: field 'params.max_tokens': run {manifest_path.parent.name} had {truncated}{of} "
                   f"cell(s) cut off at max_tokens {max_tokens}; they count against allow_failed and are bounded "
                   "at the worst case by the verdict — raise max_tokens in a new version")
    return out

