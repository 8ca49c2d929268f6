"""The public Python API (`benchcard/__init__.py`, docs/api.md): complete, cheap to import, and the whole path of
a run — load, plan, run, verdict, read — through it, against the fake server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import benchcard
from benchcard.testing.fakeserver import FakeServer

from .helpers_run import ab_project, key, server

__all__ = ["key", "server"]  # fixtures used by name


def test_every_exported_name_resolves_and_nothing_is_exported_twice() -> None:
    assert benchcard.__all__ == sorted(benchcard.__all__) and len(set(benchcard.__all__)) == len(benchcard.__all__)
    for name in benchcard.__all__:
        assert getattr(benchcard, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = benchcard.nope  # type: ignore[attr-defined]


def test_importing_benchcard_loads_no_numpy_pandas_or_scipy() -> None:
    """Every command line call imports benchcard; the API's heavy modules load only when used."""
    code = ("import sys, benchcard; heavy = [m for m in ('numpy', 'pandas', 'scipy', 'httpx') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_a_card_is_planned_run_judged_and_read_through_the_api(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "latency_ms": 1})
    root = tmp_path / "proj"
    ab_project(root, server.base_url, fixtures=3, repetitions=2)

    card = benchcard.load_card("colour-ab", root)
    assert card.id == "colour-ab" and card.kind == "ab"
    plan = benchcard.plan("colour-ab", root)
    assert plan.calls == 12 and plan.fixtures == 3

    [summary] = benchcard.run_card("colour-ab", root, provider="fake")
    assert summary.finished and summary.counts == {"ok": 12, "truncated": 0, "failed": 0}
    manifest = benchcard.manifest_of(summary.run, root)
    assert manifest.cells == 12 and manifest.finished_at is not None

    blind = benchcard.read_run(summary.run, benchcard.Project(root))
    assert blind.attrs["blinded"] and "variant" not in blind.columns and len(blind) == 12

    verdict = benchcard.give_verdict(summary.run, root)
    assert verdict.outcome in ("result", "non-result") and verdict.run == summary.run
    assert benchcard.verdict_of(summary.run, root).finding == verdict.finding
    frame = benchcard.read_run(summary.run, benchcard.Project(root))
    assert sorted(set(frame["variant"])) == ["A", "baseline"] and len(frame) == 12

    with pytest.raises(benchcard.BenchcardError, match="already has a verdict"):
        benchcard.give_verdict(summary.run, root)
