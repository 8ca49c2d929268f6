"""The plots of a run's page: dots coloured by whether the variant did better on the metric's own direction."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchcard.publish._judgedby import ClauseRef
from benchcard.publish._plotband import PAIRED_T, Band
from benchcard.publish._plots import draw_plots, guard_line, x_span
from benchcard.publish._render import environment
from benchcard.publish._runs import Run
from benchcard.records.ledgerrow import RowCounts
from benchcard.records.verdictfigures import Bootstrap, ClauseFigures, SignFlip
from benchcard.records.verdictfile import AbVerdict

GOOD, BAD = "#1f4bb0", "#b3261e"


def _run(tmp_path: Path, metric: str, test: str, base: list[float], var: list[float], reps: int = 2) -> Run:
    rows = [{"fixture": f"f{i}", "variant": v, "repetition": r, "metric": metric, "value": x + 0.01 * r}
            for i, (b, a) in enumerate(zip(base, var, strict=True)) for v, x in (("baseline", b), ("A", a))
            for r in range(reps)]
    return Run(card="c", version=1, run_id="r1", folder=tmp_path, verdict_file=_verdict(metric, test),
               table=pd.DataFrame(rows))


def _verdict(metric: str, test: str) -> AbVerdict:
    """A verdict that judged A against the baseline by one clause and kept no figures of it (so the plots draw
    the paired t interval, and say so)."""
    clause = ClauseFigures(variant="A", metric=metric, test=test, fixture=None, margin=None, text="", holds=False,
                           why="")
    return AbVerdict(run="r1", card="c", version=1, kind="ab", rig="", seal_root=None, evidence="", finding="",
                     outcome="", summary="", why="", baseline="baseline", variants=["A"], alpha=0.05,
                     confidence=0.95, equivalence_margin=None, allow_failed=0, cells=12,
                     counts=RowCounts(12, 12, 0, 0, 0), truncated_by_variant={}, failed_by_variant={}, notes=[],
                     bootstrap=Bootstrap(resamples=0, seed=0), signflip=SignFlip("exact"), comparisons=[],
                     clauses=[clause], metrics={})


def _dot_fills(svg: str) -> list[str]:
    """The fill colour of each scatter dot (matplotlib writes each dot as a <use> of one marker)."""
    return re.findall(r'<use [^>]*style="fill: (#[0-9a-f]{6})', svg)


@pytest.mark.parametrize(("metric", "test", "better"), [
    ("unsupported_values", "not_rises", "lower"), ("unsupported_values", "falls", "lower"),
    ("field_recall", "rises", "higher"), ("field_recall", "not_falls", "higher"),
])
def test_dots_are_coloured_by_the_metrics_direction(tmp_path: Path, metric: str, test: str, better: str) -> None:
    # f0 and f1 go down, f2 goes up: for a lower-is-better metric the first two are the good ones
    run = _run(tmp_path, metric, test, [2.0, 3.0, 1.0], [1.0, 1.0, 2.0])
    plots = draw_plots(run, None, tmp_path, "", narrow=True)
    assert [p["better"] for p in plots] == [better]
    for src in (plots[0]["src"], plots[0]["src_narrow"]):
        fills = _dot_fills((tmp_path / src).read_text(encoding="utf-8"))
        down, up = (GOOD, BAD) if better == "lower" else (BAD, GOOD)
        assert fills == [down, down, up], src


def test_fixtures_that_all_moved_alike_show_no_interval_not_certainty(tmp_path: Path) -> None:
    """Three fixtures that each gained 0.5: the first pages drew the interval [0.500, 0.500] and called it a
    95% t interval. Zero spread is no measure of the uncertainty: the figure, its alt text and the caption say
    that no interval is drawn, and give the sign-flip p (2/8) instead."""
    run = _run(tmp_path, "field_recall", "rises", [0.25, 0.0, 0.5], [0.75, 0.5, 1.0])
    plot = draw_plots(run, None, tmp_path, "")[0]
    reason = "every fixture moved alike: zero spread is no measure of the uncertainty"
    assert plot["ci"] == f"no interval ({reason}; sign-flip p 0.250)"
    assert plot["alt"].startswith("field_recall, A minus baseline, per fixture: gap 0.500, 95% CI no interval "
                                  f"({reason}; sign-flip p 0.250), the paired t interval, not the verdict's; "
                                  "baseline run-to-run spread ±")
    svg = (tmp_path / plot["src"]).read_text(encoding="utf-8")
    assert "no interval: every fixture moved alike (sign-flip p 0.250)" in svg
    assert "95% CI" not in svg and "0.500, 0.500" not in svg
    caption = _caption(plot)
    assert (f"Blue line: the gap (0.500); no 95% interval is drawn: {reason} (sign-flip p 0.250)."
            in caption.group(1))
    assert "t interval" not in caption.group(1)


def _caption(plot: dict[str, Any]) -> re.Match[str]:
    """The figure's caption as the run's page renders it."""
    context: dict[str, Any] = {"run": {"run_id": "r1", "version": 1, "date": None, "rig_line": "m", "manifest": {},
                       "scratch": False, "set_aside": None, "unfinished_label": None, "card": "c"},
               "verdict": None, "plots": [plot], "pivot": None, "no_scored_cell": False, "href": "r1.html",
               "files": []}
    html = environment().get_template("_abrun.html").render(v=context)
    caption = re.search(r"<figcaption>(.*?)</figcaption>", html, re.S)
    assert caption is not None
    return caption


@pytest.mark.parametrize("reps", [1, 2])
def test_a_band_not_drawn_is_said_not_drawn_not_given_as_infinite(tmp_path: Path, reps: int) -> None:
    """With one repetition the baseline's run-to-run spread cannot be measured and no grey band is drawn; the
    caption read "Grey band: … ±∞" and the alt text "spread ±∞". Both now say there is no band, and why; with two
    repetitions the band is drawn and given."""
    run = _run(tmp_path, "field_recall", "rises", [0.25, 0.0, 0.5, 0.5], [0.75, 0.5, 1.0, 0.25], reps=reps)
    plot = draw_plots(run, None, tmp_path, "")[0]
    caption = _caption(plot).group(1)
    assert "∞" not in caption and "∞" not in plot["alt"]
    why = "the run-to-run spread cannot be measured with one repetition"
    if reps == 1:
        assert f"No grey band: {why}." in caption and "Grey band:" not in caption, caption
        assert plot["alt"].endswith(f"baseline run-to-run spread not measured ({why})"), plot["alt"]
    else:
        assert "No grey band" not in caption and f"Grey band: the baseline's own run-to-run spread beyond its " \
            f"sampling noise, ±{plot['floor']} (" in caption, caption
        assert plot["alt"].endswith(f"baseline run-to-run spread ±{plot['floor']}"), plot["alt"]




def test_a_guards_margin_line_lies_on_the_axis_however_far_from_the_data() -> None:
    """A guard's margin (0.9, or −0.9 for not_falls) far beyond every difference was drawn off the axis."""
    band = Band(PAIRED_T, 0.02, -0.03, 0.07, 0.05, 0.5)
    for test, line in (("not_rises", 0.9), ("not_falls", -0.9)):
        assert guard_line(ClauseRef("m", test, margin=0.9)) == line
        lo, hi = x_span([0.0, 0.05, -0.01], band, 0.04, line)
        assert lo < min(line, -0.04) and hi > max(line, 0.07)
    assert guard_line(ClauseRef("m", "rises")) is None


