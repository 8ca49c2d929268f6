"""A run's evidence: its raw files copied into the site byte for byte, and its page of cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from benchcard._util.numfmt import DASH, fixed, level, millis, money
from benchcard.card.model import Card
from benchcard.publish._files import copy_published, files_under, href_of, published_names, regular_inside
from benchcard.publish._judgedby import baseline_of
from benchcard.publish._probe import gate_view
from benchcard.publish._render import fmt_value, labelled_figures, page_output, score_badge
from benchcard.publish._runs import Run, number
from benchcard.records.replied import judge_replies_fact, judge_replies_line, replies_fact, replies_line
from benchcard.records.rows import OutputRow
from benchcard.records.verdictfigures import known
from benchcard.records.verdictfile import ProbeVerdict

RUN_FILES = ("manifest.json", "outputs.jsonl", "attempts.jsonl", "scores.jsonl", "verdict.json", "table.csv")
RUN_DIRS = ("sealed", "grades")


def _run_dirs(run: Run) -> tuple[str, ...]:
    """The folders of a run that are published: an ab run's sealed/ (which variant made which output, and the
    request bodies that show it) only once the verdict has unblinded the run."""
    if run.manifest is not None and run.manifest.kind == "ab" and run.judged_file is None:
        return tuple(d for d in RUN_DIRS if d != "sealed")
    return RUN_DIRS


def _run_files(run: Run) -> tuple[str, ...]:
    """The files of a run that are published: a sequential ab run's manifest.json only once the verdict has
    unblinded the run, as its looks' figure is (`_lookplot`): its `looks` hold each look's statistic, signed
    towards a win or a loss, so a run stopped mid-way would show which arm leads while it is still blind."""
    m = run.manifest
    if m is not None and m.kind == "ab" and m.looks and run.judged_file is None:
        return tuple(n for n in RUN_FILES if n != "manifest.json")
    return RUN_FILES


def _published(run: Run) -> list[tuple[Path, str]]:
    """Each raw file of a run that may be published, with its name in the site (relative, posix)."""
    assert run.folder is not None
    folder = run.folder
    files = [(folder / n, n) for n in _run_files(run) if regular_inside(folder / n, folder)]
    for d in _run_dirs(run):
        files += [(p, p.relative_to(folder).as_posix()) for p in files_under(folder / d, folder)]
    return list(zip((p for p, _ in files), published_names([rel for _, rel in files]), strict=True))


def copy_run(run: Run, out: Path) -> None:
    """The run's raw files, byte for byte, into the site; a published run gets its recorded entry."""
    dest = out / run.site_dir
    dest.mkdir(parents=True, exist_ok=True)
    if run.folder is None:
        record = dict(run.published or {})
        (dest / "published.json").write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n",
                                             encoding="utf-8")
        return
    for src, rel in _published(run):
        copy_published(src, dest / rel)


def run_files(run: Run) -> list[dict[str, str]]:
    """Links (relative to the evidence page) to every raw file copied for a run."""
    if run.folder is None:
        return [{"name": "published.json", "href": "published.json"}]
    return [{"name": rel, "href": href_of(rel)} for _src, rel in _published(run)]


def _attempt(row: OutputRow, blind: bool) -> str:
    """An earlier attempt of a retried cell in one line: its status, error or finish reason, calls, latency (the
    last two withheld while the run is blind: they follow the prompt's length, which differs by variant)."""
    parts = [row.status, row.error or row.finish_reason or "—"]
    if not blind:
        parts += [f"{fmt_value(row.attempts)} call(s)", millis(row.latency_ms)]
    return " · ".join(parts)


