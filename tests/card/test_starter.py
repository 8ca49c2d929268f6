"""`benchcard init [DIR]`, tested from its own output: the commands it prints, typed as printed, work."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli

from ..helpers_cli import as_a_user, one_line_error


def _benchcard(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _printed_commands(output: str) -> list[list[str]]:
    """The commands under `next`, each split as a shell would."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("next"))
    return [shlex.split(line) for line in lines[start + 1:] if line.startswith("  ")]


def _follow(commands: list[list[str]], upto: int | None = None) -> list[Result]:
    """Type each printed command: `cd` changes folder, `benchcard …` runs the CLI there."""
    results = []
    for words in commands[:upto]:
        if words[0] == "cd":
            os.chdir(words[1])
            continue
        assert words[0] == "benchcard", words
        results.append(_benchcard(*words[1:]))
    return results


def test_init_makes_a_project_that_check_accepts_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    made = _benchcard("init", "my project")
    assert made.exit_code == 0, made.output
    commands = _printed_commands(made.output)
    assert commands == [["cd", "my project"], ["benchcard", "check"],
                        ["benchcard", "run", "first-ab", "--scratch", "--provider", "local"],
                        ["benchcard", "verdict", "first-ab"]]
    root = tmp_path / "my project"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        ".gitattributes", ".gitignore", "benchcard.yaml", "cards/first-ab.yaml", "fixtures/first-ab.jsonl"]
    assert "* -text" in (root / ".gitattributes").read_text().splitlines()  # git never turns LF into CRLF
    assert len((root / "fixtures" / "first-ab.jsonl").read_text().splitlines()) == 3
    assert ".env" in (root / ".gitignore").read_text().splitlines()
    # what it says of .gitignore: "keys" alone read as keys/, the answer keys and seals, which belong in git
    [said] = [line for line in made.output.splitlines() if line.strip().startswith(".gitignore")]
    assert said.split(None, 1)[1].startswith(".env (API keys) and built pages stay out of git")
    assert not any(line.startswith(("keys", "/keys")) for line in (root / ".gitignore").read_text().splitlines())
    [check] = _follow(commands, upto=2)
    assert check.exit_code == 0, check.output
    assert "first-ab v1 (ab) · v1 not sealed" in check.output and "1 card(s) ok, 0 failed" in check.output


@pytest.mark.local_model
def test_every_printed_command_runs_on_the_embedded_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    made = _benchcard("init", "proj")
    check, run, verdict = _follow(_printed_commands(made.output))
    assert check.exit_code == 0, check.output
    assert run.exit_code == 0, (run.output, run.stderr)
    assert "SmolLM2-135M-Instruct · local · scratch" in run.output
    assert len(list(Path("results/first-ab/v1").glob("*/.gitignore"))) == 1  # the trial stays out of git
    assert verdict.exit_code == 0, (verdict.output, verdict.stderr)
    assert "scratch: a trial verdict, not entered in the ledger" in verdict.output


@pytest.mark.parametrize("name", ["-dash", "--", "my project", "it's", "é 日本 🧪", "$HOME", "a\\b"])
def test_the_printed_cd_takes_a_real_shell_into_the_new_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 name: str) -> None:
    """The `cd` line as pasted into sh: `cd -dash` was `cd: -d: invalid option` (and `cd --` went home)."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    made = _benchcard("init", "--", name)
    assert made.exit_code == 0, made.output
    cd = next(line.strip() for line in made.output.splitlines() if line.startswith("  cd "))
    done = subprocess.run(["sh", "-c", f"{cd} && pwd -P"], capture_output=True, text=True, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"{(tmp_path / name).resolve()}\n"), (cd, done.stderr)


def test_init_here_prints_no_cd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    made = _benchcard("init")
    assert made.exit_code == 0, made.output
    assert _printed_commands(made.output)[0] == ["benchcard", "check"]
    assert (tmp_path / "cards" / "first-ab.yaml").is_file()


def test_init_under_dash_c_makes_the_folder_in_that_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-C DIR init mine` makes DIR/mine, as every other command reads its project in DIR (it made ./mine), and
    `-C DIR init` makes DIR itself; the printed `cd` leads there from where the user is."""
    monkeypatch.chdir(tmp_path)
    made = _benchcard("-C", "there", "init", "mine")
    assert made.exit_code == 0, made.output
    assert made.output.splitlines()[0] == "created a benchcard project in there/mine:"
    assert (tmp_path / "there" / "mine" / "cards" / "first-ab.yaml").is_file() and not (tmp_path / "mine").exists()
    assert _printed_commands(made.output)[0] == ["cd", "there/mine"]
    assert _benchcard("-C", "here", "init").exit_code == 0
    assert (tmp_path / "here" / "cards" / "first-ab.yaml").is_file()


