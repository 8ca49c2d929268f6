"""Logs for the tests of `benchcard compare`: the checked-in lm-eval `--log_samples` pair and a CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner, Result

from benchcard.cli import cli

DATA = Path(__file__).resolve().parent / "data" / "lm_eval"
LM_A = DATA / "model-a" / "samples_arc_easy_2026-11-30T10-00-00.000000.jsonl"
LM_B = DATA / "model-b" / "samples_arc_easy_2026-11-30T10-00-00.000000.jsonl"


def bc(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def lm_column(path: Path, metric: str) -> np.ndarray:
    """One metric of an lm-eval samples file, in doc_id order."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return np.array([r[metric] for r in sorted(rows, key=lambda r: r["doc_id"])], dtype=float)
