"""A run folder read for the verdict (verdict/runfolder.py, `read_run_data`): rows named by file, line and field when
mistyped, null metrics unscored, rows in any order, outputs that disagree with the plan refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchcard._util.hashing import file_digest
from benchcard.errors import VerdictError
from benchcard.project import Project
from benchcard.verdict.runfolder import read_run_data

from ..helpers_verdict import (
    ab_metrics,
    cli_run,
    make_run,
    rewrite_rows,
    the_card,
)


def test_a_mistyped_row_is_named_by_file_line_and_field(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)
    assignment = run_dir / "sealed" / "assignment.jsonl"
    lines = assignment.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"repetition":', '"repetition":"one","was":')
    assignment.write_text("".join(lines))
    result = cli_run(project, "verdict", run_dir.name)  # the sealed digest catches the edit first
    assert result.exit_code == 1 and "sealed/assignment.jsonl changed after the plan was written" in result.output
    with pytest.raises(VerdictError, match=r"assignment.jsonl: line 3: Expected `int`, got `str` - at `\$.repetition`"):
        read_run_data(run_dir, baseline="baseline")


def test_a_metric_that_is_null_counts_as_unscored(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)
    scores = run_dir / "scores.jsonl"
    text = scores.read_text()
    first = text.index('"unsupported_values":0.0')
    scores.write_text(text[:first] + '"unsupported_values":null' + text[first + len('"unsupported_values":0.0'):])
    data = read_run_data(run_dir, baseline="baseline")
    assert np.isnan(data.metrics["unsupported_values"]).sum() == 1


@pytest.mark.parametrize(("written", "shown"), [("1e300", "1e+300"), ("-1e300", "-1e+300"), ("1e308", "1e+308"),
                                               ("1e400", "inf"), ("NaN", "nan"), ("1000000000000000001", None),
                                               ("-1e16", "-1e+16")])
def test_a_score_the_statistics_cannot_square_is_refused_in_one_line(project: Project, written: str,
                                                                       shown: str | None) -> None:
    """A hand-written unsupported_values of 1e300 overflowed the sums of squares into inf and NaN: the verdict gave
    a gap of 555…(300 digits) and said the run-to-run spread could not be measured (RuntimeWarnings only on
    stderr). A score or metric beyond ±1e15, or NaN, is refused before any statistic, naming the file, the line,
    the field and the range taken; the verdict and the export both say so (hostile audit 13)."""
    run_dir = make_run(project, the_card(project), ab_metrics())
    scores = run_dir / "scores.jsonl"
    lines = scores.read_text().splitlines(keepends=True)
    assert '"unsupported_values": 0.0' in lines[4]
    lines[4] = lines[4].replace('"unsupported_values": 0.0', f'"unsupported_values": {written}')
    scores.write_text("".join(lines))
    _record_digest(run_dir)
    for args in (("verdict", run_dir.name), ("export", run_dir.name, "--format", "csv")):
        result = cli_run(project, *args)
        assert result.exit_code == 1, result.output
        assert len(result.output.strip().splitlines()) == 1
        assert "scores.jsonl: line 5: field 'metrics.unsupported_values': " in result.output
        assert f": {shown if shown else written} is not a score: expected a number from -1e+15 to 1e+15" \
               in result.output
    assert not (run_dir / "verdict.json").exists()


@pytest.mark.parametrize("tiny", [5e-324, -0.0, 2.2250738585072014e-308])
def test_subnormal_and_negative_zero_scores_are_taken(project: Project, tiny: float) -> None:
    """A subnormal or a −0.0 metric is a number like any other: the verdict is given, the gap is not '−0.000'."""
    metrics = ab_metrics(unsupported_var=np.full((6, 3), tiny))
    result = cli_run(project, "verdict", make_run(project, the_card(project), metrics).name)
    assert result.exit_code == 0, result.output
    assert "unsupported_values (A − baseline): means baseline 0.000 · A 0.000; gap +0.000" in result.output


def test_files_in_any_row_order_give_the_same_verdict_and_table(project: Project) -> None:
    # The runner writes outputs as calls finish, so a file's rows need not follow the plan; the reader's
    # shortcut for rows in plan order (or outputs in the scores' order) must give what the look-up gives.
    card = the_card(project)
    status = {("A", "ex-02", 1): "truncated"}
    verdicts = []
    for order in ("plan", "outputs reversed", "both reversed", "both shuffled alike"):
        run_dir = make_run(project, card, ab_metrics(), status=status, compact=True)
        if order != "plan":
            rewrite_rows(run_dir, "outputs.jsonl", lambda rows: rows.reverse())
        if order == "both reversed":
            rewrite_rows(run_dir, "scores.jsonl", lambda rows: rows.reverse())
        if order == "both shuffled alike":
            for name in ("outputs.jsonl", "scores.jsonl"):
                rewrite_rows(run_dir, name, lambda rows: rows.sort(key=lambda r: r["cell"][::-1]))
        result = cli_run(project, "verdict", run_dir.name, "--allow-incomplete")
        assert result.exit_code == 0, (order, result.output)
        data = json.loads((run_dir / "verdict.json").read_text())
        for key in ("run", "evidence", "given_at", "ledger"):
            data.pop(key)
        data["summary"] = data["summary"].replace(run_dir.name, "RUN")
        verdicts.append((data, (run_dir / "table.csv").read_bytes()))
    assert verdicts[0][0]["counts"]["truncated"] == 1
    assert all(v == verdicts[0] for v in verdicts[1:])


@pytest.mark.parametrize("order", ["plan", "reversed"])
@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: rows[3].update(fixture="ex-06" if rows[3]["fixture"] != "ex-06" else "ex-05"),
     r"outputs\.jsonl: cell c[0-9a-f]{10} names fixture 'ex-0\d' but the plan has 'ex-0\d'"),
    (lambda rows: rows[2].update(cell="c0000000000"), r"outputs\.jsonl: cell c0000000000 is not in the run's plan"),
    (lambda rows: rows[4].update(cell=rows[5]["cell"]), r"outputs\.jsonl: cell c[0-9a-f]{10} is recorded twice"),
])
def test_outputs_that_disagree_with_the_plan_are_refused(project: Project, order: str, change: Any,
                                                        message: str) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())

    def edit(rows: list[dict[str, Any]]) -> None:
        if order == "reversed":
            rows.reverse()
        change(rows)

    rewrite_rows(run_dir, "outputs.jsonl", edit)
    with pytest.raises(VerdictError, match=message):
        read_run_data(run_dir, allow_incomplete=True)
    result = cli_run(project, "verdict", run_dir.name, "--allow-incomplete")
    assert result.exit_code == 1 and re.search(message, result.output), result.output


def _record_digest(run_dir: Path) -> None:
    """The manifest's digest of scores.jsonl as the file now is: as if benchcard's own scorer had written it."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["scores_digest"] = file_digest(run_dir / "scores.jsonl")
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