def test_init_refuses_a_folder_that_holds_anything_and_writes_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".gitignore").write_text("mine\n")
    line = one_line_error(_benchcard("init", "proj"))
    assert line == ("error: proj: the folder is not empty; benchcard init writes only into an empty or new folder "
                    "(it never writes over a file)")
    assert [p.name for p in (tmp_path / "proj").iterdir()] == [".gitignore"]
    assert (tmp_path / "proj" / ".gitignore").read_text() == "mine\n"
    (tmp_path / "file").write_text("x")
    assert "exists and is not a folder" in one_line_error(_benchcard("init", "file"))
    # init run twice (the README's `benchcard init my-project`, pasted again): the project is named as one
    assert _benchcard("init", "mine").exit_code == 0
    assert one_line_error(_benchcard("init", "mine")) == (
        "error: mine: already a benchcard project; work in it (cd mine, or benchcard -C mine …), or name a new folder")


def test_init_that_a_full_disk_stopped_part_way_leaves_nothing_and_can_be_given_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit (hostile21, disk): `benchcard init proj` on a full disk said `error: No space left on device`,
    naming no file, and left proj/ with the files written before it; `init proj` again then refused the folder as
    not empty. The line names the file, what init wrote is removed, and init given again makes the project."""
    import errno

    from benchcard.card import starter

    monkeypatch.chdir(tmp_path)
    real = starter._write

    def full(text: str, fh: object) -> None:
        if text == starter.FIXTURES:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(text, fh)  # type: ignore[arg-type]

    monkeypatch.setattr(starter, "_write", full)
    assert one_line_error(_benchcard("init", "new/proj")) == (
        "error: new/proj/fixtures/first-ab.jsonl: could not be written (No space left on device: the disk is full or "
        "a file-size limit was reached); nothing was written there. Make room, then try again")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(starter, "_write", real)
    assert _benchcard("init", "new/proj").exit_code == 0 and (tmp_path / "new/proj/cards/first-ab.yaml").is_file()


@pytest.mark.parametrize("where", ["results/new", "cards/new", "keys/x/new", "fixtures/new"])
def test_init_never_makes_a_project_among_another_projects_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   where: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert _benchcard("init", "outer").exit_code == 0
    before = sorted(str(p) for p in (tmp_path / "outer").rglob("*"))
    line = one_line_error(_benchcard("init", f"outer/{where}"))
    assert "part of the project's own records; benchcard never writes over it or adds to it" in line, line
    assert sorted(str(p) for p in (tmp_path / "outer").rglob("*")) == before
    assert _benchcard("init", "--nested", "outer/inner").exit_code == 0  # beside the records, when asked for


@pytest.mark.parametrize("marker", ["cards", "benchcard.yaml"])
def test_init_inside_another_project_says_where_it_is_and_refuses_unless_nested(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    """Audit: `init` in a folder below a project (a parent with cards/ or benchcard.yaml) made a second project
    with a second ledger, without a word. It refuses in one line naming the project it is inside; --nested makes
    the project anyway and says so."""
    outer = tmp_path / "outer"
    (outer / "notes").mkdir(parents=True)
    if marker == "cards":
        (outer / "cards").mkdir()
        (outer / "cards" / "probe.yaml").write_text("id: probe\n")
    else:
        (outer / marker).write_text("providers: {}\n")
    monkeypatch.chdir(outer / "notes")
    line = one_line_error(_benchcard("init", "deeper/proj"))
    assert line == (f"error: deeper/proj: inside the benchcard project in {outer}; a project here would keep its own "
                    "cards and ledger beside that one's, and commands run in it would use this one. Add the card to "
                    "that project (its cards/), or pass --nested to make a separate project here anyway")
    assert not (outer / "notes" / "deeper").exists()
    made = _benchcard("init", "--nested", "deeper/proj")
    assert made.exit_code == 0, made.output
    assert (f"note: inside the benchcard project in {outer}; this one keeps its own cards, results and ledger, and "
            "commands run in it use it") in made.stdout.splitlines()
    assert (outer / "notes" / "deeper" / "proj" / "cards" / "first-ab.yaml").is_file()


def test_a_command_run_in_a_project_inside_another_names_the_one_it_uses(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Which ledger a command reads and writes is not obvious there: one note on stderr names both projects;
    stdout (and so --json) is as anywhere else, and -C, which names the project, gets no note."""
    monkeypatch.chdir(tmp_path)
    assert _benchcard("init", "outer").exit_code == 0
    assert _benchcard("init", "--nested", "outer/inner").exit_code == 0
    inner = tmp_path / "outer" / "inner"
    monkeypatch.chdir(inner / "cards")
    shown = _benchcard("ledger", "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout) == []
    assert shown.stderr.splitlines() == [
        f"note: using the benchcard project in {inner} (the nearest), which lies inside the project in "
        f"{tmp_path / 'outer'} with a ledger of its own; -C {tmp_path / 'outer'} uses that one"]
    named = _benchcard("-C", str(inner), "ledger", "--json")
    assert named.exit_code == 0 and named.stderr == ""
    monkeypatch.chdir(tmp_path / "outer")
    assert _benchcard("ledger", "--json").stderr == ""  # the outer project lies inside none


@pytest.mark.parametrize("held", [(), ("ace.png", "notes.md"), ("old.yaml/",)])
def test_a_cards_folder_without_a_card_above_is_no_project_to_be_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: tuple[str, ...]) -> None:
    """Review of the nested-project note: a home folder holding a cards/ folder (scans of playing cards, notes, an
    empty one) made init refuse every project below it, and every command there printed the note."""
    home = tmp_path / "home"
    (home / "cards").mkdir(parents=True)
    for name in held:
        (home / "cards" / name.rstrip("/")).mkdir() if name.endswith("/") else (home / "cards" / name).write_text("x")
    (home / "work").mkdir()
    monkeypatch.chdir(home / "work")
    made = _benchcard("init", "proj")
    assert made.exit_code == 0 and "note:" not in made.output, made.output
    monkeypatch.chdir(home / "work" / "proj")
    shown = _benchcard("ledger", "--json")
    assert shown.exit_code == 0 and shown.stderr == "", shown.stderr


@pytest.mark.parametrize(("given", "parent"), [("demo", "the folder ro"), ("deeper/demo", "the folder ro")])
def test_init_under_a_folder_that_may_not_be_written_names_that_folder(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch, given: str,
                                                                       parent: str) -> None:
    """Small audit (small21): `init ro/demo` under a read-only `ro` said 'ro/demo: Permission denied', naming the
    folder it tried to make as if that one refused. It names the folder above that may not be written, and says
    that nothing was made."""
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    monkeypatch.chdir(tmp_path)
    try:
        made = as_a_user("init", f"ro/{given}")
    finally:
        (tmp_path / "ro").chmod(0o755)
    assert (made.returncode, made.stdout) == (1, "")
    assert made.stderr == (f"error: ro/{given}: {parent} is not writable (Permission denied), so nothing was made; "
                           "give a folder you may write in\n")
    assert list((tmp_path / "ro").iterdir()) == []
