"""The built site in a real browser: headless Debian Chromium driven by Playwright, from file:// URLs.

No browser is downloaded: Playwright is pointed at /usr/bin/chromium (`executable_path`), with a fresh
profile folder and no network features. Every page must load with no console error, no failed request and no
request leaving file://; the results tables must have their rows; the plots must have loaded; and at phone width
no page may be wider than the screen (wide tables scroll inside their own box). Screenshots at laptop and phone
widths are written to $BENCHCARD_SCREENSHOTS when it is set, for a person to look at (and for docs/img/); without
it no page screenshot is taken, as nobody would look at one in the test's tmp folder (a full-page PNG at two widths
of every page was half of the browser's time), and an element's screenshot goes to the tmp folder, for it waits
until the element is visible and stable.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records import ledger

from ..helpers_site import make_project
from ..helpers_site import open_page as _open

pytestmark = pytest.mark.browser

VIEWPORTS = {"laptop": (1366, 900), "phone": (390, 844)}
BENCH_RUN = "20261130T151200Z-3f9a"


@pytest.fixture
def site(built: tuple[Project, Path]) -> Path:
    return built[1]


def _shots_dir(tmp_path: Path) -> Path:
    target = os.environ.get("BENCHCARD_SCREENSHOTS")
    folder = Path(target) if target else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _shoot(page: Any, name: str, full_page: bool = False) -> None:
    """A screenshot of the page into $BENCHCARD_SCREENSHOTS, only when it is set (the module's docstring says why)."""
    target = os.environ.get("BENCHCARD_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(target) / name), full_page=full_page)


def test_every_page_loads_cleanly_at_both_widths(site: Path, browser: Any) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 12
    for name, (width, height) in VIEWPORTS.items():
        page, problems = _open(browser, "about:blank", width, height)
        for html in pages:
            rel = html.relative_to(site).as_posix()
            problems.clear()
            page.goto(html.as_uri(), wait_until="load")
            assert problems == [], (name, rel, problems)
            assert page.title().endswith("· benchcard"), rel
            # the stylesheet (a local file) is applied: the body uses the system font stack
            font = page.evaluate("getComputedStyle(document.body).fontFamily")
            assert "system-ui" in font, (rel, font)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{rel} is {overflow}px wider than a {width}px screen"
            assert page.locator("p.chain.broken").count() == 0, rel  # the chain verifies: no page warns
            if rel.startswith("cards/") or rel in ("index.html", "ledger.html"):
                _shoot(page, f"{rel.replace('/', '_')[:-5]}-{name}.png", full_page=True)
        page.close()


def test_results_tables_have_their_rows(site: Path, browser: Any) -> None:
    page, problems = _open(browser, (site / "cards/six-step-chain/index.html").as_uri(), 1366, 900)
    tables = page.locator("#results table.results")
    assert tables.count() == 2  # v2 (current) and v1 (superseded), never merged
    assert tables.nth(0).locator("tbody tr").count() == 1
    assert tables.nth(1).locator("tbody tr").count() == 1
    assert "superseded" in page.locator("#results section.superseded h3").inner_text()
    page.close()

    page, problems = _open(browser, (site / "ledger.html").as_uri(), 1366, 900)
    assert page.locator("table.ledger tbody tr").count() == 5
    page.close()

    page, problems = _open(browser, (site / "cards/emit-terminator/index.html").as_uri(), 390, 844)
    row = page.locator("#results table.results tbody tr")
    assert row.count() == 1
    assert "0.90" in row.inner_text()
    # a table too wide for a phone scrolls sideways inside its own box
    box = page.locator("#results .scroll").first
    assert box.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    link = row.locator("td.evidence a")
    link.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/runs/emit-terminator/v1/20261101T090000Z-aaaa/index.html")
    assert page.locator("details.cell").count() == 3
    assert problems == []
    page.close()


def test_plot_is_there(site: Path, browser: Any, tmp_path: Path) -> None:
    page, problems = _open(browser, (site / "cards/bench-01/index.html").as_uri(), 1366, 900)
    images = page.locator("figure.plot img")
    assert images.count() == 2
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        size = img.evaluate("e => [e.complete, e.naturalWidth, e.naturalHeight, e.getBoundingClientRect().width]")
        assert size[0] and size[1] > 100 and size[2] > 100 and size[3] > 300, size
    pivot = page.locator("table.pivot").first
    assert pivot.locator("tbody tr").count() == 12
    assert "non-result · incomplete" in page.locator(".result-line").inner_text()
    assert page.locator('script[type="application/ld+json"]').count() == 1
    images.first.screenshot(path=str(_shots_dir(tmp_path) / "bench-01-plot.png"))
    assert problems == []
    page.close()


def test_escaped_output_is_shown_as_text_and_never_runs(site: Path, browser: Any) -> None:
    page, problems = _open(browser, (site / "runs/reordered-input/v1/20261103T090000Z-dddd/index.html").as_uri(),
                           1366, 900)
    alerts: list[str] = []

    def dismiss(dialog: Any) -> None:
        alerts.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    text = page.locator("details.cell pre.output").inner_text()
    assert "<script>alert(1)</script>" in text and '"' in text
    assert page.locator("script").count() == 0
    page.reload()
    assert alerts == [] and problems == []
    page.close()


def test_works_from_a_copied_folder(site: Path, browser: Any, tmp_path: Path) -> None:
    """Portable: the whole site moved elsewhere still resolves every link (relative links only)."""
    moved = tmp_path / "elsewhere" / "site"
    shutil.copytree(site, moved)
    page, problems = _open(browser, (moved / "index.html").as_uri(), 1366, 900)
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    assert hrefs and all(h.startswith(moved.as_uri()) for h in hrefs if not h.startswith("http")), hrefs
    page.locator("a", has_text="Ledger").first.click()
    page.wait_for_load_state("load")
    assert page.url == (moved / "ledger.html").as_uri()
    evidence = page.locator("td.evidence a").first
    evidence.click()
    page.wait_for_load_state("load")
    assert "/runs/" in page.url and page.locator("h1").inner_text().startswith("Run ")
    assert problems == []
    page.close()


def test_on_a_phone_the_outcome_and_the_evidence_need_no_sideways_scroll(site: Path, browser: Any) -> None:
    """At 390 px the ledger's and the probe results' rows stack: every cell, outcome and evidence included, is
    inside the screen, labelled, and the page is no wider than the screen."""
    probe = next(p for p in sorted((site / "cards").glob("*/index.html")) if 'class="results"' in p.read_text())
    for rel, table, labels in (("ledger.html", "table.ledger", ("Outcome", "Evidence")),
                               (probe.relative_to(site).as_posix(), "table.results", ("Score", "Evidence"))):
        page, problems = _open(browser, (site / rel).as_uri(), 390, 844)
        assert problems == [], problems
        cells = page.evaluate(f"""() => [...document.querySelectorAll('{table} td[data-label]')].map(td => ({{
            label: td.dataset.label, right: td.getBoundingClientRect().right,
            shown: getComputedStyle(td, '::before').content}}))""")
        assert cells, rel
        for label in labels:
            mine = [c for c in cells if c["label"] == label]
            assert mine and all(c["right"] <= 390 for c in mine), (rel, label, mine[:2])
            assert all(label in c["shown"] for c in mine), (rel, label)
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, rel
        _shoot(page, f"{rel.replace('/', '_')[:-5]}-390.png", full_page=True)
        page.close()
    for width in (1280, 390):  # the run card page, for the README and docs/img/
        page, problems = _open(browser, (site / "cards" / "bench-01" / "index.html").as_uri(), width, 900)
        assert problems == []
        _shoot(page, f"run-card-{width}.png")
        page.close()


def _smallest_label_px(page: Any, img: Any) -> tuple[str, float, float]:
    """The image the browser chose, its smallest SVG font size (in the SVG's own units) and that size as shown:
    an SVG's text scales with the image, by the shown width over the viewBox width."""
    import re
    from urllib.parse import unquote, urlparse

    src, shown = img.evaluate("e => [e.currentSrc, e.getBoundingClientRect().width]")
    svg = Path(unquote(urlparse(src).path)).read_text(encoding="utf-8")
    view_w = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) [\d.]+"', svg).group(1))  # type: ignore[union-attr]
    sizes = [float(x) for x in re.findall(r"font(?:-size)?:\s*(?:[a-z]+\s+)*([\d.]+)px", svg)]
    assert sizes, "no text in the plot"
    return src, min(sizes), min(sizes) * shown / view_w


@pytest.mark.parametrize("width", [390, 1366])
def test_plot_labels_are_at_least_11_px_as_shown(site: Path, browser: Any, width: int) -> None:
    page, problems = _open(browser, (site / "cards/bench-01/index.html").as_uri(), width, 844)
    images = page.locator("figure.plot img")
    assert images.count() == 2
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        page.wait_for_function("e => e.complete && e.naturalWidth > 0", arg=img.element_handle())
        src, font, shown = _smallest_label_px(page, img)
        assert src.endswith("-narrow.svg") == (width == 390), src
        assert shown >= 11.0, (src, font, shown)
    assert problems == []
    page.close()


@pytest.mark.parametrize("width", [390, 1366])
def test_expand_all_and_collapse_all_outputs(site: Path, browser: Any, width: int) -> None:
    """Clicking "Expand all" opens every output of an evidence page, "Collapse all" closes every one, with no
    script and no network: each is a link to the page's twin with every <details> the other way."""
    pages = sorted(site.glob("runs/*/v*/*/index.html"))
    many = next(p for p in pages if p.read_text(encoding="utf-8").count('<details class="cell') > 12)
    few = next(p for p in pages if 0 < p.read_text(encoding="utf-8").count('<details class="cell') <= 12)
    states = "() => [...document.querySelectorAll('#outputs details.cell')].map(d => d.open)"
    for start in (many, few):
        page, problems = _open(browser, start.as_uri(), width, 844)
        n = len(page.evaluate(states))
        for label, want in (("Expand all", True), ("Collapse all", False), ("Expand all", True)):
            link = page.locator("#outputs p.toggle-all a", has_text=label)
            if link.count():  # the page already shows them so: the label is not a link
                link.click()
                page.wait_for_load_state("load")
            assert page.evaluate(states) == [want] * n, (start, label)
        assert problems == []
        page.close()


def test_a_forged_ledger_row_is_never_shown_as_a_result_without_the_chains_warning(
        tmp_path: Path, browser: Any) -> None:
    """The hostile audit: the last row's finding made a win and its hash recomputed, so the chain alone looks
    whole; only the run's verdict.json (the row it was entered as) shows the edit. Every page that shows the
    forged finding must say above it that the ledger does not verify, and `site` must say so too."""
    project = make_project(tmp_path / "proj")
    lines = project.ledger_path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[-1])
    assert (row["card"], row["finding"]) == ("bench-01", "incomplete")
    row["finding"] = "win"
    row["hash"] = ledger.row_hash(row)
    lines[-1] = json.dumps(row)
    project.ledger_path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    assert "results/ledger.jsonl does not verify (results/ledger.jsonl: seq 5 does not match the row recorded in " \
        f"results/bench-01/v1/{BENCH_RUN}/verdict.json); every page says so" in " ".join(result.output.split())

    site = tmp_path / "web"
    pages = ["index.html", "cards/bench-01/index.html", "ledger.html"]
    pages += [p.relative_to(site).as_posix() for p in sorted((site / "cards" / "bench-01").rglob("*.html"))]
    for rel in dict.fromkeys(pages):
        page, problems = _open(browser, (site / rel).as_uri(), *VIEWPORTS["phone"])
        assert problems == [], (rel, problems)
        warning = page.locator("p.chain.broken")
        assert warning.count() == 1 and warning.is_visible(), rel
        said = " ".join(warning.inner_text().split())
        assert "does not verify" in said and "seq 5 does not match" in said, (rel, said)
        if rel != "ledger.html":  # the first thing a reader sees, above any finding (the ledger's is above its table)
            assert page.locator("main").inner_text().lstrip().startswith("The ledger does not verify."), rel
        page.close()
    index, _ = _open(browser, (site / "index.html").as_uri(), *VIEWPORTS["laptop"])
    line = " ".join(index.locator("main tr", has_text="bench-01").first.inner_text().split())
    assert "non-result · win" in line, line  # what the forged row says is still shown, under the warning
    index.close()


