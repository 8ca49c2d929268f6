"""The index (one line per card, its latest outcome) and the ledger page (every row, its chain checked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchcard.card.model import Card
from benchcard.publish.render import fmt_money, fmt_num, fmt_value
from benchcard.publish.runs import Run


def ledger_context(ledger: Sequence[Mapping[str, Any]], runs: Sequence[Run], cards: Mapping[str, Card],
                   chain_problem: str | None) -> dict[str, Any]:
    """The ledger page: every row with its evidence link, and the chain check's complaint."""
    hrefs = {(r.card, r.run_id): r.href for r in runs}
    rows = []
    for row in ledger:
        card = str(row.get("card") or "")
        run_id = str(row.get("run") or "")
        figures = []
        if row.get("score") is not None:
            figures.append(f"score {fmt_num(row.get('score'))}")
        if row.get("model"):
            figures.append(str(row["model"]))
        rows.append({
            "seq": fmt_value(row.get("seq")),
            "date": str(row.get("date") or str(row.get("at") or "")[:10] or "—"),
            "at": str(row.get("at") or ""),
            "card": card,
            "card_href": f"cards/{card}/index.html" if card in cards else None,
            "version": fmt_value(row.get("version")),
            "kind": str(row.get("kind") or ""),
            "rig": str(row.get("rig") or ""),
            "run": run_id,
            "cells": fmt_value(row.get("cells")),
            "outcome": str(row.get("outcome") or ""),
            "finding": str(row.get("finding") or ""),
            "figures": " · ".join(figures),
            "cost": fmt_money(row.get("cost") if not isinstance(row.get("cost"), Mapping)
                              else row["cost"].get("total")),
            "evidence": str(row.get("evidence") or ""),
            "evidence_href": hrefs.get((card, run_id)),
            "hash": str(row.get("hash") or "").removeprefix("sha256:")[:12],
            "full_hash": str(row.get("hash") or ""),
            "prev": str(row.get("prev") or ""),
        })
    return {"rows": rows, "title": "Ledger", "root": "", "chain_problem": chain_problem, "wide": True}


def card_summary(card: Card, runs: Sequence[Run], ledger: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One line of the index: the card and its latest outcome."""
    rows = [r for r in ledger if r.get("card") == card.id]
    latest_row = rows[-1] if rows else None
    dated = sorted(runs, key=lambda r: (r.started, r.run_id))
    latest_run = dated[-1] if dated else None
    if latest_row is not None:
        outcome = str(latest_row.get("outcome") or "")
        finding = str(latest_row.get("finding") or "")
        if not card.is_ab and latest_row.get("score") is not None:
            text = f"score {fmt_num(latest_row.get('score'))}"
        else:
            text = " · ".join(x for x in (outcome, finding) if x) or "recorded"
        when = str(latest_row.get("date") or "")
        detail = str(latest_row.get("rig") or latest_row.get("model") or "")
        version = latest_row.get("version")
    elif latest_run is not None:
        if latest_run.unfinished_label:
            text = latest_run.unfinished_label
        elif card.is_ab:
            text = " · ".join(x for x in (latest_run.outcome, latest_run.finding) if x) or "run, no verdict yet"
        else:
            text = f"score {fmt_num(latest_run.score)}"
        when = latest_run.date
        detail = latest_run.rig_line if latest_run.scratch else latest_run.model
        version = latest_run.version
    else:
        text, when, detail, version = "Not yet run", "", "", None
    stale = version is not None and version != card.version
    return {"card": card, "href": f"cards/{card.id}/index.html", "outcome": text, "date": when,
            "detail": detail, "version_note": f"at v{version}, superseded" if stale else "",
            "kind": "run card" if card.is_ab else "probe",
            "class": _outcome_class(text)}


def _outcome_class(text: str) -> str:
    t = text.lower()
    if "non-result" in t or "inconclusive" in t or "no-effect" in t or "incomplete" in t:
        return "nonresult"
    if t.startswith("result") or "win" in t or "loss" in t:
        return "result"
    return "none"
