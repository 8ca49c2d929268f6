"""`benchcard site`: pages like the seeds, built from fabricated run folders that follow the run-folder contract.

The run folders here are written by hand (manifest.json, outputs.jsonl, scores.jsonl, sealed/, verdict.json,
table.csv, ledger rows through the real ledger) so that the pages can be tested before any real model is run.
"""

from __future__ import annotations

import csv
import html.parser
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import numpy as np
import pytest
from click.testing import CliRunner

from benchcard import ledger
from benchcard._util.hashing import file_digest
from benchcard.card import seal
from benchcard.card.load import load_card, load_cards
from benchcard.card.model import Card, Rig
from benchcard.cli import cli
from benchcard.ledgerrow import Latency, LedgerRow, RowCounts
from benchcard.project import Project
from benchcard.publish.build import MARKER, build_site, json_ld
from benchcard.publish.render import fmt_num
from benchcard.run.grid import planned_assignment
from benchcard.run.plandigest import seal_plan
from benchcard.scoring.scorers import score_output
from benchcard.verdict import grading
from benchcard.verdict.give import give_verdict

from ..conftest import PROBES, REPO, SEEDS, copy_project

XSS = '<script>alert(1)</script> and a quote " that would end an attribute \' too & more'
BENCH_RUN = "20261130T151200Z-3f9a"
BENCH_FIXTURES = [f"excerpt-{i:02d}" for i in range(1, 13)]


# ------------------------------------------------------------------------------------------ fabrication


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _replan(folder: Path, card: Card, seed: int) -> None:
    """Give the fabricated cells the ids and call order the runner's plan has for this card and seed, as a
    verdict re-derives them (`run.grid.planned_assignment`)."""
    def read(name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (folder / name).read_text(encoding="utf-8").splitlines()]

    rows = map(msgspec.to_builtins, planned_assignment(card, seed))
    planned = {(a["variant"], a["fixture"], a["repetition"]): a for a in rows}
    new = {a["cell"]: planned[(a["variant"], a["fixture"], a["repetition"])] for a in read("sealed/assignment.jsonl")}
    for name in ("outputs.jsonl", "scores.jsonl", "sealed/requests.jsonl"):
        rows = sorted(read(name), key=lambda r: new[r["cell"]]["order"])
        _jsonl(folder / name, [{**r, "cell": new[r["cell"]]["cell"]} for r in rows])
    _jsonl(folder / "sealed/assignment.jsonl", [dict(a) for a in sorted(new.values(), key=lambda a: a["order"])])


def _finish(folder: Path, manifest: dict[str, Any], outputs: list[dict[str, Any]], card: Card) -> None:
    """The plan and the manifest as the runner leaves them at the end of a run."""
    _replan(folder, card, manifest["seed"])
    counts = {s: sum(o["status"] == s for o in outputs) for s in ("ok", "truncated", "failed")}
    manifest.update(seal_plan(folder, manifest))
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
    root = existing["root"] if existing else seal.seal(card, project)[1]["root"]
    return card, str(root)


def write_probe_run(project: Project, card_id: str, run_id: str, model: str, texts: list[tuple[str, str]],
                    version: int | None = None, verdict: bool = True) -> Path:
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
        sheet = grading.blind_sheet(project, folder, out=folder.parent / "sheet.csv")
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
                       cell: Callable[[str, str, int], tuple[str, str]]) -> Path:
    """A run of a rules-scored ab card, every fixture × variant × repetition; `cell(fixture, variant, rep)`
    gives its (status, text). Scored by the real scorer, judged by the real verdict."""
    card, root = _sealed(project, card_id)
    folder = project.run_dir(card_id, card.version, run_id)
    outputs, scores, assignment = [], [], []
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
    _finish(folder, _manifest(card, run_id, card.rig.model, len(outputs), root), outputs, card)
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


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    root = tmp_path_factory.mktemp("site-project")
    project = make_project(root / "proj")
    out = root / "site"
    build_site(project, out)
    return project, out


@pytest.fixture(scope="module")
def empty_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    root = tmp_path_factory.mktemp("site-empty")
    copy_project(root / "proj")
    project = Project((root / "proj").resolve())
    out = root / "site"
    build_site(project, out)
    return project, out


