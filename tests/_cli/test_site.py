"""`benchcard site` as a user types it: what was built, in words and under --json."""

from __future__ import annotations

import json

from benchcard.project import Project

from ..helpers_cli import bc
from ..helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, make_run, the_card


def test_site_says_what_it_built_in_words_and_under_json(project: Project) -> None:
    make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    words = bc(project.root, "site")
    out = project.root / "site"
    assert words.exit_code == 0, words.output
    assert words.stdout == f"built 5 pages (1 cards, 1 runs, 0 plots) → {out}\n  open {out / 'index.html'}\n"
    built = json.loads(bc(project.root, "site", "--json").stdout)
    assert (built["out"], built["cards"], built["runs"], len(built["pages"])) == (str(out), 1, 1, 5)
