"""A sequential run's page draws its looks once its verdict is given (not before: they would unblind it), and
the figure loads in a real browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.project import Project
from benchcard.publish.build import build_site
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import answer_every_held, bc, held_after, holding, only_run, run_and_kill, runs_of, seal_card
from ..helpers_sequential import clear_win, no_effect, sequential_ab
from ..helpers_site import CHROMIUM, browser_env, page


def _stopped_run(tmp_path: Path, server: FakeServer) -> tuple[Project, Path]:
    server.configure(clear_win())
    project = sequential_ab(tmp_path / "proj", server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    return project, only_run(project, "colour-ab")


def test_the_looks_are_drawn_only_once_the_run_is_judged(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = _stopped_run(tmp_path, server)
    out = tmp_path / "site"
    build_site(project, out)
    page = out / "runs" / "colour-ab" / "v1" / folder.name
    assert not (page / "looks.svg").exists() and 'id="looks"' not in (page / "index.html").read_text()
    assert bc(project, "verdict", folder.name).exit_code == 0
    build_site(project, out)
    html = (page / "index.html").read_text()
    assert 'id="looks"' in html and 'src="looks.svg"' in html
    assert "Stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in html
    svg = (page / "looks.svg").read_text()
    assert "win boundary" in svg and "loss boundary" in svg and "96 calls" in svg
    # the futility test's statistic of a clear win is held as -40, beyond every boundary: drawn on the frame's
    # edge, it is marked so, as the rule's statistic is (it was drawn there unmarked, read as about -4.6)
    assert "beyond −40" in html and svg.count("beyond") == 1


def test_the_ledger_page_says_where_each_sequential_run_stopped(tmp_path: Path, server: FakeServer, key: str) -> None:
    """The ledger page showed a stopped run's 96 cells and `result · win` alone, as if its design were 96 calls;
    its row keeps the looks (`looks`), and the page now says them as the verdict does: the stop and the calls
    saved, or that every look was taken (an A/A run, which goes to the end)."""
    project, folder = _stopped_run(tmp_path, server)
    assert bc(project, "verdict", folder.name).exit_code == 0
    server.configure(no_effect())
    assert bc(project, "run", "colour-ab").exit_code == 0
    second = max(p.name for p in (project.results_dir / "colour-ab" / "v1").iterdir())
    said = bc(project, "verdict", second)
    assert "looks: every look taken (3 of 3): inconclusive; 288 calls" in said.output
    out = tmp_path / "site"
    build_site(project, out)
    lines = page(out, "ledger.html").lines()
    first = lines.index("result · win")
    assert lines[first + 1:first + 3] == ["stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)", "96"]
    other = lines.index("non-result · inconclusive")
    assert lines[other + 1:other + 3] == ["every look taken (3 of 3): inconclusive; 288 calls", "288"]


def test_the_card_page_says_the_sealed_looks_with_the_rule(tmp_path: Path, server: FakeServer, key: str) -> None:
    """The card's page showed its rule 'as sealed' with α = 0.05 and no word of the looks, though the seal locks
    them and the run stopped at the first (its nominal level 0.00021): a reader could not tell the design from
    a fixed one. It now says the schedule as `check` does."""
    project, folder = _stopped_run(tmp_path, server)
    assert bc(project, "verdict", folder.name).exit_code == 0
    schedule = ("3 looks, after repetitions 3, 6, 9 of 9 (96, 192, 288 calls); α spent obrien-fleming; may stop for "
                "futility")
    assert f"  sequential: {schedule}\n" in bc(project, "check", "colour-ab").output
    out = tmp_path / "site"
    build_site(project, out)
    lines = page(out, "cards/colour-ab/index.html").lines()
    assert (f"Sequential, sealed with the rule: {schedule}. The run looks at the rule only after those repetitions, "
            "with α spent across the looks, and stops at the first look that decides it.") in lines


def test_a_blind_run_killed_after_a_look_publishes_no_look(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Killed after look 1 went on, the run is blind: its page draws no look, but the site copied its manifest.json,
    whose `looks` hold look 1's statistic, signed towards a win or a loss: which arm leads, published mid-run.
    The manifest is now published with the verdict, as the looks' figure is."""
    # look 1's calls answered (3 of each of the 32 bodies), the next 2 held: killed after look 1, before look 2
    server.configure(no_effect() | {"faults": held_after(each=3, held=2)})
    project = sequential_ab(tmp_path / "proj", server.base_url)

    def looked_once() -> bool:
        runs = runs_of(project, "colour-ab")
        manifest = runs[0] / "manifest.json" if runs else None
        return manifest is not None and manifest.is_file() and bool(json.loads(manifest.read_text()).get("looks")) \
            and holding(server, 2)

    try:
        run_and_kill(project.root, ["colour-ab", "--concurrency", "2"], looked_once)
    finally:
        answer_every_held(server)
    folder = only_run(project, "colour-ab")
    assert json.loads((folder / "manifest.json").read_text())["looks"][0]["statistic"] is not None
    out = tmp_path / "site"
    build_site(project, out)
    published = out / "runs" / "colour-ab" / "v1" / folder.name
    assert (published / "outputs.jsonl").is_file() and not (published / "manifest.json").exists()
    assert not [p for p in out.rglob("*") if p.is_file() and b'"looks"' in p.read_bytes()]
    assert "manifest.json" not in page(out, f"runs/colour-ab/v1/{folder.name}/index.html").links()
    assert bc(project, "run", "colour-ab", "--resume", folder.name).exit_code == 0
    assert bc(project, "verdict", folder.name).exit_code == 0
    build_site(project, out)
    assert json.loads((published / "manifest.json").read_text())["looks"]  # unblinded: published whole


