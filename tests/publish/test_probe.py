"""A probe's page: every line of its seed page in order, its results table linking each run's raw files, the
request to run it yourself and its scorer's sections."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchcard.project import Project
from benchcard.records import ledger

from ..helpers_project import PROBES, SEEDS
from ..helpers_site import (
    SITE_ONLY,
    _norm,
    _seed_line,
    page,
)


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


def test_curl_and_sections_on_probe_pages(built: tuple[Project, Path]) -> None:
    _, out = built
    text = page(out, "cards/emit-terminator/index.html").text
    head = 'curl https://openrouter.ai/api/v1/chat/completions \\\n  -H "Authorization: Bearer $OPENROUTER_API_KEY"'
    assert head in text
    assert "must NOT match" in text and r"/<<END>>[\s\S]*<<END>>/" in text
    assert "Correct — must score 1.00" in text


def test_a_probe_run_set_aside_is_shown_so_without_a_resume_command(tmp_path: Path) -> None:
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run
    from benchcard.testing.fakeserver import FakeServer

    from ..helpers_run import KEY_ENV, PROBE, bc, ok, probe_project

    with FakeServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, "sk-test-0000")
        server.configure({"default_reply": "negative"})
        project = probe_project(tmp_path / "proj", server.base_url, repetitions=3)
        [stopped] = run(project, PROBE, RunOptions(progress=False), stop_after=1)
    ok(bc(project, "set-aside", stopped.run, "--why", "wrong model"))
    out = tmp_path / "site"
    ok(bc(project, "site", "--out", str(out)))
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (out / "cards" / PROBE / "index.html").read_text()))
    assert "set aside" in text and "wrong model. Kept as it is; never resumed, judged or taken as the card" in text
    assert f"--resume {stopped.run}" not in text


def test_a_probe_run_page_gives_its_wilson_intervals_at_the_gates_level(tmp_path: Path) -> None:
    """A card sealing `gate: {alpha: 0.1}`: the run's page calls its intervals 90 % ones, as its verdict computed."""
    from benchcard.publish.build import build_site

    from ..helpers_project import copy_project
    from ..helpers_site import write_probe_run

    root = copy_project(tmp_path / "proj", cards=("one-word-sentiment",))
    card = root / "cards" / "one-word-sentiment.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace(
        "repetitions: 1\n", "repetitions: 1\ngate: {min_score: 0.8, alpha: 0.1}\n"), encoding="utf-8")
    project = Project(root.resolve())
    folder = write_probe_run(project, "one-word-sentiment", "20261205T090000Z-0001", "m/one",
                             [("ok", "negative")] * 4 + [("ok", "Negative.")])
    build_site(project, tmp_path / "site")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (
        tmp_path / "site" / "runs" / "one-word-sentiment" / f"v{folder.parent.name[1:]}" / folder.name
        / "index.html").read_text(encoding="utf-8")))
    assert "Wilson 90% interval of the pass rate" in text and "95%" not in text


def test_a_gated_probes_page_states_its_min_score_and_each_runs_decision(tmp_path: Path) -> None:
    """The page showed a probe's score and nothing of its sealed gate. The Scoring section now states min_score,
    and each run says under its score what the gate made of it: recorded with its verdict (GATED_PASS), or for a
    verdict given before verdicts recorded it, decided again by the gate's rule (GATED_BELOW). The ledger page says
    the recorded one beside the score."""
    from ..helpers_site import GATED_BELOW, GATED_PASS, gated_probe_site

    project, site = gated_probe_site(tmp_path)
    row = {r.run: r for r in ledger.read(project)}
    assert "sealed_gate" in row[GATED_PASS].fields() and "sealed_gate" not in row[GATED_BELOW].fields()
    text = _norm(page(site, "cards/one-word-sentiment/index.html").text)
    assert "Gate — min_score 0.8 Sealed with v" in text and "a run passes when its mean score reaches 0.8" in text
    results = text[text.index("Results"):text.index("Prompt")]
    assert re.search(r"m/right 1\.00 \S.* gate min_score 0\.8: pass", results), results
    assert re.search(r"m/wrong 0\.60 \S.* gate min_score 0\.8: below", results), results
    ledger_page = _norm(page(site, "ledger.html").text)
    assert "score 1.00 · gate min_score 0.8: pass" in ledger_page
    assert "score 0.60 · m/wrong" in ledger_page  # its row recorded no gate: the ledger shows what it holds


