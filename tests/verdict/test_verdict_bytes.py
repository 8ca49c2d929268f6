"""verdict.json's bytes, as written: every shape a verdict or a comparison writes is compared with the file the
dict-built writer gave on the same run before the writers built `verdictfile` structs (2026-12-01), kept in
tests/data/verdicts/written/. Only what differs from one giving to the next is masked: a comparison's run id,
`given_at` and the ledger entry's `at` and `hash`.

`BENCHCARD_WRITE_GOLDEN=1` writes the expected files again (only ever from a writer known to be right).

A figure may differ from the file in its last bits, nothing else may: numpy's float64 `exp` and `log` run its own
vector code on a CPU with AVX-512 and the C library's elsewhere, so the same run gives a CI bound of
0.10320843748072678 on one machine and 0.10320843748072675 on another (an AMD EPYC with AVX2, 2026-12-05).
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.grading.sheets import blind_sheet, import_grades
from benchcard.project import Project
from benchcard.verdict.give import give_verdict

from .. import helpers_verdict
from ..helpers_verdict import (
    AB_CARD,
    FIXTURES10,
    PROBE_CARD,
    STEADY10_BASE,
    STEADY10_VAR,
    STRONG10_BASE,
    STRONG10_VAR,
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    grid,
    make_project,
    make_run,
    the_card,
)

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "written"
LM_EVAL = Path(__file__).resolve().parents[1] / "data" / "lm_eval"
ALLOW_3 = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 3")
TWO_VARIANTS = AB_CARD.replace('variants: {baseline: "", A: "Score your own output before returning it.\\n"}',
                               'variants: {baseline: "", A: "Check.\\n", B: "Check twice.\\n"}')
FIXTURES25 = [f"ex-{i:02d}" for i in range(1, 26)]


@pytest.fixture(autouse=True)
def _first_run_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's runs get the same ids whatever ran before it (a blind sheet's order is seeded by the run)."""
    monkeypatch.setattr(helpers_verdict, "_run_counter", itertools.count(1))


def _mask(text: str) -> str:
    text = re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{4}", "RUN", text)
    text = re.sub(r'"given_at": "[^"]*"', '"given_at": "…"', text)
    return re.sub(r'"(at|hash)": "[^"]*"', r'"\1": "…"', text)


def _win(root: Path) -> Path:  # one variant, every clause holds (ten fixtures, no shock)
    project = make_project(root, fixtures=FIXTURES10)
    return make_run(project, the_card(project), ab_metrics(STEADY10_BASE, STEADY10_VAR, shape=(10, 3)))


def _incomplete(root: Path) -> Path:
    project = make_project(root)
    status = {("A", "ex-02", 0): "failed", ("baseline", "ex-03", 2): "failed"}
    return make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)


def _truncated(root: Path) -> Path:  # bounded gaps, a fixture left out of the pairing, counts by variant
    project = make_project(root, ALLOW_3, fixtures=FIXTURES10)
    status = {("A", "ex-02", 0): "failed", ("A", "ex-04", 1): "truncated", ("baseline", "ex-04", 1): "truncated",
              ("A", "ex-07", 0): "truncated", ("A", "ex-07", 1): "failed", ("A", "ex-07", 2): "failed"}
    return make_run(project, the_card(project), ab_metrics(STRONG10_BASE, STRONG10_VAR, shape=(10, 3)),
                    status=status)


def _holds_unscored(root: Path) -> Path:  # a holds clause with a repetition cut off and one failed
    project = make_project(root, ALLOW_3)
    status = {("A", "ex-06", 1): "truncated", ("A", "ex-06", 2): "failed"}
    return make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), status=status)


def _loss(root: Path) -> Path:  # a guard significantly broken
    project = make_project(root, fixtures=FIXTURES10)
    return make_run(project, the_card(project), ab_metrics(STRONG10_BASE, STRONG10_VAR, shape=(10, 3),
                                                           unsupported_var=grid(1.0, (10, 3))))


