"""The command line's own behaviour: its version and help, and the one boundary where any user error (a
BenchcardError, or a usage error click finds) becomes one line on stderr and exit 1, never a traceback."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import benchcard as benchcard_package
from benchcard._util.version import __version__
from benchcard.cli import cli
from benchcard.records.runreader import read_manifest
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc, one_line_error
from ..helpers_project import make_ab_project
from ..helpers_run import ab_project, only_run, read_jsonl
from ..helpers_verdict import ab_metrics, make_project, make_run, the_card


def test_version_and_help_exit_0_and_list_every_command() -> None:
    version = CliRunner().invoke(cli, ["--version"], prog_name="benchcard")
    assert version.exit_code == 0 and version.stdout == f"benchcard, version {__version__}\n"
    usage = CliRunner().invoke(cli, ["--help"], prog_name="benchcard")
    assert usage.exit_code == 0 and usage.stdout.startswith("Usage: benchcard [OPTIONS] COMMAND [ARGS]...")
    for command in ("check", "seal", "run", "verdict", "ledger", "site", "compare", "plan", "curl"):
        assert f"\n  {command} " in usage.stdout, command


@pytest.mark.parametrize(("args", "message"), [
    (["check", "--bogus"], "error: No such option '--bogus'. (see `benchcard check --help`)"),
    (["nosuch"], "error: No such command 'nosuch'. (see `benchcard --help`)"),
    (["verdict"], "error: Missing argument 'RUN'. (see `benchcard verdict --help`)"),
])
def test_a_usage_error_is_one_line_naming_the_help_to_read(args: list[str], message: str) -> None:
    assert one_line_error(CliRunner().invoke(cli, args, prog_name="benchcard")) == message


def test_a_folder_that_is_not_a_project_is_one_line_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert one_line_error(bc(empty, "check")) == (
        f"error: -C {empty}: not a benchcard project (no cards/ folder in {empty})")


def test_an_error_quoting_a_name_shows_its_bidi_controls_and_invisible_characters(tmp_path: Path) -> None:
    """Hostile audit (wire20): a name given or read (a card, a file, a server's words) holding a right-to-left
    override printed as it was, and the line read as other text (Trojan Source): it shows as escapes."""
    make_ab_project(tmp_path)
    line = one_line_error(bc(tmp_path, "run", "demo\u202egnp.yaml\u200b"))
    assert line == ("error: demo\\u202egnp.yaml\\u200b: no such card (looked for "
                    "cards/demo\\u202egnp.yaml\\u200b.yaml)")


def _check(root: Path, *more: str, stream: str) -> subprocess.CompletedProcess[bytes]:
    """`benchcard -C root check --no-rig …` started with its standard streams in `stream`'s encoding."""
    env = {**os.environ, "PYTHONIOENCODING": stream, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "benchcard", "-C", str(root), "check", "--no-rig", *more],
                          capture_output=True, env=env, timeout=120, check=False)


