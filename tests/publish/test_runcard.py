"""A run card's page (ab cards): every line of seed 004 in order, each run's verdict, tables and plots, the rigs of
its runs, and what it says when cells were cut off or none was scored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard._util.numfmt import DASH, fixed
from benchcard.card.load import load_card
from benchcard.cli import cli
from benchcard.project import Project

from ..helpers_project import AB_CARD, SEEDS, make_ab_project
from ..helpers_run import seal_card_at
from ..helpers_site import (
    BENCH_RUN,
    DEMO,
    DEMO_RUN,
    _demo_site,
    _Headings,
    _norm,
    _Page,
    headings,
    page,
)


def test_run_card_carries_what_seed_004_carries_in_order(empty_built: tuple[Project, Path]) -> None:
    _, out = empty_built
    built = _norm(page(out, "cards/bench-01/index.html").text)
    seed = next(SEEDS.glob("004_*.txt")).read_text(encoding="utf-8")
    position = 0
    # The seed's own layout glued some lines together; split them back into what the card carries.
    seed = seed.replace("Prompt sensitivityDoes", "Prompt sensitivity\nDoes").replace(
        "bounded: no inferred termsControls locked", "bounded: no inferred terms\nControls locked")
    for raw in seed.splitlines():
        line = _norm(raw)
        line = line[2:] if line.startswith("- ") else line
        if not line or line in ("Rig", "claude-fable-5-1 · effort high · Claude API"):
            continue
        found = built.find(line, position)
        assert found >= 0, f"seed 004 line not found in order: {line[:90]!r}"
        position = found + len(line)
    assert "Rig claude-fable-5-1 · effort high · Claude API" in built


def test_run_card_with_a_verdict(built: tuple[Project, Path]) -> None:
    _, out = built
    path = out / "cards/bench-01/index.html"
    p = page(out, "cards/bench-01/index.html")
    text = _norm(p.text)
    verdict = json.loads((out / "runs/bench-01/v1" / BENCH_RUN / "verdict.json").read_text(encoding="utf-8"))
    assert "Result: non-result · incomplete" in text  # one truncated cell and allow_failed 0
    assert verdict["why"] in text  # the verdict's own reasoning, word for word
    assert "1 cell(s) were cut off by the token limit" in text
    assert "field_recall rises — holds" in text
    assert "unsupported_values does not rise (margin 0.25) — does not hold" in text
    assert "abstains = 1 on excerpt-07 in every repetition — holds" in text
    recall = verdict["clauses"][0]
    assert (f"gap {recall['gap']:.3f} · CI [{recall['ci'][0]:.3f}, {recall['ci'][1]:.3f}]".replace("-", "−")
            in text)
    assert f"run term ±{recall['noise_floor']:.3f}" in text
    for clause in verdict["clauses"]:
        assert _norm(clause["why"]) in text
    tost_p = verdict["comparisons"][0]["equivalence"]["tost_p"]
    assert "Wilson interval [0.566, 1.000]" in text and f"TOST p {tost_p:.3f}" in text
    # the blind scorer notes: agreement, every disagreement, the graders' notes
    assert "Agreement of the human grades with the blind scorer" in text
    assert "Disagreements" in text and "grader read 'Buyer' as a party <b>name</b>" in text
    assert len(verdict["human"]["disagreements"]) == 3
    # the plot: an SVG file next to the page, referenced by a relative <img>
    imgs = [a for t, a in p.tags if t == "img"]
    assert len(imgs) == 2  # field_recall and the unsupported_values guard; `holds` has no paired gap
    for a in imgs:
        svg = (path.parent / str(a["src"])).resolve()
        assert svg.is_file() and svg.parent == path.parent
        body = svg.read_text(encoding="utf-8")
        assert body.lstrip().startswith("<?xml") and "<svg" in body and "excerpt-07" in body
        assert "baseline run-to-run spread ±" in body and "verdict's 95% CI" in body and "paired t" not in body
        assert "the verdict's calibrated interval" in (a["alt"] or "")
    guard = verdict["metrics"]["unsupported_values"]
    upper = fixed(guard["upper_one_sided"], missing=DASH)
    assert f"The guard is judged on the one-sided 95% upper bound, {upper}, against its margin." in text
    # the per-field table: 12 fixture rows for each clause metric
    source = path.read_text(encoding="utf-8")
    pivots = re.findall(r'<table class="pivot">(.*?)</table>', source, re.S)
    assert len(pivots) == 2  # the win rule's metrics, then the rest inside <details>
    first = pivots[0]
    for metric in ("field_recall", "unsupported_values", "abstains"):
        assert f"<code>{metric}</code>" in first
    assert first.split("<tbody>")[1].split("</tbody>")[0].count("<tr>") == 12
    assert "Δ" in first and "Δ is A − baseline" in text
    hrefs = p.links()
    assert "../../runs/bench-01/v1/20261130T151200Z-3f9a/table.csv" in hrefs
    assert "../../runs/bench-01/v1/20261130T151200Z-3f9a/index.html" in hrefs
    assert (out / "runs/bench-01/v1/20261130T151200Z-3f9a/table.csv").is_file()
    assert "fixtures/excerpt-07.txt" in hrefs and "keys/excerpt-07.json" in hrefs


def test_run_card_without_page_prose(empty_built: tuple[Project, Path]) -> None:
    """A card with no `page:` section: no prose headings, but everything the card itself says."""
    project, out = empty_built
    assert not load_card(project.card_path(DEMO), project).page
    rel = f"cards/{DEMO}/index.html"
    h = headings(out, rel)
    assert not h.empty
    titles = [t for _, t in h.headings]
    for absent in ("Fixture", "Controls locked", "What would count as evidence", "What would close the card",
                   "Most likely way to fool yourself", "Sources"):
        assert absent not in titles
    assert titles[:4] == ["DEMO-ANSWER-CUE · run card", "Rig", "Exact prompt", "Scoring rule, written before the run"]
    source = (out / rel).read_text(encoding="utf-8")
    assert 'id="sources"' not in source
    text = _norm(page(out, rel).text)
    assert "Not this card" not in text
    # the prompt, the variant's block, the card's own rubric as its scoring rule, the sealed win rule
    assert "Is this review positive or negative? Answer with one word. Review: {{FIXTURE}}" in text
    assert "--- VARIANT answer-cue adds only the block below, at the end of its line --- Answer:" in text
    rule = text.split("Scoring rule, written before the run")[1].split("Results")[0]
    assert rule.startswith(" Five rules, each scored pass or fail on the raw output")
    assert "It is the bare label and nothing else (surrounding whitespace aside)" in rule
    # copied without its seal: the rule is shown as written, never said to be sealed
    assert "As written (v4 is not sealed yet) — every clause must hold" in rule
    assert "rule.names_a_label does not fall (margin 0.2)" in rule
    assert "Not yet run" in text


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_fixture_with_no_scored_cell(tmp_path: Path) -> None:
    """Every cell of review-03 cut off: its row says so, its means are dashes, and nothing warns or shows nan."""
    def cell(fixture: str, variant: str, rep: int) -> tuple[str, str]:
        if fixture == "review-03":
            return "truncated", "This review is"
        return "ok", ("positive" if variant == "answer-cue" else "This review is positive.")

    out, source = _demo_site(tmp_path, cell)
    text = _norm(_Page(source).text)
    # ten truncated cells (2 variants × 5 repetitions) against allow_failed 2: not judged, shown for information
    assert "Result: non-result · incomplete" in text and "score rises —" in text
    assert "10 cell(s) were cut off by the token limit" in text
    assert not re.search(r"\bnan\b", source, re.I)
    pivot = re.findall(r'<table class="pivot">(.*?)</table>', source, re.S)[0]
    rows = _norm(_Page(pivot.split("<tbody>")[1].split("</tbody>")[0]).text)
    assert "review-03 no scored cell — — — — — —" in rows
    assert "review-04 0.400 1.000 0.600 1.000 1.000 0.000" in rows
    assert "mean 0.400 1.000 0.600 1.000 1.000 0.000" in _norm(_Page(pivot).text)
    assert ("— means no scored cell for that fixture and variant: every one was truncated or failed, so it has no "
            "mean and the mean row leaves it out. No scored cell at all: review-03.") in text
    assert "over 9 fixtures" in text and "Left out, with no scored cell in one arm or both: review-03." in text
    [evidence_page] = out.glob(f"runs/{DEMO}/v*/{DEMO_RUN}/index.html")
    evidence = _norm(page(out, str(evidence_page.relative_to(out))).text)
    assert "review-03 · plain · rep 0 · truncated · score —" in evidence


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_run_with_no_scored_cell_at_all(tmp_path: Path) -> None:
    """Every cell cut off: a plain sentence instead of a table of dashes, no plot, no nan, no warning."""
    _, source = _demo_site(tmp_path, lambda fixture, variant, rep: ("truncated", "This review is"))
    p = _Page(source)
    text = _norm(p.text)
    assert "Result: non-result · incomplete" in text
    assert "No scored cell: every cell of this run was truncated or failed, so there is no mean to show" in text
    assert '<table class="pivot">' not in source and not any(t == "img" for t, _ in p.tags)
    assert "means plain —, answer-cue — · baseline run means — ·" in text
    assert not re.search(r"\bnan\b", source, re.I)
    assert not _Headings(source).empty


def test_a_run_card_names_the_rigs_of_its_runs_and_lists_them(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs on other rigs than the card's: the header says which rigs the page publishes, and a table of
    contents links each run."""
    from benchcard.testing.fakeserver import FakeServer

    from ..helpers_run import KEY_ENV
    from ..helpers_run import ab_project as make

    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    with FakeServer() as server:
        server.configure({"default_reply": "red"})
        project = make(tmp_path / "proj", server.base_url, fixtures=3, repetitions=1)
        for model in ("m-one", "m-two"):
            assert CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--model", model]
                                      ).exit_code == 0
    assert CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "web")]).exit_code == 0
    html = (tmp_path / "web" / "cards" / "colour-ab" / "index.html").read_text(encoding="utf-8")
    assert "<dt>Runs published</dt><dd>" in html and "m-one · fake" in html and "m-two · fake" in html
    runs = sorted(p.name for p in (project.results_dir / "colour-ab" / "v1").iterdir())
    for run in runs:
        assert f'<li><a href="#run-{run}">Run {run}</a>' in html


