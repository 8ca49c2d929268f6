"""The viewer's side-by-side page of a run: blind before the verdict (one column, no variant or repetition), a
column per variant after it (the baseline first), outputs escaped; and only `site --serve` builds it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchcard.project import Project
from benchcard.publish._matrix import matrix_context, score_class
from benchcard.publish._runs import read_runs
from benchcard.publish.build import build_site

from ..helpers_site import BENCH_RUN, make_project, page, write_bench_run

BLIND_RUN = "20261201T090000Z-b1d0"


@pytest.fixture(scope="module")
def viewer_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    root = tmp_path_factory.mktemp("viewer")
    project = make_project(root / "proj")
    write_bench_run(project, BLIND_RUN, verdict=False)
    build_site(project, root / "site", viewer=True)
    return project, root / "site"


def _hrefs(parsed: Any) -> list[str | None]:
    return [attrs.get("href") for tag, attrs in parsed.tags if tag == "a"]


def _matrix(out: Path, run: str) -> str:
    return (out / "runs" / "bench-01" / "v1" / run / "side-by-side.html").read_text(encoding="utf-8")


def test_after_the_verdict_a_column_per_variant_baseline_first(viewer_site: tuple[Project, Path]) -> None:
    project, out = viewer_site
    [run] = [r for r in read_runs(project, []) if r.run_id == BENCH_RUN]
    context = matrix_context(run, None)
    assert context["unblinded"] and context["columns"] == ["baseline", "A"]
    assert context["outputs"] == 120 and len(context["rows"]) == 12
    fixture, cells = context["rows"][4]
    assert fixture == "excerpt-05" and [c for c, _ in cells] == ["baseline", "A"]
    assert [o["repetition"] for o in cells[0][1]] == [0, 1, 2, 3, 4]
    assert cells[0][1][4]["score_class"] == "unscored"  # the cut-off cell
    text = page(out, f"runs/bench-01/v1/{BENCH_RUN}/side-by-side.html").text
    assert "rep 4 · truncated · score —" in text
    source = _matrix(out, BENCH_RUN)
    assert source.count('data-variant-toggle') == 2 and '<script src="../../../../matrix.js" defer>' in source
    assert "<script>alert(1)</script>" not in source  # a model's output is text, never markup
    # each fixture's input, as the card publishes it, beside its id (no run needed to show it: nothing unblinds)
    assert source.count('<details class="fixture-input">') == 12
    excerpt = (project.root / "fixtures" / "bench-01" / "excerpt-01.txt").read_text(encoding="utf-8")
    assert excerpt.splitlines()[0] in text


def test_before_the_verdict_the_page_is_blind(viewer_site: tuple[Project, Path]) -> None:
    _, out = viewer_site
    source = _matrix(out, BLIND_RUN)
    text = page(out, f"runs/bench-01/v1/{BLIND_RUN}/side-by-side.html").text
    assert "data-variant-toggle" not in source and 'data-variant-col="outputs"' in source
    assert "outputs (blind)" in text and "still blind" in text
    assert " rep " not in text and "baseline" not in source.split("<table")[1]
    assert (out / "runs" / "bench-01" / "v1" / BLIND_RUN / "side-by-side.html").is_file()
    cells = [line.split("<code>")[1].split("</code>")[0] for line in source.splitlines()
             if line.startswith('<p class="output-head">') and "excerpt" not in line]
    assert cells[:10] == sorted(cells[:10])  # one fixture's outputs in the order of their opaque ids


def test_the_viewer_lists_runs_and_links_each_run_page(viewer_site: tuple[Project, Path]) -> None:
    _, out = viewer_site
    view = page(out, "view.html")
    assert f"bench-01 v1 · {BLIND_RUN} · blind (no verdict yet)" in view.text
    assert f"runs/bench-01/v1/{BENCH_RUN}/side-by-side.html" in _hrefs(view)
    assert "side-by-side.html" in _hrefs(page(out, f"runs/bench-01/v1/{BENCH_RUN}/index.html"))
    assert "view.html" in _hrefs(page(out, "index.html")) and (out / "matrix.js").is_file()


def test_the_published_site_has_no_viewer_page_and_no_script(tmp_path: Path,
                                                            viewer_site: tuple[Project, Path]) -> None:
    project, _ = viewer_site
    out = tmp_path / "site"
    build_site(project, out)
    assert not (out / "matrix.js").exists() and not (out / "view.html").exists()
    assert not list(out.rglob("side-by-side.html"))
    assert all("<script src" not in p.read_text(encoding="utf-8") for p in out.rglob("*.html"))


@pytest.mark.parametrize(("status", "score", "kind"), [
    ("ok", 1.0, "pass"), ("ok", 0.5, "below"), ("ok", 0.0, "below"), ("ok", None, "unscored"),
    ("truncated", None, "unscored"), ("failed", None, "unscored"),
])
def test_score_classes(status: str, score: float | None, kind: str) -> None:
    assert score_class(status, score) == kind


def test_an_output_of_megabytes_is_cut_side_by_side_with_a_link_to_the_whole(tmp_path: Path) -> None:
    """Hostile audit: the side-by-side page carried a 5 MB output whole; it shows what the run's page shows."""
    from benchcard.publish._render import PAGE_OUTPUT_CHARS

    from ..helpers_project import copy_project
    from ..helpers_site import write_probe_run

    copy_project(tmp_path / "proj")
    project = Project((tmp_path / "proj").resolve())
    huge = "x</pre>" * 1_000_000
    write_probe_run(project, "reordered-input", "20261103T090000Z-dddd", "evil/model", [("ok", huge)])
    build_site(project, tmp_path / "site", viewer=True)
    rel = "runs/reordered-input/v1/20261103T090000Z-dddd/side-by-side.html"
    assert (tmp_path / "site" / rel).stat().st_size < 500_000
    [row] = (tmp_path / "site" / rel).parent.joinpath("outputs.jsonl").read_text(encoding="utf-8").splitlines()
    cell = json.loads(row)["cell"]
    parsed = page(tmp_path / "site", rel)
    assert huge[:PAGE_OUTPUT_CHARS] in parsed.text and huge[:PAGE_OUTPUT_CHARS + 7] not in parsed.text
    assert (f"Cut here for the page: {len(huge) - PAGE_OUTPUT_CHARS:,} more characters. The whole output is in "
            f"outputs.jsonl, cell {cell}.") in parsed.text
    assert "outputs.jsonl" in _hrefs(parsed)