@pytest.fixture(scope="module")
def in_utf8(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    """What `check` of make_ab_project's project writes to a UTF-8 stream, as text and as --json (the project's
    folder appears in neither): made once for the encodings below, which are held to it."""
    root = make_ab_project(tmp_path_factory.mktemp("utf8") / "proj")
    return (_check(root, stream="utf-8").stdout.decode("utf-8"),
            json.loads(_check(root, "--json", stream="utf-8").stdout))


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_a_terminal_or_pipe_that_is_not_utf8_gets_escapes_and_valid_json_not_a_traceback(
        tmp_path: Path, encoding: str, in_utf8: tuple[str, Any]) -> None:
    """Windows writes a pipe or a file in its ANSI code page (cp1252: `benchcard ledger > out.txt`, a CI job), and a
    Latin-1 locale writes Latin-1: a card's `—`, the `α` of a design warning or a ledger's `→` ended the command
    in a UnicodeEncodeError traceback and exit 1, after its work was done (a verdict appended, a gate's code
    lost). What the stream cannot hold is printed as its escape, and --json stays JSON, the same data."""
    root = make_ab_project(tmp_path)
    words, as_json = _check(root, stream=encoding), _check(root, "--json", stream=encoding)
    assert words.returncode == as_json.returncode == 0, (words.stderr.decode(encoding), as_json.stderr)
    utf8, utf8_json = in_utf8
    assert "α = 0.05" in utf8 and "Rejected — explained" in utf8  # what the stream cannot hold, and what it can
    text = words.stdout.decode(encoding)
    assert text == utf8.encode(encoding, "backslashreplace").decode(encoding) and "\\u03b1 = 0.05" in text, text
    assert json.loads(as_json.stdout.decode(encoding)) == utf8_json


@pytest.mark.parametrize(("args", "option"), [
    (["run", "tiny-ab", "--base-url", ""], "'--base-url'"),
    (["run", "tiny-ab", "--provider", ""], "'--provider'"),
    (["run", "tiny-ab", "--model", "m", "--model", ""], "'--model'"),
    (["-C", "", "run", "tiny-ab"], "'-C' / '--project'"),
    (["curl", "tiny-ab", "--variant", ""], "'--variant'"),
    (["site", "--out", ""], "'--out'"),
    (["verdict", ""], "'RUN'"),
])
def test_an_option_given_empty_is_refused_not_read_as_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               args: list[str], option: str) -> None:
    """`--base-url "$URL"` with URL unset ran the card's own rig: the real endpoint, with the real key and its
    costs, and not marked scratch; `--provider ""` the card's provider, `-C ""` the project around the current
    folder, `site --out ""` the default folder. A value given empty is a one-line usage error naming the option,
    before anything is read, called or written."""
    root = make_ab_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    said = one_line_error(CliRunner().invoke(cli, args if args[0] == "-C" else ["-C", str(root), *args],
                                             prog_name="benchcard"))
    left_out = "" if option.strip("'").isupper() else ", or leave the option out"  # an argument is never left out
    assert said.startswith(f"error: Invalid value for {option}: empty (a variable set but empty?); give a value"
                           f"{left_out} (see `benchcard"), said
    assert sorted(p.name for p in root.iterdir()) == ["cards", "fixtures"]


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="a system that cannot block signals")
def test_main_called_in_process_leaves_ctrl_c_as_it_found_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Started with SIGINT ignored (`pytest &` in a script), main() blocks SIGINT for its SIGTERM handling; a test
    that called it in-process kept it blocked, and a run a later test started and stopped with Ctrl-C never saw
    the SIGINT (it ran to the end). After main(), a child started as from a terminal is stopped by Ctrl-C."""
    from benchcard.cli import main

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    term = signal.getsignal(signal.SIGTERM)
    try:
        monkeypatch.setattr("sys.argv", ["benchcard", "--version"])
        with pytest.raises(SystemExit):
            main()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is term
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal
        child = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                                 stdout=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"up\n"
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=20) == -signal.SIGINT
    finally:
        child.kill()
        child.wait()
        assert child.stdout is not None
        child.stdout.close()


def _benchcard(root: Path, *args: str, stdout: int | None, stderr: int | None, closed: bool = False) -> int:
    """`benchcard -C root ARGS` in a subprocess writing to the descriptors given (`closed`: stdin, stdout and
    stderr closed, as `<&- >&- 2>&-` starts it); its exit status."""
    src = str(Path(benchcard_package.__file__).parents[1])
    env = {**os.environ, "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}

    def close_all() -> None:
        for fd in (0, 1, 2):
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "benchcard", "-C", str(root), *args], stdout=stdout,
                          stderr=stderr, env=env, timeout=120, check=False,
                          preexec_fn=close_all if closed else None).returncode


def test_a_command_started_with_its_standard_streams_closed_does_its_work(tmp_path: Path, server: FakeServer,
                                                                         key: str) -> None:
    """`benchcard run CARD <&- >&- 2>&-` (a cron line, a daemon's child): Python leaves no stream where a
    descriptor was closed, and the next file opened takes its number. The run ends scored and closed, exit 0, and
    its rows hold rows only (the descriptors are held on /dev/null, so nothing printed lands in a run's file)."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=2)
    assert _benchcard(project.root, "run", "colour-ab", stdout=None, stderr=None, closed=True) == 0
    folder = only_run(project, "colour-ab")
    assert read_manifest(folder).finished_at is not None
    assert len(read_jsonl(folder / "scores.jsonl")) == len(read_jsonl(folder / "outputs.jsonl")) == 12
    assert _benchcard(project.root, "verdict", folder.name, stdout=None, stderr=None, closed=True) == 0
    assert [row["run"] for row in read_jsonl(project.results_dir / "ledger.jsonl")] == [folder.name]


def test_a_run_whose_reader_went_away_is_scored_and_closed_and_says_nothing(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    """Hostile audit (hostile21, streams): `benchcard run CARD 2>&1 | head -1` took the first line and left; the
    run's next note met a closed pipe, and the BrokenPipeError stopped the run after its calls, unscored and not
    closed (`verdict` said it was still in progress and owed a --resume). A write refused to stdout or stderr
    never stops the work: the run ends scored and closed, and a reader gone is not an error (exit 0, as
    `| head -1` expects)."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=2)
    read, write = os.pipe()
    os.close(read)  # a reader gone before the first line
    try:
        assert _benchcard(project.root, "run", "colour-ab", stdout=write, stderr=write) == 0
    finally:
        os.close(write)
    folder = only_run(project, "colour-ab")
    assert read_manifest(folder).finished_at is not None
    assert len(read_jsonl(folder / "scores.jsonl")) == len(read_jsonl(folder / "outputs.jsonl")) == 12


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to stand for a full disk")
def test_a_full_stdout_is_one_line_after_the_work_is_done(tmp_path: Path, server: FakeServer, key: str) -> None:
    """`benchcard verdict RUN > out.txt` on a full disk said `error: No space left on device` and nothing more:
    read as the project's disk, whose verdict had been written. The command's work is done, and one line says
    that only the output is lost, naming stdout (exit 1)."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=2)
    errors = tmp_path / "stderr.txt"
    with open("/dev/full", "wb") as full, errors.open("wb") as err:
        assert _benchcard(project.root, "run", "colour-ab", stdout=full.fileno(), stderr=err.fileno()) == 1
        folder = only_run(project, "colour-ab")
        assert _benchcard(project.root, "verdict", folder.name, stdout=full.fileno(), stderr=err.fileno()) == 1
    said = "error: stdout refused what benchcard printed (No space left on device); the command's work is done, "
    assert [line for line in errors.read_text(encoding="utf-8").splitlines() if line.startswith("error:")] == [
        said + "only its output is lost"] * 2
    assert read_manifest(folder).finished_at is not None and (folder / "verdict.json").is_file()
    assert [row["run"] for row in read_jsonl(project.results_dir / "ledger.jsonl")] == [folder.name]


# Every command that reads a run's files names a malformed one from the project's root, whatever the current folder
# and with -C: the reader is handed an absolute folder, and the one place an error becomes a line names it so.
_READERS_OF = {
    "manifest.json": [("status", "{run}"), ("export", "{run}"), ("verdict", "{run}"),
                      ("run", "extract-ab", "--resume", "{run}"), ("replicate", "{run}"), ("blind-sheet", "{run}"),
                      ("grade", "{run}", "sheet.csv"), ("set-aside", "{run}", "--why", "x"),
                      ("verdict", "{run}", "--show"), ("plan", "extract-ab", "--from", "{run}")],
    "outputs.jsonl": [("status", "{run}"), ("export", "{run}"), ("run", "extract-ab", "--resume", "{run}"),
                      ("blind-sheet", "{run}")],
}


def _damage_and_step_out(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's manifest with a field of the wrong type, or its outputs with a row short of fields; then the test
    works from a folder outside the project, so a path named from the current folder would show."""
    if path.name == "manifest.json":
        path.write_text(json.dumps({**json.loads(path.read_text()), "cells": "many"}))
    else:
        path.write_text(path.read_text() + '{"cell": 5}\n')
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")


@pytest.mark.parametrize(("damaged", "command"), [(f, c) for f, cs in _READERS_OF.items() for c in cs],
                         ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_malformed_run_file_is_named_from_the_project_root_from_another_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damaged: str, command: tuple[str, ...]) -> None:
    project = make_project(tmp_path / "proj")
    run_dir = make_run(project, the_card(project), ab_metrics())
    _damage_and_step_out(run_dir / damaged, tmp_path, monkeypatch)
    line = one_line_error(bc(project.root, *(a.format(run=run_dir.name) for a in command)))
    field = "$.cells" if damaged == "manifest.json" else "$.cell"
    assert line.startswith(f"error: results/extract-ab/v1/{run_dir.name}/{damaged}: ") and field in line, line
    assert str(tmp_path) not in line, line


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("damage", ["not JSON", "a field of the wrong type"])
def test_grade_and_set_aside_refuse_a_run_whose_manifest_is_malformed_and_change_nothing(tmp_path: Path,
                                                                                        damage: str) -> None:
    """`grade RUN SHEET` imported a filled sheet, and `set-aside RUN --why …` recorded the run set aside, though the
    run's manifest.json was not JSON or held a field of the wrong type: neither read the field that was broken.
    Both now read the manifest through the typed reader first and refuse in the line every other command gives
    (`status`'s here), before writing anything: the grades imported before (`--force` would replace them) and
    every other file stay byte for byte as they were."""
    project = make_project(tmp_path / "proj")
    run = make_run(project, the_card(project), ab_metrics())
    sheet = tmp_path / "sheet.csv"
    assert bc(project.root, "blind-sheet", run.name, "--out", str(sheet)).exit_code == 0
    rows = list(csv.reader(io.StringIO(sheet.read_text(encoding="utf-8"))))
    at = rows[0].index("grade")
    csv.writer(out := io.StringIO()).writerows([rows[0], *([*r[:at], "pass", *r[at + 1:]] for r in rows[1:])])
    sheet.write_text(out.getvalue(), encoding="utf-8")
    assert bc(project.root, "grade", run.name, str(sheet)).exit_code == 0  # a filled sheet the run takes
    manifest = run / "manifest.json"
    broken = manifest.read_bytes()[:-20] if damage == "not JSON" else \
        json.dumps({**json.loads(manifest.read_text()), "seed": "x"}).encode()
    manifest.write_bytes(broken)
    refused = one_line_error(bc(project.root, "status", run.name, "--no-poll"))
    assert refused.startswith(f"error: results/extract-ab/v1/{run.name}/manifest.json: ")
    before = _files(project.root)
    for args in (("grade", run.name, str(sheet), "--force"), ("set-aside", run.name, "--why", "wrong endpoint")):
        assert one_line_error(bc(project.root, *args)) == refused, args
        assert _files(project.root) == before, args


def test_a_path_into_results_is_named_from_the_project_root_and_any_other_as_given(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    inside, beside = project.root / "results" / "x.json", tmp_path / "proj2" / "results" / "x.json"
    cards = project.root / "cards"
    message = f"{inside}: bad; see ({inside}) and {beside} and {project.root} and {cards}/x.yaml"
    assert project.named_within(message) == (f"results/x.json: bad; see (results/x.json) and {beside} and "
                                             f"{project.root} and {cards}/x.yaml")


@pytest.mark.parametrize("damaged", ["manifest.json", "outputs.jsonl"])
@pytest.mark.parametrize("command", [("verdict", "--show", "{run}"), ("ledger", "--verify"), ("site",)],
                         ids=lambda c: " ".join(c[:2]).replace(" {run}", ""))
def test_a_judged_run_file_changed_is_named_from_the_project_root_by_the_commands_that_read_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damaged: str, command: tuple[str, ...]) -> None:
    """The commands that go on past a changed file (a warning, a FAIL line, a run left out of the site) name it
    as the errors above do."""
    project = make_project(tmp_path / "proj")
    run_dir = make_run(project, the_card(project), ab_metrics())
    assert bc(project.root, "verdict", run_dir.name).exit_code == 0
    _damage_and_step_out(run_dir / damaged, tmp_path, monkeypatch)
    result = bc(project.root, *(a.format(run=run_dir.name) for a in command))
    named = [line for line in result.output.splitlines() if damaged in line]
    where = f"results/extract-ab/v1/{run_dir.name}/{damaged}"
    assert named and all(re.search(rf"(^|\s){re.escape(where)}", line) for line in named), named
    assert not any(str(tmp_path) in line for line in named), named


_BOM_SAID = ("(it starts with a byte-order mark: an editor saved it as 'UTF-8 with BOM', which benchcard never writes; "
             "remove those 3 bytes, or save it again as UTF-8 without BOM)")


@pytest.mark.parametrize(("damaged", "command"), [
    ("results/ledger.jsonl", ("ledger",)),
    ("results/ledger.jsonl", ("ledger", "--verify")),
    ("{run}/manifest.json", ("status", "{name}", "--no-poll")),
    ("keys/extract-ab/v1.seal.json", ("seal", "extract-ab")),
])
def test_a_record_an_editor_saved_with_a_byte_order_mark_is_said_so(tmp_path: Path, damaged: str,
                                                                     command: tuple[str, ...]) -> None:
    """A ledger, a manifest or a seal opened in an editor and saved as 'UTF-8 with BOM' (Notepad's default once),
    nothing else changed: the ledger's line said 'line 1 is not JSON (an edited row)', a tampering that was none, and
    the manifest's and seal's 'JSON is malformed: invalid character (byte 0)', a byte no editor shows (hostile
    audit, 2026-12-08). The line says what is there and what mends it."""
    project = make_project(tmp_path / "proj")
    run = make_run(project, the_card(project), ab_metrics())
    assert bc(project.root, "verdict", run.name).exit_code == 0
    path = Path(damaged.format(run=run)) if damaged.startswith("{run}") else project.root / damaged
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    line = one_line_error(bc(project.root, *(a.format(name=run.name) for a in command)))
    assert line.endswith(" " + _BOM_SAID), line
    assert "an edited row" not in line
