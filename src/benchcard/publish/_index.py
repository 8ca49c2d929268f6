"""The index (one line per card, its latest outcome) and the ledger page (every row, its chain checked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UnsetType

from benchcard._util.numfmt import DASH, fixed, money
from benchcard.card.model import Card
from benchcard.publish._render import fmt_value
from benchcard.publish._runs import Run
from benchcard.records.cardruns import newest
from benchcard.records.ledgerrow import LedgerRow


def ledger_context(ledger: Sequence[LedgerRow], runs: Sequence[Run], cards: Mapping[str, Card],
                   chain_problem: str | None) -> dict[str, Any]:
    """The ledger page: every row with its evidence link, replication rows marked, and the chain check's complaint."""
    hrefs = {(r.card, r.run_id): r.href for r in runs}
    rows = []
    for row in ledger:
        figures = [] if isinstance(row.looks, UnsetType) else [row.looks.line]
        if isinstance(row.score, int | float):
            figures.append(f"score {fixed(row.score, 2, missing=DASH)}")
        if not isinstance(row.sealed_gate, UnsetType):  # a gated probe's: the sealed min_score and its decision
            figures.append(row.sealed_gate.words)
        if row.model:
            figures.append(str(row.model))
        rows.append({
            "seq": fmt_value(row.seq),
            "date": row.date or row.at[:10] or "—",
            "at": row.at,
            "card": row.card,
            "card_href": f"cards/{row.card}/index.html" if row.card in cards else None,
            "version": fmt_value(row.version),
            "kind": row.kind,
            "rig": row.rig,
            "run": row.run,
            "cells": fmt_value(row.cells),
            "outcome": row.outcome,
            "finding": row.finding,
            "figures": " · ".join(figures),
            "cost": ("≤ " if row.cost_upper_bound is True else "")  # cached input priced in full
            + money(row.cost if isinstance(row.cost, int | float) else None),
            "evidence": row.evidence,
            "evidence_href": hrefs.get((row.card, row.run)),
            "hash": row.hash.removeprefix("sha256:")[:12],
            "full_hash": row.hash,
            "prev": row.prev or "",
            "replicates": _replicates(row),
        })
    return {"rows": rows, "title": "Ledger", "root": "", "chain_problem": chain_problem, "wide": True}


def _replicates(row: LedgerRow) -> dict[str, Any] | None:
    """What a replication's ledger row says of its original: the run, whether the rerun went to another rig (a
    transfer), the judgement, and where the original is shown (a run card's runs have anchors; a probe's page
    lists its runs in one table)."""
    link = None if isinstance(row.replicates, UnsetType) else row.replicates
    if link is None:
        return None
    judged = None if isinstance(row.replication, UnsetType) else row.replication
    return {"original": link.run, "transfer": link.transfer, "finding": judged.finding if judged else "",
            "href": f"cards/{row.card}/index.html" + (f"#run-{link.run}" if row.kind == "ab" else "")}


def card_summary(card: Card, runs: Sequence[Run], ledger: Sequence[LedgerRow]) -> dict[str, Any]:
    """One line of the index: the card and its latest outcome."""
    rows = [r for r in ledger if r.card == card.id]
    latest_row = rows[-1] if rows else None
    latest_run = newest(runs)  # the one rule (records/cardruns.py); a run set aside is never the card's line
    if latest_row is not None:
        if not card.is_ab and isinstance(latest_row.score, int | float):
            gate = latest_row.sealed_gate
            text = f"score {fixed(latest_row.score, 2, missing=DASH)}" + (
                "" if isinstance(gate, UnsetType) else f" · {gate.words}")
        else:
            text = " · ".join(x for x in (latest_row.outcome, latest_row.finding) if x) or "recorded"
        when = latest_row.date
        detail = latest_row.rig or (latest_row.model or "")
        version = latest_row.version
    elif latest_run is not None:
        if latest_run.scratch:  # a trial's figures are never the card's outcome
            trials = sum(1 for r in runs if r.scratch and not r.is_set_aside)
            text = f"no result yet · {trials} scratch run{'s' if trials != 1 else ''} (trials)"
        elif latest_run.unfinished_label:
            text = latest_run.unfinished_label
        elif card.is_ab:
            text = " · ".join(x for x in (latest_run.outcome, latest_run.finding) if x) or "run, no verdict yet"
        else:
            text = f"score {fixed(latest_run.score, 2, missing=DASH)}"
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
    if t.startswith("no result yet"):
        return "none"
    if "non-result" in t or "inconclusive" in t or "no-effect" in t or "incomplete" in t:
        return "nonresult"
    if t.startswith("result") or "win" in t or "loss" in t:
        return "result"
    return "none"