# --------------------------------------------------------------------------------------------- helpers


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


# ----------------------------------------------------------------------------------------------- tests


# Lines of the seed pages that belong to the site they were taken from, not to the card.
SITE_ONLY = ("LLM Ground",)


def _seed_line(line: str) -> str:
    """A seed line as this site writes it: the card's own parameter names, `benchcard check`, no bullets."""
    line = line.removeprefix("• ").replace("npm run probes:check", "benchcard check")
    line = re.sub(r"^(maxTokens|temperature):? ?", lambda m: "max_tokens " if m.group(1) == "maxTokens"
                  else "temperature ", line).strip()
    m = re.fullmatch(r"(v\d+ · current): (.*)", line)
    return m.group(2) if m else line


@pytest.mark.parametrize("card_id", sorted(PROBES))
def test_probe_pages_carry_what_the_seeds_carry_in_order(empty_built: tuple[Project, Path], card_id: str) -> None:
    """Every line of a seed probe page appears on the built page, in the same order."""
    _, out = empty_built
    seed = next(SEEDS.glob(f"{PROBES[card_id]}_*.txt")).read_text(encoding="utf-8")
    built = _norm(page(out, f"cards/{card_id}/index.html").text)
    position, missing = 0, []
    for raw in seed.splitlines():
        line = _seed_line(_norm(raw))
        if not line or any(s in line for s in SITE_ONLY):
            continue
        if "\t" in raw or line.startswith("Nemotron 3 Nano"):  # table rows: checked by the results tests
            continue
        found = built.find(line, position)
        if found < 0:
            missing.append(line[:100])
            continue
        position = found + len(line)
    assert not missing, f"{card_id}: seed lines not found in order: {missing}"


def test_run_card_carries_what_seed_004_carries_in_order(empty_built: tuple[Project, Path]) -> None:
    _, out = empty_built
    built = _norm(page(out, "cards/bench-01/index.html").text)
    seed = next(SEEDS.glob("004_*.txt")).read_text(encoding="utf-8")
    position = 0
    # The seed's own layout glued some lines together; split them back into what the card carries.
    seed = seed.replace("Prompt sensitivityDoes", "Prompt sensitivity\nDoes").replace(
        "bounded: no inferred termsControls locked", "bounded: no inferred terms\nControls locked")
    for raw in seed.splitlines():
        line = _norm(raw)
        line = line[2:] if line.startswith("- ") else line
        if not line or line in ("Rig", "claude-fable-5-1 · effort high · Claude API"):
            continue
        found = built.find(line, position)
        assert found >= 0, f"seed 004 line not found in order: {line[:90]!r}"
        position = found + len(line)
    assert "Rig claude-fable-5-1 · effort high · Claude API" in built


def test_no_runs_means_not_yet_run_and_no_dataset(empty_built: tuple[Project, Path]) -> None:
    _, out = empty_built
    for card_id in ("emit-terminator", "six-step-chain", "reordered-input"):
        p = page(out, f"cards/{card_id}/index.html")
        text = _norm(p.text)
        assert "Not yet run" in text
        assert "No model has been run against this probe yet" in text
        assert "This page carries no Dataset structured data until it has real runs" in text
        assert not [s for s in p.scripts if s[0].get("type") == "application/ld+json"]
        assert not any(t == "script" for t, _ in p.tags)
    bench = page(out, "cards/bench-01/index.html")
    assert "Result: not run here" in _norm(bench.text)
    assert not any(t == "script" for t, _ in bench.tags)
    # one-word-sentiment has a real published run (run 19 of v2), so it does carry a Dataset.
    ows = page(out, "cards/one-word-sentiment/index.html")
    assert [s for s in ows.scripts if s[0].get("type") == "application/ld+json"]
    assert "No rows yet" in page(out, "ledger.html").text