_LINE_ORDER = """el => {
    const after = el.nextSibling, range = document.createRange(), xs = [];
    for (let i = 0; i < after.data.length; i++) {
        if (after.data[i].trim() === "") continue;
        range.setStart(after, i); range.setEnd(after, i + 1);
        xs.push(range.getBoundingClientRect().left);
    }
    return {text: after.data, xs: xs, linkRight: el.getBoundingClientRect().right};
}"""


def test_a_right_to_left_override_in_a_title_reverses_nothing_around_it(tmp_path: Path, browser: Any) -> None:
    """The hostile audit: a card title holding U+202E (and a stray U+2069 before it, which would close an isolate
    early) must not reverse the rest of its line: on the run's page the kicker reads "Evidence · <title> · v1",
    and " · v1" must stay after the title, left to right, as written."""
    project = make_project(tmp_path / "proj")
    card = project.root / "cards" / "emit-terminator.yaml"
    text = card.read_text(encoding="utf-8")
    title = "title: Emit a terminator and write nothing after it\n"
    assert title in text
    card.write_text(text.replace(title, 'title: "Win \\u2069\\u202e for B"\n'), encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    [run_page] = (tmp_path / "web").glob("runs/emit-terminator/*/20261101T090000Z-aaaa/index.html")
    page, problems = _open(browser, run_page.as_uri(), *VIEWPORTS["laptop"])
    link = page.locator("p.kicker a")
    assert "Win" in link.inner_text()
    seen = link.evaluate(_LINE_ORDER)
    assert seen["text"].strip().startswith("· v"), seen
    assert seen["xs"] == sorted(seen["xs"]), seen  # " · v1" left to right, not "1v · "
    assert seen["xs"][0] >= seen["linkRight"] - 0.5, seen  # and after the title, not inside it
    assert problems == []
    page.close()


def test_an_output_of_megabytes_is_cut_on_its_page_with_a_link_to_the_whole(tmp_path: Path, browser: Any) -> None:
    """Hostile audit: a 5 MB output was written whole into the run's page and its twin (8 MB each, five seconds to
    load here), markup-like text and all. The page shows its first 40,000 characters as text, says how many it
    leaves out, and links the raw file that holds the output whole."""
    from benchcard.publish._render import PAGE_OUTPUT_CHARS

    from ..helpers_project import copy_project
    from ..helpers_site import write_probe_run

    copy_project(tmp_path / "proj")
    project = Project((tmp_path / "proj").resolve())
    huge = ("</script><script>alert(1)</script> <!-- ]]> <img src=x onerror=alert(2)> " * 70_000)[:5_000_000]
    write_probe_run(project, "reordered-input", "20261103T090000Z-dddd", "evil/model",
                    [("ok", huge), ("ok", "short")])
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "web/runs/reordered-input/v1/20261103T090000Z-dddd"
    for name in ("index.html", "outputs-collapsed.html"):
        assert (folder / name).stat().st_size < 500_000, name
    rows = [json.loads(line) for line in (folder / "outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    [cell] = [row["cell"] for row in rows if row["text"] == huge]  # the raw file holds it whole
    page, problems = _open(browser, (folder / "index.html").as_uri(), *VIEWPORTS["laptop"])
    alerts: list[str] = []

    def dismiss(dialog: Any) -> None:
        alerts.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    shown = page.locator("details.cell pre.output").first.inner_text()
    assert shown == huge[:PAGE_OUTPUT_CHARS]
    note = page.locator("p.cut")
    assert note.count() == 1  # the short output is whole
    assert note.inner_text() == (f"Cut here for the page: {len(huge) - PAGE_OUTPUT_CHARS:,} more characters. The "
                                 f"whole output is in outputs.jsonl, cell {cell}.")
    assert note.locator("a").evaluate("a => a.href") == (folder / "outputs.jsonl").as_uri()
    assert page.locator("script").count() == 0
    page.reload()
    assert alerts == [] and problems == []
    page.close()


def test_a_script_that_reached_a_page_would_not_run(site: Path, browser: Any, tmp_path: Path) -> None:
    """Defence in depth (hostile audit): every page carries a Content-Security-Policy that runs scripts only from
    the site's own files. Were an escaping bug to let a run's output through as markup, neither an inline script,
    an event handler nor a javascript: link would run (each did on a page without it)."""
    source = (site / f"runs/bench-01/v1/{BENCH_RUN}/index.html").read_text(encoding="utf-8")
    assert source.count('<meta http-equiv="Content-Security-Policy"') == 1
    planted = ('<script>document.title = "ran"</script><img src="missing.png" onerror="document.title = \'ran\'">'
               '<a id="planted" href="javascript:document.title = \'ran\'">planted</a>')
    target = tmp_path / "page.html"
    target.write_text(source.replace("<main>", "<main>" + planted, 1), encoding="utf-8")
    page = browser.new_page()
    page.goto(target.as_uri(), wait_until="load")
    page.locator("#planted").click()
    page.wait_for_timeout(200)
    assert page.title() != "ran" and page.title().startswith("Run ")
    page.close()


@pytest.mark.parametrize("width", [390, 1366])
def test_a_gated_probes_runs_say_pass_or_below_under_their_score(tmp_path: Path, browser: Any, width: int) -> None:
    """In the browser, at phone and laptop width: each run's Score cell shows its gate's decision under the score,
    coloured by it, inside the screen; the Scoring section states the sealed min_score."""
    from ..helpers_site import gated_probe_site

    _, site = gated_probe_site(tmp_path)
    page, problems = _open(browser, (site / "cards/one-word-sentiment/index.html").as_uri(), width, 844)
    cells = page.locator("#results table.results tbody td[data-label='Score']")
    shown = [cells.nth(i).inner_text() for i in range(cells.count())]
    assert [" ".join(s.split()) for s in shown[:2]] == ["1.00 passed: 5 of 5 pass gate min_score 0.8: pass",
                                                        "0.60 partial: 3 of 5 pass gate min_score 0.8: below"], shown
    gates = page.locator("#results small.gate")
    colours = [gates.nth(i).evaluate("e => getComputedStyle(e).color") for i in range(2)]
    assert colours[0] != colours[1]  # pass and below told apart, not only in words
    assert all(gates.nth(i).evaluate("e => e.getBoundingClientRect().right") <= width for i in range(2))
    assert "min_score 0.8" in page.locator("#gate").inner_text()
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert problems == []
    page.close()


@pytest.mark.parametrize("width", [390, 1366])
def test_a_gated_probes_run_page_says_pass_or_below_in_its_verdict(tmp_path: Path, browser: Any, width: int) -> None:
    """In the browser, at phone and laptop width: a gated probe's evidence page gives the run's score against the
    sealed min_score in its Verdict section, coloured by the decision as on the probe page, inside the screen."""
    from ..helpers_site import GATED_BELOW, GATED_PASS, gated_probe_site

    _, site = gated_probe_site(tmp_path)
    colours = []
    for run, said in ((GATED_PASS, "score 1.00 · gate min_score 0.8: pass"),
                      (GATED_BELOW, "score 0.60 · gate min_score 0.8: below")):
        [path] = site.glob(f"runs/one-word-sentiment/v*/{run}/index.html")
        page, problems = _open(browser, path.as_uri(), width, 844)
        line = page.locator("#verdict p.gate-line")
        assert " ".join(line.inner_text().split()) == f"{said} (the sealed gate)"
        gate = page.locator("#verdict small.gate")
        colours.append(gate.evaluate("e => getComputedStyle(e).color"))
        assert line.evaluate("e => e.getBoundingClientRect().right") <= width
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
        page.locator("#verdict p.gate-line a").click()
        assert page.url.endswith("cards/one-word-sentiment/index.html#gate")
        assert "min_score 0.8" in page.locator("#gate").inner_text()
        assert problems == []
        page.close()
    assert colours[0] != colours[1]  # pass and below told apart, not only in words
