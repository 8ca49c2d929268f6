"""`benchcard replicate` as a user meets it before any call: its help, and a run it cannot replicate refused in
one line (the runs through the fake server are in tests/verdict/test_replicate.py)."""

from __future__ import annotations

from benchcard.project import Project

from ..helpers_cli import bc, one_line_error
from ..helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, make_run, the_card


def test_help_names_the_transfer_and_the_seed() -> None:
    from click.testing import CliRunner

    from benchcard.cli import cli

    shown = CliRunner().invoke(cli, ["replicate", "--help"]).stdout
    assert "a transfer" in shown and "--seed" in shown and "--resume REPLICATION" in shown
    assert "--gate" in shown and "as `verdict NEW --gate` does" in " ".join(shown.split())


def test_a_run_without_a_verdict_is_refused_in_one_line(project: Project) -> None:
    run = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR)).name
    line = one_line_error(bc(project.root, "replicate", run))
    assert line == (f"error: results/extract-ab/v1/{run}: run {run} has no verdict; a replication is judged against "
                    f"the original's verdict: `benchcard verdict {run}` first")