def test_a_page_whose_verdict_is_incomplete_does_not_say_it_is_the_looks(tmp_path: Path, server: FakeServer,
                                                                         key: str) -> None:
    """A clear win whose variant is cut off at max_tokens on one fixture (3 cells a stretch, the card allowing 3):
    look 1 goes on, look 2 crosses its boundary with 6 cut off and stops the run. The verdict is incomplete; the
    page said 'its verdict is that look's decision' beside it, a page disagreeing with the verdict."""
    server.configure(clear_win() | {"faults": [{"match": "Please.\n<item>a ripe tomato, number 3<", "kind": "truncate",
                                                "times": 1000}]})
    project = sequential_ab(tmp_path / "proj", server.base_url)
    card = project.root / "cards" / "colour-ab.yaml"
    margin = "  equivalence_margin: 0.05"
    card.write_text(card.read_text().replace(margin, f"{margin}\n  allow_failed: 3"))
    for seal in (project.root / "keys" / "colour-ab").glob("*.seal.json"):
        seal.unlink()
    seal_card(project.root, "colour-ab")
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    assert "stopped at look 2 of 3: win; 192 of 288 calls (33 % saved)" in ran.output
    folder = only_run(project, "colour-ab")
    verdict = bc(project, "verdict", folder.name)
    assert "finding: incomplete → non-result" in verdict.output
    assert "6 cell(s) were cut off by the token limit and the card allows 3" in verdict.output
    out = tmp_path / "site"
    build_site(project, out)
    html = (out / "runs" / "colour-ab" / "v1" / folder.name / "index.html").read_text()
    assert "non-result · incomplete" in html and "Stopped at look 2 of 3: win" in html
    assert ("its verdict is that look's decision — but not here: more cells went unscored (failed or cut off) "
            "than the card allows, so the verdict is incomplete, whatever the look decided.") in html
    clean = tmp_path / "clean"
    server.configure(clear_win())
    clean_project = sequential_ab(clean, server.base_url)
    assert bc(clean_project, "run", "colour-ab").exit_code == 0
    assert bc(clean_project, "verdict", "colour-ab").exit_code == 0
    build_site(clean_project, clean / "site")
    page = (clean / "site" / "runs" / "colour-ab" / "v1" / only_run(clean_project, "colour-ab").name / "index.html")
    assert "its verdict is that look's decision." in page.read_text() and "but not here" not in page.read_text()


@pytest.mark.browser
def test_the_looks_figure_loads_in_chromium(tmp_path: Path, server: FakeServer, key: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (dev extra)")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    project, folder = _stopped_run(tmp_path, server)
    assert bc(project, "verdict", folder.name).exit_code == 0
    out = tmp_path / "site"
    build_site(project, out)
    url = (out / "runs" / "colour-ab" / "v1" / folder.name / "index.html").as_uri()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, env=browser_env(tmp_path),
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            problems: list[str] = []
            for width in (1366, 390):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
                page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
                page.goto(url, wait_until="load")
                img = page.locator("#looks figure.plot img")
                img.scroll_into_view_if_needed()
                complete, natural, shown = img.evaluate(
                    "e => [e.complete, e.naturalWidth, e.getBoundingClientRect().width]")
                assert complete and natural > 0 and 0 < shown <= width
                assert page.locator("#looks table.looks tbody tr").count() == 1
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, f"the page is {overflow}px wider than a {width}px screen"
                page.close()
            assert problems == []
        finally:
            browser.close()
