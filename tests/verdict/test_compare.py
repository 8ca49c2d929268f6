"""`benchcard compare`: paired verdicts over real inspect_ai logs (made here by running inspect_ai tasks against
the fake server) and over a checked-in lm-eval `--log_samples` pair, the figures checked against scipy."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result
from scipy import stats

from benchcard import ledger
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.worstcase import calibrate, critical_t

DATA = Path(__file__).resolve().parents[1] / "data" / "lm_eval"
LM_A = DATA / "model-a" / "samples_arc_easy_2026-11-30T10-00-00.000000.jsonl"
LM_B = DATA / "model-b" / "samples_arc_easy_2026-11-30T10-00-00.000000.jsonl"


def bc(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def paired(a: np.ndarray, b: np.ndarray, alpha: float = 0.05) -> dict[str, Any]:
    """The paired figures by scipy alone: per-sample means already taken, b − a."""
    d = b - a
    ci = stats.t.interval(1 - alpha, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    return {"gap": d.mean(), "p": stats.ttest_rel(b, a).pvalue, "ci": list(ci), "se": stats.sem(d)}


# ------------------------------------------------------------------------------------------------ lm-eval


def _lm_column(path: Path, metric: str) -> np.ndarray:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return np.array([r[metric] for r in sorted(rows, key=lambda r: r["doc_id"])], dtype=float)


def test_lm_eval_samples_paired_by_doc_id_match_scipy(tmp_path: Path) -> None:
    result = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--win", "acc_norm not_falls 0.1",
                "--out", str(tmp_path / "cmp"), "--json")
    assert result.exit_code == 0, (result.output, result.stderr)
    v = json.loads(result.stdout)
    for metric in ("acc", "acc_norm"):
        d = _lm_column(LM_B, metric) - _lm_column(LM_A, metric)
        got = v["metrics"][metric]
        assert got["gap"] == pytest.approx(d.mean(), abs=1e-12)
        assert got["se_fixture"] == pytest.approx(stats.sem(d), rel=1e-9)
        flips = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=100_000,
                                       random_state=1).pvalue
        assert got["p_signflip"] == pytest.approx(flips, abs=0.01)
        # one epoch: the run-to-run term cannot be measured and is taken as 0, so the interval is scipy's paired t
        ref = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
        assert got["ci"] == pytest.approx(list(ref), abs=1e-9) and got["n_fixtures"] == 40
    assert "One epoch per sample: the run-to-run variance cannot be measured, so it is taken as zero" in v["why"]
    assert (v["baseline"], v["variants"]) == ("model-a", ["model-b"])
    assert v["finding"] == "inconclusive" and v["outcome"] == "non-result"  # p 0.096: not a win at α 0.05
    assert v["sealed"] is False and v["kind"] == "compare" and "ledger" not in v
    assert v["why"].startswith("unsealed comparison: ") and v["summary"].startswith("unsealed comparison of")
    assert v["counts"] == {"planned": 80, "scored": 80, "truncated": 0, "failed": 0, "missing": 0}
    assert [s["tool"] for s in v["sources"]] == ["lm-eval", "lm-eval"] and v["sources"][0]["task"] == "arc_easy"
    table = pd.read_csv(tmp_path / "cmp" / "table.csv")
    assert list(table.columns) == ["fixture", "variant", "repetition", "metric", "value", "rig"]
    assert len(table) == 160 and set(table.metric) == {"acc", "acc_norm"}
    assert json.loads((tmp_path / "cmp" / "verdict.json").read_text()) == v
    text = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--out", str(tmp_path / "cmp2"))
    assert text.exit_code == 0
    assert "finding: inconclusive → non-result (unsealed comparison)" in text.stdout
    assert "ledger: not entered (an unsealed comparison enters the ledger only with --ledger)" in text.stdout


def test_lm_eval_filters_become_metrics_and_lists_are_left_out(tmp_path: Path) -> None:
    def write(path: Path, right: list[int]) -> None:
        path.parent.mkdir(parents=True)
        lines = []
        for i, r in enumerate(right):
            for filt, value in (("strict-match", r), ("flexible-extract", 1)):
                lines.append(json.dumps({"doc_id": i, "filter": filt, "metrics": ["exact_match", "bleu"],
                                         "exact_match": value, "bleu": [["ref"], ["pred"]]}))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    a, b = tmp_path / "a" / "samples_gsm8k_2026.jsonl", tmp_path / "b" / "samples_gsm8k_2026.jsonl"
    write(a, [0, 0, 1, 0, 1, 0, 0, 1])
    write(b, [1, 1, 1, 1, 1, 1, 1, 1])
    result = bc("compare", str(a), str(b), "--win", "exact_match,strict-match rises", "--json")
    assert result.exit_code == 0, result.stderr
    v = json.loads(result.stdout)
    assert v["metrics"]["exact_match,strict-match"]["gap"] == pytest.approx(5 / 8)
    assert v["sources"][0]["task"] == "gsm8k"
    assert any("8 value(s) of bleu,strict-match are not numbers and were left out" in n for n in v["notes"])
    missing = bc("compare", str(a), str(b), "--win", "bleu,strict-match rises")
    assert missing.exit_code == 1
    assert ("field 'win.all.0.metric': unknown metric 'bleu,strict-match'; the logs have "
            "exact_match,flexible-extract, exact_match,strict-match") in missing.stderr


def test_rule_file_uses_the_card_clause_syntax(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text("win:\n  all:\n    - {metric: acc, test: rises}\n    - {metric: acc_norm, test: not_falls, "
                    "margin: 0.1}\n  alpha: 0.1\n  equivalence_margin: 0.02\n", encoding="utf-8")
    ok = bc("compare", str(LM_A), str(LM_B), "--rule", str(rule), "--json")
    assert ok.exit_code == 0, ok.stderr
    v = json.loads(ok.stdout)
    assert v["alpha"] == 0.1 and v["rule"]["all"][1] == {"metric": "acc_norm", "test": "not_falls", "margin": 0.1}
    assert v["equivalence_margin"] == 0.02 and v["confidence"] == pytest.approx(0.9)
    rule.write_text("all:\n  - {metric: acc, test: rises}\n  - {metric: accuracy, test: rises}\n"
                    "equivalence_margin: 0.02\n", encoding="utf-8")
    bad = bc("compare", str(LM_A), str(LM_B), "--rule", str(rule))
    assert bad.exit_code == 1
    assert bad.stderr.strip() == (f"error: {rule}:3: field 'win.all.1.metric': unknown metric 'accuracy'; the logs "
                                  "have acc, acc_norm")
    rule.write_text("all:\n  - {metric: acc_norm, test: not_falls}\nequivalence_margin: 0.02\n", encoding="utf-8")
    guard = bc("compare", str(LM_A), str(LM_B), "--rule", str(rule))
    assert guard.exit_code == 1 and "field 'win.all.0.margin': a not_falls guard needs a margin" in guard.stderr


def test_refusals_are_one_line(tmp_path: Path) -> None:
    none = bc("compare", str(LM_A), str(LM_B))
    assert none.exit_code == 1 and none.stderr.strip() == (
        "error: compare needs a win rule: --win 'METRIC rises' or --rule FILE; the metrics both logs have: acc, "
        "acc_norm")
    shape = bc("compare", str(LM_A), str(LM_B), "--win", "acc")
    assert shape.exit_code == 1 and "expected METRIC TEST [MARGIN]" in shape.stderr
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"doc_id": 999, "metrics": ["acc"], "acc": 1}) + "\n", encoding="utf-8")
    apart = bc("compare", str(LM_A), str(other), "--win", "acc rises")
    assert apart.exit_code == 1 and "share no sample (id and epoch)" in apart.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text("{not json\n", encoding="utf-8")
    bad = bc("compare", str(LM_A), str(junk), "--win", "acc rises")
    assert bad.exit_code == 1 and f"{junk}:1: not a JSON object" in bad.stderr and "Traceback" not in bad.output
    out = tmp_path / "exists"
    out.mkdir()
    again = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--out", str(out))
    assert again.exit_code == 1 and "already exists; a comparison is written into a new folder" in again.stderr
    no_project = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--ledger")
    assert no_project.exit_code == 1 and "--ledger needs a project" in no_project.stderr


def test_ledger_only_when_asked_and_marked_unsealed(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    project = Project(root)
    first = CliRunner().invoke(cli, ["-C", str(root), "compare", str(LM_A), str(LM_B), "--win", "acc rises"])
    assert first.exit_code == 0, first.stderr
    assert ledger.read(project) == [] and len(list((root / "results" / "_compare").iterdir())) == 1
    entered = CliRunner().invoke(cli, ["-C", str(root), "compare", str(LM_A), str(LM_B), "--win", "acc rises",
                                       "--ledger", "--json"])
    assert entered.exit_code == 0, entered.stderr
    v = json.loads(entered.stdout)
    [row] = [r.fields() for r in ledger.read(project)]  # as written
    assert row["kind"] == "compare" and row["unsealed"] is True and row["seal_root"] is None
    assert row["finding"] == v["finding"] and row["evidence"] == v["evidence"] and row["run"] == v["run"]
    assert v["ledger"]["seq"] == 1 and (root / v["evidence"] / "verdict.json").is_file()
    assert row["metrics"]["acc"]["gap"] == pytest.approx(0.125)
    verify = CliRunner().invoke(cli, ["-C", str(root), "ledger", "--verify"])
    assert verify.exit_code == 0, verify.output
    assert "ledger ok: 1 row(s)" in verify.stdout and "note" not in verify.stdout  # anchored: table, verdict
    shown = CliRunner().invoke(cli, ["-C", str(root), "ledger"])
    assert "unsealed" in shown.stdout and "compare" in shown.stdout
    site = CliRunner().invoke(cli, ["-C", str(root), "site"])
    assert site.exit_code == 0, site.output
    assert "compare (unsealed)" in (root / "site" / "ledger.html").read_text(encoding="utf-8")
    table = root / v["evidence"] / "table.csv"
    table.write_text(table.read_text().replace("model-b", "model-x"), encoding="utf-8")
    tampered = CliRunner().invoke(cli, ["-C", str(root), "ledger", "--verify"])
    assert tampered.exit_code == 1 and f"{v['evidence']}/table.csv changed" in tampered.stdout


# --------------------------------------------------------------------------------------------- inspect_ai


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Real inspect_ai logs: the same 8-sample task, 3 epochs, run by inspect_ai against the fake server, as
    model-a (answers blue except on q6 and q7) and model-b (red everywhere), and model-c on 7 of the samples."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    folder = tmp_path_factory.mktemp("inspect")
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "not-a-key"
    out: dict[str, Path] = {}
    try:
        with FakeServer() as server:
            for name, config, n in (
                ("a", {"default_reply": "blue", "replies": [{"match": "q6", "reply": "red"},
                                                             {"match": "q7", "reply": "red"}]}, 8),
                ("b", {"default_reply": "red"}, 8),
                ("c", {"default_reply": "red"}, 7),
            ):
                server.configure(config)
                task = Task(dataset=[Sample(input=f"q{i}: what colour is a ripe tomato?", target="red", id=f"q{i}")
                                     for i in range(n)], solver=generate(), scorer=match(), epochs=3, name="colour")
                [log] = inspect_eval(task, model=f"openai/model-{name}", model_base_url=server.base_url,
                                     model_args={"responses_api": False}, log_dir=str(folder / name),
                                     display="none", log_format="eval" if name != "c" else "json")
                assert log.status == "success", log.error
                out[name] = Path(log.location)
    finally:
        if saved is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = saved
    yield out


def _inspect_means(path: Path) -> np.ndarray:
    """Per-sample means over epochs, read with inspect_ai's own reader and value_to_float."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    by_id: dict[str, list[float]] = {}
    for s in read_eval_log(str(path)).samples or []:
        assert s.scores is not None
        by_id.setdefault(str(s.id), []).append(to_float(s.scores["match"].value))
    return np.array([np.mean(by_id[k]) for k in sorted(by_id)])