def _no_effect(root: Path) -> Path:  # equivalent arms: TOST inside the margin
    project = make_project(root, fixtures=FIXTURES10)
    base = STRONG10_BASE + np.array([[0.0, 0.01, -0.01]] * 10)
    return make_run(project, the_card(project), ab_metrics(STRONG10_BASE, base, shape=(10, 3)))


def _two_variants(root: Path) -> Path:  # by_variant figures, Holm across the variants
    project = make_project(root, TWO_VARIANTS, fixtures=FIXTURES10)
    metrics = {
        "field_recall": {"baseline": STRONG10_BASE, "A": STRONG10_VAR, "B": STRONG10_BASE - 0.25},
        "unsupported_values": {v: grid(0.0, (10, 3)) for v in ("baseline", "A", "B")},
        "abstains": {v: grid(1.0, (10, 3)) for v in ("baseline", "A", "B")},
    }
    return make_run(project, the_card(project), metrics)


def _one_repetition(root: Path) -> Path:  # no run-to-run spread: infinities written null
    project = make_project(root, AB_CARD.replace("repetitions: 3", "repetitions: 1"))
    metrics = {"field_recall": {"baseline": STRONG_BASE[:, :1], "A": STRONG_VAR[:, :1]},
               "unsupported_values": {"baseline": grid(0.0, (6, 1)), "A": grid(0.0, (6, 1))},
               "abstains": {"baseline": grid(1.0, (6, 1)), "A": grid(1.0, (6, 1))}}
    return make_run(project, the_card(project), metrics)


def _many_fixtures(root: Path) -> Path:  # 25 fixtures: seeded sign-flip draws, stopped early (p_signflip_draws)
    project = make_project(root, fixtures=FIXTURES25)
    rng = np.random.default_rng(11)
    base = np.round(rng.random((25, 3)) * 4) / 4
    var = np.round(rng.random((25, 3)) * 4) / 4
    return make_run(project, the_card(project), ab_metrics(base, var, shape=(25, 3)))


def _no_such_metric(root: Path) -> Path:  # the scorer gave no value of a guard's metric
    project = make_project(root)
    metrics = ab_metrics(STRONG_BASE, STRONG_VAR)
    del metrics["unsupported_values"]
    return make_run(project, the_card(project), metrics)


def _probe(root: Path) -> Path:
    project = make_project(root, PROBE_CARD)
    says = {"probe": np.array([[1, 1, 1, 0, 1]])}
    period = {"probe": np.array([[1, 0, 1, 1, 1]])}
    return make_run(project, the_card(project, "say-negative"),
                    {"score": {"probe": (says["probe"] + period["probe"]) / 2}},
                    rules={"says-negative": says, "no-period": period})


def _probe_incomplete(root: Path) -> Path:
    project = make_project(root, PROBE_CARD)
    ones = {"probe": np.ones((1, 5))}
    status = {("probe", "say-negative", 1): "truncated", ("probe", "say-negative", 3): "failed"}
    return make_run(project, the_card(project, "say-negative"), {"score": {"probe": np.array([[1, 0, 1, 0, 0]])}},
                    rules={"says-negative": ones, "no-period": ones}, status=status)


