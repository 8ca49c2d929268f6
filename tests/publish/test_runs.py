"""Run folders as the site reads them: typed through `records`, tolerantly (a bad folder is named and left out)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from benchcard.cli import cli

from ..helpers_project import PUBLISHED, copy_project

RUN = next((PUBLISHED / "bench-01" / "v1").iterdir()).name  # the repository's BENCH-01 run, as published


def test_a_run_whose_manifest_is_not_one_is_named_and_left_out(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "proj", ("bench-01",))
    shutil.copytree(PUBLISHED, root / "results")
    bad = root / "results" / "bench-01" / "v1" / "20261201T090000Z-0bad"
    bad.mkdir()
    manifest = json.loads((root / "results" / "bench-01" / "v1" / RUN / "manifest.json").read_text())
    (bad / "manifest.json").write_text(json.dumps({**manifest, "run": bad.name, "version": "one"}))
    result = CliRunner().invoke(cli, ["-C", str(root), "site"])
    assert result.exit_code == 0, result.output
    assert (f"  skipped: results/bench-01/v1/{bad.name}/manifest.json: Expected `int`, got `str` - at `$.version`; "
            "the run is left out") in result.output.splitlines()
    assert "(1 cards, 1 runs," in result.output
    site = root / "site" / "runs" / "bench-01" / "v1"
    assert (site / RUN / "index.html").is_file() and not (site / bad.name).exists()


def test_a_row_cut_short_by_a_killed_run_is_skipped_and_the_rest_shown(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "proj", ("bench-01",))
    shutil.copytree(PUBLISHED, root / "results")
    outputs = root / "results" / "bench-01" / "v1" / RUN / "outputs.jsonl"
    rows = outputs.read_bytes().splitlines(keepends=True)
    outputs.write_bytes(b"".join(rows) + rows[0][:40])  # a last line torn mid-write
    result = CliRunner().invoke(cli, ["-C", str(root), "site"])
    assert result.exit_code == 0, result.output
    page = (root / "site" / "runs" / "bench-01" / "v1" / RUN / "index.html").read_text(encoding="utf-8")
    assert f"<p class=\"lead\">{len(rows)} cells." in page  # every whole row, the torn one left out
    assert page.count('<details class="cell status-') == len(rows)


def test_a_verdict_of_the_wrong_shape_is_named_and_the_ledger_row_shown(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "proj", ("bench-01",))
    shutil.copytree(PUBLISHED, root / "results")
    path = root / "results" / "bench-01" / "v1" / RUN / "verdict.json"
    verdict = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**verdict, "finding": "win", "cells": "all"}, indent=2), encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(root), "site"])
    assert result.exit_code == 0, result.output
    assert (f"  skipped: results/bench-01/v1/{RUN}/verdict.json: Expected `int`, got `str` - at `$.cells`; "
            "the run's verdict is not shown") in result.output.splitlines()
    page = (root / "site" / "runs" / "bench-01" / "v1" / RUN / "index.html").read_text(encoding="utf-8")
    row = json.loads((PUBLISHED / "ledger.jsonl").read_text(encoding="utf-8"))
    assert row["finding"] != "win"
    assert f"<dt>verdict</dt><dd>{row['outcome']} · {row['finding']}</dd>" in page  # the ledger row's finding
    assert "· win" not in page


def test_a_version_folder_of_digits_other_than_ascii_is_not_a_version_on_the_site_either(tmp_path: Path) -> None:
    """Review of 2b9ff0c: every command reads a version folder as v and ASCII digits (records/cardruns), but the
    site matched `v\\d+`, which takes Arabic-Indic digits and int() reads them: a copy of a run in
    results/bench-01/v\u0661/ was listed on the site as a second run of version 1 that no command knows."""
    from benchcard.project import Project
    from benchcard.publish._runs import read_runs

    root = copy_project(tmp_path / "proj", ("bench-01",))
    shutil.copytree(PUBLISHED, root / "results")
    shutil.copytree(root / "results" / "bench-01" / "v1", root / "results" / "bench-01" / "v\u0661")
    skipped: list[str] = []
    runs = read_runs(Project(root), skipped)
    assert [(r.version, r.folder and r.folder.parent.name) for r in runs] == [(1, "v1")]
