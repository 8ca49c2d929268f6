"""A system error (a results/ folder that cannot be written, a full disk) is one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers_cli import bc, one_line_error
from .helpers_run import KEY_ENV, ab_project


def test_a_results_folder_that_cannot_be_written_is_one_line(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run as root, whom a read-only mode does not stop: a file where results/ should be fails the same
    way (the run folder cannot be created) and must read the same."""
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path, "http://127.0.0.1:9/v1")
    project.results_dir.write_text("not a folder\n", encoding="utf-8")
    line = one_line_error(bc(project.root, "run", "colour-ab", "--json"))
    assert "results" in line and "Not a directory" in line
