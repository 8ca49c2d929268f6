"""Run folders written by hand for the site's tests (manifest.json, outputs.jsonl, scores.jsonl, sealed/,
verdict.json, table.csv, ledger rows through the real ledger), so pages are tested before any model is run; and
readers of a built page's text, links and headings."""

from __future__ import annotations

import csv
import html.parser
import json
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import numpy as np

from benchcard._util.hashing import file_digest
from benchcard.card import seal
from benchcard.card.load import load_card
from benchcard.card.model import Card, Rig
from benchcard.grading import sheets as grading
from benchcard.project import Project
from benchcard.publish.build import build_site
from benchcard.records import ledger
from benchcard.records.ledgerrow import Latency, LedgerRow, RowCounts
from benchcard.records.plandigest import sealed_digests
from benchcard.run.grid import planned_assignment
from benchcard.scoring.scorers import score_output
from benchcard.verdict.give import give_verdict

from .helpers_project import copy_project

XSS = '<script>alert(1)</script> and a quote " that would end an attribute \' too & more'


BENCH_RUN = "20261130T151200Z-3f9a"


BENCH_FIXTURES = [f"excerpt-{i:02d}" for i in range(1, 13)]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _replan(folder: Path, card: Card, seed: int) -> None:
    """Give the fabricated cells the ids and call order the runner's plan has for this card and seed, as a
    verdict re-derives them (`run.grid.planned_assignment`)."""
    def read(name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (folder / name).read_text(encoding="utf-8").splitlines()]

    planned = {(a["variant"], a["fixture"], a["repetition"]): a
               for a in map(msgspec.to_builtins, planned_assignment(card, seed))}
    new = {a["cell"]: planned[(a["variant"], a["fixture"], a["repetition"])] for a in read("sealed/assignment.jsonl")}
    for name in ("outputs.jsonl", "scores.jsonl", "sealed/requests.jsonl"):
        rows = sorted(read(name), key=lambda r: new[r["cell"]]["order"])
        _jsonl(folder / name, [{**r, "cell": new[r["cell"]]["cell"]} for r in rows])
    _jsonl(folder / "sealed/assignment.jsonl", [dict(a) for a in sorted(new.values(), key=lambda a: a["order"])])


def _finish(folder: Path, manifest: dict[str, Any], outputs: list[dict[str, Any]], card: Card) -> None:
    """The plan and the manifest as the runner leaves them at the end of a run."""
    _replan(folder, card, manifest["seed"])
    counts = {s: sum(o["status"] == s for o in outputs) for s in ("ok", "truncated", "failed")}
    manifest.update(sealed_digests(folder, manifest))
    manifest.update({"finished_at": manifest["started_at"][:11] + "23:59:00Z",
                     "outputs_digest": file_digest(folder / "outputs.jsonl"),
                     "scores_digest": file_digest(folder / "scores.jsonl"), "counts": counts})
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _manifest(card: Card, run_id: str, model: str, cells: int, seal_root: str) -> dict[str, Any]:
    rig = {"provider": card.rig.provider, "model": model, "effort": card.rig.effort, "surface": card.rig.surface,
           "line": Rig(card.rig.provider, model, card.rig.effort, card.rig.surface).line()}
    return {
        "run": run_id, "card": card.id, "version": card.version, "kind": card.kind, "seal_root": seal_root,
        "rig": rig, "provider_type": "openai", "base_url": "https://openrouter.ai/api/v1",
        "params": dict(card.params), "seed": 7, "repetitions": card.repetitions, "cells": cells,
        "concurrency": 8, "benchcard_version": "0.1.0",
        "started_at": f"{run_id[0:4]}-{run_id[4:6]}-{run_id[6:8]}T{run_id[9:11]}:{run_id[11:13]}:{run_id[13:15]}Z",
    }


