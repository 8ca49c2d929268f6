"""A run card's page (ab cards): the question, the exact prompt, the win rule, and each run's verdict,
tables and plots."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchcard._util.numfmt import DASH, fixed
from benchcard._util.slots import fill_slots, slots_in, text_after
from benchcard.card.design import schedule_line
from benchcard.card.model import FIXTURE_SLOT, VARIANT_SLOT, Card
from benchcard.project import Project, ProjectConfig
from benchcard.publish._cardparts import curl_view, dataset_json_ld, history_view, judge_view, params_view
from benchcard.publish._evidence import run_files
from benchcard.publish._files import copy_published, href_of, published_name, published_names, regular_inside
from benchcard.publish._judgedby import baseline_of, clauses_for
from benchcard.publish._plots import draw_plots
from benchcard.publish._render import paragraphs, prose
from benchcard.publish._replicas import ab_replications, is_transfer, links, replication_line
from benchcard.publish._runs import Run
from benchcard.publish._verdictpage import verdict_page
from benchcard.records.cardruns import newest, result


def _pivots(run: Run, card: Card | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Fixture × variant means from table.csv: one table for the win rule's metrics, one for the rest."""
    df = run.table
    if df is None or df.empty:
        return None, None
    baseline = baseline_of(run, card)
    variants = sorted(df["variant"].dropna().unique(), key=lambda v: (v != baseline, v))
    first = list(dict.fromkeys(c.metric for c in clauses_for(run, card)))
    present = set(df["metric"].dropna())
    main = [m for m in first if m in present]
    rest = sorted(m for m in present if m not in main)
    per_fixture = {c.metric for c in clauses_for(run, card) if c.test == "holds"}
    return (_pivot(df, main, variants, baseline, no_delta=per_fixture),
            _pivot(df, rest, variants, baseline))


def _pivot(df: Any, metrics: Sequence[str], variants: Sequence[str], baseline: str | None,
           no_delta: Iterable[str] = ()) -> dict[str, Any] | None:
    """One table: a row per fixture, for each metric a column per variant (and variant − baseline).

    A fixture none of whose cells was scored (all truncated or failed) keeps its row, marked, rather than
    silently leaving the table: the reader should see that the means are over fewer fixtures.
    """
    if not metrics:
        return None
    groups: list[dict[str, Any]] = []
    columns: list[tuple[str, str, str | None]] = []
    starts: list[int] = []
    sub = df[df["metric"].isin(list(metrics))]
    means = sub.pivot_table(index="fixture", columns=["metric", "variant"], values="value", aggfunc="mean")
    means = means.reindex(sorted(sub["fixture"].dropna().unique()))
    for metric in metrics:
        cols = [v for v in variants if (metric, v) in means.columns]
        others = [v for v in cols if v != baseline]
        heads = list(cols)
        starts.append(len(columns))
        for v in cols:
            columns.append((metric, v, None))
        if baseline in cols and len(others) == 1 and metric not in set(no_delta):
            heads.append("Δ")
            columns.append((metric, others[0], baseline))
        groups.append({"metric": metric, "heads": heads})
    if not columns:  # no metric has a scored cell: the run view says so instead of an empty table
        return None
    rows: list[dict[str, Any]] = []
    for fixture, row in means.iterrows():
        cells = []
        for metric, v, base in columns:
            value = row.get((metric, v))
            cells.append(fixed(value - row.get((metric, base)) if base else value, missing=DASH))
        rows.append({"fixture": str(fixture), "cells": cells, "unscored": bool(row.isna().all())})
    totals = []
    for metric, v, base in columns:
        col = means[(metric, v)] - means[(metric, base)] if base else means[(metric, v)]
        totals.append(fixed(col.mean(), missing=DASH))
    reps = sub.groupby(["fixture", "variant", "metric"])["value"].count()
    deltas = sorted({f"{v} − {base}" for _, v, base in columns if base})
    return {"groups": groups, "rows": rows, "mean": totals, "starts": starts, "deltas": deltas,
            "reps": int(reps.max()) if len(reps) else 0,
            "unscored": [r["fixture"] for r in rows if r["unscored"]],
            "gaps": any(c == "—" for r in rows for c in r["cells"])}


# The `page:` prose sections of a run card, as the seed run card orders them.
_PROSE_SECTIONS = ("not_this_card", "fixture", "controls", "scoring_rule", "evidence", "closing_rule",
                   "fool_yourself", "sources")


