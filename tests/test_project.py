"""A command run in project A never reaches into project B: no verdict, resume or sheet of B's runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.errors import ProjectError
from benchcard.project import Project

from .helpers_cli import bc, one_line_error
from .helpers_run import KEY_ENV, ab_project
from .helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, make_project, make_run, the_card


@pytest.mark.parametrize("command", ["verdict", "blind-sheet"])
def test_a_run_of_another_project_is_refused(tmp_path: Path, command: str) -> None:
    a, b = make_project(tmp_path / "a"), make_project(tmp_path / "b")
    make_run(a, the_card(a), ab_metrics(STRONG_BASE, STRONG_VAR))
    theirs = make_run(b, the_card(b), ab_metrics(STRONG_BASE, STRONG_VAR))
    line = one_line_error(bc(a.root, command, str(theirs)))
    assert "outside this project" in line
    assert not a.ledger_path.exists() and not b.ledger_path.exists()
    assert not (theirs / "verdict.json").exists() and not list(tmp_path.glob("*.csv"))


def test_a_link_from_results_to_another_project_is_refused(tmp_path: Path) -> None:
    a, b = make_project(tmp_path / "a"), make_project(tmp_path / "b")
    theirs = make_run(b, the_card(b), ab_metrics(STRONG_BASE, STRONG_VAR))
    mine = a.results_dir / theirs.relative_to(b.results_dir)
    mine.parent.mkdir(parents=True)
    mine.symlink_to(theirs)
    assert "outside this project" in one_line_error(bc(a.root, "verdict", theirs.name))
    assert not a.ledger_path.exists()


def test_resume_of_a_run_folder_of_another_project_is_refused(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    a, b = ab_project(tmp_path / "a", "http://127.0.0.1:9/v1"), ab_project(tmp_path / "b", "http://127.0.0.1:9/v1")
    theirs = b.run_dir("colour-ab", 1, "20261130T000000Z-abcd")
    theirs.mkdir(parents=True)
    line = one_line_error(bc(a.root, "run", "colour-ab", "--resume", str(theirs), "--attempts", "1", "--json"))
    assert "outside this project" in line
    assert list(theirs.iterdir()) == [] and not a.results_dir.exists()


COMMANDS = [["check"], ["seal", "x"], ["run", "x"], ["curl", "x"], ["plan", "x"], ["verdict", "x"], ["ledger"],
            ["ledger", "--verify"], ["site"], ["blind-sheet", "x"], ["grade", "x", "s.csv"], ["status", "x"],
            ["export", "x"]]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_outside_a_project_every_command_says_so_and_suggests_c(tmp_path: Path, args: list[str]) -> None:
    from click.testing import CliRunner

    from benchcard.cli import cli

    (tmp_path / "s.csv").write_text("row\n", encoding="utf-8")
    result = CliRunner().invoke(cli, args)  # from tmp_path, which holds no cards/
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (f"error: no benchcard project here: no cards/ folder in {tmp_path.resolve()} or "
                                     "any folder above it; run from a project folder, or name one with -C DIR")
    assert not (tmp_path / "results").exists() and not (tmp_path / "site").exists()


def test_c_naming_a_folder_that_is_not_a_project(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    empty = tmp_path / "empty"
    assert one_line_error(bc(empty, "ledger")) == (
        f"error: -C {empty}: not a benchcard project (no cards/ folder in {empty.resolve()})")
    assert one_line_error(bc(tmp_path / "nowhere", "check")) == f"error: -C {tmp_path / 'nowhere'}: no such folder"


def test_project_of_takes_a_project_a_str_or_a_path_and_finds_the_project_above_a_folder(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "sub").mkdir()
    project = Project(tmp_path.resolve())
    assert Project.of(project) is project
    assert Project.of(str(tmp_path)) == project and Project.of(tmp_path) == project
    assert Project.of(tmp_path / "cards" / "sub") == project  # as `-C DIR` finds it
    with pytest.raises(ProjectError) as info:
        Project.of(tmp_path / "nowhere")
    assert str(info.value) == f"project={tmp_path / 'nowhere'}: no such folder"
