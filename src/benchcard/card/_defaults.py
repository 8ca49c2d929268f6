"""What a card's optional protocol fields mean when left out, and protocols that differ only by writing them out.

`DEFAULTS` is the one table of these values: the reader takes a left-out field's value from it, the card's values
(card/model.py) their constructor defaults, and a seal (card/seal.py) holds a card whose fields at their default
are written out where the sealed card left them out, or the other way round (docs/cards.md, "What the seal
covers"): the two mean exactly the same protocol.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from benchcard._util.hashing import digest
from benchcard.scoring.scorers import SCORING_DEFAULTS

ANY = "*"  # any item of a list, in a path of `DEFAULTS`
#: The α-spending functions a sequential card may name (here, not in card/model.py, so that the model can read its
#: defaults from `DEFAULTS` without an import cycle).
SPENDINGS = ("obrien-fleming", "pocock", "hsd")
#: How a card that names no spending spends α, and its γ, since 2026-12-06 (docs/statistics.md, "Sequential
#: cards"): a seal records it (`records.rows.Rules.default_spending`), so a card sealed before keeps its own.
DEFAULT_SPENDING: tuple[str, float | None] = ("hsd", -6.0)
#: Each optional protocol field's value when the card leaves it out, by its path (`ANY` for a list's items);
#: None for a field that is then simply absent (written out, it is null).
DEFAULTS: Mapping[tuple[str, ...], Any] = MappingProxyType({
    ("repetitions",): 1,
    ("sequential",): None,
    ("gate",): None,
    ("gate", "alpha"): 0.05,
    ("rig", "effort"): None,
    ("rig", "surface"): None,
    ("prompt", "system"): None,
    ("sequential", "spending"): DEFAULT_SPENDING[0],
    ("sequential", "gamma"): DEFAULT_SPENDING[1],
    ("sequential", "futility"): False,
    ("win", "alpha"): 0.05,
    ("win", "min_effect"): 0.0,
    ("win", "allow_failed"): 0,
    ("win", "accept_cannot_win"): False,
    ("win", "all", ANY, "fixture"): None,
    ("win", "all", ANY, "margin"): None,
    ("win", "all", ANY, "equals"): 1.0,
    **{("scoring", *path): value for path, value in SCORING_DEFAULTS.items()},
})
_PREFIXES = frozenset(path[:n] for path in DEFAULTS for n in range(len(path)))
#: The most rewrites of one field tried against its sealed digest before it is called changed (`sealed_form`), the
#: fewest changed defaults first (a win rule of four clauses has 15,552 rewrites in all: 0.3 CPU-s to try them).
MAX_REWRITES = 1 << 16


class _Absent:
    """A field left out (None is a field written out as null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def default_of(where: Sequence[str | int]) -> Any:
    """The value the field at `where` (a card path, list items by index) takes when the card leaves it out."""
    return DEFAULTS[_pattern(where)]


def sealed_defaults(spending: str, gamma: float | None) -> Mapping[tuple[str, ...], Any]:
    """`DEFAULTS` as a seal reads them whose rules say a card that names no spending spends `spending` (γ `gamma`,
    None: none): a card sealed before 2026-12-06 left `spending` out to mean obrien-fleming."""
    return MappingProxyType({**DEFAULTS, ("sequential", "spending"): spending, ("sequential", "gamma"): gamma})


def is_default(where: Sequence[str | int], value: Any, table: Mapping[tuple[str, ...], Any] = DEFAULTS) -> bool:
    """Whether `value` at `where` is written as the field's default in `table` (1 and 1.0 alike, true never 1;
    null for a field whose default is to be absent)."""
    key = _pattern(where)
    return key in table and _same(value, table[key])


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool) or value is None or default is None:
        return value is default
    if isinstance(default, int | float):
        return isinstance(value, int | float) and value == default
    return bool(value == default)


def _pattern(where: Sequence[str | int]) -> tuple[str, ...]:
    return tuple(ANY if isinstance(w, int) else str(w) for w in where)


def written_forms(where: Sequence[str | int], table: Mapping[tuple[str, ...], Any] = DEFAULTS) -> tuple[Any, ...]:
    """Every way to write the default at `where` out: its value (a whole float also as an integer), or null."""
    default = table[_pattern(where)]
    if isinstance(default, float) and default.is_integer():
        return default, int(default)
    return (default,)


