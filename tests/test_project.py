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


# ------------------------------------------------------------ no output path over what the project owns

OWNED = ["results/ledger.jsonl", "results/new.csv", "results/colour-ab/new.csv", "cards/new.csv",
         "keys/new.csv", "fixtures/new.csv", "benchcard.yaml", "LINK-TO-RESULTS/x.csv"]


def _judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A project with a run not judged yet, so no ledger exists (the issue's case), a benchcard.yaml, and a
    link in the project pointing at its results/."""
    project = make_project(tmp_path / "proj")
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    (project.root / "benchcard.yaml").write_text("providers: {}\n", encoding="utf-8")
    (project.root / "LINK-TO-RESULTS").symlink_to(project.results_dir)
    return project.root, run_dir.name


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("target", OWNED)
@pytest.mark.parametrize("command", ["export", "export-parquet", "blind-sheet"])
def test_no_command_writes_a_file_over_or_into_what_the_project_owns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   command: str, target: str) -> None:
    """Issue 25: `export --out results/ledger.jsonl` wrote CSV where the ledger goes; every ledger command then
    failed. One check (`Project.refuse_protected`) serves every command that takes an output path."""
    root, run = _judged(tmp_path, monkeypatch)
    before = _snapshot(root)
    args = {"export": ["export", run, "--out"], "export-parquet": ["export", run, "--format", "parquet", "--out"],
            "blind-sheet": ["blind-sheet", run, "--force", "--out"]}[command]
    line = one_line_error(bc(root, *args, str(root / target)))
    assert "part of the project's own records; benchcard never writes over it or adds to it" in line, line
    assert _snapshot(root) == before  # nothing written, created, or moved aside
    assert not (root / "results" / "ledger.jsonl").exists()


@pytest.mark.parametrize("target", ["results", "results/site", "cards", "keys/site", "fixtures/x", ".", ".."])
def test_the_site_is_never_built_into_what_the_project_owns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            target: str) -> None:
    root, _ = _judged(tmp_path, monkeypatch)
    before = _snapshot(root)
    line = one_line_error(bc(root, "site", "--out", str(root / target)))
    assert "part of the project's own records" in line, line
    assert _snapshot(root) == before


def test_compare_out_may_not_be_in_the_projects_records_but_its_own_folder(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    root, _ = _judged(tmp_path, monkeypatch)
    for arm, shift in (("a", 0), ("b", 1)):
        lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float((i + shift) % 2)})
                 for i in range(8)]
        (tmp_path / f"{arm}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    logs = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--win", "acc rises"]
    line = one_line_error(bc(root, "compare", *logs, "--out", str(root / "results" / "colour-ab" / "cmp")))
    assert "part of the project's own records" in line
    assert bc(root, "compare", *logs, "--out", str(root / "results" / "_compare" / "mine")).exit_code == 0
