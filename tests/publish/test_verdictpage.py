"""The grader and judge tables of a run card's page (`publish/_verdictpage.py`), from verdict.json and from the
ledger row alone."""

from __future__ import annotations

import html
import json
from pathlib import Path

from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.testing.fakeserver import FakeServer

from ..helpers_judge import CARD_ID, judge_project, script
from ..helpers_run import only_run

JUDGE = "The judge: its agreement with itself, its noise, length"


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def card_page(root: Path, out: Path) -> str:
    site = bc(root, "site", "--out", str(out))
    assert site.exit_code == 0, site.output
    return html.unescape((out / "cards" / CARD_ID / "index.html").read_text(encoding="utf-8"))


def test_the_judge_table_comes_from_the_verdict_file_or_else_the_ledger_row(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3)
    server.configure(script({"reply": "GRADE: PASS"}))
    assert bc(tmp_path, "run", CARD_ID).exit_code == 0
    folder = only_run(project, CARD_ID)
    given = bc(tmp_path, "verdict", folder.name)
    assert given.exit_code == 0, given.output
    judge = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))["judge"]
    page = card_page(tmp_path, tmp_path / "site")
    assert JUDGE in page
    assert f"<td>level</td><td>{judge['self_agreement']['level']}</td>" in page
    assert f"<td>variant echoes removed</td><td>{judge['redacted']}</td>" in page
    (folder / "verdict.json").unlink()
    page = card_page(tmp_path, tmp_path / "again")
    # the row keeps the judge's headline: its rig, judgements per output and alpha are shown, its detail is not
    assert JUDGE in page and f"<td>judge</td><td>{judge['rig']}</td>" in page
    assert f"<td>judgements per output</td><td>{judge['per_output']}</td>" in page
    alpha = judge["self_agreement"]["alpha"]
    shown = page[page.index("alpha (with itself)"):][:200]
    assert alpha is not None and "<td>—</td>" not in shown.split("</tr>")[0], shown
    assert "<td>level</td><td>—</td>" in page
