"""Judged runs against the fake server, to be replicated (tests of `benchcard replicate`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer

from .helpers_run import PROBE, ab_project, bc, ok, probe_project, seal_card

#: Variant A ("Please.") answers red; the baseline blue, but on fixture 3 (item-003), where both answer red. Each
#: reply depends on its body alone, never on the call order, so a rerun's findings are the original's.
HELPS = {"replies": [{"match": "number 3<", "reply": "red"}, {"match": "Please", "reply": "red"}],
         "default_reply": "blue", "models": ["test/model"]}
#: The same server after a change: A no better than the baseline.
NO_HELP = {"replies": [{"match": "number 3<", "reply": "red"}], "default_reply": "blue", "models": ["test/model"]}


def judged_ab(root: Path, server: FakeServer, config: dict[str, Any] | None = None) -> tuple[Project, str]:
    """A colour-ab project (8 fixtures × 3 repetitions × 2 variants) run against `server` and judged: a win."""
    server.configure(config or HELPS)
    project = ab_project(root, server.base_url, fixtures=8, repetitions=3)
    run = json.loads(ok(bc(project, "run", "colour-ab", "--json")).stdout)["runs"][0]["run"]
    ok(bc(project, "verdict", run))
    return project, run


def judged_probe(root: Path, server: FakeServer, reply: str = "negative",
                 min_score: float | None = None) -> tuple[Project, str]:
    """The one-word probe with 20 repetitions (sealed with `gate: {min_score}` when given), every reply `reply`,
    run and judged."""
    server.configure({"default_reply": reply})
    project = probe_project(root, server.base_url, repetitions=20)
    if min_score is not None:
        path = project.card_path(PROBE)
        path.write_text(path.read_text(encoding="utf-8").replace(
            "repetitions:", f"gate: {{min_score: {min_score}}}\nrepetitions:", 1), encoding="utf-8")
        for sealed in (root / "keys" / PROBE).glob("*.seal.json"):
            sealed.unlink()
        seal_card(root, PROBE)
    run = json.loads(ok(bc(project, "run", PROBE, "--json")).stdout)["runs"][0]["run"]
    ok(bc(project, "verdict", run))
    return project, run


def replicated(project: Project, *args: str) -> dict[str, Any]:
    """`benchcard replicate ARGS --json`, which must succeed: what it printed."""
    data: dict[str, Any] = json.loads(ok(bc(project, "replicate", *args, "--json")).stdout)
    return data


def folder_of(project: Project, data: dict[str, Any]) -> Path:
    return project.root / str(data["run"]["folder"])
