"""A run's evidence page and raw files: unblinded only after the verdict (its sealed plan never copied before), a
cut-off cell named as such, human grades shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from benchcard._util.numfmt import DASH, fixed
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.publish._evidence import _figures
from benchcard.publish.build import build_site
from benchcard.records.rows import OutputRow, Usage

from ..helpers_project import copy_project
from ..helpers_site import (
    BENCH_RUN,
    DEMO,
    DEMO_RUN,
    _demo_site,
    _norm,
    _Page,
    page,
    write_bench_run,
)

OLD_TRUNCATION_WORDS = ("failed in transport or cut off", "not scored (transport)", "cut off or failed in transport")


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
    # nor do the request's figures, which follow the prompt's length (issue 25.8): withheld until the verdict
    assert "tokens in / out / reasoning" not in blind and "tokens out / reasoning" in blind
    assert blind.count("tokens in, cost, latency, attempts withheld until the verdict") == 120
    assert not re.search(r"\blatency \d", blind) and not re.search(r"\battempts \d", blind)
    assert "tokens in / out / reasoning" in text
    assert not (site / "runs/bench-01/v1" / BENCH_RUN / "sealed").exists()
    assert (site / "runs/bench-01/v1" / BENCH_RUN / "outputs.jsonl").is_file()
    card = _norm(page(site, "cards/bench-01/index.html").text)
    assert "awaiting its verdict" in card


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
            f"case for the claim: gaps {fixed(low, missing=DASH)} to {fixed(high, missing=DASH)}.") in card
    for html_page in out.rglob("*.html"):
        text = _norm(_Page(html_page.read_text(encoding="utf-8")).text)
        for old in OLD_TRUNCATION_WORDS:
            assert old not in text, (html_page, old)
        assert "a truncated cell was cut off by the token limit (max_tokens). Both are" not in text


def test_grades_without_grader_notes_build_and_show(tmp_path: Path) -> None:
    """A run graded by a human who wrote no note: the site builds and says there are no grader notes."""
    from ..helpers_verdict import auto_scores, make_project, read_sheet, strong_run, write_sheet

    project = make_project(tmp_path / "proj")
    run_dir = strong_run(project)
    runner = CliRunner()
    sheet = tmp_path / "sheet.csv"
    exported = runner.invoke(cli, ["-C", str(project.root), "blind-sheet", run_dir.name, "--out", str(sheet)])
    assert exported.exit_code == 0
    auto = auto_scores(run_dir)
    rows = read_sheet(sheet)
    for r in rows:
        r["grade"] = "pass" if auto[int(r["row"])] == 1.0 else "fail"
    write_sheet(sheet, rows)
    assert runner.invoke(cli, ["-C", str(project.root), "grade", run_dir.name, str(sheet)]).exit_code == 0
    assert runner.invoke(cli, ["-C", str(project.root), "verdict", run_dir.name]).exit_code == 0
    result = runner.invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    card_page = next((tmp_path / "web" / "cards").glob("*/index.html")).read_text(encoding="utf-8")
    assert "Grader notes" in card_page and "Agreement of the human grades" in card_page
    assert "None." in card_page



def test_a_cells_prompt_cache_and_a_cost_that_is_an_upper_bound_are_shown_once_unblinded() -> None:
    """A cell that read input from the prompt cache says how many tokens came from and went to it, and its cost
    reads `≤ $…` when it priced them in full; while the run is blind both stay withheld with the request's other
    figures (they follow the prompt, whose length differs by variant)."""
    row = OutputRow(cell="c1", fixture="f1", status="ok", text="red", usage=Usage.of(2048, 7, cached=1920),
                    cost=0.0041, cost_upper_bound=True)
    shown = dict(_figures(row, blind=False))
    assert shown["tokens in from / to the prompt cache"] == "1920 / 0"
    assert shown["cost"] == "≤ $0.0041"
    blind = dict(_figures(row, blind=True))
    assert "tokens in from / to the prompt cache" not in blind and "cost" not in blind
    plain = dict(_figures(OutputRow(cell="c1", fixture="f1", status="ok", cost=0.0041), blind=False))
    assert plain["cost"] == "$0.0041" and "tokens in from / to the prompt cache" not in plain
