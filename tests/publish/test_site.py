"""The site as a whole (pages built from hand-written run folders, tests/helpers_site.py): superseded versions
never merged, every string escaped, no heading over nothing. Each page's own tests are in its module's file."""

from __future__ import annotations

import json
from pathlib import Path

from benchcard.project import Project
from benchcard.publish.build import build_site

from ..helpers_project import copy_project
from ..helpers_site import (
    XSS,
    _norm,
    _Page,
    headings,
    page,
)


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
    assert "0.00 failed: 0 of 1 pass" in ows and "$0" in ows and "392 ms" in ows and "run #19 →" in ows
    assert "No model has been run against v3 yet" in ows
    run19 = _norm(page(out, "runs/one-word-sentiment/v2/19/index.html").text)
    assert "neutral" in run19
    # its recorded status is the scorer's word: the cell answered (ok), under "a failed cell got no answer"
    assert "19 · one-word-sentiment · ok · score 0.00" in run19 and "published as failed: 0 of 1 pass" in run19
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


def test_no_page_has_a_heading_over_nothing(empty_built: tuple[Project, Path], built: tuple[Project, Path]) -> None:
    for _, out in (empty_built, built):
        for html_file in sorted(out.rglob("*.html")):
            rel = str(html_file.relative_to(out))
            assert not headings(out, rel).empty, rel