def test_inspect_logs_paired_by_id_and_epoch(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    a, b = inspect_logs["a"], inspect_logs["b"]
    assert a.suffix == ".eval"
    result = bc("compare", str(a), str(b), "--win", "match rises", "--out", str(tmp_path / "cmp"), "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    v = json.loads(result.stdout)
    want = paired(_inspect_means(a), _inspect_means(b))
    m = v["metrics"]["match"]
    assert m["gap"] == pytest.approx(want["gap"]) == pytest.approx(0.75)  # 6 of 8 samples gain, every epoch
    # no run-to-run spread, so the statistic is scipy's paired t; its p and interval are then calibrated to the
    # worst case over the variance components (three epochs measure the run term on 2 degrees of freedom)
    runs = np.ones(1, dtype=bool)
    eight = np.full(1, 8, dtype=np.int64)
    t = np.array([0.75 / want["se"]])
    assert m["p"] == pytest.approx(min(1.0, 2 * float(calibrate(t, 7.0, eight, eight, 3, runs)[0])))
    crit = float(critical_t(0.025, 7.0, eight, eight, 3, runs)[0])
    assert crit > stats.t.ppf(0.975, 7) and m["p"] > want["p"]
    assert m["ci"] == pytest.approx([0.75 - crit * want["se"], 0.75 + crit * want["se"]])
    assert m["means"] == pytest.approx({"openai/model-a": 0.25, "openai/model-b": 1.0})
    assert m["noise_floor"] == 0.0  # every epoch answered alike: no run-to-run spread
    assert v["cells"] == 48 and v["counts"]["scored"] == 48
    assert v["finding"] == "win" and v["outcome"] == "result" and v["sealed"] is False
    table = pd.read_csv(tmp_path / "cmp" / "table.csv")
    assert sorted(set(table.repetition)) == [1, 2, 3] and len(table) == 48
    text = bc("compare", str(a), str(b), "--win", "match rises", "--out", str(tmp_path / "cmp2"))
    assert "unsealed comparison · inspect_ai · openai/model-a (baseline" in text.stdout
    assert "finding: win → result (unsealed comparison)" in text.stdout
    assert f"wrote table.csv, verdict.json, 1 plot(s) → {tmp_path / 'cmp2'}" in text.stdout
    [plot] = (tmp_path / "cmp2").glob("*.svg")
    svg = plot.read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "match: per-fixture paired differences" in svg and "q7" in svg


def test_more_samples_than_a_figure_shows_get_no_plot(tmp_path: Path) -> None:
    for arm, shift in (("a", 0), ("b", 1)):
        lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float((i + shift) % 2)})
                 for i in range(150)]
        (tmp_path / f"{arm}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = bc("compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--win", "acc rises", "--out",
                str(tmp_path / "cmp"))
    assert result.exit_code == 0, result.stderr
    assert "no plots: 150 samples are more than a per-sample figure shows (100 at most)" in result.stdout
    assert not list((tmp_path / "cmp").glob("*.svg"))


