"""The verdict as the terminal shows it: colour on a terminal only, and the pairing named."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from benchcard.project import Project
from benchcard.verdict.report import print_verdict

from .test_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, cli_run, make_project, make_run, the_card

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