def _graded(project: Project, run_dir: Path, sheets: Path, name: str, flip: set[int], notes: dict[int, str]) -> None:
    """A blind sheet graded like the scorer except the rows in `flip`, with `notes`, imported."""
    sheet = blind_sheet(project, run_dir, sheets / f"{name}.csv", name=name)
    with open(sheet.path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for i, r in enumerate(rows):
        r["grade"] = ("fail" if i in flip else "pass") if i % 4 else ("0.5" if i in flip else "")
        r["note"] = notes.get(i, "")
    with open(sheet.path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["row", "fixture", "output", "grade", "note"])
        writer.writeheader()
        writer.writerows(rows)
    import_grades(project, run_dir, sheet.path, name=name)


def _human(root: Path) -> Path:  # two graders' sheets: agreement, kappa, disagreements and notes
    project = make_project(root)
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    _graded(project, run_dir, root / "sheets", "alice", {1, 4, 9}, {1: "a date, reformatted", 2: "fine"})
    _graded(project, run_dir, root / "sheets", "bob", {8}, {8: "missing a party"})
    return run_dir


def _probe_human(root: Path) -> Path:
    run_dir = _probe(root)
    _graded(Project(root), run_dir, root / "sheets", "human", {2}, {2: "period"})
    return run_dir


RUNS: dict[str, Callable[[Path], Path]] = {
    "ab-win": _win, "ab-incomplete": _incomplete, "ab-truncated": _truncated, "ab-holds-unscored": _holds_unscored,
    "ab-loss": _loss, "ab-no-effect": _no_effect, "ab-two-variants": _two_variants,
    "ab-one-repetition": _one_repetition, "ab-many-fixtures": _many_fixtures, "ab-no-such-metric": _no_such_metric,
    "ab-human": _human, "probe": _probe, "probe-incomplete": _probe_incomplete, "probe-human": _probe_human,
}


FLOAT = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")


def _ulps_apart(got: str, expected: str) -> bool:
    """The same text, figure for figure, each float within 1e-12 of the file's (its last bits, see the top)."""
    if FLOAT.sub("F", got) != FLOAT.sub("F", expected):
        return False
    pairs = zip(FLOAT.findall(got), FLOAT.findall(expected), strict=True)
    return all(math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15) for a, b in pairs)


def test_only_the_last_bits_of_a_figure_may_differ() -> None:
    written = '{"ci": [0.10320843748072678, 0.5634582291859398], "why": "p = 0.0247", "n": 6}'
    assert _ulps_apart(written.replace("678", "675").replace("398", "399"), written)
    assert not _ulps_apart(written.replace("0.0247", "0.0248"), written)  # a figure that changed
    assert not _ulps_apart(written.replace("0.5634582", "0.5634592"), written)  # the 7th digit
    assert not _ulps_apart(written.replace('"n": 6', '"n": 7'), written)  # an integer is exact
    assert not _ulps_apart(written.replace("why", "wh y"), written)


def _check(name: str, text: str) -> None:
    got = _mask(text)
    expected = GOLDEN / f"{name}.json"
    if os.environ.get("BENCHCARD_WRITE_GOLDEN"):
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(got, encoding="utf-8")
    want = expected.read_text(encoding="utf-8")
    assert got == want or _ulps_apart(got, want), (got, want)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_verdict_writes_the_bytes_it_always_wrote(name: str, tmp_path: Path) -> None:
    run_dir = RUNS[name](tmp_path / "p")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "p"), "verdict", run_dir.name])
    assert result.exit_code == 0, result.output
    _check(name, (run_dir / "verdict.json").read_text(encoding="utf-8"))


def test_a_scratch_verdict_writes_the_bytes_it_always_wrote(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    run_dir = make_run(project, the_card(project), ab_metrics(STEADY10_BASE, STEADY10_VAR, shape=(10, 3)),
                       scratch="run with --scratch")
    give_verdict(Project(tmp_path / "p"), run_dir, scratch=True)
    _check("ab-scratch", (run_dir / "verdict.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "args"), [
    ("compare", ["--win", "acc rises", "--win", "acc_norm not_falls 0.1"]),
    ("compare-ledger", ["--win", "acc rises", "--ledger"]),
])
def test_a_comparison_writes_the_bytes_it_always_wrote(name: str, args: list[str], tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    a = LM_EVAL / "model-a" / "samples_arc_easy_2026-11-30T10-00-00.000000.jsonl"
    b = LM_EVAL / "model-b" / "samples_arc_easy_2026-11-30T10-00-00.000000.jsonl"
    result = CliRunner().invoke(cli, ["-C", str(root), "compare", str(a), str(b), *args, "--out",
                                      str(root / "cmp")])
    assert result.exit_code == 0, result.output
    _check(name, (root / "cmp" / "verdict.json").read_text(encoding="utf-8").replace(str(LM_EVAL), "LM_EVAL"))
