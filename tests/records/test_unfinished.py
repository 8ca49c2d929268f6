"""A run that stopped before every cell had an outcome is labelled "unfinished (k of N cells)" in
`benchcard ledger` and on the pages, never "not yet unblinded"."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.records.unfinished import unfinished_runs
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project


def test_a_stopped_run_is_unfinished_in_the_ledger_and_on_the_pages(tmp_path: Path, server: FakeServer,
                                                                      key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    [summary] = run(project, "colour-ab", RunOptions(progress=False), stop_after=5)
    assert not summary.finished
    assert [(u.run, u.done, u.cells) for u in unfinished_runs(project)] == [(summary.run, 5, 12)]

    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger"])
    assert result.exit_code == 0, result.output
    assert (f"colour-ab v1 · run {summary.run}: unfinished (5 of 12 cells) — benchcard run colour-ab --resume "
            f"{summary.run}") in result.output

    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(out)])
    assert result.exit_code == 0, result.output
    card_page = (out / "cards" / "colour-ab" / "index.html").read_text()
    assert "Unfinished (5 of 12 cells)" in card_page and "Not yet unblinded" not in card_page
    assert f"benchcard run colour-ab --resume {summary.run}" in card_page
    assert "unfinished (5 of 12 cells)" in (out / "index.html").read_text()

    [done] = run(project, "colour-ab", RunOptions(resume=summary.run, progress=False))
    assert done.finished and unfinished_runs(project) == []
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger"])
    assert "unfinished" not in result.output


def test_an_unfinished_run_whose_manifest_is_a_folder_is_noted_under_the_ledger(tmp_path: Path, server: FakeServer,
                                                                                 key: str) -> None:
    """Small audit (small21): `ledger` left out, without a word, a stopped run whose manifest.json had been made a
    folder, while every other command named it; it says the line they say, and that the run is left out."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    [summary] = run(project, "colour-ab", RunOptions(progress=False), stop_after=5)
    manifest = project.results_dir / "colour-ab" / "v1" / summary.run / "manifest.json"
    manifest.unlink()
    manifest.mkdir()
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"skipped: results/colour-ab/v1/{summary.run}/manifest.json: not a regular file (a folder), where benchcard "
        "keeps one; move it aside and put the file back; the run is left out")
    assert "unfinished" not in result.stdout