def test_dataset_json_ld_only_with_runs(built: tuple[Project, Path]) -> None:
    _, out = built
    for card_id in ("emit-terminator", "six-step-chain", "reordered-input", "one-word-sentiment", "bench-01"):
        p = page(out, f"cards/{card_id}/index.html")
        blocks = [s for s in p.scripts if s[0].get("type") == "application/ld+json"]
        assert len(blocks) == 1, card_id
        data = json.loads(blocks[0][1])
        assert data["@context"] == "https://schema.org" and data["@type"] == "Dataset"
        for dist in data["distribution"]:
            assert not dist["contentUrl"].startswith(("http", "/"))
            assert (out / "cards" / card_id / dist["contentUrl"]).resolve().is_file()
    assert "This page carries no Dataset" not in page(out, "cards/emit-terminator/index.html").text


def test_json_ld_cannot_break_out_of_its_script() -> None:
    evil = {"name": "</script><script>alert(1)</script> & <!-- \u2028"}
    text = str(json_ld(evil))
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == evil


def test_probe_results_table(built: tuple[Project, Path]) -> None:
    project, out = built
    p = page(out, "cards/emit-terminator/index.html")
    text = _norm(p.text)
    assert "Instruction following · v1 · Last run 2026-11-01" in text
    assert "Every published run of this probe. Each row links to its raw output." in text
    rows = re.findall(r"<tbody>(.*?)</tbody>", (out / "cards/emit-terminator/index.html").read_text(), re.S)
    assert len(rows) == 1 and rows[0].count("<tr>") == 1
    # two scored cells (1.00 and 0.80 by the rules scorer); the truncated one is not scored, not a failure
    assert "openai/gpt-5-mini" in text and "0.90" in text
    assert "1 of 3 cells not scored (1 cut off at max_tokens)" in text and "failed in transport" not in text
    assert "$0.0004" in text and "410 ms" in text and "2026-11-01" in text
    evidence = [h for h in p.links() if h.endswith("20261101T090000Z-aaaa/index.html")]
    assert evidence == ["../../runs/emit-terminator/v1/20261101T090000Z-aaaa/index.html"]
    run_dir = out / "runs/emit-terminator/v1/20261101T090000Z-aaaa"
    src = project.run_dir("emit-terminator", 1, "20261101T090000Z-aaaa")
    for name in ("outputs.jsonl", "scores.jsonl", "manifest.json", "sealed/requests.jsonl",
                 "sealed/assignment.jsonl"):
        assert (run_dir / name).read_bytes() == (src / name).read_bytes(), name
    ev = _norm(page(out, "runs/emit-terminator/v1/20261101T090000Z-aaaa/index.html").text)
    assert "nothing_after_terminator FAIL" in ev and "truncated · score —" in ev


def test_superseded_versions_are_never_merged(built: tuple[Project, Path]) -> None:
    _, out = built
    source = (out / "cards/six-step-chain/index.html").read_text(encoding="utf-8")
    source = source.split('<section id="results">')[1].split('<section id="prompt">')[0]
    current, _, older = source.partition("Probe v1 · superseded")
    assert older, "superseded section missing"
    assert "20261102T090000Z-cccc" in current and "20261020T090000Z-bbbb" not in current
    assert "20261020T090000Z-bbbb" in older and "20261102T090000Z-cccc" not in older
    ows = _norm(page(out, "cards/one-word-sentiment/index.html").text)
    assert "Probe v2 · superseded" in ows and "1 run · mean 0.00" in ows
    assert "Nemotron 3 Nano 30B (free)" in ows and "nvidia/nemotron-3-nano-30b-a3b:free" in ows
    assert "0.00 failed" in ows and "$0" in ows and "392 ms" in ows and "run #19 →" in ows
    assert "No model has been run against v3 yet" in ows
    run19 = _norm(page(out, "runs/one-word-sentiment/v2/19/index.html").text)
    assert "neutral" in run19
    assert json.loads((out / "runs/one-word-sentiment/v2/19/published.json").read_text())["output"] == "neutral"


def test_model_output_and_card_strings_are_escaped(built: tuple[Project, Path]) -> None:
    _, out = built
    for rel in ("runs/reordered-input/v1/20261103T090000Z-dddd/index.html",
                "runs/bench-01/v1/20261130T151200Z-3f9a/index.html"):
        source = (out / rel).read_text(encoding="utf-8")
        assert "<script>alert(1)</script>" not in source
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in source
        p = _Page(source)
        assert not any(t == "script" for t, _ in p.tags), rel  # no script element at all on an evidence page
        assert XSS in p.text  # shown as text, quote and all
        for _, attrs in p.tags:  # no attribute was cut short by the quote
            assert not any(k in ("that", "would", "end", "an", "attribute") for k in attrs)
    bench = (out / "cards/bench-01/index.html").read_text(encoding="utf-8")
    assert "party &lt;b&gt;name&lt;/b&gt;" in bench and "<b>name</b>" not in bench  # a grader's note


