"""Every name a card gives a reader, checked before the card is used: its variants, its fixture ids and the
metrics its scorer yields (field, rule and criterion names among them). A name that does not read as what it
is, or two that read the same, is one line naming the card file, the field and the names (`_util/names.py`)."""

from __future__ import annotations

from benchcard._util.names import name_clash, shown
from benchcard.card.model import Card
from benchcard.errors import CardError
from benchcard.scoring.scorers import metric_names


def check_names(card: Card, source: str) -> Card:
    """The card itself when every name in it is visibly distinct; else a CardError naming `source` (the card
    file as errors name it), the field and the names."""
    groups = ((("variants",), list(card.variants), "variant"), (("fixtures",), list(card.fixtures), "fixture"),
              (("scoring",), sorted(metric_names(card.scoring)), "metric"))  # a probe has no variants or fixtures
    for where, names, what in groups:
        clash = name_clash(names)
        if clash is None:
            continue
        name, other, problem = clash
        field = ".".join(where)
        if other:
            raise CardError(f"{source}: field '{field}': {what} names {shown(name)} and {shown(other)} {problem}; "
                            "give them names that look different")
        raise CardError(f"{source}: field '{field}': {what} name {shown(name)} {problem}")
    return card