def test_an_ungated_probes_page_says_nothing_of_a_gate(built: tuple[Project, Path]) -> None:
    _, out = built
    text = _norm(page(out, "cards/emit-terminator/index.html").text)
    assert "min_score" not in text and "Gate —" not in text


def test_a_runs_badge_says_what_failed_the_scorer_or_the_transport(tmp_path: Path) -> None:
    """The badge `failed` (every repetition scored 0) read like "failed in transport", the word the same table
    and the terminal use for a call that got no answer. A scored run's badge now says what passed, in the
    verdict's words (`failed: 0 of 3 pass`, `partial: 2 of 3 pass`, `passed: 3 of 3 pass`), and a run with no
    score says why (`3 failed in transport`): no bare `failed` is left."""
    from benchcard.publish.build import build_site

    from ..helpers_project import copy_project
    from ..helpers_site import write_probe_run

    root = copy_project(tmp_path / "proj", cards=("one-word-sentiment",))
    project = Project(root.resolve())
    card = project.card_path("one-word-sentiment")
    card.write_text(card.read_text(encoding="utf-8").replace("repetitions: 1\n", "repetitions: 3\n"), encoding="utf-8")
    for run, model, texts in (("20261208T090000Z-0001", "m/wrong", [("ok", "Negative.")] * 3),
                              ("20261208T090000Z-0002", "m/some", [("ok", "negative")] * 2 + [("ok", "no")]),
                              ("20261208T090000Z-0003", "m/right", [("ok", "negative")] * 3)):
        write_probe_run(project, "one-word-sentiment", run, model, texts)
    write_probe_run(project, "one-word-sentiment", "20261208T090000Z-0004", "m/down", [("failed", "")] * 3,
                    verdict=False)
    build_site(project, tmp_path / "site")
    html = (tmp_path / "site" / "cards" / "one-word-sentiment" / "index.html").read_text(encoding="utf-8")
    table = html[html.index('<section id="results">'):html.index("Probe v2 · superseded")]
    badges = {m: b for m, b in re.findall(r'<code class="slug">(m/\w+)</code>.*?<span class="badge \w+">([^<]*)</span>',
                                          table, re.S)}
    assert badges == {"m/wrong": "failed: 0 of 3 pass", "m/some": "partial: 2 of 3 pass",
                      "m/right": "passed: 3 of 3 pass", "m/down": "3 failed in transport"}
    assert re.search(r'class="badge fail">failed: 0 of 3', table) and re.search(r'class="badge na">3 failed in', table)
    assert not re.search(r">failed<|\bfailed\b(?!: | in transport)", _norm(re.sub(r"<[^>]+>", " ", table)))


def test_a_gated_probes_run_page_gives_its_score_against_the_gate(tmp_path: Path) -> None:
    """The run's evidence page gave the verdict and the score alone, where the ledger, the index and the probe page
    give the score against the sealed min_score. Its Verdict section now says it in their words: recorded with the
    verdict (GATED_PASS), or decided again by the gate's rule for a verdict given before (GATED_BELOW)."""
    from ..helpers_site import GATED_BELOW, GATED_PASS, gated_probe_site

    _, site = gated_probe_site(tmp_path)
    for run, said in ((GATED_PASS, "score 1.00 · gate min_score 0.8: pass"),
                      (GATED_BELOW, "score 0.60 · gate min_score 0.8: below")):
        [path] = site.glob(f"runs/one-word-sentiment/v*/{run}/index.html")
        text = _norm(page(site, path.relative_to(site).as_posix()).text)
        verdict = text[text.index("Verdict result"):text.index("Raw files")]
        assert f"{said} (the sealed gate)" in verdict, verdict


def test_an_ungated_probes_run_page_says_nothing_of_a_gate(built: tuple[Project, Path]) -> None:
    _, out = built
    pages = [p for card in PROBES for p in out.glob(f"runs/{card}/v*/*/index.html")]
    assert pages
    for path in pages:
        text = _norm(path.read_text(encoding="utf-8"))
        assert "min_score" not in text and "sealed gate" not in text, path
