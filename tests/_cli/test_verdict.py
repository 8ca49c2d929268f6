"""`benchcard verdict` on the terminal: colour only on a terminal, FORCE_COLOR forces it, NO_COLOR wins."""

from __future__ import annotations

import pytest

from benchcard.project import Project

from ..helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, cli_run, make_run, the_card

ESC = "\x1b["


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
