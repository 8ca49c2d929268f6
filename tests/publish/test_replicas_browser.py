"""The replication pages in headless Chromium: the run card's original-and-reruns table and figure load with no
error, fit a phone's screen, and the figure's labels stay readable; the ledger marks the replication rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..helpers_site import DEMO, REPLICA_ORIGINAL

pytestmark = pytest.mark.browser



@pytest.fixture
def site(replicas_site: Path) -> Path:
    return replicas_site


def _open(context: Any, url: str, width: int) -> tuple[Any, list[str]]:
    problems: list[str] = []
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.goto(url, wait_until="load")
    return page, problems


@pytest.mark.parametrize("width", [390, 1366])
def test_the_original_and_its_reruns_side_by_side(site: Path, browser: Any, width: int, tmp_path: Path) -> None:
    page, problems = _open(browser, (site / "cards" / DEMO / "index.html").as_uri(), width)
    section = page.locator(f"#replications-{REPLICA_ORIGINAL}")
    rows = section.locator("table.replications tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).locator("td").first.inner_text().split()[0] for i in range(3)] == [
        "original", "rerun", "transfer"]
    assert "replicated" in rows.nth(1).inner_text() and "not replicated" in rows.nth(2).inner_text()
    img = section.locator("figure.plot img")
    img.scroll_into_view_if_needed()
    page.wait_for_function("e => e.complete && e.naturalWidth > 0", arg=img.element_handle())
    src, shown = img.evaluate("e => [e.currentSrc, e.getBoundingClientRect().width]")
    assert src.endswith("-narrow.svg") == (width == 390), src
    assert shown > 300
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    section.screenshot(path=str(tmp_path / f"replications-{width}.png"))
    assert problems == []
    page.close()


def test_the_ledger_marks_replication_rows(site: Path, browser: Any) -> None:
    page, problems = _open(browser, (site / "ledger.html").as_uri(), 1366)
    marked = page.locator("table.ledger tbody tr.replica")
    assert marked.count() == 3
    link = marked.first.locator("small.replica a")
    link.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(f"cards/{DEMO}/index.html#run-{REPLICA_ORIGINAL}")
    assert problems == []
    page.close()
