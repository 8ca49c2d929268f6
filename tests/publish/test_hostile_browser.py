"""Hostile strings from every source a page shows, built into a site by the real commands against the fake server
and opened in headless Chromium: each shows as text and none runs (hostile audit, round 20)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.publish._render import environment
from benchcard.records.rows import rig_line
from benchcard.testing.cards import COLOUR_AB
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import KEY_ENV, seal_card, write_config
from ..helpers_site import open_page

pytestmark = pytest.mark.browser

HOSTILE = {  # what each string would do unescaped: close an attribute or a script, start an element, run a link
    "title": "T\"'><svg onload=\"window.pwned=1\"></svg> $x^$y",
    "note": "<img src=x onerror=\"window.pwned=2\"> javascript:window.pwned=3",
    "fixture": "</script><img src=x onerror=\"window.pwned=4\"><script>window.pwned=5</script>",
    "reply": "</script><img src=x onerror=\"window.pwned=6\">\"'><svg onload=\"window.pwned=7\"></svg> $\\frac{a}{b}$",
    "model": "</title><img src=x onerror=\"window.pwned=8\">$x^$y",
    "why": "<img src=x onerror=\"window.pwned=9\"> \"quoted\"",
}


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A judged run (on a model named as a script) and a run set aside with a why that is markup, of a card whose
    title, history note, source link and fixtures are markup too, the fake server replying markup: the site.
    Built before the browser opens (Playwright's sync API leaves no room for asyncio.run beside it)."""
    tmp_path = tmp_path_factory.mktemp("hostile")
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    card = COLOUR_AB.format(provider="fake", reps=1, effort="null", max_tokens=50)
    card = card.replace("title: Does saying please change the colour named?", f"title: {json.dumps(HOSTILE['title'])}")
    card = card.replace("note: Initial version.}", f"note: {json.dumps(HOSTILE['note'])}}}")
    card += "page: {sources: [{url: 'javascript:window.pwned=10', title: '<b>bold</b>'}]}\n"
    (root / "cards" / "colour-ab.yaml").write_text(card, encoding="utf-8")
    (root / "fixtures" / "colour-ab").mkdir(parents=True)
    for i in range(2):
        (root / "fixtures" / "colour-ab" / f"item-{i}.txt").write_text(HOSTILE["fixture"] + str(i), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp, FakeServer() as server:
        mp.setenv(KEY_ENV, "sk-test-0000")
        write_config(root, server.base_url)
        seal_card(root, "colour-ab")
        server.configure({"default_reply": HOSTILE["reply"]})

        def bc(*args: str) -> Any:
            result = CliRunner().invoke(cli, ["-C", str(root), *args])
            assert result.exit_code == 0, result.output
            return result

        judged = json.loads(bc("run", "colour-ab", "--model", HOSTILE["model"], "--json").stdout)["runs"][0]["run"]
        bc("verdict", judged)
        aside = json.loads(bc("run", "colour-ab", "--json").stdout)["runs"][0]["run"]
        bc("set-aside", aside, "--why", HOSTILE["why"])
        bc("site", "--out", str(tmp_path / "site"))
    return tmp_path / "site"


def test_hostile_strings_from_every_source_show_as_text_and_never_run(hostile_site: Path, browser: Any) -> None:
    """On every page, none of the strings makes an element or a link of its own, none runs (no dialog, no global
    set, no error), and each reads as the text it is. An escaping bug is seen here even though the pages'
    Content-Security-Policy would keep its script from running: the element it made is counted."""
    pages = sorted(hostile_site.rglob("*.html"))
    assert len(pages) >= 5
    shown: list[str] = []
    alerts: list[str] = []

    def dismiss(dialog: Any) -> None:
        alerts.append(dialog.message)
        dialog.dismiss()

    browser.on("dialog", dismiss)  # the context's: a dialog opened while the page loads is counted too
    for path in pages:
        page, problems = open_page(browser, path.as_uri(), 1366, 900)
        page.wait_for_timeout(100)
        made = page.evaluate("""() => [
            typeof window.pwned,
            document.querySelectorAll('img[onerror], svg[onload], script:not([src]):not([type])').length,
            [...document.querySelectorAll('a[href]')].filter(a => /^\\s*javascript:/i.test(a.getAttribute('href')))
                .length]""")
        assert made == ["undefined", 0, 0] and alerts == [] and problems == [], (path, made, alerts, problems)
        shown.append(page.evaluate("() => document.body.textContent"))
        page.close()
    browser.remove_listener("dialog", dismiss)
    text = "\n".join(shown)
    for what in ("title", "reply", "model", "why", "note"):
        assert HOSTILE[what] in text, what
    assert json.dumps(HOSTILE["fixture"])[1:-1] in text  # in the request body a page prints as JSON


def test_a_provider_after_a_model_name_holding_an_override_reads_in_its_own_order(browser: Any) -> None:
    """A model named with U+202E (right-to-left override) is kept to its own part of the rig line: the provider
    after it reads left to right, its first letter left of its last. One `<bdi>` around the whole line (as
    `{{ line }}` alone gives) let the override reverse "Claude API" too, which this measures."""
    line = rig_line("evil\u202emodel", "high", None, "Claude API")
    html = environment().from_string("<p id=rig>{{ line|rig }}</p><p id=whole>{{ line }}</p>").render(line=line)
    page = browser.new_page()
    page.set_content(f"<!doctype html><meta charset=utf-8><body style='font: 16px monospace'>{html}</body>")
    where = """id => {
        const walker = document.createTreeWalker(document.getElementById(id), NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const at = node.data.indexOf('Claude API');
            if (at < 0) continue;
            const x = i => { const r = document.createRange(); r.setStart(node, at + i); r.setEnd(node, at + i + 1);
                             return r.getBoundingClientRect().left; };
            return [x(0), x(9)];
        }
        return null; }"""
    first, last = page.evaluate(where, "rig")
    assert first < last, (first, last)
    first, last = page.evaluate(where, "whole")
    assert first > last, (first, last)  # the measure sees a reversed provider: one <bdi> around the line
    page.close()