def _figures(out: OutputRow, blind: bool) -> list[tuple[str, str]]:
    """A cell's figures on its evidence page. While an ab run awaits its verdict, those of the request's side
    (tokens in, cost, latency, attempts) are withheld: they follow the prompt, whose length differs by variant,
    so they would sort a fixture's cells by variant (as `read_run` withholds them; docs/api.md)."""
    usage = out.usage
    if blind:
        return [("finish reason", out.finish_reason or "—"),
                ("tokens out / reasoning", " / ".join(fmt_value(n) for n in (usage.output, usage.reasoning))),
                ("tokens in, cost, latency, attempts", "withheld until the verdict")]
    cache = [("tokens in from / to the prompt cache", " / ".join(fmt_value(n) for n in (
        usage.cached_tokens, usage.written_tokens)))] if usage.cached_tokens or usage.written_tokens else []
    upper = "≤ " if out.cost is not None and out.cost_upper_bound is True else ""  # cached input priced in full
    return [("finish reason", out.finish_reason or "—"),
            ("tokens in / out / reasoning", " / ".join(fmt_value(n) for n in (usage.input, usage.output,
                                                                                usage.reasoning))),
            *cache, ("cost", upper + money(out.cost)), ("latency", millis(out.latency_ms)),
            ("attempts", fmt_value(out.attempts))]


def run_context(run: Run, card: Card | None) -> dict[str, Any]:
    """The evidence page of one run: its manifest, files and every cell (variants only once unblinded)."""
    unblinded = run.judged_file is not None
    cells = _cells(run, unblinded)
    if unblinded:
        base = baseline_of(run, card)
        cells.sort(key=lambda c: (c["fixture"], c["variant"] != base, str(c["variant"]),
                                  number(c["repetition"]) or 0))
    # a probe's figures from its verdict.json, or from its ledger row when the file was edited after it
    probe = run.verdict_file if isinstance(run.verdict_file, ProbeVerdict) else None
    row = run.ledger_row if run.edited_file is not None else None
    rules = probe.rules if probe else (known(row.rules) if row else None)
    score_ci = probe.score_ci if probe else (known(row.score_ci) if row else None)
    # the Wilson level the figures were computed at: the verdict's α, else the card's gate α (verdict/findings.py)
    alpha = float(probe.alpha) if probe else card.gate_alpha if card else None
    rule_rates = [{"id": rule_id, "passes": f"{fmt_value(r.passes)} of {fmt_value(r.n)}",
                   "rate": fixed(r.rate, 2, missing=DASH),
                   "wilson": fmt_value(r.wilson)} for rule_id, r in (rules or {}).items()]
    return {
        "verdict_why": run.verdict_file.why if run.verdict_file else "",
        "verdict_head": " · ".join(x for x in (run.outcome, run.finding) if x),
        "rule_rates": rule_rates,
        "score_ci": fmt_value(score_ci) if score_ci else "",
        "gate": gate_view(run, card),  # a gated probe's: its score against the sealed min_score, as the ledger's
        "score": fixed(run.score, 2, missing=DASH),
        "wilson": f"Wilson {level(alpha)}" if alpha is not None else "Wilson",
        "run": run,
        "card_title": card.title if card else run.card,
        "card_href": f"cards/{run.card}/index.html" if card else None,
        "meta": _meta(run),
        "files": run_files(run),
        "cells": cells,
        "unblinded": unblinded,
        "is_ab": bool(card and card.is_ab),
        "max_tokens": (run.manifest.params if run.manifest else card.params if card else {}).get("max_tokens"),
        "title": f"Run {run.run_id} · {run.card} v{run.version}",
    }


def _published_cell(run: Run) -> dict[str, Any]:
    """A published probe's one result. Its recorded status (`failed`) is the scorer's word, not its cell's: shown
    in the status slot, under the page's "a failed cell got no answer", it said the model was never reached. A
    recorded output is an answer (`ok`); the status is shown as the results table says it (`failed: 0 of 1 pass`)."""
    published = run.published or {}
    text, cut = page_output(str(published.get("output") or ""))
    recorded = str(published.get("status") or "")
    answered = "output" in published
    details = labelled_figures({k: v for k, v in published.items() if k in ("cost", "latency_ms", "finish_reason")})
    if answered and recorded:
        details.append(("published as", score_badge(run)))
    return {"cell": run.run_id, "fixture": run.card, "variant": None, "repetition": None,
            "status": "ok" if answered else recorded, "score": fixed(run.score, 2, missing=DASH), "text": text,
            "cut": cut, "raw": "published.json", "rules": [], "metrics": [], "details": details}


