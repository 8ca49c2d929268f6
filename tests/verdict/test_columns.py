"""The run's columns (verdict/columns.py): the plan decoded or re-derived into one `Grid`, both JSONL dialects
read alike, and the scores' and outputs' columns."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchcard.project import Project
from benchcard.records.rows import dumps_line
from benchcard.run.grid import assignment_digest_and_columns, planned_assignment
from benchcard.verdict.columns import drawn_grid, read_assignment

from ..helpers_verdict import (
    AB_CARD,
    PROBE_CARD,
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    cli_run,
    make_project,
    make_run,
    reference_table,
    rewrite_rows,
    the_card,
)


def test_both_jsonl_dialects_give_the_same_verdict_and_table(tmp_path: Path) -> None:
    """Runs written before scores.jsonl was compact (spaces after separators) are read exactly as new ones."""
    status = {("A", "ex-02", 0): "failed", ("A", "ex-04", 1): "truncated", ("baseline", "ex-04", 1): "truncated"}
    seen = []
    for compact in (True, False):
        project = make_project(tmp_path / str(compact), AB_CARD)
        run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                           compact=compact)
        assert (b'", "' in (run_dir / "scores.jsonl").read_bytes()) is not compact
        result = cli_run(project, "verdict", run_dir.name, "--json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        seen.append(({k: data[k] for k in ("finding", "counts", "metrics", "clauses")},
                     (run_dir / "table.csv").read_text()))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("variants", [
    'variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
    'variants: {Z: "z\\n", baseline: "", A: "a\\n", "C, \\"quoted\\"": "c\\n", Ω: "d\\n"}',
    None,  # a probe
])
@pytest.mark.parametrize("seed", [1, 2**40 + 3])
def test_the_re_derived_plan_is_the_decoded_one(tmp_path: Path, variants: str | None, seed: int) -> None:
    # The verdict takes the plan from the re-derived assignment when the sealed file has its digest; it must be
    # exactly what decoding the file gives: names, their order (baseline first), codes and cell names.
    if variants is None:
        project = make_project(tmp_path / "p", PROBE_CARD)
        card = the_card(project, "say-negative")
    else:
        text = AB_CARD.replace('variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
                               variants)
        project = make_project(tmp_path / "p", text, fixtures=["ex-06", "ex-02", "ex-01", "ex,'3'", "ex-Ω"])
        card = the_card(project)
    digest, columns = assignment_digest_and_columns(card, seed)
    assert columns is not None
    written = b"".join(dumps_line(row) for row in planned_assignment(card, seed))
    assert digest == "sha256:" + hashlib.sha256(written).hexdigest()
    got = drawn_grid(columns, card.variant_names(), card.baseline)
    decoded = read_assignment(written, card.baseline, Path("a"))
    assert (got.cells, got.variants, got.fixtures, got.repetitions) == \
        (decoded.cells, decoded.variants, decoded.fixtures, decoded.repetitions)
    for name in ("variant", "fixture", "repetition"):
        mine, theirs = getattr(got, name), getattr(decoded, name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), name


def _with_metrics(rows: list[dict[str, Any]], odd: list[tuple[str, Any]], surrogate: bool) -> None:
    """Give the first ok rows odd metric values (the others repeat a few value sets, as runs do), reverse the key
    order of one row, and, with `surrogate`, add an escaped lone surrogate to the last row (msgspec refuses it,
    so the file is read row by row through `json`)."""
    ok = [r for r in rows if r["status"] == "ok"]
    for r, (metric, v) in zip(ok, odd, strict=False):
        r["metrics"][metric] = v
    ok[-2]["metrics"] = dict(reversed(ok[-2]["metrics"].items()))
    if surrogate:
        rows[-1]["note"] = "\udc80"


def test_scores_repeating_metric_values_read_as_row_by_row(tmp_path: Path) -> None:
    # Each distinct metrics object of scores.jsonl is decoded once and shared by the rows that repeat it; the
    # verdict and table.csv must be those of the row-by-row decoder (forced here by a row msgspec refuses).
    odd = [("unsupported_values", 2), ("abstains", True), ("abstains", False), ("field_recall", None),
           ("field_recall", -0.0), ("field_recall", 1e15), ("unsupported_values", 999999999999999)]  # ≤ MAX_METRIC
    seen = []
    for surrogate in (False, True):
        project = make_project(tmp_path / str(surrogate), AB_CARD)
        status = {("A", "ex-02", 0): "failed", ("baseline", "ex-04", 1): "truncated"}
        run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                           compact=True)
        rewrite_rows(run_dir, "scores.jsonl", lambda rows, s=surrogate: _with_metrics(rows, odd, s))
        result = cli_run(project, "verdict", run_dir.name, "--json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        table = (run_dir / "table.csv").read_text(encoding="utf-8")
        assert table == reference_table(run_dir, "baseline", "test/model-1 · effort high · Test API")
        seen.append(({k: data[k] for k in ("finding", "counts", "metrics", "clauses")}, table))
    assert ",unsupported_values,999999999999999," in seen[0][1] and ",abstains,0," in seen[0][1]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("surrogate", [False, True])
def test_a_mistyped_metric_is_named_by_its_line(project: Project, surrogate: bool) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), compact=True)

    def change(rows: list[dict[str, Any]]) -> None:
        rows[4]["metrics"]["abstains"] = "yes"
        if surrogate:
            rows[1]["note"] = "\udc80"

    rewrite_rows(run_dir, "scores.jsonl", change)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert result.output.strip().endswith("scores.jsonl: line 5: Expected `bool | int | float | null`, got `str` - "
                                          "at `$.metrics[...]`"), result.output