def as_sealed(protocol: Mapping[str, Any], sealed: Mapping[str, str],
              table: Mapping[tuple[str, ...], Any] = DEFAULTS) -> dict[str, Any]:
    """`protocol` (a card's, now) written as the seal's per-field digests `sealed` show it was: each field in the
    form, among those that differ only by fields at their default (`table`: the seal's) written out or left out,
    whose digest the seal holds; a field with no such form stays as it is (and the seal names it as changed)."""
    out: dict[str, Any] = {}
    for name in sorted(set(protocol) | set(sealed)):
        value = protocol.get(name, ABSENT)
        form = sealed_form((name,), value, sealed.get(name), table)
        if form is not ABSENT:
            out[name] = form
    return out


def sealed_form(where: tuple[str, ...], value: Any, want: str | None,
                table: Mapping[tuple[str, ...], Any] = DEFAULTS) -> Any:
    """`value` at `where` (ABSENT when left out) rewritten to digest as `want` (None: left out when sealed) by
    writing out or leaving out fields at their default in `table`; `value` itself when no rewrite does."""
    if want is None:
        return ABSENT if value is not ABSENT and is_default(where, value, table) else value
    if value is not ABSENT and digest(value) == want:
        return value
    if value is ABSENT:
        forms = written_forms(where, table) if _pattern(where) in table else ()
        return next((f for f in forms if digest(f) == want), ABSENT)
    for form in _rewrites(where, value, table):
        if digest(form) == want:
            return form
    return value


def holds(where: tuple[str, ...], value: Any, want: str, table: Mapping[tuple[str, ...], Any] = DEFAULTS) -> bool:
    """Whether `value` at `where` (ABSENT when left out) is, up to fields at their default in `table`, what digests
    as `want`."""
    form = sealed_form(where, value, want, table)
    return form is not ABSENT and digest(form) == want


@dataclass(frozen=True)
class _Spot:
    """A place in a field where a default may be written out or left out: its path inside the field and the
    other ways to write it (ABSENT: left out)."""

    path: tuple[str | int, ...]
    others: tuple[Any, ...]


def _rewrites(where: tuple[str, ...], value: Any, table: Mapping[tuple[str, ...], Any]) -> Iterator[Any]:
    """`value` rewritten at one spot, then at two, … (the fewest changes first), at most `MAX_REWRITES` forms."""
    if is_default(where, value, table):
        spots = [_Spot((), _others(written_forms(where, table), value))]
    else:
        spots = list(_spots(where, (), value, table))
    tried = 0
    for count in range(1, len(spots) + 1):
        for chosen in itertools.combinations(spots, count):
            for forms in itertools.product(*(s.others for s in chosen)):
                tried += 1
                if tried > MAX_REWRITES:
                    return
                out = value
                for spot, form in zip(chosen, forms, strict=True):
                    out = _put(out, spot.path, form)
                yield out


def _spots(where: tuple[str | int, ...], inside: tuple[str | int, ...], value: Any,
           table: Mapping[tuple[str, ...], Any]) -> Iterator[_Spot]:
    """Every spot under `value` (at card path `where`, at `inside` in the field) where a default may be toggled
    (`table`'s paths are `DEFAULTS`', so `_PREFIXES` holds for it)."""
    if _pattern(where) not in _PREFIXES:
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _spots((*where, i), (*inside, i), item, table)
        return
    if not isinstance(value, Mapping):
        return
    present = {str(k) for k in value}
    for key, item in value.items():
        here = (*where, str(key))
        if is_default(here, item, table):
            yield _Spot((*inside, key), (ABSENT, *_others(written_forms(here, table), item)))
        else:
            yield from _spots(here, (*inside, key), item, table)
    for path in sorted(table):
        if len(path) == len(where) + 1 and path[-1] != ANY and path[-1] not in present and \
                _pattern(where) == path[:-1]:
            yield _Spot((*inside, path[-1]), written_forms((*where, path[-1]), table))


def _others(forms: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
    """`forms` but the one `value` is written in (1 is not 1.0 here: they digest differently)."""
    return tuple(f for f in forms if not (type(f) is type(value) and f == value))


def _put(value: Any, path: tuple[str | int, ...], form: Any) -> Any:
    """A copy of `value` with the item at `path` set to `form` (ABSENT: removed); `value` itself is unchanged."""
    if not path:
        return form
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        assert isinstance(head, int)
        return [*value[:head], _put(value[head], rest, form), *value[head + 1:]]
    out = dict(value)
    new = _put(out.get(head, ABSENT), rest, form)
    if new is ABSENT:
        out.pop(head, None)
    else:
        out[head] = new
    return out
