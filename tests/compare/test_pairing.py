"""Two logs' samples paired into a run's arrays (compare/_pairing.py): sample ids as fixtures in numeric
order, epochs as repetitions, a sample missing from one log a missing cell, and the arms' names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchcard.compare._logs import Sample, Samples
from benchcard.compare._pairing import labels_of, pair, shared_metrics
from benchcard.errors import CompareError
from benchcard.records.rows import Manifest, RigRecord
from benchcard.verdict.columns import FAILED, MISSING, OK, TRUNCATED

from ..helpers_compare import LM_B, bc
from ..helpers_digits import MANY_DIGITS, NOT_NUMBERS, THIRTY_DIGITS

MANIFEST = Manifest(run="c", card="t", version=0, kind="compare", seal_root="",
                    rig=RigRecord(provider="", model="", line="a vs b"))


def _log(path: str, samples: dict[tuple[str, int], Sample], metrics: tuple[str, ...] = ("acc", "f1"),
         model: str = "") -> Samples:
    return Samples(path=Path(path), tool="lm-eval", model=model, task="t", samples=samples, metrics=metrics)


def test_shared_metrics_keep_the_first_logs_order() -> None:
    a = _log("a.jsonl", {}, metrics=("f1", "acc", "only_a"))
    b = _log("b.jsonl", {}, metrics=("acc", "only_b", "f1"))
    assert shared_metrics(a, b) == ["f1", "acc"]


def test_cells_are_paired_by_sample_and_epoch_and_a_missing_sample_is_a_missing_cell() -> None:
    ok = lambda acc: Sample("ok", {"acc": acc, "f1": acc / 2})  # noqa: E731
    a = _log("a.jsonl", {("10", 0): ok(1.0), ("2", 0): ok(0.0), ("2", 1): Sample("truncated", {}),
                         ("x", 0): ok(1.0)})
    b = _log("b.jsonl", {("10", 0): ok(0.0), ("2", 0): ok(1.0), ("2", 1): Sample("failed", {})},
             metrics=("acc",))
    data = pair(a, b, ["A", "B"], "acc", Path("out"), MANIFEST)
    assert data.fixtures == ["2", "10", "x"]  # numeric ids in numeric order, then the others
    assert data.repetitions == [0, 1] and data.variants == ["A", "B"]
    cells = list(zip(data.cells, data.status.tolist(), data.score.tolist(), strict=True))
    by_cell = {c: (s, v) for c, s, v in cells}
    assert by_cell["a:2:0"] == (OK, 0.0) and by_cell["b:2:0"] == (OK, 1.0)
    assert by_cell["a:2:1"][0] == TRUNCATED and by_cell["b:2:1"][0] == FAILED
    assert by_cell["a:x:0"] == (OK, 1.0) and by_cell["b:x:0"][0] == MISSING  # only in the first log
    assert np.isnan(by_cell["b:x:0"][1]) and np.isnan(by_cell["a:2:1"][1])
    assert set(data.metrics) == {"acc"}  # f1 is not in the second log: no rule can compare it
    i = data.cells.index("a:10:0")
    assert (data.variant[i], data.fixture[i], data.repetition[i]) == (0, 1, 0)
    assert data.metric_rows[i] == {"acc": 1.0}


def test_logs_that_share_no_sample_are_refused() -> None:
    a = _log("a.jsonl", {("1", 0): Sample("ok", {"acc": 1.0})})
    b = _log("b.jsonl", {("2", 0): Sample("ok", {"acc": 1.0})})
    with pytest.raises(CompareError, match=r"a\.jsonl and b\.jsonl share no sample \(id and epoch\)"):
        pair(a, b, ["A", "B"], "acc", Path("out"), MANIFEST)


@pytest.mark.parametrize(("a", "b", "labels"), [
    (("m/a", "x/log.jsonl"), ("m/b", "y/log.jsonl"), ("m/a", "m/b")),  # the models
    (("m", "x/first.jsonl"), ("m", "y/second.jsonl"), ("first", "second")),  # one model: the file names
    (("", "x/log.jsonl"), ("", "y/log.jsonl"), ("x/log.jsonl", "y/log.jsonl")),  # one name: the paths
    (("m", "x/log.jsonl"), ("m", "x/log.jsonl"), ("A", "B")),  # the same log twice
])
def test_the_arms_are_named_by_what_tells_them_apart(a: tuple[str, str], b: tuple[str, str],
                                                      labels: tuple[str, str]) -> None:
    assert labels_of(_log(a[1], {}, model=a[0]), _log(b[1], {}, model=b[0])) == labels


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



def test_a_sample_id_of_digits_other_than_ascii_is_text_not_a_traceback(inspect_logs: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    """Numeric ids are put in numeric order; a text id of superscript or circled digits ('²', '①') passed
    str.isdigit() and int() refused it, so `compare` ended in a ValueError traceback. They are text ids now."""
    text = inspect_logs["c"].read_text(encoding="utf-8")
    assert text.count('"q0"') and text.count('"q1"')
    for name in ("x.json", "y.json"):
        (tmp_path / name).write_text(text.replace('"q0"', '"²"').replace('"q1"', '"①"'), encoding="utf-8")
    result = bc("compare", str(tmp_path / "x.json"), str(tmp_path / "y.json"), "--win", "match rises", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"]["scored"] == 2 * 7 * 3


def test_sample_ids_of_ascii_digits_of_any_length_sort_as_numbers_and_the_others_as_text() -> None:
    """'007' is 7, 30 digits a number past any 64-bit one, 5,000 digits one past what int() converts (a
    ValueError before); '²', '٣', '', ' 1', '+1' and '1_000' are text ids, after every number."""
    ids = ["10", "007", "0", "2", THIRTY_DIGITS, MANY_DIGITS, *NOT_NUMBERS]
    samples = {(i, 0): Sample("ok", {"acc": 1.0}) for i in ids}
    data = pair(_log("a.jsonl", samples), _log("b.jsonl", samples), ["A", "B"], "acc", Path("out"), MANIFEST)
    assert data.fixtures == ["0", "2", "007", "10", THIRTY_DIGITS, MANY_DIGITS, *sorted(NOT_NUMBERS)]


def test_a_sample_is_compared_over_the_epochs_both_logs_scored() -> None:
    """A log of five epochs against one of a single epoch: each sample's mean is taken over the epochs both logs
    scored, so the second log is not better merely for having run fewer epochs. Over its own epochs alone the
    first log's 1/5 would meet the second's 1 on every sample, a gain of 0.8 and a win; over the shared epoch
    both score 1 and nothing moved."""
    from benchcard.card.reader import read_win_rule
    from benchcard.compare import rule_on
    from benchcard.records.verdictfile import VerdictHead

    ids = [f"s{i}" for i in range(10)]
    five = _log("a.eval", {(s, e): Sample("ok", {"acc": float(e == 1)}) for s in ids for e in range(1, 6)},
                metrics=("acc",))
    one = _log("b.eval", {(s, 1): Sample("ok", {"acc": 1.0}) for s in ids}, metrics=("acc",))
    win = read_win_rule({"all": [{"metric": "acc", "test": "rises"}], "equivalence_margin": 0.05,
                         "allow_failed": 40}, {}, "rule", {"acc"}, {s: None for s in ids})
    head = VerdictHead(run="r", card="compare", version=None, kind="compare", rig="a vs b", seal_root=None,
                       evidence="r")
    _, verdict = rule_on(five, one, win, ("A", "B"), head, 1, 200, Path("out"))
    assert verdict.metrics["acc"].gap == 0.0 and verdict.finding != "win"
    assert verdict.metrics["acc"].means == {"A": 1.0, "B": 1.0}


def test_samples_left_out_of_the_figures_are_not_counted_as_compared_and_are_named() -> None:
    """s6 and s7 were scored by both logs, but in different epochs (A's epoch 2 and B's epoch 1 failed), and s8
    is in A alone: none is in the figures. The summary said 9 samples while the gap rested on 6, and s6, s7 went
    unnamed (only their failed and missing cells were counted). The summary now counts the 6, and one note names
    the others and why."""
    from benchcard.card.reader import read_win_rule
    from benchcard.compare import rule_on
    from benchcard.records.verdictfigures import known
    from benchcard.records.verdictfile import VerdictHead

    ids = [f"s{i}" for i in range(8)]

    def status(log: str, s: str, e: int) -> str:
        return "failed" if s in ("s6", "s7") and (log, e) in (("a", 2), ("b", 1)) else "ok"

    a = _log("a.eval", {(s, e): Sample(status("a", s, e), {"acc": float(i % 2)}) for i, s in enumerate(ids)
                        for e in (1, 2)} | {("s8", 1): Sample("ok", {"acc": 1.0})}, metrics=("acc",))
    b = _log("b.eval", {(s, e): Sample(status("b", s, e), {"acc": 1.0}) for s in ids for e in (1, 2)},
             metrics=("acc",))
    win = read_win_rule({"all": [{"metric": "acc", "test": "rises"}], "equivalence_margin": 0.05,
                         "allow_failed": 40}, {}, "rule", {"acc"}, {s: None for s in [*ids, "s8"]})
    head = VerdictHead(run="r", card="compare", version=None, kind="compare", rig="a vs b", seal_root=None,
                       evidence="r")
    _, verdict = rule_on(a, b, win, ("A", "B"), head, 1, 200, Path("out"))
    [clause] = verdict.clauses
    assert known(clause.n_fixtures) == 6
    assert " on 6 of 9 sample(s) of t: " in verdict.summary, verdict.summary
    assert ("left out of the figures, 3 of 9 sample(s): s6, s7 (scored in both logs, but in no epoch both scored: "
            "an epoch pairs only with the same epoch); s8 (in one log only)") in verdict.notes, verdict.notes