@pytest.mark.parametrize("sealed", [True, False])
def test_the_judge_is_said_to_be_sealed_only_when_its_version_is(tmp_path: Path, sealed: bool) -> None:
    from ..helpers_judge import CARD_ID, judge_project

    project = judge_project(tmp_path / "proj", "http://127.0.0.1:9/v1", seal=sealed)
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = re.sub(r"<[^>]+>", "", (out / "cards" / CARD_ID / "index.html").read_text(encoding="utf-8"))
    if sealed:
        assert "The judge, as sealed" in text and "not sealed yet" not in text
        assert "Published in full, as sealed (seal of v1)." in text
    else:
        assert "The judge, as written: v1 is not sealed yet" in text and "as sealed" not in text.lower()
        assert "Published in full, as written (v1 is not sealed yet)." in text


def test_a_fixture_named_with_a_hash_or_a_percent_is_linked_to_its_own_file(tmp_path: Path) -> None:
    """Hostile audit (round 12b): the card page linked each fixture's published text by its file name as written,
    so `issue #12.txt` was linked as `fixtures/issue #12.txt`, which a browser reads as the file `issue ` and the
    fragment `12.txt` (not found), and `50%20off.txt` as `50 off.txt`. Every link to a published file is
    percent-encoded, so that a browser opens the file it names."""
    import urllib.parse

    from benchcard.publish.build import build_site

    from ..helpers_verdict import AB_CARD, make_project

    fixtures = ["issue #12", "50%20off", "ex-03", "ex-04", "ex-05", "ex-06"]
    project = make_project(tmp_path / "proj", AB_CARD, fixtures)
    build_site(project, tmp_path / "site")
    card_page = tmp_path / "site" / "cards" / "extract-ab" / "index.html"
    links = [link for link in _Page(card_page.read_text(encoding="utf-8")).links() if "fixtures/" in link]
    opened = [card_page.parent / urllib.parse.unquote(urllib.parse.urlsplit(link).path) for link in links]
    assert sorted(p.name for p in opened) == sorted(f"{f}.txt" for f in fixtures), links
    assert all(p.is_file() for p in opened), links


