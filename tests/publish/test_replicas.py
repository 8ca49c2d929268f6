"""Replications on the pages (`publish/_replicas.py`): a run card shows its original run beside each rerun (date,
rig, finding, gap and interval, one figure), a probe rerun says whether its score changed, and the ledger page
marks replication rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.stats.replication import DEFAULT_RULE

from ..helpers_site import DEMO, REPLICA_ORIGINAL, REPLICA_RERUN, REPLICA_TRANSFER, page

ORIGINAL, RERUN, TRANSFER = REPLICA_ORIGINAL, REPLICA_RERUN, REPLICA_TRANSFER

@pytest.fixture
def site(replicas_site: Path) -> Path:
    return replicas_site


def test_the_card_shows_the_original_beside_each_rerun(site: Path) -> None:
    lines = page(site, f"cards/{DEMO}/index.html").lines()
    at = lines.index("Replications of this run")
    table = lines[at:at + 40]
    assert any(line.startswith("original") for line in table)
    rerun = next(line for line in lines if line.startswith(f"Run {RERUN} (2026-12-03): "))
    assert rerun.startswith(f"Run {RERUN} (2026-12-03): replicated: win again; gap +")
    assert "inside the 95% prediction interval for a rerun [" in rerun
    moved = next(line for line in lines if line.startswith(f"Run {TRANSFER} (2026-12-04): "))
    assert "not replicated: " in moved and "the gap fell from +" in moved
    assert any("same sealed requests sent to another rig" in line for line in lines)
    assert any(DEFAULT_RULE.name in line for line in lines)


def test_the_figure_draws_every_run_on_one_axis(site: Path) -> None:
    svg = (site / "cards" / DEMO / f"{ORIGINAL}-replications.svg").read_text(encoding="utf-8")
    for label in ("original 2026-12-01", "rerun 2026-12-03", "transfer 2026-12-04", "The original and its reruns"):
        assert label in svg
    source = (site / "cards" / DEMO / "index.html").read_text(encoding="utf-8")
    assert f'src="{ORIGINAL}-replications.svg"' in source


def test_a_probe_rerun_says_its_score_fell_with_both_dates(site: Path) -> None:
    text = page(site, "cards/one-word-sentiment/index.html").text
    # the line the rerun's verdict recorded; the original's date is the day its verdict was given
    # (verdict/_replication.py), which for this fabricated run is today
    assert "Rerun of run 20260810T090000Z-0001: changed: score fell from 1.00 (" in text
    assert ") to 0.30 (2026-12-04) (95% CI of the change [−0.892, −0.289]; 10 against 10 repetitions" in text


def test_the_ledger_page_marks_replication_rows(site: Path) -> None:
    lines = page(site, "ledger.html").lines()
    assert f"replication of run {ORIGINAL}: replicated" in lines
    assert f"transfer of run {ORIGINAL}: not replicated" in lines
    assert "replication of run 20260810T090000Z-0001: changed" in lines
