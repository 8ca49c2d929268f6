"""The grading tests share the verdict's sealed ab project (tests/verdict/conftest.py): a run to grade, then judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.project import Project

from ..helpers_verdict import make_project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")
