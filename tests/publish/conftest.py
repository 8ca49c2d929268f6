"""Two sites built once per pytest run, which the xdist workers share (tests/helpers_once.py) and the tests only
read: the repository's cards with fabricated runs (`built`), and with none (`empty_built`); the replication site
(`replicas_site`); and the headless Chromium the browser tests drive (`browser`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchcard.project import Project
from benchcard.publish.build import build_site

from ..helpers_once import made_once, shared_folder
from ..helpers_project import copy_project
from ..helpers_site import CHROMIUM, browser_env, make_project, replication_site


def _built(folder: Path) -> list[str]:
    project = make_project(folder / "proj")
    build_site(project, folder / "site")
    return [str(project.root), str(folder / "site")]


def _empty_built(folder: Path) -> list[str]:
    copy_project(folder / "proj")
    project = Project((folder / "proj").resolve())
    build_site(project, folder / "site")
    return [str(project.root), str(folder / "site")]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    """The repository's cards with fabricated runs (tests/helpers_site.py) and the site built from them; read only."""
    root, out = made_once(shared_folder(tmp_path_factory, "site-built"), _built)
    return Project(Path(root)), Path(out)


@pytest.fixture(scope="session")
def empty_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    """The repository's cards with no runs and the site built from them; read only."""
    root, out = made_once(shared_folder(tmp_path_factory, "site-empty"), _empty_built)
    return Project(Path(root)), Path(out)


@pytest.fixture(scope="session")
def replicas_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The replication site of tests/helpers_site.py (`replication_site`), built; read only."""
    return Path(made_once(shared_folder(tmp_path_factory, "site-replicas"), lambda f: str(replication_site(f))))


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser downloaded: `executable_path`), with a fresh
    profile at laptop size; offline (pages from file://) unless the module serves its pages (`SERVED = True`).
    One per module, not per session: while Playwright's sync API is open it marks the thread's asyncio loop as
    running, and other modules' tests call asyncio.run."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (dev extra)")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        profile = tmp_path_factory.mktemp("chromium-profile")
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, env=browser_env(profile),
            args=FLAGS, viewport={"width": 1366, "height": 900},
            offline=not getattr(request.module, "SERVED", False))
        try:
            yield context
        finally:
            context.close()
