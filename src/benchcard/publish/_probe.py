"""A probe's page: its prompt, scorer, worked examples, and every run by version."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UnsetType

from benchcard._util.numfmt import DASH, fixed, millis, money
from benchcard.card.model import Card
from benchcard.project import ProjectConfig
from benchcard.publish._cardparts import curl_view, dataset_json_ld, history_view, params_view, scoring_view
from benchcard.publish._render import BADGES, fmt_value, score_badge, unscored_words
from benchcard.publish._replicas import links, recorded
from benchcard.publish._runs import Run
from benchcard.records.ledgerrow import GateFigures


def _run_gate(run: Run, card: Card) -> GateFigures | None:
    """What the run's sealed gate decided: as its ledger row recorded it (hash-chained), else its verdict.json; a
    verdict of the card's current version given before verdicts recorded it is decided again by the gate's rule
    (`gate_of`, as `verdict RUN --show --gate` decides it). None for a run not judged, or without a gate."""
    from benchcard.verdict.gate import gate_figures, recorded_gate

    row = run.ledger_row
    if row is not None and not isinstance(row.sealed_gate, UnsetType):
        return row.sealed_gate
    file = run.verdict_file
    if file is None:
        return None
    recorded = recorded_gate(file)
    if recorded is not None or run.version != card.version:
        return recorded
    return gate_figures(card, file)


def gate_view(run: Run, card: Card | None) -> dict[str, Any] | None:
    """A run's gate, as its probe page's Score cell and its evidence page show it: the words the ledger uses, a
    class by decision, and the score it held. None for an ab card's run, one not judged, or one without a gate."""
    if card is None or card.is_ab:
        return None
    gate = _run_gate(run, card)
    if gate is None:
        return None
    held = "" if gate.held is None else (f"mean score held to min_score: {fixed(gate.held)} (a repetition cut off "
                                         "at max_tokens counted as failing)")
    return {"words": gate.words, "decision": gate.decision, "held": held}


def _probe_row(run: Run, root: str, card: Card) -> dict[str, Any]:
    score = run.score
    counts = run.status_counts
    badge = score_badge(run)
    note = ""
    if run.unfinished_label:
        badge = run.unfinished_label
        note = f"benchcard run {run.card} --resume {run.run_id} completes it"
    elif score is not None and run.unscored:
        note = f"{run.unscored} of {sum(counts.values())} cells not scored ({unscored_words(counts)})"
    if run.set_aside is not None:  # no command to finish it: it is never resumed
        badge, note = "set aside", run.set_aside.note
    if run.scratch:
        note = "scratch run (a trial, not in the ledger)" + (f"; {note}" if note else "")
    return {
        "model": run.model,
        "model_name": run.model_name,
        "score": fixed(score, 2, missing=DASH),
        "badge": badge,
        "badge_class": BADGES.get(badge.split(":")[0], "na"),
        "note": note,
        "cost": money(run.cost),
        "latency": millis(run.latency_ms),
        "date": run.date or "—",
        "href": root + run.href,
        "run_id": run.run_id,
        "gate": gate_view(run, card),
    }


def _drift(run: Run, linked: Mapping[str, Any]) -> dict[str, Any] | None:
    """A probe rerun's drift against the run it replicates, as its verdict recorded it
    (`stats.replication.probe_drift`, verdict/_replication.py)."""
    link = linked.get(run.run_id)
    if link is None:
        return None
    written = recorded(run)
    text = written.text if written is not None else "not compared yet: the rerun has no verdict"
    return {"original": link.run, "transfer": link.transfer, "text": text,
            "changed": written is not None and written.finding == "changed"}


def _version_groups(card: Card, runs: Sequence[Run], root: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    linked = links(runs)
    current = [_probe_row(r, root, card) | {"drift": _drift(r, linked)} for r in runs if r.version == card.version]
    older = []
    notes = {h.version: h.note for h in card.history}
    for version in sorted({r.version for r in runs if r.version != card.version}, reverse=True):
        group = [r for r in runs if r.version == version]
        scores = [s for s in (r.score for r in group) if s is not None]
        older.append({
            "version": version,
            "superseded": version < card.version,
            "count": len(group),
            "mean": fixed(sum(scores) / len(scores), 2, missing=DASH) if scores else "—",
            "note": notes.get(version, ""),
            "rows": [_probe_row(r, root, card) | {"drift": _drift(r, linked)} for r in group],
        })
    return current, older


def _card_gate(card: Card) -> dict[str, Any] | None:
    """The card's sealed gate, as the Scoring section states it: min_score and, for a sequential card, the α its
    looks decide it at."""
    if card.gate is None:
        return None
    return {"min_score": f"{card.gate:g}", "alpha": f"{card.gate_alpha:g}", "sequential": card.sequential is not None}


def _examples_view(card: Card) -> list[dict[str, Any]]:
    out = []
    for ex in card.examples:
        if ex.expect == "pass":
            expect = "must score 1.00"
        elif ex.expect == "fail":
            expect = ""
        else:
            assert isinstance(ex.expect, Mapping)
            expect = "expects " + ", ".join(f"{k} = {fmt_value(v)}" for k, v in ex.expect.items())
        out.append({"label": ex.label, "expect": expect, "pass": ex.expect == "pass", "output": ex.output,
                    "fixture": ex.fixture})
    return out


def probe_context(card: Card, runs: Sequence[Run], config: ProjectConfig, sealed: bool = True) -> dict[str, Any]:
    """A probe's page: the current version's runs, older versions, and the card itself (`sealed`: whether its
    version has a seal, which the page says of the judge)."""
    root = "../../"
    current, older = _version_groups(card, runs, root)
    dates = sorted(r.date for r in runs if r.date)
    messages = card.messages()
    return {
        "root": root,
        "card": card,
        "last_run": dates[-1] if dates else "",
        "current": current,
        "older": older,
        "messages": messages,
        "scoring": scoring_view(card),
        "gate": _card_gate(card),
        "sealed": sealed,
        "examples": _examples_view(card),
        "history": history_view(card),
        "params": params_view(card),
        "curl": curl_view(card, config),
        "json_ld": dataset_json_ld(card, runs, root),
        "title": card.title,
    }