def test_card_strings_are_escaped(tmp_path: Path) -> None:
    copy_project(tmp_path / "proj", ("reordered-input",))
    path = tmp_path / "proj" / "cards" / "reordered-input.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("title: Give the same answer when the input is reordered",
                        "title: '\"><img src=x onerror=alert(1)> </title><script>alert(2)</script>'")
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "site"
    build_site(Project((tmp_path / "proj").resolve()), out)
    for rel in ("cards/reordered-input/index.html", "index.html"):
        source = (out / rel).read_text(encoding="utf-8")
        assert "<img src=x" not in source and "<script>alert(2)" not in source
        p = _Page(source)
        assert not any(t == "img" for t, _ in p.tags) and not any(t == "script" for t, _ in p.tags)
        assert '"><img src=x onerror=alert(1)>' in p.text


def test_run_card_with_a_verdict(built: tuple[Project, Path]) -> None:
    _, out = built
    path = out / "cards/bench-01/index.html"
    p = page(out, "cards/bench-01/index.html")
    text = _norm(p.text)
    verdict = json.loads((out / "runs/bench-01/v1" / BENCH_RUN / "verdict.json").read_text(encoding="utf-8"))
    assert "Result: non-result · incomplete" in text  # one truncated cell and allow_failed 0
    assert verdict["why"] in text  # the verdict's own reasoning, word for word
    assert "1 cell(s) were cut off by the token limit" in text
    assert "field_recall rises — holds" in text
    assert "unsupported_values does not rise (margin 0.25) — does not hold" in text
    assert "abstains = 1 on excerpt-07 in every repetition — holds" in text
    recall = verdict["clauses"][0]
    assert (f"gap {recall['gap']:.3f} · CI [{recall['ci'][0]:.3f}, {recall['ci'][1]:.3f}]".replace("-", "−")
            in text)
    assert f"noise floor {recall['noise_floor']:.3f}" in text
    for clause in verdict["clauses"]:
        assert _norm(clause["why"]) in text
    tost_p = verdict["comparisons"][0]["equivalence"]["tost_p"]
    assert "Wilson interval [0.566, 1.000]" in text and f"TOST p {tost_p:.3f}" in text
    # the blind scorer notes: agreement, every disagreement, the graders' notes
    assert "Agreement of the human grades with the blind scorer" in text
    assert "Disagreements" in text and "grader read 'Buyer' as a party <b>name</b>" in text
    assert len(verdict["human"]["disagreements"]) == 3
    # the plot: an SVG file next to the page, referenced by a relative <img>
    imgs = [a for t, a in p.tags if t == "img"]
    assert len(imgs) == 2  # field_recall and the unsupported_values guard; `holds` has no paired gap
    for a in imgs:
        svg = (path.parent / str(a["src"])).resolve()
        assert svg.is_file() and svg.parent == path.parent
        body = svg.read_text(encoding="utf-8")
        assert body.lstrip().startswith("<?xml") and "<svg" in body and "excerpt-07" in body
        assert "noise floor" in body and "verdict's 95% CI" in body and "paired t" not in body
        assert "the verdict's calibrated interval" in a["alt"]
    guard = verdict["metrics"]["unsupported_values"]
    assert (f"The guard is judged on the one-sided 95% upper bound, {fmt_num(guard['upper_one_sided'], 3)}, against "
            "its margin.") in text
    # the per-field table: 12 fixture rows for each clause metric
    source = path.read_text(encoding="utf-8")
    pivots = re.findall(r'<table class="pivot">(.*?)</table>', source, re.S)
    assert len(pivots) == 2  # the win rule's metrics, then the rest inside <details>
    first = pivots[0]
    for metric in ("field_recall", "unsupported_values", "abstains"):
        assert f"<code>{metric}</code>" in first
    assert first.split("<tbody>")[1].split("</tbody>")[0].count("<tr>") == 12
    assert "Δ" in first and "Δ is A − baseline" in text
    hrefs = p.links()
    assert "../../runs/bench-01/v1/20261130T151200Z-3f9a/table.csv" in hrefs
    assert "../../runs/bench-01/v1/20261130T151200Z-3f9a/index.html" in hrefs
    assert (out / "runs/bench-01/v1/20261130T151200Z-3f9a/table.csv").is_file()
    assert "fixtures/excerpt-07.txt" in hrefs and "keys/excerpt-07.json" in hrefs


