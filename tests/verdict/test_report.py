"""The verdict as the terminal shows it: colour on a terminal only, and the pairing named."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from benchcard.project import Project
from benchcard.verdict.report import print_verdict

from ..helpers_verdict import AB_CARD, STRONG_BASE, STRONG_VAR, ab_metrics, cli_run, make_project, make_run, the_card

ESC = "\x1b["


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")


def test_piped_verdict_has_no_escape_codes(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: win → result" in result.output
    assert ESC not in result.output


def test_forced_colour_paints_the_result_green_and_no_color_wins(project: Project,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = cli_run(project, "verdict", run_dir.name).output
    finding = next(line for line in out.splitlines() if "finding: win → result" in line)
    assert ESC in finding and "32m" in finding  # green
    monkeypatch.setenv("NO_COLOR", "1")
    shown = cli_run(project, "verdict", run_dir.name, "--show").output
    assert "finding: win → result" in shown and ESC not in shown


def test_non_result_yellow_and_failed_clause_red() -> None:
    buf = io.StringIO()
    print_verdict(["finding: no effect → non-result", "  FAILS  the gap is not above 0", "plain"],
                  Console(file=buf, force_terminal=True, color_system="standard", soft_wrap=True))
    got = buf.getvalue().splitlines()
    assert "33m" in got[0] and "31m" in got[1] and ESC not in got[2]


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