def _cells(run: Run, unblinded: bool) -> list[dict[str, Any]]:
    """Every cell of the run as its evidence page lists it (a published probe's one result first), in the
    order the outputs were written; variant, repetition and order only once unblinded."""
    assignment = {a.cell: a for a in run.assignment}
    scores = {s.cell: s for s in run.scores}
    cells: list[dict[str, Any]] = []
    if run.published is not None:
        cells.append(_published_cell(run))
    blind = not unblinded and run.manifest is not None and run.manifest.kind == "ab"
    for out in run.outputs:
        a = assignment.get(out.cell) if unblinded else None
        s = scores.get(out.cell)
        details = _figures(out, blind)
        if out.error:
            details.append(("error", out.error))
        for n, prior in enumerate(run.earlier.get(out.cell, []), 1):  # a retried cell: what each earlier call gave
            details.append((f"earlier attempt {n}", _attempt(prior, blind)))
        text, cut = page_output(out.text)
        cells.append({
            "cell": out.cell, "fixture": out.fixture,
            "variant": a.variant if a else None, "repetition": a.repetition if a else None,
            "status": out.status,
            "score": fixed(s.score, 2, missing=DASH) if s else "—",
            "text": text, "cut": cut, "raw": "outputs.jsonl",
            "rules": [(k, bool(v)) for k, v in (s.rules or {}).items()] if s else [],
            "metrics": [(k, fmt_value(v)) for k, v in (s.metrics if s else {}).items()
                        if k != "score" and not k.startswith("rule.")],
            "details": details,
            "order": a.order if a else 0,
        })
    return cells


def _meta(run: Run) -> list[tuple[str, str]]:
    """The run's facts as the page's head lists them: card, rig, the manifest's fields, the verdict."""
    m = run.manifest
    meta = [
        ("card", f"{run.card} v{run.version}"),
        ("rig", run.rig_line or "—"),
    ]
    if m is not None:
        for key, label in (("provider_type", "provider type"), ("base_url", "base URL"), ("started_at", "started"),
                           ("finished_at", "finished"), ("cells", "cells"), ("repetitions", "repetitions"),
                           ("concurrency", "concurrency"), ("seed", "seed"), ("seal_root", "seal root"),
                           ("outputs_digest", "outputs digest"), ("benchcard_version", "benchcard")):
            if getattr(m, key) is not None:
                meta.append((label, fmt_value(getattr(m, key))))
        if m.counts is not None:
            meta.append(("counts", fmt_value(msgspec.structs.asdict(m.counts))))
        if m.params:
            meta.append(("params", json.dumps(m.params, ensure_ascii=False)))
        # another model than the one asked is a warning; the model asked or its snapshot, a quiet fact
        meta += [(label, line) for label, line in (("replies", replies_line(m) or replies_fact(m)),
                                                   ("judge replies", judge_replies_line(m) or judge_replies_fact(m)))
                 if line]
    if run.published is not None:
        meta.append(("recorded", "in the card's history; the run predates its run folder"))
    if run.finding:
        meta.append(("verdict", f"{run.outcome} · {run.finding}" if run.outcome else run.finding))
    return meta


OPEN_BY_DEFAULT = 12
"""Up to this many outputs the evidence page shows them all open; above it, all closed (the page stays short)."""


def run_pages(run: Run, card: Card | None) -> list[tuple[str, dict[str, Any]]]:
    """The evidence page of a run and its twin with every output the other way (all open, or all closed), each
    linking to the other: "expand all / collapse all" with no script, which the pages never carry."""
    context = run_context(run, card)
    n = len(context["cells"])
    folder = run.href.rsplit("/", 1)[0]
    if n == 0:
        return [(run.href, context | {"opened": False, "outputs_toggle": []})]
    default_open = n <= OPEN_BY_DEFAULT
    twin = "outputs-collapsed.html" if default_open else "outputs-expanded.html"
    expanded, collapsed = ("index.html", twin) if default_open else (twin, "index.html")

    def toggle(here: str) -> list[tuple[str, str | None]]:
        return [(label, None if page == here else page)
                for label, page in (("Expand all", expanded), ("Collapse all", collapsed))]

    return [(run.href, context | {"opened": default_open, "outputs_toggle": toggle("index.html")}),
            (f"{folder}/{twin}", context | {"opened": not default_open, "outputs_toggle": toggle(twin)})]
