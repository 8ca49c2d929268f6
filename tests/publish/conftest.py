"""Two sites built once per test module: the repository's cards with fabricated runs (`built`), and with none;
and the headless Chromium the browser tests drive (`browser`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


CHROMIUM = Path(os.environ.get("BENCHCARD_CHROMIUM", "/usr/bin/chromium"))
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
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=FLAGS, viewport={"width": 1366, "height": 900},
            offline=not getattr(request.module, "SERVED", False))
        try:
            yield context
        finally:
            context.close()
