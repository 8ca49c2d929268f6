"""The win rule of a comparison (compare/_rule.py): a card's clause syntax from a YAML file or from
`--win` options, checked by the card reader against the logs' metrics, every error one line naming its source."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchcard.compare._rule import MAX_RULE_BYTES, ranges_from_options, rule_from_file, rule_from_options
from benchcard.errors import CompareError

from ..helpers_compare import LM_A, LM_B, bc

KNOWN = {"acc", "acc_norm"}
SAMPLES = {"0": None, "1": None}


def test_win_options_become_clauses_with_their_settings() -> None:
    win = rule_from_options(["acc rises", "acc_norm not_falls 0.1"], 0.1, 0.02, 3, KNOWN, SAMPLES)
    assert [(c.metric, c.test, c.margin) for c in win.clauses] == [("acc", "rises", None),
                                                                  ("acc_norm", "not_falls", 0.1)]
    assert (win.alpha, win.equivalence_margin, win.allow_failed) == (0.1, 0.02, 3)


@pytest.mark.parametrize(("clause", "message"), [
    ("acc", "--win 'acc': expected METRIC TEST [MARGIN], e.g. --win 'accuracy rises'"),
    ("acc rises a lot", "--win 'acc rises a lot': expected METRIC TEST [MARGIN]"),
    ("acc not_falls wide", "--win 'acc not_falls wide': margin 'wide' is not a number"),
    ("accuracy rises", "--win: field 'win.all.0.metric': unknown metric 'accuracy'; the logs have acc, acc_norm"),
])
def test_a_bad_win_option_is_named(clause: str, message: str) -> None:
    with pytest.raises(CompareError) as err:
        rule_from_options([clause], 0.05, 0.05, 0, KNOWN, SAMPLES)
    assert str(err.value).startswith(message)


def test_a_file_with_or_without_the_win_key_gives_the_same_rule(tmp_path: Path) -> None:
    body = "all:\n  - {metric: acc, test: rises}\nalpha: 0.1\nequivalence_margin: 0.02\n"
    bare, keyed = tmp_path / "bare.yaml", tmp_path / "keyed.yaml"
    bare.write_text(body, encoding="utf-8")
    keyed.write_text("win:\n" + "".join(f"  {line}\n" for line in body.splitlines()), encoding="utf-8")
    assert rule_from_file(bare, KNOWN, SAMPLES) == rule_from_file(keyed, KNOWN, SAMPLES)
    assert rule_from_file(bare, KNOWN, SAMPLES)[0].alpha == 0.1


def test_an_error_in_a_keyed_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text("win:\n  all:\n    - {metric: acc, test: rises}\n    - {metric: f1, test: rises}\n"
                    "  equivalence_margin: 0.02\n", encoding="utf-8")
    with pytest.raises(CompareError) as err:
        rule_from_file(path, KNOWN, SAMPLES)
    assert str(err.value) == (f"{path}:4: field 'win.all.1.metric': unknown metric 'f1'; the logs have acc, "
                              "acc_norm")


def test_a_file_that_is_not_a_rule_is_refused_in_one_line(tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("- {metric: acc, test: rises}\n", encoding="utf-8")
    with pytest.raises(CompareError, match=r"list\.yaml: expected a mapping with all: \[clauses\]"):
        rule_from_file(listed, KNOWN, SAMPLES)
    big = tmp_path / "big.yaml"
    big.write_text("#" * (MAX_RULE_BYTES + 1), encoding="utf-8")
    with pytest.raises(CompareError, match=rf"big\.yaml: {MAX_RULE_BYTES + 1} bytes; a win rule file is a few lines"):
        rule_from_file(big, KNOWN, SAMPLES)
    with pytest.raises(CompareError, match=r"absent\.yaml: unreadable: "):
        rule_from_file(tmp_path / "absent.yaml", KNOWN, SAMPLES)


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



def test_a_file_may_declare_a_metrics_range(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text("all:\n  - {metric: acc, test: rises}\nequivalence_margin: 0.05\nranges: {acc: [0, 100]}\n",
                    encoding="utf-8")
    win, ranges = rule_from_file(path, KNOWN, SAMPLES)
    assert [c.metric for c in win.clauses] == ["acc"] and ranges == {"acc": (0.0, 100.0)}
    path.write_text("all:\n  - {metric: acc, test: rises}\nranges: {acc: [100, 0]}\n", encoding="utf-8")
    with pytest.raises(CompareError) as err:
        rule_from_file(path, KNOWN, SAMPLES)
    assert str(err.value) == (f"{path}: field 'ranges.acc': expected two finite numbers, the lowest below the "
                              "highest, got 100 and 0")


@pytest.mark.parametrize(("text", "message"), [
    ("acc 0", "--range 'acc 0': expected METRIC LOWEST HIGHEST, e.g. --range 'score 0 100'"),
    ("acc zero 10", "--range 'acc zero 10': expected the lowest and highest value, two numbers, got ['zero', '10']"),
    ("acc 5 5", "--range 'acc 5 5': expected two finite numbers, the lowest below the highest, got 5 and 5"),
    ("f1 0 1", "--range 'f1 0 1': no metric 'f1' in both logs (they have: acc, acc_norm)"),
])
def test_a_bad_range_option_is_named(text: str, message: str) -> None:
    with pytest.raises(CompareError) as err:
        ranges_from_options([text], KNOWN)
    assert str(err.value) == message


def test_a_rule_file_that_is_a_fifo_or_a_device_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """`--rule` was read with read_text() after a size check that a FIFO (size 0, nobody writing: a hang) and
    /dev/zero (size 0, endless: memory until the machine gives out) both passed."""
    os.mkfifo(tmp_path / "rule.yaml")
    with pytest.raises(CompareError, match=r"rule\.yaml: not a regular file \(a FIFO\); expected a text file$"):
        rule_from_file(tmp_path / "rule.yaml", {"score"}, {})
    with pytest.raises(CompareError, match=r"^/dev/zero: not a regular file \(a device\); expected a text file$"):
        rule_from_file(Path("/dev/zero"), {"score"}, {})
