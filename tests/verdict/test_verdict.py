"""The verdict as a whole: the predeclared win rule on worked data, the files written, and the CLI.

Run folders are built by hand (`make_run`, tests/helpers_verdict.py) in the run-folder contract's format
(docs/architecture.md), so these tests need neither the runner nor a model.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd
import pytest

from benchcard._util.hashing import file_digest, seed_from
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.run.grid import planned_assignment
from benchcard.stats import paired as stats
from benchcard.stats.resample import bootstrap_intervals
from benchcard.verdict.give import give_verdict
from benchcard.verdict.runfolder import read_run_data

from ..helpers_site import _norm, page
from ..helpers_verdict import (
    AB_CARD,
    BASE_A,
    FIXTURES,
    FIXTURES10,
    STRONG10_BASE,
    STRONG10_VAR,
    STRONG_BASE,
    STRONG_VAR,
    VAR_A,
    ab_metrics,
    cli_run,
    grid,
    make_project,
    make_run,
    reference_table,
    strong_run,
    the_card,
)

# ------------------------------------------------------------------------------------------- Case A & the rule


def test_case_a_shock_shared_by_both_arms_cancels_in_the_gap_and_widens_the_run_term(project: Project) -> None:
    """Case A: the baseline's run means climb 0.625 → 0.75, and the variant's climb with them (the runner puts
    repetition r of both arms in the same block of time): the shock cancels in the gaps, whose run means barely
    move, but the run term also reads the arms' own spread (their sums), which the shared shock moves; the
    rule cannot tell a shared shock from the per-arm shocks it protects against (docs/statistics.md), so the gap
    of 0.111 with six fixtures is inconclusive (the previous rule, gaps only: p 0.0103, a win)."""
    run_dir = make_run(project, the_card(project), ab_metrics())
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("inconclusive", "non-result")
    data = v.to_json()
    m = data["metrics"]["field_recall"]
    # the worked numbers of docs/statistics.md, Case A
    assert m["gap"] == pytest.approx(0.111111, abs=1e-6)
    # se² = (MS_fix + MS_run − MS_err)/(F·R), MS_run pooled from the gaps and the arms' sums, df between
    # R − 1 and 3(R − 1) by the balance of the arms' own run-to-run spreads (alike here: 6), calibrated to the
    # worst case (worstcase.py)
    assert m["ci"] == pytest.approx([-0.024374, 0.246596], abs=1e-6)
    assert m["p"] == pytest.approx(0.074094, abs=1e-6)
    assert m["p_signflip"] == pytest.approx(2 / 64)
    assert m["run_var"] == pytest.approx(0.002701, abs=1e-6) and m["df"] == pytest.approx(6.0, abs=1e-6)
    assert m["noise_floor"] == pytest.approx(0.133900, abs=1e-6) and m["gap"] < m["noise_floor"]
    assert m["baseline_noise_floor"] == pytest.approx(0.092578, abs=1e-6)
    assert m["means"] == pytest.approx({"baseline": 0.694444, "A": 0.805556}, abs=1e-6)
    lo, hi = m["ci_bootstrap"]
    assert lo <= m["gap"] <= hi
    rises = data["clauses"][0]
    assert rises["holds"] is False
    assert "the interval is not wholly above 0" in rises["why"]
    assert [c["holds"] for c in data["clauses"]] == [False, True, True]
    assert "5 of 5" not in data["clauses"][2]["why"] and "3 of 3" in data["clauses"][2]["why"]


def test_case_a_through_the_cli(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "finding: inconclusive → non-result" in out
    assert "field_recall" in out and "run term ±0.134 (the interval's run-to-run part)" in out
    assert "ledger: seq 1" in out


def test_strong_effect_wins(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("win", "result")
    data = v.to_json()
    assert all(c["holds"] for c in data["clauses"])
    assert data["metrics"]["field_recall"]["noise_floor"] == 0.0
    assert data["why"] == "every clause holds."


def test_holds_fixture_failing_once_is_a_non_result(project: Project) -> None:
    abstains = grid(1.0)
    abstains[5, 1] = 0.0  # ex-06, second repetition: the variant stopped abstaining once
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR, abstains_var=abstains))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("inconclusive", "non-result")
    holds = v.to_json()["clauses"][2]
    assert holds["holds"] is False and holds["k"] == 2 and holds["n"] == 3
    assert "2 of 3 scored repetitions" in holds["why"]
    assert holds["wilson"][0] == pytest.approx(stats.wilson(2, 3)[0])


def test_guard_significantly_broken_is_a_loss(project: Project) -> None:
    unsupported = np.array([[2, 3, 2], [3, 3, 2], [2, 2, 3], [3, 2, 2], [2, 3, 3], [3, 3, 3]], dtype=float)
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR, unsupported_var=unsupported))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("loss", "result")
    guard = v.to_json()["clauses"][1]
    assert guard["holds"] is False and guard["broken"] is True
    assert "significantly broken" in guard["why"]
    assert "a guard is significantly broken" in v.to_json()["why"]


def test_effect_the_wrong_way_beyond_noise_is_a_loss(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG10_VAR, STRONG10_BASE, shape=(10, 3)))
    v = give_verdict(project, run_dir)
    assert v.finding == "loss"
    assert "wrong way" in v.to_json()["why"]


def test_six_fixtures_moving_the_wrong_way_are_not_enough_for_a_loss(project: Project) -> None:
    """A loss needs a win's evidence under Holm across the two clauses that can show one: at F = 6 the exact
    sign-flip p (2/64) is above α/2."""
    v = give_verdict(project, make_run(project, the_card(project), ab_metrics(STRONG_VAR, STRONG_BASE)))
    assert v.finding == "inconclusive"
    assert v.to_json()["clauses"][0]["p_signflip"] == pytest.approx(2 / 64)


def test_equivalent_arms_are_no_effect(project: Project) -> None:
    d = np.array([[0.01], [-0.01], [0.0], [0.005], [-0.005], [0.0]])
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_BASE + d))
    v = give_verdict(project, run_dir)
    assert (v.finding, v.outcome) == ("no-effect", "non-result")
    eq = v.to_json()["comparisons"][0]["equivalence"]
    assert eq["tost_p"] < 0.05 and -0.05 < eq["ci"][0] < eq["ci"][1] < 0.05
    assert "lies inside ±0.05" in v.to_json()["why"]


def test_allowed_failures_and_truncations_are_reported_not_scored(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", AB_CARD.replace("  equivalence_margin: 0.05",
                                                           "  equivalence_margin: 0.05\n  allow_failed: 3"),
                           fixtures=FIXTURES10)
    base = STRONG10_BASE.copy()
    status = {("A", "ex-02", 0): "failed", ("A", "ex-04", 1): "truncated", ("baseline", "ex-04", 1): "truncated"}
    # poison the values of the unscored cells: if they were used, the means would move
    base[3, 1] = 0.0
    var = STRONG10_VAR.copy()
    var[1, 0] = var[3, 1] = 0.0
    run_dir = make_run(project, the_card(project), ab_metrics(base, var, shape=(10, 3)), status=status)
    v = give_verdict(project, run_dir)
    data = v.to_json()
    # as scored, p = 0.0135; with the two truncated cells at the worst case for the claim the gap (+0.283 at the
    # worst) is still shown above 0, judged on the bounded data (the previous rule's bounded p: 0.0525); but the
    # guard on unsupported_values, a count with no upper bound, cannot hold over A's cut-off cell: no win
    assert data["clauses"][0]["holds"] is True and data["clauses"][1]["holds"] is False
    assert v.finding == "inconclusive" and "the guard cannot be shown to hold" in data["clauses"][1]["why"]
    assert data["counts"] == {"planned": 60, "scored": 57, "truncated": 2, "failed": 1, "missing": 0}
    assert data["truncated_by_variant"] == {"baseline": 1, "A": 1}
    assert "2 cell(s) were cut off by the token limit" in data["summary"]
    assert "never scored as wrong, count against allow_failed" in data["summary"]
    assert data["metrics"]["field_recall"]["means"]["baseline"] == pytest.approx(STRONG10_BASE.mean())
    rises = data["clauses"][0]
    # ex-04 bounded: the variant's truncated cell at 0, the baseline's at 1, and the other way round
    assert rises["bounded_gaps"][0] < rises["gap"] < rises["bounded_gaps"][1]
    assert "judged with its 2 truncated cell(s) bounded at the worst case for the claim" in rises["why"]
    table = pd.read_csv(run_dir / "table.csv")
    unscored = table[(table.fixture == "ex-04") & (table.repetition == 1)]
    assert len(unscored) == 2 * 3 and unscored["value"].isna().all()


def test_truncation_cannot_win(tmp_path: Path) -> None:
    """The variant answers exactly like the baseline, but its wrong answers are cut off by the token limit:
    left out of the means it would look better; bounded at the worst case it cannot win."""
    project = make_project(tmp_path / "p", AB_CARD.replace("  equivalence_margin: 0.05",
                                                           "  equivalence_margin: 0.05\n  allow_failed: 30"),
                           fixtures=FIXTURES10)
    rng = np.random.default_rng(3)
    base = (rng.random((10, 3)) < 0.6).astype(float)
    var = (rng.random((10, 3)) < 0.6).astype(float)
    status = {("A", FIXTURES10[f], r): "truncated" for f in range(10) for r in range(3) if var[f, r] == 0}
    run_dir = make_run(project, the_card(project), ab_metrics(base, var, shape=(10, 3)), status=status)
    data = give_verdict(project, run_dir).to_json()
    rises = data["clauses"][0]
    assert data["metrics"]["field_recall"]["means"]["A"] == 1.0  # what dropping them would have shown
    assert data["finding"] != "win" and rises["holds"] is False
    assert "bounded at the worst case" in rises["why"]


# ------------------------------------------------------------------------------------------- files written


def test_verdict_files_and_ledger_row(project: Project) -> None:
    card = the_card(project)
    run_dir = make_run(project, card, ab_metrics())
    v = give_verdict(project, run_dir)
    on_disk = json.loads((run_dir / "verdict.json").read_text(), parse_constant=pytest.fail)
    assert on_disk == v.to_json()
    assert on_disk["ledger"]["seq"] == 1
    table = pd.read_csv(run_dir / "table.csv")
    assert list(table.columns) == ["fixture", "variant", "repetition", "metric", "value", "rig"]
    assert len(table) == 36 * 3
    assert set(table["rig"]) == {"test/model-1 · effort high · Test API"}
    got = table[(table.metric == "field_recall") & (table.variant == "A")].pivot(
        index="fixture", columns="repetition", values="value")
    assert np.allclose(got.to_numpy(), VAR_A)
    row = ledger.read(project)[0].fields()  # as written
    for key in ("seq", "date", "at", "card", "version", "kind", "rig", "run", "cells", "outcome", "finding",
                "metrics", "clauses", "cost", "latency", "seal_root", "evidence", "prev", "hash"):
        assert key in row, key
    assert row["finding"] == "inconclusive" and row["outcome"] == "non-result"
    assert row["evidence"] == project.relative(run_dir) and row["run"] == run_dir.name
    assert row["metrics"]["field_recall"]["noise_floor"] == pytest.approx(0.133900, abs=1e-6)
    assert row["metrics"]["field_recall"]["means"]["A"] == pytest.approx(0.805556, abs=1e-6)
    assert row["cost"] == pytest.approx(36 * 0.002)
    assert row["latency"]["median_ms"] == pytest.approx(117.5)
    assert row["date"] == row["at"][:10] and row["prev"] is None
    ledger.verify(project)


def test_infinities_become_null(tmp_path: Path) -> None:
    # one repetition: the noise floor cannot be measured (inf) and must be written as null
    project = make_project(tmp_path / "p", AB_CARD.replace("repetitions: 3", "repetitions: 1"))
    metrics = {"field_recall": {"baseline": STRONG_BASE[:, :1], "A": STRONG_VAR[:, :1]},
               "unsupported_values": {"baseline": grid(0.0, (6, 1)), "A": grid(0.0, (6, 1))},
               "abstains": {"baseline": grid(1.0, (6, 1)), "A": grid(1.0, (6, 1))}}
    run_dir = make_run(project, the_card(project), metrics)
    v = give_verdict(project, run_dir)
    text = (run_dir / "verdict.json").read_text()
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text)["metrics"]["field_recall"]["noise_floor"] is None
    assert v.finding == "inconclusive"
    assert "the run-to-run spread cannot be measured from one repetition" in v.to_json()["clauses"][0]["why"]
    assert "Infinity" not in project.ledger_path.read_text()



def test_an_unmeasured_run_term_reads_the_same_on_the_terminal_and_the_page(tmp_path: Path) -> None:
    """One repetition: the run term is infinite, written null; `verdict` and the run's page both say `±∞`, as
    an interval's end nothing bounds reads, never `±n/a` on one and nothing on the other."""
    project = make_project(tmp_path / "p", AB_CARD.replace("repetitions: 3", "repetitions: 1"))
    metrics = {"field_recall": {"baseline": STRONG_BASE[:, :1], "A": STRONG_VAR[:, :1]},
               "unsupported_values": {"baseline": grid(0.0, (6, 1)), "A": grid(0.0, (6, 1))},
               "abstains": {"baseline": grid(1.0, (6, 1)), "A": grid(1.0, (6, 1))}}
    run_dir = make_run(project, the_card(project), metrics)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "run term ±∞ (the interval's run-to-run part)" in result.output and "±n/a" not in result.output
    built = cli_run(project, "site", "--out", str(tmp_path / "site"))
    assert built.exit_code == 0, built.output
    text = _norm(page(tmp_path / "site", "cards/extract-ab/index.html").text)
    assert "sign-flip p 0.031 · run term ±∞ · fixtures 6" in text and "n/a" not in text


