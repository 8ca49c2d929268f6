"""`benchcard compare`: paired verdicts over real inspect_ai logs (made here by running inspect_ai tasks against
the fake server) and over a checked-in lm-eval `--log_samples` pair, the figures checked against scipy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ..helpers_compare import LM_A, LM_B, bc, lm_column


def paired(a: np.ndarray, b: np.ndarray, alpha: float = 0.05) -> dict[str, Any]:
    """The paired figures by scipy alone: per-sample means already taken, b − a."""
    d = b - a
    ci = stats.t.interval(1 - alpha, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    return {"gap": d.mean(), "p": stats.ttest_rel(b, a).pvalue, "ci": list(ci), "se": stats.sem(d)}


# ------------------------------------------------------------------------------------------------ lm-eval


def test_lm_eval_samples_paired_by_doc_id_match_scipy(tmp_path: Path) -> None:
    result = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--win", "acc_norm not_falls 0.1",
                "--out", str(tmp_path / "cmp"), "--json")
    assert result.exit_code == 0, (result.output, result.stderr)
    v = json.loads(result.stdout)
    for metric in ("acc", "acc_norm"):
        d = lm_column(LM_B, metric) - lm_column(LM_A, metric)
        got = v["metrics"][metric]
        assert got["gap"] == pytest.approx(d.mean(), abs=1e-12)
        assert got["se_fixture"] == pytest.approx(stats.sem(d), rel=1e-9)
        flips = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=100_000,
                                       random_state=1).pvalue
        assert got["p_signflip"] == pytest.approx(flips, abs=0.01)
        # the run-to-run term of a whole eval cannot be measured and is taken as 0: the interval is scipy's paired t
        ref = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
        assert got["ci"] == pytest.approx(list(ref), abs=1e-9) and got["n_fixtures"] == 40
    assert "Epochs are not runs: each sample's epochs are averaged, and the run-to-run variance of a whole eval " \
           "cannot be measured from one log per arm, so it is taken as zero" in v["why"]
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
    assert bad.exit_code == 1 and f"{junk}:1: not JSON" in bad.stderr and "Traceback" not in bad.output
    out = tmp_path / "exists"
    out.mkdir()
    again = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--out", str(out))
    assert again.exit_code == 1 and "already exists; a comparison is written into a new folder" in again.stderr
    no_project = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--ledger")
    assert no_project.exit_code == 1 and "--ledger needs a project" in no_project.stderr


# --------------------------------------------------------------------------------------------- inspect_ai


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
    # epochs are replicates inside a sample (averaged), not runs: the statistic is scipy's paired t over the 8
    # samples' means, p and interval alike; the interval is cut at +1, the largest gap a 0-1 score can show
    assert m["p"] == pytest.approx(want["p"]) and m["df"] == 7 and m["run_var"] == 0
    assert want["ci"][1] > 1 and m["ci"] == pytest.approx([want["ci"][0], 1.0])
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




def test_three_epochs_where_every_sample_rose_alike_is_a_win_inside_the_metric_range(
        inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    """Issue 23.5: every sample right in 1 of 3 epochs against 3 of 3 (+0.667 each, sign-flip p 2/256) was
    "inconclusive" with the interval [−1.51, 2.84], the epochs taken for runs of a rig; they are replicates."""
    d, b = inspect_logs["d"], inspect_logs["b"]
    result = bc("compare", str(d), str(b), "--win", "match rises", "--out", str(tmp_path / "cmp"))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "finding: win → result (unsealed comparison)" in result.stdout
    assert "gap +0.667, no spread at all (every fixture moved alike, so no t interval), p = 0.0078, sign-flip " \
           "p = 0.0078" in result.stdout
    v = json.loads((tmp_path / "cmp" / "verdict.json").read_text(encoding="utf-8"))
    m = v["metrics"]["match"]
    assert m["gap"] == pytest.approx(2 / 3) and m["run_var"] == 0 and m["ci"] is None
    assert v["counts"]["scored"] == 48 and v["cells"] == 48  # every epoch's cell is counted and tabled
    # the reverse direction: a loss, its interval (none: no spread) never outside [−1, 1]
    back = bc("compare", str(b), str(d), "--win", "match rises", "--out", str(tmp_path / "back"), "--json")
    assert back.exit_code == 0 and json.loads(back.stdout)["finding"] == "loss"


def _hundreds(path: Path, scores: list[int]) -> Path:
    """An lm-eval samples file of a 0-100 metric (`score`)."""
    path.write_text("".join(json.dumps({"doc_id": i, "metrics": ["score"], "score": s}) + "\n"
                            for i, s in enumerate(scores)), encoding="utf-8")
    return path


def test_a_declared_range_cuts_a_0_100_metrics_interval(tmp_path: Path) -> None:
    """Issue 23.5: an interval is never beyond what the metric can show. A 0-1 metric's range is known; a 0-100
    one's is not, so the comparison says so, and `--range` declares it."""
    a = _hundreds(tmp_path / "samples_a_2026.jsonl", [0, 10, 40, 0])
    b = _hundreds(tmp_path / "samples_b_2026.jsonl", [10, 100, 100, 100])  # gaps 10, 90, 60, 100
    plain = json.loads(bc("compare", str(a), str(b), "--win", "score rises", "--out", str(tmp_path / "plain"),
                          "--json").stdout)
    assert plain["metrics"]["score"]["ci"][1] > 100  # scipy's paired t: [0.7, 129.3]
    assert ("score has values beyond [0, 1] and no declared range, so its intervals are not cut at the gaps it "
            "can show; declare it: --range 'score LOWEST HIGHEST'.") in plain["notes"]
    result = bc("compare", str(a), str(b), "--win", "score rises", "--range", "score 0 100", "--out",
                str(tmp_path / "cut"), "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    cut = json.loads(result.stdout)
    want = paired(np.array([0, 10, 40, 0.0]), np.array([10, 100, 100, 100.0]))
    assert cut["metrics"]["score"]["ci"] == pytest.approx([want["ci"][0], 100.0])
    assert cut["rule"]["ranges"] == {"score": [0.0, 100.0]}
    assert not [n for n in cut["notes"] if "no declared range" in n]
    assert cut["finding"] == plain["finding"] and cut["metrics"]["score"]["p"] == plain["metrics"]["score"]["p"]


def test_a_value_outside_the_declared_range_is_refused_in_one_line(tmp_path: Path) -> None:
    a = _hundreds(tmp_path / "samples_a_2026.jsonl", [0, 10, 40, 0])
    b = _hundreds(tmp_path / "samples_b_2026.jsonl", [10, 100, 121, 100])
    result = bc("compare", str(a), str(b), "--win", "score rises", "--range", "score 0 100", "--out",
                str(tmp_path / "c"))
    assert result.exit_code == 1 and not (tmp_path / "c").exists()
    assert result.stderr == (f"error: {b}: sample 2: score is 121, outside its declared range [0, 100] "
                             "(--range or the rule file's ranges:)\n")


# ------------------------------------------------------------------------------------------- hostile logs


def _accs(path: Path, values: list[object], task: str = "arc_easy", **more: object) -> Path:
    """An lm-eval samples file of one metric (`acc`), a value per document; `more` adds fields to every row."""
    path.write_text("".join(json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": v,
                                        "task_name": task, **more}) + "\n" for i, v in enumerate(values)),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("hidden", ["n/a", float("nan"), float("inf")])
