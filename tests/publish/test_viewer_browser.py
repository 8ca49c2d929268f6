"""`benchcard site --serve` in a real browser (headless Debian Chromium via Playwright, as test_site_browser.py):
the side-by-side page over http://127.0.0.1, its filters by fixture, variant and score, blind before the verdict,
and the page a reload shows once a verdict has landed. No request may leave 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchcard.project import Project
from benchcard.publish.serve import Viewer, viewing
from benchcard.verdict.give import give_verdict

from ..helpers_site import BENCH_RUN, make_project, open_page, write_bench_run
from ..helpers_wait import wait_until

pytestmark = pytest.mark.browser

BLIND_RUN = "20261201T090000Z-b1d0"
SERVED = True  # conftest's browser: online, for the viewer at http://127.0.0.1


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, Viewer]]:
    project = make_project(tmp_path_factory.mktemp("viewer") / "proj")
    write_bench_run(project, BLIND_RUN, verdict=False)
    with viewing(project, port=0, say=lambda _: None, interval=0.1) as viewer:
        yield project, viewer


def _open(context: Any, url: str, width: int = 1366, height: int = 900) -> tuple[Any, list[str]]:
    """A page the viewer serves: its requests stay on the viewer's loopback address."""
    return open_page(context, url, width, height, local=("http://127.0.0.1:", "data:", "about:"))


def _visible(page: Any, selector: str) -> int:
    return int(page.evaluate("s => [...document.querySelectorAll(s)].filter(e => e.offsetParent !== null).length",
                             selector))


def _shoot(page: Any, name: str) -> None:
    """A screenshot into $BENCHCARD_SCREENSHOTS for a person to look at, only when it is set: nobody looks at one
    left in a test's tmp folder, and a page screenshot asserts nothing."""
    target = os.environ.get("BENCHCARD_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(target) / name))


def test_filters_by_fixture_variant_and_score(served: tuple[Project, Viewer], browser: Any) -> None:
    _, viewer = served
    page, problems = _open(browser, f"{viewer.url}runs/bench-01/v1/{BENCH_RUN}/side-by-side.html")
    assert page.locator("#matrix thead th").all_inner_texts() == ["Fixture", "baseline", "A"]
    assert page.locator("#shown").inner_text() == "showing 120 of 120 outputs"
    _shoot(page, "side-by-side-1366.png")
    page.select_option("#filter-fixture", "excerpt-03")
    assert _visible(page, "#matrix tbody tr") == 1 and _visible(page, ".output") == 10
    assert "<script>alert(1)</script>" in page.locator("tr[data-fixture='excerpt-03']").inner_text()  # as text
    page.locator("input[data-variant-toggle][value='A']").uncheck()
    assert _visible(page, "[data-variant-col='A']") == 0 and _visible(page, ".output") == 5
    assert page.locator("#shown").inner_text() == "showing 5 of 120 outputs"
    page.select_option("#filter-fixture", "")
    page.select_option("#filter-score", "unscored")  # the one cut-off cell, a baseline cell of excerpt-05
    assert _visible(page, "#matrix tbody tr") == 1 and _visible(page, ".output") == 1
    assert "truncated" in page.locator("tr[data-fixture='excerpt-05'] .output.status-truncated").inner_text()
    page.locator("input[data-variant-toggle][value='A']").check()
    page.select_option("#filter-score", "below")
    shown = int(page.locator("#shown").inner_text().split()[1])
    assert 0 < shown < 120 and shown == _visible(page, ".output[data-score-class='below']")
    assert problems == []
    page.close()


def test_blind_before_the_verdict_then_labelled_after_a_reload(served: tuple[Project, Viewer], browser: Any) -> None:
    project, viewer = served
    page, problems = _open(browser, f"{viewer.url}view.html", 390, 844)
    page.locator("a", has_text=BLIND_RUN).click()
    page.wait_for_load_state("load")
    assert page.url.endswith(f"/runs/bench-01/v1/{BLIND_RUN}/side-by-side.html")
    assert page.locator("#matrix thead th").all_inner_texts() == ["Fixture", "outputs (blind)"]
    assert page.locator("input[data-variant-toggle]").count() == 0
    assert "rep " not in page.locator("#matrix").inner_text()
    page.select_option("#filter-fixture", "excerpt-07")
    assert _visible(page, ".output") == 10
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0  # a phone: no sideways page
    _shoot(page, "side-by-side-blind-390.png")
    give_verdict(project, project.run_dir("bench-01", 1, BLIND_RUN), n_resamples=200)

    def rebuilt() -> bool:  # a reload shows the rebuilt page once the watcher has seen the verdict's files settle
        page.reload(wait_until="load")
        return bool(page.locator("#matrix thead th").all_inner_texts() == ["Fixture", "baseline", "A"])

    wait_until(rebuilt, 180, "the viewer to show the page rebuilt after the verdict", every=0.1)
    assert page.locator("input[data-variant-toggle]").count() == 2 and "rep 0" in page.locator("#matrix").inner_text()
    assert problems == []
    page.close()
