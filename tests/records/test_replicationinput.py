"""A replication's inputs read from verdict files of every shape (`records/replicationinput.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.records.replicationinput import run_gap
from benchcard.records.verdictfile import VerdictFile, decode_verdict

WRITTEN = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "written"


def _read(name: str) -> VerdictFile:
    path = WRITTEN / name
    return decode_verdict(path.read_bytes(), path)


def test_a_win_gives_its_first_clause_gap_run_term_and_df() -> None:
    got = run_gap(_read("ab-win.json"))
    assert got.finding == "win" and got.metric == "field_recall"
    assert got.gap == pytest.approx(0.1375) and got.run_var == pytest.approx(5.2083333333333133e-05)
    assert got.df == pytest.approx(6.587980653094357)
    assert got.rig == "test/model-1 · effort high · Test API"


def test_one_repetition_has_no_run_term() -> None:
    got = run_gap(_read("ab-one-repetition.json"))
    assert got.run_var is None


def test_a_probe_has_no_gap() -> None:
    got = run_gap(_read("probe.json"))
    assert got.gap is None and got.finding == "scored"