@pytest.mark.parametrize("names", [["A", "a", "B B", "B_B"], ["V" * 240, "v" * 240, "v" * 239 + "w"]])
def test_each_variants_figure_is_its_own_file_when_names_differ_by_case_or_by_a_slugs_lost_characters(
        tmp_path: Path, names: list[str]) -> None:
    """Hostile audit: a figure's file was named by a slug of run, variant and metric, so variants `B B` and `B_B`
    were drawn into one file (the page showed `B_B`'s figure for `B B`), as `A` and `a` are on a case-insensitive
    disk. Every figure on the page is now a file of its own, whatever the disk, and draws its own variant. A
    variant's name of 240 letters (hostile22) made a file name of 268 bytes, which no file system holds: `site`
    said 'File name too long' and built nothing; a name is now at most 128 bytes and a digest."""
    import numpy as np
    from click.testing import CliRunner

    from benchcard.cli import cli

    from ..helpers_verdict import AB_CARD, STRONG_BASE, grid, make_project, make_run, the_card

    variants = ", ".join(f'"{n}": "Check {i}.\\n"' for i, n in enumerate(names))
    card = AB_CARD.replace('variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
                           f'variants: {{baseline: "", {variants}}}')
    project = make_project(tmp_path / "p", card)
    gains = {n: STRONG_BASE + k * 0.1 * np.ones_like(STRONG_BASE) for k, n in enumerate(names)}
    metrics = {"field_recall": {"baseline": STRONG_BASE, **gains},
               "unsupported_values": {v: grid(0.0) for v in ["baseline", *names]},
               "abstains": {v: grid(1.0) for v in ["baseline", *names]}}
    run = make_run(project, the_card(project), metrics)
    runner = CliRunner()
    judged = runner.invoke(cli, ["-C", str(project.root), "verdict", run.name])
    assert judged.exit_code == 0, judged.output
    built = runner.invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output
    folder = tmp_path / "site" / "cards" / "extract-ab"
    page = (folder / "index.html").read_text(encoding="utf-8")
    figures = re.findall(r'<img src="([^"]+\.svg)" alt="field_recall, ([^"]+?) minus baseline', page)
    assert sorted(v for _, v in figures) == sorted(names)
    assert len({src.casefold() for src, _ in figures}) == len(names)  # distinct even where case is not
    assert max(len(path.name.encode()) for path in folder.glob("*.svg")) <= 128 + len("-12345678-narrow.svg")
    for src, variant in figures:
        assert f"{variant} − baseline" in (folder / src).read_text(encoding="utf-8"), (src, variant)


