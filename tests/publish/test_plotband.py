"""The band a plot draws around the gap: wherever a run has a verdict, the verdict's own calibrated interval
(never the narrower paired t one), one per variant, which an edited verdict.json cannot move."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ..helpers_site import DEMO, DEMO_RUN, _demo_site, _norm, _Page


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

    from benchcard._util.numfmt import DASH, fixed, interval
    from benchcard.stats import paired as stats


    out, source = _demo_site(tmp_path, _run_shock)
    [run_dir] = (tmp_path / "proj" / "results" / DEMO).glob(f"v*/{DEMO_RUN}")
    verdict = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    low, high = verdict["metrics"]["score"]["ci"]
    table = pd.read_csv(run_dir / "table.csv")
    score = table[table["metric"] == "score"]
    grids = [score[score["variant"] == v].pivot_table(index="fixture", columns="repetition", values="value")
             .to_numpy(dtype=float) for v in ("plain", "answer-cue")]
    base, var = grids
    paired = stats.paired_gap(base, var)
    assert paired.ci_low > 0 and low < 0 < high  # the premise: only the paired t excludes 0
    assert np.isclose(paired.gap, verdict["metrics"]["score"]["gap"])
    assert verdict["clauses"][0]["holds"] is False

    ci = interval(low, high, missing=DASH)
    t_ci = interval(paired.ci_low, paired.ci_high, missing=DASH)
    [img] = [a for t, a in _Page(source).tags if t == "img" and "score" in str(a.get("src"))]
    assert (f"95% CI {ci}, the verdict's calibrated interval (fixture and run-to-run variance); baseline "
            "run-to-run spread") in str(img["alt"])
    caption = _norm(re.findall(r"<figcaption>(.*?)</figcaption>", source, re.S)[0])
    assert (f"Blue line and band: the gap ({fixed(paired.gap, missing=DASH)}) and the verdict's own 95% calibrated "
            "interval "
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
    from benchcard._util.numfmt import DASH, interval
    from benchcard.project import Project
    from benchcard.publish.build import build_site


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
    assert f"95% CI {interval(low, high, missing=DASH)}, the verdict's calibrated interval" in str(img["alt"])
    assert "0.250, 0.350" not in source


def test_each_variant_gets_one_figure_with_its_own_verdict_interval(tmp_path: Path) -> None:
    """Two variants: one figure per variant and gap clause (the verdict lists each clause once per variant,
    which must not draw each figure twice), each with that variant's interval from `by_variant`."""
    from benchcard._util.numfmt import DASH, interval
    from benchcard.publish.build import build_site

    from ..helpers_verdict import cli_run, two_variant_project

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
    assert f"95% CI {interval(low, high, missing=DASH)}, the verdict's calibrated interval" in a
    [b] = [x for x in alts if x.startswith("field_recall, B minus baseline")]
    assert figures["B"]["ci"] is None and "95% CI no interval (every fixture moved alike" in b
