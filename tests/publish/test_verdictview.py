"""A run card's verdict tables from each source `publish/_verdictview.py` reads: verdict.json as written, an
edited file under its ledger row, and the ledger row alone (verdict.json gone)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import ab_project, only_run

CARD = "colour-ab"
POLITE_IS_RIGHT = {"replies": [{"match": "Please.", "reply": "red"}], "default_reply": "blue"}


def cli_in(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def judged(tmp_path: Path, server: FakeServer) -> tuple[Project, Path]:
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    assert cli_in(project, "run", CARD, "--json").exit_code == 0
    folder = only_run(project, CARD)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    return project, folder


def card_page(project: Project, tmp_path: Path) -> str:
    site = cli_in(project, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    return html.unescape((tmp_path / "site" / "cards" / CARD / "index.html").read_text(encoding="utf-8"))


def test_a_run_whose_verdict_file_is_gone_shows_its_ledger_rows_clauses_and_cells(tmp_path: Path,
                                                                                  server: FakeServer,
                                                                                  key: str) -> None:
    project, folder = judged(tmp_path, server)
    verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    row = json.loads(project.ledger_path.read_text(encoding="utf-8"))
    with_file = card_page(project, tmp_path)
    (folder / "verdict.json").unlink()
    page = card_page(project, tmp_path / "again")
    counts = ", ".join(f"{v} {k}" for k, v in row["counts"].items())
    assert f"cells {counts}" in page and f"{row['outcome']} · {row['finding']}" in page
    for clause in row["clauses"]:
        words = {"rises": "rises", "falls": "falls"}.get(clause["test"], clause["test"])
        state = "holds" if clause["holds"] else "does not hold"
        assert f"<code>{clause['metric']} {words}</code> — <strong>{state}</strong>" in page
    # the row's metrics are shown, and nothing the row does not carry: the file's prose and its α
    assert "Every figure, per metric" in page and all(f"<code>{name}</code>" in page for name in row["metrics"])
    assert f"<p>{verdict['why']}</p>" in with_file and f"<p>{verdict['why']}</p>" not in page
    assert f"{counts} · α " in with_file and f"{counts} · α " not in page
