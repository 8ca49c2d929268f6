"""The plots of a run's page: dots coloured by whether the variant did better on the metric's own direction."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from benchcard.ledgerrow import RowCounts
from benchcard.publish.plots import draw_plots
from benchcard.publish.render import environment
from benchcard.publish.runs import Run
from benchcard.verdictfigures import Bootstrap, ClauseFigures, SignFlip
from benchcard.verdictfile import AbVerdict

GOOD, BAD = "#1f4bb0", "#b3261e"


def _run(tmp_path: Path, metric: str, test: str, base: list[float], var: list[float]) -> Run:
    rows = [{"fixture": f"f{i}", "variant": v, "repetition": r, "metric": metric, "value": x + 0.01 * r}
            for i, (b, a) in enumerate(zip(base, var, strict=True)) for v, x in (("baseline", b), ("A", a))
            for r in range(2)]
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
                                  "baseline noise floor ±")
    svg = (tmp_path / plot["src"]).read_text(encoding="utf-8")
    assert "no interval: every fixture moved alike (sign-flip p 0.250)" in svg
    assert "95% CI" not in svg and "0.500, 0.500" not in svg
    context = {"run": {"run_id": "r1", "version": 1, "date": None, "rig_line": "m", "manifest": {},
                       "scratch": False, "unfinished_label": None, "card": "c"},
               "verdict": None, "plots": [plot], "pivot": None, "no_scored_cell": False, "href": "r1.html",
               "files": []}
    html = environment().get_template("_abrun.html").render(v=context)
    caption = re.search(r"<figcaption>(.*?)</figcaption>", html, re.S)
    assert caption is not None
    assert (f"Blue line: the gap (0.500); no 95% interval is drawn: {reason} (sign-flip p 0.250)."
            in caption.group(1))
    assert "t interval" not in caption.group(1)


def _run_shock(fixture: str, variant: str, rep: int) -> tuple[str, str]:
    """The demo card's cells with a visible run term: the variant's first repetition answers bare on every
    fixture, its second on the even-numbered ones only, its third never; the baseline never does."""
    bare = variant == "answer-cue" and (rep == 0 or (rep == 1 and int(fixture[-2:]) % 2 == 0))
    return "ok", ("positive" if bare else "This review is positive.")


def test_the_band_is_the_verdicts_calibrated_interval_not_the_paired_t(tmp_path: Path) -> None:
    """Issue 12: the paired t interval excludes 0 here, but the run-to-run spread of three repetitions makes the
    verdict's calibrated interval contain it, and the verdict says the gap is not shown. The figure, its alt text
    and its caption draw and name the verdict's interval, never the narrower paired t one."""
    import numpy as np

    from benchcard.publish.render import fmt_num
    from benchcard.verdict import stats

    from .test_site import DEMO, DEMO_RUN, _demo_site, _norm, _Page

    out, source = _demo_site(tmp_path, _run_shock)
    [run_dir] = (tmp_path / "proj" / "results" / DEMO).glob(f"v*/{DEMO_RUN}")
    verdict = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    low, high = verdict["metrics"]["score"]["ci"]
    table = pd.read_csv(run_dir / "table.csv")
    score = table[table["metric"] == "score"]
    grids = [score[score["variant"] == v].pivot_table(index="fixture", columns="repetition", values="value")
             .to_numpy(dtype=float) for v in ("plain", "answer-cue")]
    paired = stats.paired_gap(*grids)
    assert paired.ci_low > 0 and low < 0 < high  # the premise: only the paired t excludes 0
    assert np.isclose(paired.gap, verdict["metrics"]["score"]["gap"])
    assert verdict["clauses"][0]["holds"] is False

    ci = f"[{fmt_num(low, 3)}, {fmt_num(high, 3)}]"
    t_ci = f"[{fmt_num(paired.ci_low, 3)}, {fmt_num(paired.ci_high, 3)}]"
    [img] = [a for t, a in _Page(source).tags if t == "img" and "score" in str(a.get("src"))]
    assert (f"95% CI {ci}, the verdict's calibrated interval (fixture and run-to-run variance); baseline noise "
            "floor") in str(img["alt"])
    caption = _norm(re.findall(r"<figcaption>(.*?)</figcaption>", source, re.S)[0])
    assert (f"Blue line and band: the gap ({fmt_num(paired.gap, 3)}) and the verdict's own 95% calibrated interval "
            f"{ci}, the one it decides on") in caption
    for svg_name in (img["src"], str(img["src"]).replace(".svg", "-narrow.svg")):
        svg = (out / "cards" / DEMO / str(svg_name)).read_text(encoding="utf-8")
        assert f"verdict's 95% CI [{low:.3f}, {high:.3f}]" in svg
        assert f"{paired.ci_low:.3f}, {paired.ci_high:.3f}" not in svg
    assert t_ci not in source
    # the guard moved no fixture (zero spread): no interval and no one-sided bound are claimed for it
    captions = [_norm(c) for c in re.findall(r"<figcaption>(.*?)</figcaption>", source, re.S)]
    assert "no 95% interval is drawn: every fixture moved alike" in captions[1] and "bound" not in captions[1]
    assert "t interval" not in str(img["alt"]) and "not the verdict's" not in caption


