"""The viewer's side-by-side page of a run: per fixture, each variant's outputs in a column of their own.

This is the matrix a promptfoo user looks at first, built only for `benchcard site --serve` (the published site
carries no script). Before the verdict the run is blind: no output shows its variant or repetition, every
output of a fixture is in one column in the order of its opaque cell id, and only the fixture and score filters
are offered. Once the verdict has unblinded the run, one column per variant, the baseline first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from benchcard._util.numfmt import DASH, fixed
from benchcard.card.model import Card
from benchcard.errors import BenchcardError
from benchcard.publish._judgedby import baseline_of
from benchcard.publish._render import page_output
from benchcard.publish._runs import Run

PAGE = "side-by-side.html"
"""The matrix page's name in each run's folder of the site."""
BLIND = "outputs"
"""The one column of a run not yet unblinded."""


def score_class(status: str, score: float | None) -> str:
    """What the score filter matches: `pass` (exactly 1), `below` (scored under 1) or `unscored`."""
    if status != "ok" or score is None:
        return "unscored"
    return "pass" if score == 1.0 else "below"


def _columns(run: Run, card: Card | None, unblinded: bool) -> list[str]:
    if not unblinded:
        return [BLIND]
    found = sorted({a.variant for a in run.assignment})
    base = baseline_of(run, card)
    return ([base] if base in found else []) + [v for v in found if v != base]


def matrix_context(run: Run, card: Card | None) -> dict[str, Any]:
    """The side-by-side page of one run: rows of fixtures, a column per variant (one column while blind)."""
    unblinded = run.judged_file is not None
    assignment = {a.cell: a for a in run.assignment} if unblinded else {}
    scores = {s.cell: s for s in run.scores}
    columns = _columns(run, card, unblinded)
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for out in sorted(run.outputs, key=lambda o: o.cell):
        a = assignment.get(out.cell)
        column = a.variant if a is not None else BLIND
        s = scores.get(out.cell)
        score = s.score if s is not None else None
        text, cut = page_output(out.text)
        rows.setdefault(out.fixture, {c: [] for c in columns}).setdefault(column, []).append({
            "cell": out.cell, "repetition": a.repetition if a is not None else None, "status": out.status,
            "score": fixed(score, 2, missing=DASH), "score_class": score_class(out.status, score),
            "text": text, "cut": cut,
        })
    for cells in rows.values():
        for outputs in cells.values():
            outputs.sort(key=lambda o: (o["repetition"] is None, o["repetition"] or 0, o["cell"]))
    return {
        "run": run,
        "inputs": _inputs(card, run, sorted(rows)),
        "title": f"Side by side · {run.run_id} · {run.card} v{run.version}",
        "card_title": card.title if card else run.card,
        "evidence_href": "index.html",
        "unblinded": unblinded,
        "columns": columns,
        "fixtures": sorted(rows),
        "rows": [(fixture, [(c, rows[fixture].get(c, [])) for c in columns]) for fixture in sorted(rows)],
        "outputs": sum(len(o) for cells in rows.values() for o in cells.values()),
        "wide": True,
    }


def _inputs(card: Card | None, run: Run, fixtures: list[str]) -> dict[str, str]:
    """Each fixture's text as the prompt showed it, when the card is still at the run's version (fixtures are
    published with the card: nothing here unblinds)."""
    if card is None or not card.is_ab or card.version != run.version:
        return {}
    texts: dict[str, str] = {}
    for fixture in fixtures:
        if fixture in card.fixtures:
            with contextlib.suppress(BenchcardError):  # a fixture file gone since the run: its id alone
                texts[fixture] = card.fixture_text(fixture)
    return texts


def view_index_context(runs: Sequence[Run]) -> dict[str, Any]:
    """The viewer's list of runs, newest first, each with its side-by-side page."""
    listed = [r for r in runs if r.folder is not None and r.outputs]
    listed.sort(key=lambda r: (r.started, r.run_id), reverse=True)
    return {"title": "Side by side", "runs": [{"run": r, "href": f"{r.site_dir}/{PAGE}",
                                               "blind": r.judged_file is None} for r in listed]}
