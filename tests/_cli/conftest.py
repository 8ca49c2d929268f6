"""The command line's tests share one sealed ab project (a test module may define its own `project`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.project import Project

from ..helpers_verdict import make_project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")