def test_an_edited_verdict_cannot_move_the_band(tmp_path: Path) -> None:
    """verdict.json edited after its ledger row (its interval narrowed to exclude 0): the figure draws the
    interval the hash-chained row records, the verdict's as it was given, not the edited one."""
    from benchcard.project import Project
    from benchcard.publish.build import build_site
    from benchcard.publish.render import fmt_num

    from .test_site import DEMO, DEMO_RUN, _demo_site, _Page

    _demo_site(tmp_path, _run_shock)
    [run_dir] = (tmp_path / "proj" / "results" / DEMO).glob(f"v*/{DEMO_RUN}")
    path = run_dir / "verdict.json"
    verdict = json.loads(path.read_text(encoding="utf-8"))
    low, high = verdict["metrics"]["score"]["ci"]
    verdict["metrics"]["score"]["ci"] = [0.25, 0.35]
    path.write_text(json.dumps(verdict, indent=2, ensure_ascii=False), encoding="utf-8")
    report = build_site(Project((tmp_path / "proj").resolve()), tmp_path / "site2")
    assert any("verdict.json differs from its ledger row" in s for s in report.skipped)
    source = (tmp_path / "site2" / "cards" / DEMO / "index.html").read_text(encoding="utf-8")
    [img] = [a for t, a in _Page(source).tags if t == "img" and "score" in str(a.get("src"))]
    assert f"95% CI [{fmt_num(low, 3)}, {fmt_num(high, 3)}], the verdict's calibrated interval" in str(img["alt"])
    assert "0.250, 0.350" not in source


def test_each_variant_gets_one_figure_with_its_own_verdict_interval(tmp_path: Path) -> None:
    """Two variants: one figure per variant and gap clause (the verdict lists each clause once per variant,
    which must not draw each figure twice), each with that variant's interval from `by_variant`."""
    from benchcard.publish.build import build_site
    from benchcard.publish.render import fmt_num

    from ..verdict.test_entry import cli_run, two_variant_project
    from .test_site import _Page

    project, run = two_variant_project(tmp_path / "p")
    assert cli_run(project, "verdict", run).exit_code == 0
    verdict = json.loads(next(project.results_dir.glob(f"extract-ab/v1/{run}/verdict.json")).read_text())
    figures = verdict["metrics"]["field_recall"]["by_variant"]
    build_site(project, tmp_path / "site")
    source = (tmp_path / "site" / "cards" / "extract-ab" / "index.html").read_text(encoding="utf-8")
    alts = [str(a["alt"]) for t, a in _Page(source).tags if t == "img"]
    assert len(alts) == 4  # field_recall and the unsupported_values guard, for A and for B
    [a] = [x for x in alts if x.startswith("field_recall, A minus baseline")]
    low, high = figures["A"]["ci"]
    assert f"95% CI [{fmt_num(low, 3)}, {fmt_num(high, 3)}], the verdict's calibrated interval" in a
    [b] = [x for x in alts if x.startswith("field_recall, B minus baseline")]
    assert figures["B"]["ci"] is None and "95% CI no interval (every fixture moved alike" in b