def _prose_sections(card: Card) -> dict[str, dict[str, Any]]:
    """The card's `page:` prose, every section present (empty when the card has none).

    A card without `page:` prose for its scoring rule still has its own rubric, which says the same thing in
    the card's words, so the page shows that rather than nothing.
    """
    sections = {k: prose(card.page.get(k)) for k in _PROSE_SECTIONS}
    if not _has_prose(sections["scoring_rule"]) and (card.rubric_intro or card.rubric):
        sections["scoring_rule"] = {"paragraphs": paragraphs(card.rubric_intro), "entries": list(card.rubric),
                                    "links": []}
    return sections


def _has_prose(section: Mapping[str, Any]) -> bool:
    """Whether a prose section has anything to show: a heading over nothing reads as an unfinished page."""
    return bool(section["paragraphs"] or section["entries"]
                or any(link["title"] or link["url"] for link in section["links"]))


def _prompt_view(card: Card) -> dict[str, Any]:
    """The exact template, baseline block in place, and each variant's block shown once, below it."""
    assert card.baseline is not None
    base_block = card.variants.get(card.baseline, "")
    blocks = []
    for name in card.variant_names()[1:]:
        text = card.variants[name]
        where = "in place of the baseline's block" if base_block else "at the marked place"
        for part in (card.prompt.system or "", card.prompt.user):
            # the slot read as the prompt is filled: `\{{variant}}` is text (in a version sealed since the escape)
            rest = text_after(part, VARIANT_SLOT, escapes=card.slot_escapes)
            if rest is not None:
                after = rest.split("\n", 1)[0]
                tag = re.match(r"<([A-Za-z][\w-]*)>", after)
                fixture_next = FIXTURE_SLOT in slots_in(after, escapes=card.slot_escapes)
                if tag and fixture_next:
                    where = f"immediately before the {tag.group(1)}"
                elif fixture_next:
                    where = "immediately before the fixture"
                elif not after.strip():
                    where = "at the end of its line"
        verb = "replaces the baseline's block with" if base_block else "adds only"
        blocks.append({"name": name, "text": text, "head": f"--- VARIANT {name} {verb} the block below, {where} ---"})

    def show(text: str) -> str:
        return fill_slots(text, {VARIANT_SLOT: base_block, FIXTURE_SLOT: "{{FIXTURE}}"}, escapes=card.slot_escapes)

    return {"system": show(card.prompt.system) if card.prompt.system is not None else None,
            "user": show(card.prompt.user), "blocks": blocks}


def _data_file_materials(card: Card, project: Project, folder: Path) -> list[dict[str, str | None]]:
    """A data file's fixtures: the file published once, each fixture's text and key in it."""
    assert card.dataset is not None
    rel = None
    if regular_inside(card.dataset.path, project.root):
        rel = f"fixtures/{published_name(card.dataset.path.name)}"
        copy_published(card.dataset.path, folder / rel)
        rel = href_of(rel)
    return [{"id": f, "fixture": rel, "key": rel if row.key is not None else None}
            for f, row in sorted(card.dataset.rows.items())]