def test_ab_evidence_page_is_unblinded_only_after_the_verdict(built: tuple[Project, Path], tmp_path: Path) -> None:
    _, out = built
    text = _norm(page(out, "runs/bench-01/v1/20261130T151200Z-3f9a/index.html").text)
    assert "excerpt-03 · A · rep 0" in text
    assert "120 cells" in text
    # the same run without its verdict: no output names its variant
    project = Project((tmp_path / "p").resolve())
    copy_project(tmp_path / "p", ("bench-01",))
    write_bench_run(project, verdict=False)
    site = tmp_path / "s"
    build_site(project, site)
    blind = _norm(page(site, "runs/bench-01/v1/20261130T151200Z-3f9a/index.html").text)
    assert "· A ·" not in blind and "· baseline ·" not in blind
    assert "not yet unblinded" in blind
    assert not (site / "runs/bench-01/v1" / BENCH_RUN / "sealed").exists()
    assert (site / "runs/bench-01/v1" / BENCH_RUN / "outputs.jsonl").is_file()
    card = _norm(page(site, "cards/bench-01/index.html").text)
    assert "awaiting its verdict" in card


def test_ledger_and_index(built: tuple[Project, Path]) -> None:
    project, out = built
    rows = ledger.read(project)
    p = page(out, "ledger.html")
    text = _norm(p.text)
    source = (out / "ledger.html").read_text(encoding="utf-8")
    body = source.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr") == len(rows) == 5
    for row in rows:
        assert row.date in text
    assert "non-result · incomplete" in text and "result · scored" in text
    assert "Chain verified when this page was built: 5 rows" in text
    for href in p.links():
        if "runs/" in href:
            assert (out / href).is_file()
    idx = _norm(page(out, "index.html").text)
    assert "non-result · incomplete" in idx
    assert "Answer with exactly one word, and nothing else" in idx
    index_rows = (out / "index.html").read_text().split("<tbody>")[1].count("<tr>")
    assert index_rows == len(load_cards(project))