def test_the_prompt_says_where_the_variant_goes_past_an_escaped_variant_before_it(tmp_path: Path) -> None:
    """`\\{{variant}}` is text the model gets as `{{variant}}`, not the slot: the page places the variant's block by
    the slot itself, here before the item, where it said 'at the end of its line' from the escaped one."""
    user = "Name the colour; never write \\{{variant}}\n    {{variant}}<item>{{fixture}}</item>"
    card = AB_CARD.replace("Name the colour.\n    {{variant}}<item>{{fixture}}</item>", user)
    assert card != AB_CARD
    make_ab_project(tmp_path, card)
    built = CliRunner().invoke(cli, ["-C", str(tmp_path), "site", "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output
    text = _norm(page(tmp_path / "site", "cards/tiny-ab/index.html").text)
    assert "Name the colour; never write {{variant}} <item>{{FIXTURE}}</item>" in text
    assert "--- VARIANT A adds only the block below, immediately before the item --- Please." in text
    assert "at the end of its line" not in text


def test_a_version_sealed_before_the_escape_shows_its_prompt_as_it_is_sent(tmp_path: Path) -> None:
    """A version sealed before the escape reads `C:\\{{fixture}}` as `C:\\` and the fixture (docs/cards.md): its page
    shows the fixture's place there, as the model gets it."""
    card = AB_CARD.replace("<item>{{fixture}}</item>", "Open C:\\{{fixture}}")
    assert card != AB_CARD
    project = Project(Path(make_ab_project(tmp_path, card)))
    seal_card_at(project, "tiny-ab", "2026-12-01T10:00:00Z", escapes=False)
    built = CliRunner().invoke(cli, ["-C", str(tmp_path), "site", "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output
    text = _norm(page(tmp_path / "site", "cards/tiny-ab/index.html").text)
    assert "Name the colour. Open C:\\{{FIXTURE}}" in text
