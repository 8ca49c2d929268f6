"""What the tests of batch runs share: a project on the fake server's batch API, fast polling, the journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchcard.project import Project
from benchcard.testing.fakeserver import FakeServer

from .helpers_run import ab_project, read_jsonl, write_config

FAST = ("--poll-interval", "0.05")


def project_for(tmp_path: Path, server: FakeServer, vendor: str, fixtures: int = 6, extra: str = "") -> Project:
    project = ab_project(tmp_path, fixtures=fixtures, repetitions=1)
    write_config(tmp_path, server.base_url, type_=vendor, extra=extra)
    return project


def journal(folder: Path) -> list[dict[str, Any]]:
    return read_jsonl(folder / "batch" / "journal.jsonl")