def test_broken_ledger_chain_is_reported(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    lines = project.ledger_path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["score"] = 1.0
    lines[1] = json.dumps(row)
    project.ledger_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_site(project, tmp_path / "site")
    assert "The chain does not verify" in page(tmp_path / "site", "ledger.html").text


def test_links_are_relative_and_resolve(built: tuple[Project, Path]) -> None:
    _, out = built
    pages = sorted(out.rglob("*.html"))
    assert len(pages) >= 12
    for html_file in pages:
        p = _Page(html_file.read_text(encoding="utf-8"))
        for link in p.links():
            if link.startswith("#") or link == "data:,":
                continue
            assert not re.match(r"^[a-z]+:", link) and not link.startswith("/"), (html_file, link)
            target = (html_file.parent / link.split("#")[0]).resolve()
            assert target.exists(), (html_file.relative_to(out), link)
        sheets = [a for t, a in p.tags if t == "link" and a.get("rel") == "stylesheet"]
        assert len(sheets) == 1 and (html_file.parent / str(sheets[0]["href"])).resolve() == out / "style.css"
    css = (out / "style.css").read_text(encoding="utf-8")
    assert "@import" not in css and "url(" not in css


def test_curl_and_sections_on_probe_pages(built: tuple[Project, Path]) -> None:
    _, out = built
    text = page(out, "cards/emit-terminator/index.html").text
    head = 'curl https://openrouter.ai/api/v1/chat/completions \\\n  -H "Authorization: Bearer $OPENROUTER_API_KEY"'
    assert head in text
    assert "must NOT match" in text and r"/<<END>>[\s\S]*<<END>>/" in text
    assert "Correct — must score 1.00" in text


def test_refuses_a_folder_it_did_not_build(tmp_path: Path) -> None:
    copy_project(tmp_path / "proj", ("emit-terminator",))
    project = Project((tmp_path / "proj").resolve())
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    from benchcard.errors import BenchcardError

    with pytest.raises(BenchcardError, match="not built by benchcard site"):
        build_site(project, foreign)
    assert (foreign / "notes.txt").read_text() == "mine"
    with pytest.raises(BenchcardError, match="project folder"):
        build_site(project, project.root)
    with pytest.raises(BenchcardError, match="inside"):
        build_site(project, project.root / "results" / "site")
    site = tmp_path / "site"
    build_site(project, site)
    (site / "stale.html").write_text("old", encoding="utf-8")
    build_site(project, site)  # a site it built is rebuilt from scratch
    assert not (site / "stale.html").exists() and (site / MARKER).is_file()


def test_cli_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_project(tmp_path / "proj", ("emit-terminator", "one-word-sentiment"))
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    assert "index.html" in result.output and (tmp_path / "web" / "index.html").is_file()
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["out"].endswith("site") and "cards/emit-terminator/index.html" in data["pages"]
    assert (tmp_path / "proj" / "site" / "index.html").is_file()
    # a user error is one line on stderr and exit 1, no traceback
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x", encoding="utf-8")
    from benchcard.cli import main

    monkeypatch.setattr("sys.argv", ["benchcard", "-C", str(tmp_path / "proj"), "site", "--out",
                                     str(tmp_path / "taken")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1


def test_real_project_builds(tmp_path: Path) -> None:
    """The repository's own cards build as they stand."""
    report = build_site(Project(REPO), tmp_path / "site")
    assert "cards/bench-01/index.html" in report.pages


DEMO = "demo-answer-cue"  # an ab card with no `page:` prose at all
DEMO_RUN = "20261130T120000Z-0001"


def test_no_page_has_a_heading_over_nothing(empty_built: tuple[Project, Path], built: tuple[Project, Path]) -> None:
    for _, out in (empty_built, built):
        for html_file in sorted(out.rglob("*.html")):
            rel = str(html_file.relative_to(out))
            assert not headings(out, rel).empty, rel


def test_run_card_without_page_prose(empty_built: tuple[Project, Path]) -> None:
    """A card with no `page:` section: no prose headings, but everything the card itself says."""
    project, out = empty_built
    assert not load_card(project.card_path(DEMO), project).page
    rel = f"cards/{DEMO}/index.html"
    h = headings(out, rel)
    assert not h.empty
    titles = [t for _, t in h.headings]
    for absent in ("Fixture", "Controls locked", "What would count as evidence", "What would close the card",
                   "Most likely way to fool yourself", "Sources"):
        assert absent not in titles
    assert titles[:4] == ["DEMO-ANSWER-CUE · run card", "Rig", "Exact prompt", "Scoring rule, written before the run"]
    source = (out / rel).read_text(encoding="utf-8")
    assert 'id="sources"' not in source
    text = _norm(page(out, rel).text)
    assert "Not this card" not in text
    # the prompt, the variant's block, the card's own rubric as its scoring rule, the sealed win rule
    assert "Is this review positive or negative? Answer with one word. Review: {{FIXTURE}}" in text
    assert "--- VARIANT answer-cue adds only the block below, at the end of its line --- Answer:" in text
    rule = text.split("Scoring rule, written before the run")[1].split("Results")[0]
    assert rule.startswith(" Five rules, each scored pass or fail on the raw output")
    assert "It is the bare label and nothing else (surrounding whitespace aside)" in rule
    assert "As sealed — every clause must hold" in rule and "rule.names_a_label does not fall (margin 0.2)" in rule
    assert "Not yet run" in text


def _demo_site(root: Path, cell: Callable[[str, str, int], tuple[str, str]]) -> tuple[Path, str]:
    """The demo card with one run (its cells from `cell`), judged, built; returns the site and card page text."""
    copy_project(root / "proj", (DEMO,))
    project = Project((root / "proj").resolve())
    write_rules_ab_run(project, DEMO, DEMO_RUN, cell)
    out = root / "site"
    build_site(project, out)
    return out, (out / f"cards/{DEMO}/index.html").read_text(encoding="utf-8")


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_fixture_with_no_scored_cell(tmp_path: Path) -> None:
    """Every cell of review-03 cut off: its row says so, its means are dashes, and nothing warns or shows nan."""
    def cell(fixture: str, variant: str, rep: int) -> tuple[str, str]:
        if fixture == "review-03":
            return "truncated", "This review is"
        return "ok", ("positive" if variant == "answer-cue" else "This review is positive.")

    out, source = _demo_site(tmp_path, cell)
    text = _norm(_Page(source).text)
    # six truncated cells against allow_failed 2: not judged, the figures shown for information
    assert "Result: non-result · incomplete" in text and "score rises —" in text
    assert "6 cell(s) were cut off by the token limit" in text
    assert not re.search(r"\bnan\b", source, re.I)
    pivot = re.findall(r'<table class="pivot">(.*?)</table>', source, re.S)[0]
    rows = _norm(_Page(pivot.split("<tbody>")[1].split("</tbody>")[0]).text)
    assert "review-03 no scored cell — — — — — —" in rows
    assert "review-04 0.400 1.000 0.600 1.000 1.000 0.000" in rows
    assert "mean 0.400 1.000 0.600 1.000 1.000 0.000" in _norm(_Page(pivot).text)
    assert ("— means no scored cell for that fixture and variant: every one was truncated or failed, so it has no "
            "mean and the mean row leaves it out. No scored cell at all: review-03.") in text
    assert "over 9 fixtures" in text and "Left out, with no scored cell in one arm or both: review-03." in text
    [evidence_page] = out.glob(f"runs/{DEMO}/v*/{DEMO_RUN}/index.html")
    evidence = _norm(page(out, str(evidence_page.relative_to(out))).text)
    assert "review-03 · plain · rep 0 · truncated · score —" in evidence


OLD_TRUNCATION_WORDS = ("failed in transport or cut off", "not scored (transport)", "cut off or failed in transport")


def test_a_truncated_cell_is_called_cut_off_at_max_tokens_not_a_transport_failure(tmp_path: Path) -> None:
    """One cell cut off at max_tokens and one failed in transport (allow_failed 2): the card page and the
    evidence page say what each is, and no page calls truncation a failure of transport (issue 12)."""
    def cell(fixture: str, variant: str, rep: int) -> tuple[str, str]:
        if (fixture, variant, rep) == ("review-02", "answer-cue", 1):
            return "truncated", "This review is"
        if (fixture, variant, rep) == ("review-05", "plain", 0):
            return "failed", ""
        return "ok", ("positive" if variant == "answer-cue" else "This review is positive.")

    out, source = _demo_site(tmp_path, cell)
    card = _norm(_Page(source).text)
    assert ("up to 2 cell(s) may go unscored: a cell that failed in transport (no answer), or one whose output was "
            "cut off at max_tokens (128), which the verdict also bounds at the worst case for each clause's claim; "
            "more make the run incomplete.") in card
    [evidence_page] = out.glob(f"runs/{DEMO}/v*/{DEMO_RUN}/index.html")
    evidence = _norm(page(out, str(evidence_page.relative_to(out))).text)
    assert ("A truncated cell is not a failure of transport: the model answered and its output was cut off at the "
            "card's max_tokens (128). It is not scored on its own; it counts against the card's allow_failed, and "
            "the verdict bounds it at the worst case for each clause's claim") in evidence
    assert "review-02 · answer-cue · rep 1 · truncated · score — · cut off at max_tokens" in evidence
    assert "review-05 · plain · rep 0 · failed · score —" in evidence
    assert "review-05 · plain · rep 0 · failed · score — · cut off" not in evidence
    # the plot's caption: the verdict judged the gap with the cut-off cell bounded, and says so in those words
    [run_dir] = (tmp_path / "proj" / "results" / DEMO).glob(f"v*/{DEMO_RUN}")
    low, high = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))["metrics"]["score"]["bounded_gaps"]
    assert (f"The verdict judged it with 1 truncated cell(s), outputs cut off at max_tokens, bounded at the worst "
            f"case for the claim: gaps {fmt_num(low, 3)} to {fmt_num(high, 3)}.") in card
    for html_page in out.rglob("*.html"):
        text = _norm(_Page(html_page.read_text(encoding="utf-8")).text)
        for old in OLD_TRUNCATION_WORDS:
            assert old not in text, (html_page, old)
        assert "a truncated cell was cut off by the token limit (max_tokens). Both are" not in text


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_run_with_no_scored_cell_at_all(tmp_path: Path) -> None:
    """Every cell cut off: a plain sentence instead of a table of dashes, no plot, no nan, no warning."""
    _, source = _demo_site(tmp_path, lambda fixture, variant, rep: ("truncated", "This review is"))
    p = _Page(source)
    text = _norm(p.text)
    assert "Result: non-result · incomplete" in text
    assert "No scored cell: every cell of this run was truncated or failed, so there is no mean to show" in text
    assert '<table class="pivot">' not in source and not any(t == "img" for t, _ in p.tags)
    assert "means plain —, answer-cue — · baseline run means — ·" in text
    assert not re.search(r"\bnan\b", source, re.I)
    assert not _Headings(source).empty


def test_grades_without_grader_notes_build_and_show(tmp_path: Path) -> None:
    """A run graded by a human who wrote no note: the site builds and says there are no grader notes."""
    from ..helpers_verdict import make_project
    from ..verdict.test_grading import _auto_scores, _run, _sheet, _write

    project = make_project(tmp_path / "proj")
    run_dir = _run(project)
    runner = CliRunner()
    sheet = tmp_path / "sheet.csv"
    exported = runner.invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(sheet)])
    assert exported.exit_code == 0
    auto = _auto_scores(run_dir)
    rows = _sheet(sheet)
    for r in rows:
        r["grade"] = "pass" if auto[int(r["row"])] == 1.0 else "fail"
    _write(sheet, rows)
    assert runner.invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(sheet)]).exit_code == 0
    assert runner.invoke(cli, ["-C", str(project.root), "verdict", run_dir.name]).exit_code == 0
    result = runner.invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    card_page = next((tmp_path / "web" / "cards").glob("*/index.html")).read_text(encoding="utf-8")
    assert "Grader notes" in card_page and "Agreement of the human grades" in card_page
    assert "None." in card_page