def test_inspect_sample_missing_from_one_log_is_counted(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    a, c = inspect_logs["a"], inspect_logs["c"]  # c is a .json log of 7 samples
    assert c.suffix == ".json"
    strict = bc("compare", str(a), str(c), "--win", "match rises", "--json")
    v = json.loads(strict.stdout)
    assert v["finding"] == "incomplete" and v["counts"]["missing"] == 3  # q7, every epoch
    rule = tmp_path / "rule.yaml"
    rule.write_text("all: [{metric: match, test: rises}]\nequivalence_margin: 0.05\nallow_failed: 3\n")
    allowed = json.loads(bc("compare", str(a), str(c), "--rule", str(rule), "--json").stdout)
    # q0–q6 in both: a is right only on q6, c everywhere
    assert allowed["finding"] == "win" and allowed["metrics"]["match"]["gap"] == pytest.approx(6 / 7)
    mixed = bc("compare", str(a), str(LM_B), "--win", "match rises")
    assert mixed.exit_code == 1 and "is an inspect_ai log but" in mixed.stderr


def test_a_one_epoch_comparison_can_win_and_says_the_run_term_is_taken_as_zero(tmp_path: Path) -> None:
    """lm-eval logs have one epoch: a clear paired gain is a win, with the plain paired interval, said so."""
    rows_a = [json.loads(line) for line in LM_A.read_text(encoding="utf-8").splitlines()]
    for name, acc in (("model-a", lambda i: float(i % 2)), ("model-b", lambda i: 1.0 if i % 5 else float(i % 2))):
        folder = tmp_path / name
        folder.mkdir()
        lines = [json.dumps({**r, "acc": acc(r["doc_id"]), "acc_norm": acc(r["doc_id"])}) for r in rows_a]
        (folder / LM_A.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    a, b = tmp_path / "model-a" / LM_A.name, tmp_path / "model-b" / LM_A.name
    result = bc("compare", str(a), str(b), "--win", "acc rises", "--out", str(tmp_path / "cmp"), "--json")
    assert result.exit_code == 0, (result.output, result.stderr)
    v = json.loads(result.stdout)
    d = _lm_column(b, "acc") - _lm_column(a, "acc")
    ref = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert v["metrics"]["acc"]["ci"] == pytest.approx(list(ref), abs=1e-9) and ref[0] > 0
    assert v["finding"] == "win" and v["outcome"] == "result"
    assert "One epoch per sample" in v["why"] and v["why"].startswith("unsealed comparison: ")
