"""The plots of a run's page: dots coloured by whether the variant did better on the metric's own direction."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from benchcard.publish.plots import draw_plots
from benchcard.publish.runs import Run

GOOD, BAD = "#1f4bb0", "#b3261e"


def _run(tmp_path: Path, metric: str, test: str, base: list[float], var: list[float]) -> Run:
    rows = [{"fixture": f"f{i}", "variant": v, "repetition": r, "metric": metric, "value": x + 0.01 * r}
            for i, (b, a) in enumerate(zip(base, var, strict=True)) for v, x in (("baseline", b), ("A", a))
            for r in range(2)]
    verdict = {"baseline": "baseline", "alpha": 0.05, "clauses": [{"metric": metric, "test": test}]}
    return Run(card="c", version=1, run_id="r1", folder=tmp_path, verdict=verdict, table=pd.DataFrame(rows))


def _dot_fills(svg: str) -> list[str]:
    """The fill colour of each scatter dot (matplotlib writes each dot as a <use> of one marker)."""
    return re.findall(r'<use [^>]*style="fill: (#[0-9a-f]{6})', svg)


@pytest.mark.parametrize(("metric", "test", "better"), [
    ("unsupported_values", "not_rises", "lower"), ("unsupported_values", "falls", "lower"),
    ("field_recall", "rises", "higher"), ("field_recall", "not_falls", "higher"),
])
def test_dots_are_coloured_by_the_metrics_direction(tmp_path: Path, metric: str, test: str, better: str) -> None:
    # f0 and f1 go down, f2 goes up: for a lower-is-better metric the first two are the good ones
    run = _run(tmp_path, metric, test, [2.0, 3.0, 1.0], [1.0, 1.0, 2.0])
    plots = draw_plots(run, None, tmp_path, "", narrow=True)
    assert [p["better"] for p in plots] == [better]
    for src in (plots[0]["src"], plots[0]["src_narrow"]):
        fills = _dot_fills((tmp_path / src).read_text(encoding="utf-8"))
        down, up = (GOOD, BAD) if better == "lower" else (BAD, GOOD)
        assert fills == [down, down, up], src