def test_a_reply_or_a_model_holding_a_bidi_override_reorders_only_itself(tmp_path: Path) -> None:
    """Hostile audit (wire20): a reply starting with a stray pop and a right-to-left override, and a model named
    with one, stay in their own block or isolate on every page that shows them: the reply in its `<pre>` (a block,
    whose bidi reaches nothing outside it), the model in a `<bdi>`; never bare among the page's text."""
    from ..helpers_project import copy_project
    from ..helpers_site import write_probe_run

    copy_project(tmp_path / "proj")
    project = Project((tmp_path / "proj").resolve())
    reply = "\u2069\u202eWin for B"
    write_probe_run(project, "reordered-input", "20261103T090000Z-dddd", "evil\u202e/model", [("ok", reply)])
    build_site(project, tmp_path / "site", viewer=True)
    run = tmp_path / "site/runs/reordered-input/v1/20261103T090000Z-dddd"
    for name in ("index.html", "side-by-side.html"):
        html = (run / name).read_text(encoding="utf-8")
        pres = [m.group(1) for m in re.finditer(r"<pre[^>]*>(.*?)</pre>", html, re.S)]
        assert html.count(reply) == sum(p.count(reply) for p in pres) >= 1, name
    for html_file in tmp_path.joinpath("site").rglob("*.html"):
        html = html_file.read_text(encoding="utf-8")
        bare = re.sub(r"<bdi>.*?</bdi>|<pre[^>]*>.*?</pre>", "", html, flags=re.S)
        assert "\u202e" not in bare, html_file
