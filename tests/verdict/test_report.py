"""The verdict in words: the pairing named on the terminal and on the page (its colours: tests/_cli); a bootstrap
interval that measures nothing (equal fixture gaps) shown nowhere; an interval nothing bounds read the same in
every place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from benchcard.project import Project

from ..helpers_verdict import (
    AB_CARD,
    BASE_A,
    STRONG_BASE,
    STRONG_VAR,
    VAR_A,
    ab_metrics,
    cli_run,
    make_project,
    make_run,
    the_card,
)

OLD_PROJECT = Path(__file__).resolve().parents[1] / "data" / "projects" / "two-variants-2026-12-01"
OLD_RUN = "20261130T000001Z-3f9a"

BASE_A_1, VAR_A_1 = np.array(BASE_A)[:, :1], np.array(VAR_A)[:, :1]


def test_unpaired_fixture_is_named_in_the_terminal_and_on_the_page(tmp_path: Path) -> None:
    """ex-03 has no scored cell in A (all three repetitions failed): the verdict pairs 5 of 6 fixtures, says
    which was left out and why, and both means are over the same five, on the terminal and on the page."""
    card_text = AB_CARD.replace("  alpha: 0.05\n", "  alpha: 0.05\n  allow_failed: 3\n")
    project = make_project(tmp_path / "proj", card_text)
    status = {("A", "ex-03", r): "failed" for r in range(3)}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    keep = [0, 1, 3, 4, 5]
    base, var = STRONG_BASE[keep].mean(), STRONG_VAR[keep].mean()
    lead = (f"A raised field_recall from {base:.3f} to {var:.3f} (+{var - base:.3f}, 95 % CI ")
    want = "paired over 5 of 6 fixtures; ex-03 left out: no scored cell in A"
    line = next(line for line in result.output.splitlines() if line.startswith("A raised field_recall"))
    assert line.startswith(lead) and want in line
    assert cli_run(project, "site").exit_code == 0
    pages = [p.read_text(encoding="utf-8") for p in (project.root / "site").rglob("*.html")]
    on_page = [p for p in pages if want in p]
    assert on_page and lead in on_page[0]


def _pages(project: Project) -> str:
    assert cli_run(project, "site").exit_code == 0
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((project.root / "site").rglob("*.html")))


def test_a_bootstrap_of_equal_fixture_gaps_is_not_shown_beside_the_interval(tmp_path: Path) -> None:
    """Every fixture moved by +0.25 while the repetitions spread: the calibrated interval is wide, and resampling
    fixtures gives +0.25 every time. That [0.250, 0.250] measures nothing, and beside [−0.43, 0.93] it read as
    certainty: verdict.json writes it null, the terminal says n/a and the page leaves it out (hostile audit 13)."""
    project = make_project(tmp_path / "proj")
    base = np.array([[0.25, 0.5, 0.75]] * 6)
    run_dir = make_run(project, the_card(project), ab_metrics(base, base + 0.25))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("  field_recall (A − baseline)"))
    assert "CI [−0.429, 0.929] bootstrap n/a p" in line
    written = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert written["metrics"]["field_recall"]["ci_bootstrap"] is None
    assert [c["ci_bootstrap"] for c in written["clauses"] if "ci_bootstrap" in c] == [None, None]
    pages = _pages(project)
    assert "[0.250, 0.250]" not in pages and "CI [−0.429, 0.929]" in pages


def test_an_older_verdicts_zero_width_bootstrap_is_not_shown(tmp_path: Path) -> None:
    """A verdict given before 2026-12-07 wrote [−0.25, −0.25] for B's bootstrap (every fixture's gap −0.25); its
    file is never rewritten, and neither `--show` nor the page shows that interval."""
    shutil.copytree(OLD_PROJECT, tmp_path / "p")
    project = Project(tmp_path / "p")
    before = json.loads((project.results_dir / "extract-ab" / "v1" / OLD_RUN / "verdict.json").read_text())
    assert before["metrics"]["field_recall"]["by_variant"]["B"]["ci_bootstrap"] == [-0.25, -0.25]
    shown = cli_run(project, "verdict", OLD_RUN, "--show").output
    assert "field_recall (B − baseline): means baseline 0.475 · A 0.800 · B 0.225; gap −0.250 CI n/a bootstrap n/a" \
           in shown
    assert "[−0.250, −0.250]" not in shown and "[−0.250, −0.250]" not in _pages(project)


def test_an_interval_nothing_bounds_reads_the_same_everywhere(tmp_path: Path) -> None:
    """One repetition: the run-to-run spread cannot be measured. A count's interval is (−∞, ∞), written [null, null]
    (strict JSON); a score in [0, 1] has every gap it can take, [−1, 1] (hostile audit 13b: an interval beyond the
    metric's range is never right). The clause's sentence said [−∞, ∞], the lead and the figures [n/a, n/a], the
    page '—, —' and its plot 'every fixture moved alike'; now every place says the same (hostile audit 13)."""
    card_text = AB_CARD.replace("repetitions: 3", "repetitions: 1").replace(
        "  alpha: 0.05\n", "  alpha: 0.05\n  accept_cannot_win: true\n")
    project = make_project(tmp_path / "proj", card_text)
    run_dir = make_run(project, the_card(project), ab_metrics(BASE_A_1, VAR_A_1, shape=(6, 1)))
    given = cli_run(project, "verdict", run_dir.name)
    assert given.exit_code == 0, given.output
    written = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert written["metrics"]["field_recall"]["ci"] == [-1.0, 1.0]
    assert written["metrics"]["unsupported_values"]["ci"] == [None, None]
    shown = cli_run(project, "verdict", run_dir.name, "--show").output
    for output in (given.output, shown):
        assert "(+0.125, 95 % CI [−1.000, 1.000])" in output  # the lead
        assert "gap +0.125, 95% CI [−1.000, 1.000]" in output  # the clause's sentence
        assert "gap +0.125 CI [−1.000, 1.000] bootstrap [0.042, 0.208]" in output  # the figures
        assert "gap +0.000 CI [−∞, ∞] bootstrap n/a" in output  # a count that never moved: nothing resampled
        assert "n/a, n/a" not in output
    pages = _pages(project)
    assert "CI [−1.000, 1.000]" in pages and "CI [−∞, ∞]" in pages  # the score's, the count's
    assert "—, —" not in pages and "n/a, n/a" not in pages
    assert "moved alike" not in pages  # the plot's words for no spread at all, which this is not


def test_a_grid_with_no_scored_cell_says_why_not_that_the_scorer_gave_nothing(tmp_path: Path) -> None:
    """Every cell of both arms cut off at max_tokens: no metric has a value, and the clauses said 'the scorer gave
    no 'field_recall' for any cell', blaming a scorer that was never asked. They say no cell was scored, and why."""
    project = make_project(tmp_path / "proj")
    status = {(v, f, r): "truncated" for v in ("baseline", "A") for f in [f"ex-0{i}" for i in range(1, 7)]
              for r in range(3)}
    run_dir = make_run(project, the_card(project), ab_metrics(), status=status)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "field_recall rises: cannot be judged — no cell was scored (36 cut off at max_tokens)." in result.output
    assert "the scorer gave no" not in result.output
