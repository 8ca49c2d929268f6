"""What a verdict of several variants writes where: verdict.json keeps every per-variant figure (it is the
evidence), its ledger row stays compact; a two-variant verdict.json written before that still reads and verifies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchcard.project import Project

from ..helpers_verdict import (
    cli_run,
    two_variant_project,
)

REPO = Path(__file__).resolve().parents[2]
#: A project whose two-variant verdict was given on 2026-12-01, when verdict.json left out the per-variant
#: detail (se, df, one-sided bounds, pairing): card, seal, run folder and ledger exactly as written then.
OLD_PROJECT = REPO / "tests" / "data" / "projects" / "two-variants-2026-12-01"
OLD_RUN = "20261130T000001Z-3f9a"
DETAIL = ("se", "df", "lower_one_sided", "upper_one_sided", "n_fixtures", "paired", "of", "left_out", "means")



def test_a_two_variant_verdict_json_keeps_each_variants_figures(tmp_path: Path) -> None:
    project, run = two_variant_project(tmp_path / "p")
    result = cli_run(project, "verdict", run)
    assert result.exit_code == 0, result.output
    path = next(project.results_dir.glob(f"extract-ab/v1/{run}/verdict.json"))
    figures = json.loads(path.read_text())["metrics"]["field_recall"]["by_variant"]
    assert set(figures) == {"A", "B"}
    a, b = figures["A"], figures["B"]
    assert a["gap"] == 0.325 and b["gap"] == -0.25
    assert a["ci"][0] < 0.325 < a["ci"][1] and b["ci"] is None  # B moved every fixture alike: no t interval
    assert a["p"] < 0.05 and b["p"] < 0.05
    # the run term's df, R − 1: neither arm has cell noise
    assert a["se"] > 0 and b["se"] == 0.0 and a["df"] == b["df"] == 2.0
    assert a["lower_one_sided"] > 0 and (a["paired"], a["of"], a["left_out"]) == (10, 10, {})
    assert a["means"] == {"baseline": 0.475, "A": 0.8} and b["means"] == {"baseline": 0.475, "B": 0.225}
    # the ledger row stays compact: the interval and p of each variant, not its detail
    row = json.loads((project.results_dir / "ledger.jsonl").read_text().splitlines()[0])
    in_row = row["metrics"]["field_recall"]["by_variant"]
    assert in_row["A"]["ci"] == a["ci"] and in_row["B"]["p"] == b["p"]
    assert not {k for figs in in_row.values() for k in figs} & set(DETAIL)
    shown = cli_run(project, "verdict", run, "--show")
    assert shown.exit_code == 0
    assert "A raised field_recall from 0.475 to 0.800 (+0.325, 95 % CI [0.160, 0.490]), paired over 10 of 10 " \
           "fixtures; every clause holds → result" in shown.output
    assert cli_run(project, "ledger", "--verify").exit_code == 0


def test_an_old_two_variant_verdict_still_reads_and_verifies(tmp_path: Path) -> None:
    shutil.copytree(OLD_PROJECT, tmp_path / "p")
    project = Project(tmp_path / "p")
    folder = project.results_dir / "extract-ab" / "v1" / OLD_RUN
    before = (folder / "verdict.json").read_bytes()
    figures = json.loads(before)["metrics"]["field_recall"]["by_variant"]
    assert not {k for figs in figures.values() for k in figs} & {"se", "df"}  # the old shape indeed
    verified = cli_run(project, "ledger", "--verify")
    assert verified.exit_code == 0 and "evidence of 1 judged run(s) unchanged" in verified.output
    shown = cli_run(project, "verdict", OLD_RUN, "--show")
    assert shown.exit_code == 0
    assert "A raised field_recall from 0.475 to 0.800 (+0.325, 95 % CI [0.223, 0.427]); every clause holds" \
           in shown.output
    assert "field_recall (B − baseline): means baseline 0.475 · A 0.800 · B 0.225; gap −0.250 CI n/a" in shown.output
    assert json.loads(cli_run(project, "verdict", OLD_RUN, "--show", "--json").output)["finding"] == "loss"
    site = cli_run(project, "site", "--out", str(tmp_path / "web"))
    assert site.exit_code == 0, site.output
    assert (tmp_path / "web" / "runs" / "extract-ab" / "v1" / OLD_RUN / "index.html").is_file()
    assert (folder / "verdict.json").read_bytes() == before  # read, never rewritten