def _sealed(project: Project, card_id: str) -> tuple[Card, str]:
    card = load_card(project.card_path(card_id), project)
    existing = seal.read(card.id, card.version, project)
    root = existing.root if existing else seal.seal(card, project)[1].root
    return card, str(root)


def write_probe_run(project: Project, card_id: str, run_id: str, model: str, texts: list[tuple[str, str]],
                    version: int | None = None, verdict: bool = True,
                    manifest_extra: dict[str, Any] | None = None) -> Path:
    """A probe run, one cell per (status, text), scored by the real scorer; judged by the real verdict. A card
    not sealed yet is first given one repetition per text, as a run of that many repetitions needs."""
    path = project.card_path(card_id)
    if version is None and not list(project.keys_dir(card_id).glob("*.seal.json")):
        path.write_text(re.sub(r"^repetitions: \d+$", f"repetitions: {len(texts)}", path.read_text(encoding="utf-8"),
                               flags=re.M), encoding="utf-8")
    card, root = _sealed(project, card_id)
    version = version or card.version
    folder = project.run_dir(card_id, version, run_id)
    outputs, scores, assignment, requests = [], [], [], []
    for i, (status, text) in enumerate(texts):
        cell = f"c{i:010x}"
        outputs.append({
            "cell": cell, "fixture": card_id, "status": status, "text": text,
            "finish_reason": "stop" if status == "ok" else "length",
            "usage": {"input": 120, "output": 9, "reasoning": 0}, "cost": 0.00012, "latency_ms": 400.0 + 10 * i,
            "attempts": 1, "error": None,
        })
        if status == "ok":
            s = score_output(card.scoring, text)
            scores.append({"cell": cell, "fixture": card_id, "status": status, "score": s.score,
                           "metrics": s.metrics, "rules": s.rules})
        else:
            scores.append({"cell": cell, "fixture": card_id, "status": status, "score": None, "metrics": {},
                           "rules": None})
        assignment.append({"cell": cell, "variant": "probe", "fixture": card_id, "repetition": i, "order": i})
        requests.append({"cell": cell, "provider": "openrouter", "url": "https://openrouter.ai/api/v1",
                         "body": {"model": model, "messages": card.messages()}})
    _jsonl(folder / "outputs.jsonl", outputs)
    _jsonl(folder / "scores.jsonl", scores)
    _jsonl(folder / "sealed" / "assignment.jsonl", assignment)
    _jsonl(folder / "sealed" / "requests.jsonl", requests)
    manifest = _manifest(card, run_id, model, len(texts), root)
    manifest["version"], manifest["repetitions"] = version, len(texts)
    manifest.update(manifest_extra or {})
    _finish(folder, manifest, outputs, card)
    if verdict:
        give_verdict(project, folder, n_resamples=200)
    return folder