def test_a_figure_drawn_again_in_a_process_is_the_same_bytes_without_matplotlib(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site built again (`site --serve`, `view`) draws the same figures: the second is written from the first's
    bytes, which are what matplotlib draws (the SVG is deterministic); other inputs (a narrow copy, a difference
    of -0.0 instead of 0.0) are drawn afresh."""
    from benchcard.publish import _plots

    band, clause = Band(PAIRED_T, 0.02, -0.03, 0.07, 0.05, 0.5), ClauseRef("accuracy", "rises")
    args = (["fx-1", "fx-2", "fx-3"], [0.25, 0.0, -0.5], band, 0.1, "accuracy", "A", "baseline", clause)
    _plots._DRAWN.clear()
    _plots._draw(tmp_path / "first.svg", *args)
    drawn: list[Path] = []

    def render(path: Path, *rest: object) -> None:
        drawn.append(path)
        path.write_text("drawn")

    monkeypatch.setattr(_plots, "_render", render)
    _plots._draw(tmp_path / "again.svg", *args)
    assert drawn == [] and (tmp_path / "again.svg").read_bytes() == (tmp_path / "first.svg").read_bytes()
    _plots._draw(tmp_path / "narrow.svg", *args, narrow=True)
    _plots._draw(tmp_path / "minus.svg", args[0], [0.25, -0.0, -0.5], *args[2:])
    assert drawn == [tmp_path / "narrow.svg", tmp_path / "minus.svg"]
    monkeypatch.undo()
    _plots._DRAWN.clear()
    _plots._draw(tmp_path / "fresh.svg", *args)  # matplotlib again: the same bytes as the first
    assert (tmp_path / "fresh.svg").read_bytes() == (tmp_path / "first.svg").read_bytes()


def _texts(svg: str) -> list[str]:
    """Every text of a figure as a reader sees it (the SVG parsed as XML, so an escape is read back)."""
    import xml.etree.ElementTree as ET

    return ["".join(t.itertext()).strip() for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]


def test_a_name_with_dollar_signs_is_drawn_as_written_not_typeset_as_tex(tmp_path: Path) -> None:
    """Hostile audit: matplotlib typesets the text between two `$` as TeX, so a fixture id `cost $5 to $10` was
    drawn `cost 5−to−10` in italics, and `x$^$y` (a TeX expression it cannot read) ended `site` in a ValueError
    traceback. Every label is now drawn as the card writes it, an `<`, `&` or quote escaped as XML."""
    fixtures = ["cost $5 to $10", "x$^$y", 'a<b & "c"']
    rows = [{"fixture": f, "variant": v, "repetition": r, "metric": "m$_1$", "value": x + 0.1 * i + 0.01 * r}
            for i, f in enumerate(fixtures) for v, x in (("baseline", 0.0), ("A", 0.5)) for r in range(2)]
    run = Run(card="c", version=1, run_id="r1", folder=tmp_path, verdict_file=_verdict("m$_1$", "rises"),
              table=pd.DataFrame(rows))
    [plot] = draw_plots(run, None, tmp_path, "", narrow=True)
    for src in (plot["src"], plot["src_narrow"]):
        texts = _texts((tmp_path / src).read_text(encoding="utf-8"))
        assert set(fixtures) <= set(texts), texts
        assert any(t.startswith("m$_1$: per-fixture") for t in texts), texts


def test_a_thousand_fixtures_are_drawn_in_rows_without_names_in_a_figure_no_taller(tmp_path: Path) -> None:
    """A run of 1,000 fixtures drew four figures of 1,000 named rows each (240 inches, 730 KB of SVG), about 20 s of
    matplotlib apiece: `site` took 57 s for one run whose verdict took 5 (hostile audit 13). Above MAX_NAMED the
    dots are drawn in unnamed rows, the axis says how many and in what order, and the figure is no taller than
    MAX_NAMED named rows."""
    import xml.etree.ElementTree as ET

    from benchcard.publish import _plots

    band, clause = Band(PAIRED_T, 0.02, -0.03, 0.07, 0.05, 0.5), ClauseRef("accuracy", "rises")

    def height(n: int) -> str:
        path = tmp_path / f"{n}.svg"
        names = [f"fx-{i:04d}" for i in range(n)]
        _plots._draw(path, names, [(i % 5 - 2) / 4 for i in range(n)], band, 0.1, "accuracy", "A", "baseline", clause)
        svg = path.read_text(encoding="utf-8")
        texts = _texts(svg)
        named = [t for t in texts if t.startswith("fx-")]
        assert named == (names if n <= _plots.MAX_NAMED else []), n
        assert (f"{n:,} fixtures, in the run's order" in texts) is (n > _plots.MAX_NAMED)
        return ET.fromstring(svg).attrib["height"]

    assert height(_plots.MAX_NAMED) == height(_plots.MAX_NAMED + 1) == height(1000)
    assert (tmp_path / "1000.svg").stat().st_size < 250_000