def test_the_bootstrap_is_seeded_from_the_seal(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    data = give_verdict(project, run_dir).to_json()
    root = json.loads((run_dir / "manifest.json").read_text())["seal_root"]
    d = stats.fixture_differences(np.array(BASE_A), np.array(VAR_A))
    expected = bootstrap_intervals([d], 10_000, seed_from(root), 0.05)[0]
    assert expected is not None
    assert data["metrics"]["field_recall"]["ci_bootstrap"] == pytest.approx(list(expected))
    assert data["bootstrap"]["seed"] == seed_from(root)


# ------------------------------------------------------------------------------------------------ the output


def test_verdict_json_output(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    result = cli_run(project, "verdict", run_dir.name, "--json")
    assert result.exit_code == 0
    data = json.loads(result.output, parse_constant=pytest.fail)
    assert data["finding"] == "inconclusive" and data["ledger"]["seq"] == 1


def test_table_csv_quotes_awkward_names(tmp_path: Path) -> None:
    text = AB_CARD.replace("surface: Test API", 'surface: "Test, \\"quoted\\" API"')
    project = make_project(tmp_path / "p", text)
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    rows = list(csv.DictReader(io.StringIO((run_dir / "table.csv").read_text())))
    assert rows[0]["rig"] == 'test/model-1 · effort high · Test, "quoted" API'


# ------------------------------------------------------------------------------------------- the table


def test_the_table_writes_each_metric_value_as_the_scores_hold_it(project: Project) -> None:
    """Integers stay integers, true/false become 1/0, null an empty value, floats their shortest form."""
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)
    scores = run_dir / "scores.jsonl"
    lines = scores.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    lines[0] = lines[0].replace('"unsupported_values":0.0', '"unsupported_values":2')
    lines[0] = lines[0].replace('"abstains":1.0', '"abstains":true')
    lines[1] = lines[1].replace('"abstains":1.0', '"abstains":null')
    second = json.loads(lines[1])
    scores.write_text("".join(lines))
    from benchcard.verdict.table import table_text

    data = read_run_data(run_dir, baseline="baseline")
    rows = list(csv.DictReader(io.StringIO(table_text(data, "rig"))))
    cell = {(r["metric"], r["fixture"], r["variant"], r["repetition"]): r["value"] for r in rows}
    a = msgspec.to_builtins(next(x for x in planned_assignment(the_card(project), 1) if x.cell == first["cell"]))
    b = msgspec.to_builtins(next(x for x in planned_assignment(the_card(project), 1) if x.cell == second["cell"]))
    at = (a["fixture"], a["variant"], str(a["repetition"]))
    assert cell[("unsupported_values", *at)] == "2" and cell[("abstains", *at)] == "1"
    assert cell[("field_recall", *at)] == repr(first["metrics"]["field_recall"])
    assert cell[("abstains", b["fixture"], b["variant"], str(b["repetition"]))] == ""


def test_the_verdict_leads_with_the_effect_in_words(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    data = json.loads((run_dir / "verdict.json").read_text())
    first = data["clauses"][0]
    m = data["metrics"][first["metric"]]
    g = (m.get("by_variant") or {}).get(first["variant"]) or m

    def n(x: float) -> str:
        return f"{x:.3f}".replace("-", "−")

    lead = result.output.splitlines()[1]
    assert lead.startswith(f"{first['variant']} raised {first['metric']} from {n(m['means'][data['baseline']])} to "
                           f"{n(m['means'][first['variant']])} (+{n(g['gap'])}, 95 % CI [{n(g['ci'][0])}, "
                           f"{n(g['ci'][1])}]), paired over {g['n_fixtures']} of 6 fixtures; ")
    assert lead.endswith(f"→ {data['comparisons'][0]['outcome']}")


@pytest.mark.parametrize("reordered", [False, True], ids=["one metric order", "a row in another order"])
def test_table_csv_bytes_are_the_row_by_row_writers(tmp_path: Path, reordered: bool) -> None:
    """The table is assembled a metric at a time; its bytes are those of the plain row-by-row writer, with odd
    values (an int among floats, true, null, 0.0 beside -0.0, 1e-07, 0.1 + 0.2), unscored cells and a fixture
    name that needs quoting."""
    fixtures = [f if f != "ex-02" else "ex,'02'" for f in FIXTURES]
    text = AB_CARD.replace("surface: Test API", 'surface: "Test, API"')
    project = make_project(tmp_path / "p", text, fixtures=fixtures)
    status = {("A", "ex,'02'", 0): "failed", ("baseline", "ex-04", 1): "truncated"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                       compact=True)
    scores = run_dir / "scores.jsonl"
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    ok = [r for r in rows if r["status"] == "ok"]
    odd = [("unsupported_values", 2), ("abstains", True), ("field_recall", None), ("field_recall", 0.0),
           ("field_recall", -0.0), ("field_recall", 1e-07), ("field_recall", 0.1 + 0.2)]  # 1e16 is no score now
    for r, (metric, v) in zip(ok, odd, strict=False):
        r["metrics"][metric] = v
    if reordered:
        ok[-1]["metrics"] = dict(reversed(ok[-1]["metrics"].items()))
    scores.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["scores_digest"] = file_digest(scores)
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    table = (run_dir / "table.csv").read_text(encoding="utf-8")
    assert table == reference_table(run_dir, "baseline", "test/model-1 · effort high · Test, API")
    assert ',field_recall,-0.0,' in table and ',field_recall,1e-07,' in table and '"ex,\'02\'",A,0,' in table


def test_a_run_folder_copied_under_another_run_id_is_not_judged_again_nor_published(tmp_path: Path) -> None:
    """Hostile audit: a judged run's folder copied by hand under another run id (its manifest still the first
    run's) got a verdict and a ledger row of its own, so the same 36 calls stood in the ledger as two results,
    and the site listed it as a second run. Every reader of a run folder refuses a manifest not named for it."""
    import shutil

    from click.testing import CliRunner

    from benchcard.cli import cli

    project = make_project(tmp_path)
    run = strong_run(project)
    assert cli_run(project, "verdict", run.name).exit_code == 0
    copy = run.with_name(run.name[:-4] + "0000")
    shutil.copytree(run, copy)
    (copy / "verdict.json").unlink()
    (copy / "table.csv").unlink()
    result = CliRunner().invoke(cli, ["-C", str(project.root), "verdict", copy.name])
    assert result.exit_code == 1 and result.stderr == (
        f"error: {project.relative(copy)}: its manifest.json is run {run.name}, not {copy.name}: a run folder copied "
        f"or renamed by hand is not a run of its own (its calls are run {run.name}'s); remove the copy, or keep it "
        "outside results/\n")
    assert [row.run for row in ledger.read(project)] == [run.name]
    built = CliRunner().invoke(cli, ["-C", str(project.root), "site", "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output
    assert (f"skipped: results/extract-ab/v1/{copy.name}: its manifest is run {run.name}, in a folder not named for "
            "it (a copy of a run folder?); left out, as every command leaves it") in built.output
    assert not (tmp_path / "site" / "runs" / "extract-ab" / "v1" / copy.name).exists()
    assert copy.name not in (tmp_path / "site" / "cards" / "extract-ab" / "index.html").read_text(encoding="utf-8")