def test_a_failed_build_leaves_the_last_good_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_project(tmp_path / "proj", ("emit-terminator",))
    web = tmp_path / "web"
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(tmp_path / "proj"), "site", "--out", str(web)]).exit_code == 0
    before = {p.relative_to(web): p.read_bytes() for p in web.rglob("*") if p.is_file()}
    assert Path("index.html") in before

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("template blew up half-way")

    monkeypatch.setattr("benchcard.publish.build.ledger_context", broken)
    with pytest.raises(RuntimeError):
        build_site(Project((tmp_path / "proj").resolve()), web)
    after = {p.relative_to(web): p.read_bytes() for p in web.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left behind


def test_a_run_card_names_the_rigs_of_its_runs_and_lists_them(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs on other rigs than the card's: the header says which rigs the page publishes, and a table of
    contents links each run."""
    from benchcard.testing.fakeserver import FakeServer

    from ..helpers_run import KEY_ENV
    from ..helpers_run import ab_project as make

    monkeypatch.setenv(KEY_ENV, "sk-test")
    with FakeServer() as server:
        server.configure({"default_reply": "red"})
        project = make(tmp_path / "proj", server.base_url, fixtures=3, repetitions=1)
        for model in ("m-one", "m-two"):
            assert CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--model", model]
                                      ).exit_code == 0
    assert CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")]).exit_code == 0
    html = (tmp_path / "web" / "cards" / "colour-ab" / "index.html").read_text(encoding="utf-8")
    assert "<dt>Runs published</dt><dd>" in html and "m-one · fake" in html and "m-two · fake" in html
    runs = sorted(p.name for p in (project.results_dir / "colour-ab" / "v1").iterdir())
    for run in runs:
        assert f'<li><a href="#run-{run}">Run {run}</a>' in html
