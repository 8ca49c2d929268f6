"""table.csv from pyarrow's CSV writer (`table.write_table`, the verdict's path for large tables when pyarrow is
installed) has the bytes of the row-by-row writer, with odd values and unscored cells; a name that needs
quoting goes through `table_bytes` instead, with the same result."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow  # noqa: F401  - the dev extra installs it: the test must exercise the pyarrow path
import pytest

from benchcard._util.hashing import file_digest
from benchcard.verdict.runfolder import read_run_data
from benchcard.verdict.table import _arrow_body, table_bytes, write_table

from ..helpers_verdict import (
    AB_CARD,
    FIXTURES,
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    cli_run,
    make_project,
    make_run,
    reference_table,
    the_card,
)

ODD = [("unsupported_values", 2), ("abstains", True), ("field_recall", None), ("field_recall", 0.0),
       ("field_recall", -0.0), ("field_recall", 1e15), ("field_recall", 0.1 + 0.2), ("field_recall", 5e-324),
       ("unsupported_values", 999999999999999), ("field_recall", 1.0)]  # ±1e15: the largest a score may be


@pytest.mark.parametrize("quoted", [False, True], ids=["plain names", "a name that needs quoting"])
def test_the_verdicts_table_is_the_row_by_row_writers(tmp_path: Path, quoted: bool) -> None:
    fixtures = [f if f != "ex-02" or not quoted else "ex,'02'" for f in FIXTURES]
    surface = 'surface: "Test, API"' if quoted else "surface: Test API ∑"
    project = make_project(tmp_path / "p", AB_CARD.replace("surface: Test API", surface), fixtures=fixtures)
    status = {("A", fixtures[1], 0): "failed", ("baseline", "ex-04", 1): "truncated"}
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status,
                       compact=True)
    scores = run_dir / "scores.jsonl"
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    for r, (metric, v) in zip([r for r in rows if r["status"] == "ok"], ODD, strict=False):
        r["metrics"][metric] = v
    scores.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["scores_digest"] = file_digest(scores)
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    rig = "test/model-1 · effort high · " + ("Test, API" if quoted else "Test API ∑")
    table = (run_dir / "table.csv").read_bytes()
    assert table == reference_table(run_dir, "baseline", rig).encode("utf-8")
    data = read_run_data(run_dir, baseline="baseline")
    assert (_arrow_body(data, rig) is None) is quoted  # which writer formed it
    assert table_bytes(data, rig) == table
    write_table(tmp_path / "again.csv", data, rig, arrow_from=0)  # pyarrow's, at any size, unless quoted
    assert (tmp_path / "again.csv").read_bytes() == table
    assert b",field_recall,-0.0," in table and b",field_recall,5e-324," in table
    assert b",unsupported_values,999999999999999," in table and b",abstains,1," in table
    # the reader shares each distinct metrics object among its rows, which are then formatted once; rows that
    # are each their own object are formatted a row at a time, to the same bytes
    assert len({id(r) for r in data.metric_rows}) < len(data.metric_rows) / 2
    data.metric_rows = [None if r is None else dict(r) for r in data.metric_rows]
    assert table_bytes(data, rig) == table
    write_table(tmp_path / "unshared.csv", data, rig, arrow_from=0)
    assert (tmp_path / "unshared.csv").read_bytes() == table
