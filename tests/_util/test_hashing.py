"""Canonical JSON, the one byte form behind every digest: finite numbers only."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard._util.hashing import canonical_json, digest
from benchcard.cli import cli
from benchcard.errors import NotCanonicalError

from ..helpers_run import ab_project


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_and_located(value: float) -> None:
    with pytest.raises(NotCanonicalError, match=r"field 'params\.grid\[1\]' is NaN or infinite"):
        canonical_json({"params": {"grid": [0.5, value]}})
    with pytest.raises(NotCanonicalError):
        digest(value)


def test_canonical_form_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": 1.5, "a": ["é", None]}) == '{"a":["é",null],"b":1.5}'.encode()


def test_a_card_with_a_nan_parameter_cannot_be_sealed(tmp_path: Path) -> None:
    project = ab_project(tmp_path / "proj")
    path = project.card_path("colour-ab")
    path.write_text(path.read_text(encoding="utf-8").replace("temperature: 0.7", "temperature: .nan")
                    .replace("version: 1", "version: 2").replace("history:\n", "history:\n  - {version: 2, note: x}\n"),
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "seal", "colour-ab"])
    assert result.exit_code == 1
    assert "params.temperature" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (project.root / "keys" / "colour-ab" / "v2.seal.json").exists()