def write_bench_run(project: Project, run_id: str = BENCH_RUN, verdict: bool = True) -> Path:
    """A BENCH-01 run: 12 fixtures × 2 variants × 5 repetitions, one cell cut off by the token limit, graded
    blind on a sheet, then unblinded by the real verdict (verdict.json, table.csv, a ledger row)."""
    card, root = _sealed(project, "bench-01")
    rng = np.random.default_rng(3)
    folder = project.run_dir("bench-01", 1, run_id)
    outputs, scores, assignment = [], [], []
    order = 0
    for variant in ("baseline", "A"):
        for f, fixture in enumerate(BENCH_FIXTURES):
            for r in range(5):
                cell = f"c{order:010x}"
                rec = float(np.clip(0.72 + 0.02 * f / 12 + (0.03 if variant == "A" else 0) + rng.normal(0, 0.05),
                                    0, 1))
                text = f"**Parties:** fixture {fixture}\n**Effective date:** 1 March 2024"
                if fixture == "excerpt-03" and variant == "A" and r == 0:
                    text = XSS
                metrics = {"field_recall": rec, "unsupported_values": float(rng.integers(0, 3)),
                           "abstains": 1.0 if fixture == "excerpt-07" else 0.0, "score": rec}
                status = "truncated" if (fixture == "excerpt-05" and variant == "baseline" and r == 4) else "ok"
                outputs.append({"cell": cell, "fixture": fixture, "status": status, "text": text,
                                "finish_reason": "stop" if status == "ok" else "length",
                                "usage": {"input": 900, "output": 300, "reasoning": 1200}, "cost": 0.01,
                                "latency_ms": 5000.0, "attempts": 1, "error": None})
                scores.append({"cell": cell, "fixture": fixture, "status": status,
                               "score": rec if status == "ok" else None,
                               "metrics": metrics if status == "ok" else {}, "rules": None})
                assignment.append({"cell": cell, "variant": variant, "fixture": fixture, "repetition": r,
                                   "order": order})
                order += 1
    _jsonl(folder / "outputs.jsonl", outputs)
    _jsonl(folder / "scores.jsonl", scores)
    _jsonl(folder / "sealed" / "assignment.jsonl", assignment)
    _jsonl(folder / "sealed" / "requests.jsonl", [{"cell": a["cell"], "provider": "anthropic",
                                                   "url": "https://api.anthropic.com/v1/messages", "body": {}}
                                                  for a in assignment])
    _finish(folder, _manifest(card, run_id, card.rig.model, len(outputs), root), outputs, card)
    if verdict:
        sheet = grading.blind_sheet(project, folder, out=project.root / "sheet.csv")
        with open(sheet.path, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for i, row in enumerate(rows[:6]):
            row["grade"] = "pass" if i % 2 else "fail"
            row["note"] = "grader read 'Buyer' as a party <b>name</b>" if i == 0 else ""
        with open(sheet.path, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        grading.import_grades(project, folder, sheet.path)
        sheet.path.unlink()
        give_verdict(project, folder, n_resamples=500)
    return folder


def write_rules_ab_run(project: Project, card_id: str, run_id: str,
                       cell: Callable[[str, str, int], tuple[str, str]], *, model: str | None = None,
                       manifest_extra: dict[str, Any] | None = None) -> Path:
    """A run of a rules-scored ab card, every fixture × variant × repetition; `cell(fixture, variant, rep)`
    gives its (status, text). Scored by the real scorer, judged by the real verdict. `model` puts another model
    in the rig; `manifest_extra` adds fields to the manifest (a replication's link)."""
    card, root = _sealed(project, card_id)
    folder = project.run_dir(card_id, card.version, run_id)
    outputs: list[dict[str, Any]] = []
    scores: list[dict[str, Any]] = []
    assignment: list[dict[str, Any]] = []
    for variant in card.variant_names():
        for fixture in card.fixture_ids():
            for r in range(card.repetitions):
                cell_id = f"c{len(outputs):010x}"
                status, text = cell(fixture, variant, r)
                outputs.append({"cell": cell_id, "fixture": fixture, "status": status, "text": text,
                                "finish_reason": "stop" if status == "ok" else "length",
                                "usage": {"input": 40, "output": 3, "reasoning": 0}, "cost": 0.0,
                                "latency_ms": 100.0, "attempts": 1, "error": None})
                s = score_output(card.scoring, text) if status == "ok" else None
                scores.append({"cell": cell_id, "fixture": fixture, "status": status,
                               "score": s.score if s else None, "metrics": s.metrics if s else {},
                               "rules": s.rules if s else None})
                assignment.append({"cell": cell_id, "variant": variant, "fixture": fixture, "repetition": r,
                                   "order": len(assignment)})
    _jsonl(folder / "outputs.jsonl", outputs)
    _jsonl(folder / "scores.jsonl", scores)
    _jsonl(folder / "sealed" / "assignment.jsonl", assignment)
    _jsonl(folder / "sealed" / "requests.jsonl", [{"cell": a["cell"], "provider": card.rig.provider,
                                                   "url": "", "body": {}} for a in assignment])
    manifest = _manifest(card, run_id, model or card.rig.model, len(outputs), root) | (manifest_extra or {})
    _finish(folder, manifest, outputs, card)
    give_verdict(project, folder, n_resamples=200)
    return folder


def make_project(root: Path) -> Project:
    """Every card of the repository, with runs: results and non-results, current and superseded."""
    copy_project(root)
    project = Project(root.resolve())
    # A run of six-step-chain v1, entered in the ledger when v1 was current; the card is now v2.
    old = write_probe_run(project, "six-step-chain", "20261020T090000Z-bbbb", "openai/gpt-5-mini",
                          [("truncated", "")], version=1, verdict=False)
    seal_root = json.loads((old / "manifest.json").read_text(encoding="utf-8"))["seal_root"]
    ledger.append(project, LedgerRow(
        card="six-step-chain", version=1, kind="probe", rig="openai/gpt-5-mini · openrouter", run=old.name, cells=1,
        counts=RowCounts(planned=1, scored=0, truncated=1, failed=0, missing=0), outcome="non-result",
        finding="scored", model="openai/gpt-5-mini", score=None, passes=0, score_ci=[0.0, 1.0], rules={},
        cost=0.00012, latency=Latency(median_ms=400.0, total_ms=400.0), seal_root=seal_root,
        evidence=project.relative(old)))
    write_probe_run(project, "emit-terminator", "20261101T090000Z-aaaa", "openai/gpt-5-mini",
                    [("ok", "A migration rehearsal hit production.\n<<END>>"),
                     ("ok", "A rehearsal hit production.\n<<END>>\n\nLet me know if you need more."),
                     ("truncated", "")])
    write_probe_run(project, "six-step-chain", "20261102T090000Z-cccc", "openai/gpt-5-mini",
                    [("ok", "BEGIN-7731\n- Jupiter\n- Saturn\n- Uranus\nCOUNT: 3\nCHECKSUM: 6\nEND-7731")])
    write_probe_run(project, "reordered-input", "20261103T090000Z-dddd", "evil/model", [("ok", XSS)])
    write_bench_run(project)
    return project


class _Page(html.parser.HTMLParser):
    """Text, tags and attributes of a page, for assertions that do not depend on formatting."""

    BLOCK: ClassVar[set[str]] = {"p", "h1", "h2", "h3", "h4", "h5", "li", "tr", "dt", "dd", "pre", "div",
                                 "section", "header", "br", "summary", "figcaption", "caption", "td", "th", "table"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None
        self._script_text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script, self._script_text = dict(attrs), []
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_script is not None:
            self.scripts.append((self._in_script, "".join(self._script_text)))
            self._in_script = None
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self._script_text.append(data)
        else:
            self.parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def lines(self) -> list[str]:
        return [" ".join(line.split()) for line in self.text.splitlines() if line.strip()]

    def links(self) -> list[str]:
        return [str(a[k]) for t, a in self.tags for k in ("href", "src") if a.get(k)]


def page(out: Path, rel: str) -> _Page:
    return _Page((out / rel).read_text(encoding="utf-8"))


def _norm(text: str) -> str:
    return " ".join(text.split())


class _Headings(html.parser.HTMLParser):
    """The h2–h5 headings of a page, and those with nothing after them before the next heading of the same or
    a higher rank or the end of their section: a heading over nothing is a section promised and left empty."""

    LEVELS: ClassVar[dict[str, int]] = {"h2": 2, "h3": 3, "h4": 4, "h5": 5}
    CONTAINERS: ClassVar[set[str]] = {"section", "article", "details", "div", "main", "header", "figure"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self.empty: list[str] = []
        self._pending: list[dict[str, Any]] = []
        self._title: list[str] | None = None
        self._depth = 0
        self.feed(text)
        self.close()
        self._settle(lambda h: True)

    def _settle(self, which: Callable[[dict[str, Any]], bool]) -> None:
        for h in [h for h in self._pending if which(h)]:
            if not h["content"]:
                self.empty.append(h["title"])
            self._pending.remove(h)

    def _content(self) -> None:
        for h in self._pending:
            h["content"] = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.LEVELS:
            level = self.LEVELS[tag]
            self._settle(lambda h: h["level"] >= level)
            self._title = []
            self._pending.append({"level": level, "depth": self._depth, "title": "", "content": False})
        elif tag in self.CONTAINERS:
            self._depth += 1
        elif tag == "img":
            self._content()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.LEVELS and self._title is not None:
            title = " ".join("".join(self._title).split())
            self._pending[-1]["title"] = title
            self.headings.append((self.LEVELS[tag], title))
            self._title = None
        elif tag in self.CONTAINERS:
            depth = self._depth
            self._settle(lambda h: h["depth"] >= depth)
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._title is not None:
            self._title.append(data)
        elif data.strip():
            self._content()


def headings(out: Path, rel: str) -> _Headings:
    return _Headings((out / rel).read_text(encoding="utf-8"))


# Lines of the seed pages that belong to the site they were taken from, not to the card.
SITE_ONLY = ("LLM Ground",)


def _seed_line(line: str) -> str:
    """A seed line as this site writes it: the card's own parameter names, `benchcard check`, no bullets."""
    line = line.removeprefix("• ").replace("npm run probes:check", "benchcard check")
    line = re.sub(r"^(maxTokens|temperature):? ?", lambda m: "max_tokens " if m.group(1) == "maxTokens"
                  else "temperature ", line).strip()
    m = re.fullmatch(r"(v\d+ · current): (.*)", line)
    return m.group(2) if m else line


DEMO = "demo-answer-cue"  # an ab card with no `page:` prose at all


DEMO_RUN = "20261130T120000Z-0001"


def _demo_site(root: Path, cell: Callable[[str, str, int], tuple[str, str]]) -> tuple[Path, str]:
    """The demo card with one run (its cells from `cell`), judged, built; returns the site and card page text."""
    copy_project(root / "proj", (DEMO,))
    project = Project((root / "proj").resolve())
    write_rules_ab_run(project, DEMO, DEMO_RUN, cell)
    out = root / "site"
    build_site(project, out)
    return out, (out / f"cards/{DEMO}/index.html").read_text(encoding="utf-8")


REPLICA_ORIGINAL = "20261201T090000Z-0a0a"
REPLICA_RERUN = "20261203T090000Z-0b0b"
REPLICA_TRANSFER = "20261204T090000Z-0c0c"
SENTENCE, BARE = "This review is positive.", "positive"


def _crc(fixture: str) -> int:
    return zlib.crc32(fixture.encode())


def _cue_helps(fixture: str, variant: str, rep: int) -> tuple[str, str]:
    """The cue makes the reply bare in most cells, the plain prompt in a third of them."""
    if variant == "answer-cue":
        return "ok", SENTENCE if (_crc(fixture) + rep) % 5 == 0 else BARE
    return "ok", BARE if (_crc(fixture) + rep) % 3 == 0 else SENTENCE


def _cue_does_nothing(fixture: str, variant: str, rep: int) -> tuple[str, str]:
    """Another model: both arms answer bare in a third of the cells."""
    return "ok", BARE if (_crc(fixture) + rep + (variant == "plain")) % 3 == 0 else SENTENCE


def replica_of(project: Project, original: Path, *, transfer: bool = False) -> dict[str, Any]:
    """The manifest fields `benchcard replicate` writes for a rerun of `original` (a judged run): its link, with
    the original's ledger row, and the replication rule fixed before the first call."""
    from benchcard.records.replication import rule_record

    verdict = json.loads((original / "verdict.json").read_text(encoding="utf-8"))
    manifest = json.loads((original / "manifest.json").read_text(encoding="utf-8"))
    link = {"run": original.name, "hash": verdict["ledger"]["hash"], "seq": verdict["ledger"]["seq"],
            "evidence": project.relative(original), "transfer": transfer}
    return {"replicates": link, "replication_rule": msgspec.to_builtins(rule_record(manifest["kind"]))}


def replication_site(root: Path) -> Path:
    """The demo card's run with a rerun (replicated) and a transfer to another model (not replicated), and a
    probe run with a rerun whose score fell; built. Returns the site folder."""
    copy_project(root / "proj", (DEMO, "one-word-sentiment"))
    project = Project((root / "proj").resolve())
    original = write_rules_ab_run(project, DEMO, REPLICA_ORIGINAL, _cue_helps)
    write_rules_ab_run(project, DEMO, REPLICA_RERUN, _cue_helps, manifest_extra=replica_of(project, original))
    write_rules_ab_run(project, DEMO, REPLICA_TRANSFER, _cue_does_nothing, model="other/model-2",
                       manifest_extra=replica_of(project, original, transfer=True))
    probe = write_probe_run(project, "one-word-sentiment", "20260810T090000Z-0001", "m/one",
                            [("ok", "negative")] * 10)
    write_probe_run(project, "one-word-sentiment", "20261204T090000Z-0002", "m/one",
                    [("ok", "negative")] * 3 + [("ok", "Negative.")] * 7, manifest_extra=replica_of(project, probe))
    out = root / "site"
    build_site(project, out)
    return out


CHROMIUM = Path(os.environ.get("BENCHCARD_CHROMIUM", "/usr/bin/chromium"))
"""Debian's Chromium, which the browser tests drive (no browser is downloaded); `BENCHCARD_CHROMIUM` names another."""


def browser_env(folder: Path) -> dict[str, str]:
    """Chromium's environment: its settings and caches (crash reports, fontconfig, dconf) under `folder`, not the
    user's home."""
    return {**os.environ, "XDG_CONFIG_HOME": str(folder / "config"), "XDG_CACHE_HOME": str(folder / "cache")}


def open_page(context: Any, url: str, width: int, height: int,
              local: tuple[str, ...] = ("file://", "data:", "about:")) -> tuple[Any, list[str]]:
    """A page at `url` with every console error, page error and failed request collected, and every request to an
    address that does not start with one of `local` (the site's own files by default)."""
    problems: list[str] = []
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("request", lambda r: None if r.url.startswith(local) else problems.append(
        f"request left the site: {r.url}"))
    page.goto(url, wait_until="load")
    return page, problems


GATED_PASS, GATED_BELOW = "20261208T090000Z-0001", "20261208T100000Z-0002"


def gated_probe_site(root: Path) -> tuple[Project, Path]:
    """one-word-sentiment sealed with `gate: {min_score: 0.8}` and 5 repetitions, two runs judged, and the site
    built: GATED_PASS answered right 5 times (score 1, pass), GATED_BELOW 3 times (0.6) and judged as a verdict
    given before verdicts recorded the gate (no `sealed_gate` in its verdict.json or its ledger row)."""
    from unittest import mock

    copy_project(root / "proj", cards=("one-word-sentiment",))
    project = Project((root / "proj").resolve())
    card = project.card_path("one-word-sentiment")
    card.write_text(card.read_text(encoding="utf-8").replace(
        "repetitions: 1\n", "repetitions: 5\ngate: {min_score: 0.8}\n"), encoding="utf-8")
    write_probe_run(project, "one-word-sentiment", GATED_PASS, "m/right", [("ok", "negative")] * 5)
    with mock.patch("benchcard.verdict.give.with_gate", lambda _card, verdict: verdict):  # as before 2026-12-08
        write_probe_run(project, "one-word-sentiment", GATED_BELOW, "m/wrong",
                        [("ok", "negative")] * 3 + [("ok", "Negative.")] * 2)
    build_site(project, root / "site")
    return project, root / "site"
