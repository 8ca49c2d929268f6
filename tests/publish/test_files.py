"""What `benchcard site` publishes: regular files inside the project only, and nothing a browser would run."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..helpers_cli import bc
from ..helpers_project import AB_CARD, make_ab_project
from ..helpers_site import BENCH_RUN, make_project

SECRET = "OPENAI_API_KEY=sk-live-do-not-publish-4242"


def _site_text(out: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in out.rglob("*") if p.is_file())


def test_links_in_a_run_folder_or_keys_publish_nothing_outside(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / ".env").write_text(SECRET + "\n", encoding="utf-8")
    run = project.run_dir("bench-01", 1, BENCH_RUN)
    (run / "grades" / "leak.csv").symlink_to(outside / ".env")
    (run / "sealed" / "leak.jsonl").symlink_to(outside / ".env")
    (run / "table.csv").unlink()
    (run / "table.csv").symlink_to(outside / ".env")
    (run / "sealed" / "up").symlink_to(project.root)  # an ancestor: the site would copy itself forever
    (run / "grades" / "home").symlink_to(outside)
    key = project.root / "keys" / "bench-01" / "excerpt-01.json"
    key.unlink()
    key.symlink_to(outside / ".env")
    result = bc(project.root, "site", "--out", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    site = tmp_path / "site"
    assert "sk-live-do-not-publish" not in _site_text(site)
    published = site / "runs" if (site / "runs").is_dir() else site
    names = {p.name for p in published.rglob("*")}
    assert not names & {"leak.csv", "leak.jsonl", "up", "home", ".env"}
    assert not any(p.is_symlink() for p in site.rglob("*"))
    assert sum(1 for _ in site.rglob("*")) < 2000  # no copy of the project inside itself


def test_a_link_inside_the_run_folder_is_still_published(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    run = project.run_dir("bench-01", 1, BENCH_RUN)
    (run / "grades" / "again.csv").symlink_to(run / "grades" / "human.csv")
    assert bc(project.root, "site", "--out", str(tmp_path / "site")).exit_code == 0
    copies = list((tmp_path / "site").rglob("again.csv"))
    assert len(copies) == 1 and copies[0].read_bytes() == (run / "grades" / "human.csv").read_bytes()


def test_html_and_svg_files_are_published_as_text(tmp_path: Path) -> None:
    root = make_ab_project(tmp_path / "proj")
    (root / "cards" / "tiny-ab.yaml").write_text(AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/tiny-ab/*"),
                                                 encoding="utf-8")
    page = "<html><script>alert(document.cookie)</script></html>\n"
    (root / "fixtures" / "tiny-ab" / "item-05.html").write_text(page, encoding="utf-8")
    (root / "fixtures" / "tiny-ab" / "item-06.svg").write_text("<svg onload='alert(1)'/>\n", encoding="utf-8")
    result = bc(root, "site", "--out", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    folder = tmp_path / "site" / "cards" / "tiny-ab" / "fixtures"
    assert sorted(os.listdir(folder)) == ["item-01.txt", "item-02.txt", "item-03.txt", "item-04.txt",
                                          "item-05.html.txt", "item-06.svg.txt"]
    assert (folder / "item-05.html.txt").read_text(encoding="utf-8") == page
    card_page = (tmp_path / "site" / "cards" / "tiny-ab" / "index.html").read_text(encoding="utf-8")
    assert 'href="fixtures/item-05.html.txt"' in card_page and 'href="fixtures/item-05.html"' not in card_page


def test_a_fixture_published_with_txt_onto_another_fixtures_name_gets_its_own_file(tmp_path: Path) -> None:
    """Hostile audit (hostile22): fixtures p.html and p.html.txt (ids p and p.html) were both published as
    fixtures/p.html.txt, so the card page's link for p opened p.html.txt's text. The file already named so keeps
    its name; the one that gains .txt gains a digest before it."""
    root = make_ab_project(tmp_path / "proj")
    (root / "cards" / "tiny-ab.yaml").write_text(AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/tiny-ab/*"),
                                                 encoding="utf-8")
    (root / "fixtures" / "tiny-ab" / "p.html").write_text("<p>the page</p>\n", encoding="utf-8")
    (root / "fixtures" / "tiny-ab" / "p.html.txt").write_text("the text\n", encoding="utf-8")
    result = bc(root, "site", "--out", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    card = tmp_path / "site" / "cards" / "tiny-ab"
    rows = re.findall(r'<tr><td><code>([^<]+)</code></td><td><a href="(fixtures/[^"]+)">text</a>',
                      (card / "index.html").read_text(encoding="utf-8"))
    assert dict(rows)["p"] == "fixtures/p.html-6d3b233d.txt" and dict(rows)["p.html"] == "fixtures/p.html.txt"
    assert (card / "fixtures" / "p.html-6d3b233d.txt").read_text(encoding="utf-8") == "<p>the page</p>\n"
    assert (card / "fixtures" / "p.html.txt").read_text(encoding="utf-8") == "the text\n"
