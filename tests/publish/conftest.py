"""Two sites built once per test module: the repository's cards with fabricated runs (`built`), and with none."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.project import Project
from benchcard.publish.build import build_site

from ..helpers_project import copy_project
from ..helpers_site import make_project


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    root = tmp_path_factory.mktemp("site-project")
    project = make_project(root / "proj")
    out = root / "site"
    build_site(project, out)
    return project, out


@pytest.fixture(scope="module")
def empty_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    root = tmp_path_factory.mktemp("site-empty")
    copy_project(root / "proj")
    project = Project((root / "proj").resolve())
    out = root / "site"
    build_site(project, out)
    return project, out