def test_a_sample_whose_score_is_no_number_is_a_failed_cell_not_left_out_of_a_win(tmp_path: Path,
                                                                                   hidden: object) -> None:
    """Hostile audit: a log that writes its wrong answers' scores as text or NaN was compared on its right
    answers alone: 'win', cells 'scored 80 · failed 0'. Those samples are failed cells now: 'incomplete'."""
    rng = np.random.default_rng(2)
    a = _accs(tmp_path / "a.jsonl", [float(x) for x in rng.random(40) < 0.5])
    b = _accs(tmp_path / "b.jsonl", [1.0 if x else hidden for x in rng.random(40) < 0.5])
    hid = sum(1 for line in b.read_text().splitlines() if json.loads(line)["acc"] != 1.0)
    result = bc("compare", str(a), str(b), "--win", "acc rises", "--out", str(tmp_path / "c"), "--json")
    assert result.exit_code == 0, result.stderr
    v = json.loads(result.stdout)
    assert v["finding"] == "incomplete" and v["outcome"] == "non-result"
    assert v["counts"] == {"planned": 80, "scored": 80 - hid, "truncated": 0, "failed": hid, "missing": 0}
    assert f"{b}: {hid} sample(s) have no number for acc: counted as failed cells, not scored" in v["notes"]
    # said once: the rule's metric was also noted as 'not numbers and were left out', the opposite of counted
    assert [n for n in v["notes"] if "of acc" in n or "for acc" in n] == [
        f"{b}: {hid} sample(s) have no number for acc: counted as failed cells, not scored"]
    # a log's sample is no call: it did not fail 'in transport', and a comparison has a rule, not a card
    said = (f"{hid} sample(s) failed in their log (an error, or no number for a metric of the rule) and the rule "
            f"allows 0; a grid with more unscored cells than its rule allows is not judged")
    assert said in v["why"] and "transport" not in result.stdout and "the card" not in result.stdout
    allowed = tmp_path / "rule.yaml"
    allowed.write_text(f"all: [{{metric: acc, test: rises}}]\nalpha: 0.05\nequivalence_margin: 0.05\n"
                       f"allow_failed: {hid}\n", encoding="utf-8")
    judged = json.loads(bc("compare", str(a), str(b), "--rule", str(allowed), "--out", str(tmp_path / "d"),
                           "--json").stdout)
    assert judged["finding"] != "incomplete" and judged["counts"]["failed"] == hid  # allowed, and still counted
