"""The verdict in words: the pairing named on the terminal and on the page (its colours: tests/_cli)."""

from __future__ import annotations

from pathlib import Path

from ..helpers_verdict import AB_CARD, STRONG_BASE, STRONG_VAR, ab_metrics, cli_run, make_project, make_run, the_card


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