def _headline(views: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The page's result line, by the one rule (`records/cardruns.py`): the run of this version's latest ledger
    row; else the newest run that is no trial, awaiting its verdict (or unfinished); else the scratch runs,
    which are never a result. A run set aside is never the headline. None: no run of this version."""
    by_run = {id(v["run"]): v for v in views}
    runs = [v["run"] for v in views]
    chosen = result(runs)
    if chosen is not None:
        return {"kind": "result", "view": by_run[id(chosen)]}
    waiting = newest(r for r in runs if not r.scratch)
    if waiting is not None:
        return {"kind": "waiting", "view": by_run[id(waiting)],
                "label": waiting.unfinished_label or "awaiting its verdict"}
    trials = [r for r in runs if not r.is_set_aside]
    last = newest(trials)
    if last is not None:
        return {"kind": "scratch", "view": by_run[id(last)], "count": len(trials)}
    return None


def _replica_of(run: Run, linked: Mapping[str, Any], by_id: Mapping[str, Run]) -> dict[str, Any] | None:
    """What a replication run's section says of its original: which run, whether it is a transfer, the line."""
    link = linked.get(run.run_id)
    if link is None:
        return None
    return {"original": link.run, "transfer": is_transfer(run),
            "text": replication_line(run)[1]}


def ab_context(card: Card, runs: Sequence[Run], project: Project, out: Path,
               config: ProjectConfig) -> tuple[dict[str, Any], int]:
    """A run card's page, its fixtures, keys and seal copied beside it; returns the context and plot count."""
    root = "../../"
    folder = out / "cards" / card.id
    folder.mkdir(parents=True, exist_ok=True)
    materials, seal_href = _published_materials(card, project, folder)
    run_views, n_plots = _run_views(card, runs, folder, root)
    current_runs = [v for v in run_views if v["current"]]
    win = None
    if card.win is not None:

        win = {"clauses": [c.text for c in card.win.clauses],
               "alpha": card.win.alpha, "equivalence_margin": card.win.equivalence_margin,
               "allow_failed": card.win.allow_failed, "sequential": schedule_line(card, project)}
    max_tokens = card.params.get("max_tokens")
    page = dict(card.page)
    sections = _prose_sections(card)
    context = {
        "root": root,
        "card": card,
        "label": str(page.get("label") or card.id.upper()),
        "not_run_text": str(page.get("result") or "Result: not run here"),
        "page": sections,
        "filled": {k for k, v in sections.items() if _has_prose(v)},
        "prompt": _prompt_view(card),
        "win": win,
        "max_tokens": max_tokens,
        "runs": run_views,
        "headline": _headline(current_runs),
        "current_runs": current_runs,
        "older_runs": [v for v in run_views if not v["current"]],
        "materials": materials,
        "seal_href": seal_href,
        "fixture_count": len(card.fixtures),
        "grid": len(card.fixtures) * len(card.variants) * card.repetitions,
        "history": history_view(card),
        "params": params_view(card),
        "judge": judge_view(card),
        "sealed": seal_href is not None,
        "curl": curl_view(card, config, variant=card.variant_names()[-1], fixture=card.fixture_ids()[0]),
        "curl_variant": card.variant_names()[-1],
        "curl_fixture": card.fixture_ids()[0],
        "json_ld": dataset_json_ld(card, runs, root),
        "title": f"{page.get('label') or card.id.upper()} · {card.title}" if card.title else card.id.upper(),
    }
    return context, n_plots


def _published_materials(card: Card, project: Project, folder: Path) -> tuple[list[dict[str, str | None]],
                                                                               str | None]:
    """The fixtures and answer keys, and the seal, copied beside the card's page: each fixture's links, and the
    seal's (None when there is no seal to publish)."""
    materials = _data_file_materials(card, project, folder) if card.dataset is not None else []
    files = sorted(card.fixtures.items()) if card.dataset is None else []
    public = dict(zip((path.name for _, path in files), published_names([path.name for _, path in files]),
                      strict=True))
    for fixture_id, path in files:
        entry: dict[str, str | None] = {"id": fixture_id, "fixture": None, "key": None}
        if regular_inside(path, project.root):  # published as text whatever its suffix (.html, .svg)
            rel = f"fixtures/{public[path.name]}"
            copy_published(path, folder / rel)
            entry["fixture"] = href_of(rel)
        key = project.keys_dir(card.id) / f"{fixture_id}.json"
        if regular_inside(key, project.root):
            rel = f"keys/{key.name}"
            copy_published(key, folder / rel)
            entry["key"] = href_of(rel)
        materials.append(entry)
    seal = project.seal_path(card.id, card.version)
    seal_href = None
    if regular_inside(seal, project.root):
        seal_href = f"keys/{seal.name}"
        copy_published(seal, folder / seal_href)
    return materials, seal_href


def _run_views(card: Card, runs: Sequence[Run], folder: Path, root: str) -> tuple[list[dict[str, Any]], int]:
    """Each run of the card as its page shows it, the current version's first, newest first; and the plots
    drawn."""
    n_plots = 0
    run_views = []
    linked = links(runs)
    by_id = {r.run_id: r for r in runs}
    for run in sorted(runs, key=lambda r: (r.version != card.version, -r.version, r.started), reverse=False):
        drawn = run.judged_file is not None or run.table is not None
        plots = draw_plots(run, card, folder, "", narrow=True) if drawn else []
        n_plots += len(plots)
        main, rest = _pivots(run, card)
        run_views.append({
            "run": run,
            "current": run.version == card.version,
            "verdict": verdict_page(run) if run.judged_file is not None or run.ledger_row else None,
            "plots": plots,
            "pivot": main,
            "more_pivot": rest,
            "no_scored_cell": run.table is not None and not run.table["value"].notna().any(),
            "href": root + run.href,
            "table_href": root + run.site_dir + "/table.csv" if run.folder and (run.folder / "table.csv").is_file()
            else None,
            "files": [dict(f, href=root + run.site_dir + "/" + f["href"]) for f in run_files(run)],
            "replicas": ab_replications(run, [by_id[k] for k, link in linked.items()
                                              if link.run == run.run_id and k in by_id], folder, ""),
            "replica_of": _replica_of(run, linked, by_id),
        })
    return run_views, n_plots
