"""Sequential cards for the tests of looks (card, run, verdict, ledger, pages): the colour-ab card with a
`sequential:` block, and a fake server whose variant is right more often than its baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchcard.project import Project

from .helpers_run import ab_project, probe_project, seal_card

SEQUENTIAL = "sequential: {looks: 3, spending: obrien-fleming, futility: true}\n"


def sequential_ab(root: Path, base_url: str | None = None, *, fixtures: int = 16, repetitions: int = 9,
                  block: str = SEQUENTIAL) -> Project:
    """colour-ab with `block` added, sealed."""
    ab_project(root, base_url, fixtures=fixtures, repetitions=repetitions)
    path = root / "cards" / "colour-ab.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("repetitions:", block + "repetitions:"),
                    encoding="utf-8")
    for seal in (root / "keys" / "colour-ab").glob("*.seal.json"):
        seal.unlink()
    return seal_card(root, "colour-ab")


def futile_ab(root: Path, base_url: str | None = None, min_effect: float = 0.4) -> Project:
    """colour-ab with looks after repetitions 3, 6, 9, futility on and `win.min_effect: 0.4`, sealed: against
    `futile()` it goes on at look 1 and stops for futility at look 2. At `min_effect` 0.3 it does the same, and its
    16 × 9 design can show the plainest effect (at 0.4 it wins 94 % of simulated runs: `check` searches the
    smallest change, about 10 CPU-s of table draws)."""
    sequential_ab(root, base_url)
    card = root / "cards" / "colour-ab.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("  equivalence_margin: 0.05",
                                                             f"  equivalence_margin: 0.05\n  min_effect: {min_effect}"),
                    encoding="utf-8")
    for seal in (root / "keys" / "colour-ab").glob("*.seal.json"):
        seal.unlink()
    return seal_card(root, "colour-ab")


def sequential_probe(root: Path, base_url: str | None = None, *, repetitions: int = 40,
                     block: str = "sequential: {looks: 4}\ngate: {min_score: 0.5}\n") -> Project:
    """The one-word-sentiment probe with a gate and `block`, sealed."""
    probe_project(root, base_url, repetitions=repetitions)
    path = root / "cards" / "one-word-sentiment.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("repetitions:", block + "repetitions:"),
                    encoding="utf-8")
    for seal in (root / "keys" / "one-word-sentiment").glob("*.seal.json"):
        seal.unlink()
    return seal_card(root, "one-word-sentiment")


def clear_win() -> dict[str, Any]:
    """The fake server's config: the variant (its prompt says "Please.") nearly always right, the baseline
    nearly always wrong, with some run-to-run noise in both."""
    return {"replies": [{"match": "Please.", "replies_cycle": ["red", "red", "red", "red", "red", "blue"]},
                        {"match": "", "replies_cycle": ["blue", "blue", "blue", "red", "blue"]}]}


def no_effect() -> dict[str, Any]:
    """Both arms alike: right about half the time."""
    return {"replies": [{"match": "", "replies_cycle": ["red", "blue"]}]}


def clear_loss() -> dict[str, Any]:
    """The variant always wrong, the baseline always right."""
    return {"replies": [{"match": "Please.", "reply": "blue"}, {"match": "", "reply": "red"}]}


def futile() -> dict[str, Any]:
    """Replies that depend on the body alone (never on call order): both arms right on the same fixtures but
    fixture 3 (only the variant right) and fixture 7 (only the baseline right), so the gap is 0 with a fixture
    spread; with `win.min_effect: 0.4` look 1 of [3, 6, 9] goes on and look 2 rules that effect out."""
    variant = "Please.\n<item>a ripe tomato, number "
    return {"default_reply": "red",
            "replies": [{"match": f"{variant}3<", "reply": "red"}, {"match": "number 3<", "reply": "blue"},
                        {"match": f"{variant}7<", "reply": "blue"}, {"match": "number 7<", "reply": "red"},
                        {"match": "number 1", "reply": "blue"}]}
