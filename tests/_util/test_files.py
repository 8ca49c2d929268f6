"""The one atomic write: a reader sees the old file or the new one, never half; no other module renames by hand."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import benchcard
from benchcard._util.files import AtomicFile, is_work_file, move_into_place, synced_file, write_atomic
from benchcard.project import Project

from ..helpers_cli import EACH_COMMAND, as_a_user_each, each_command
from ..helpers_digits import NOT_NUMBERS, THIRTY_DIGITS
from ..helpers_project import PUBLISHED, published_project
from ..helpers_run import killed_at
from ..helpers_verdict import cli_run, make_project, read_sheet, strong_run, write_sheet


def test_write_atomic_replaces_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "results" / "run" / "manifest.json"
    write_atomic(target, "old\n")
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["manifest.json"]


def test_a_stream_that_fails_part_way_leaves_the_old_file_untouched(tmp_path: Path) -> None:
    target = tmp_path / "scores.jsonl"
    target.write_bytes(b'{"cell":"c1"}\n')
    with pytest.raises(RuntimeError), AtomicFile(target) as fh:
        fh.write(b'{"cell":"c2"}\n')
        raise RuntimeError("killed mid-write")
    assert target.read_bytes() == b'{"cell":"c1"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.jsonl"]


def test_a_stream_is_invisible_until_committed(tmp_path: Path) -> None:
    target = tmp_path / "chunk-000.jsonl"
    fh = AtomicFile(target, suffix=".part")
    fh.write(b"a\n")
    assert not target.exists() and fh.tmp.is_file() and fh.tmp.name.startswith(".chunk-000.jsonl.")
    fh.commit()
    assert target.read_bytes() == b"a\n" and list(tmp_path.iterdir()) == [target]


def test_no_overwrite_keeps_the_first_file_and_says_so(tmp_path: Path) -> None:
    target = tmp_path / "sealed" / "sheet-human.jsonl"
    write_atomic(target, b"first\n", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second\n", overwrite=False)
    assert target.read_bytes() == b"first\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["sheet-human.jsonl"]


def test_a_file_written_elsewhere_is_moved_into_place_whole(tmp_path: Path) -> None:
    tmp = tmp_path / "judge" / "judge-requests.jsonl.tmp"
    with synced_file(tmp) as fh:
        fh.write(b"plan\n")
    target = tmp_path / "judge" / "sealed" / "judge-requests.jsonl"
    move_into_place(tmp, target)
    assert target.read_bytes() == b"plan\n" and not tmp.exists()


# Renames that are not a whole-file write: a user's file kept as .bak, and the site folder swapped whole. And the
# statistics' table cache: stats/ imports nothing of benchcard's, and a cache needs no fsync (a table lost in a
# crash, or a half-written one, is drawn again).
_ALLOWED = {"_util/files.py", "_util/safewrite.py", "publish/build.py", "stats/_tablecache.py"}
_HAND_WRITTEN = re.compile(r"\bos\.(replace|rename)\(|\.rename\((?!columns=)")


def test_every_rename_into_place_goes_through_the_one_atomic_write() -> None:
    package = Path(benchcard.__file__).parent
    found = [f"{path.relative_to(package).as_posix()}:{n}: {line.strip()}"
             for path in sorted(package.rglob("*.py")) if path.relative_to(package).as_posix() not in _ALLOWED
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _HAND_WRITTEN.search(line)]
    assert found == []


def test_no_overwrite_works_where_hard_links_do_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError("hard links not supported")

    monkeypatch.setattr("benchcard._util.files.os.link", no_links)
    target = tmp_path / "sheet-human.jsonl"
    write_atomic(target, b"first\n", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second\n", overwrite=False)
    assert target.read_bytes() == b"first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet-human.jsonl"]


# --------------------------------------------------------------------------- a writer killed at its worst moment

def _work_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if is_work_file(p.name))


def test_a_verdict_killed_before_its_table_is_moved_in_leaves_no_litter_and_runs_again(tmp_path: Path) -> None:
    """The verdict's table is written before the ledger row and moved in after it: killed in between, the run
    folder shows nothing new (once, `table.csv.tmp` was left in sight), and the verdict given again is whole."""
    project = make_project(tmp_path / "p")
    run_dir = strong_run(project)
    before = sorted(p.name for p in run_dir.iterdir())
    assert killed_at("benchcard.records.ledger:append:", "-C", str(project.root), "verdict", run_dir.name) == -9
    assert sorted(p.name for p in run_dir.iterdir() if not p.name.startswith(".")) == before
    again = cli_run(project, "verdict", run_dir.name)
    assert again.exit_code == 0, again.output
    assert (run_dir / "table.csv").is_file() and (run_dir / "verdict.json").is_file() and _work_files(run_dir) == []


def test_a_blind_sheet_killed_before_its_mapping_is_linked_in_does_not_block_the_verdict(tmp_path: Path) -> None:
    """A kill at the rename of the sheet's mapping under sealed/ once left `sealed/sheet-human.jsonl.tmp`, which
    the next verdict took for a file added to the sealed plan and refused."""
    project = make_project(tmp_path / "p")
    run_dir = strong_run(project)
    code = killed_at("os:link:sheet-human.jsonl", "-C", str(project.root), "blind-sheet", run_dir.name, "--out",
                   str(tmp_path / "sheet.csv"))
    assert code == -9 and not (run_dir / "sealed" / "sheet-human.jsonl").exists()
    verdict = cli_run(project, "verdict", run_dir.name)
    assert verdict.exit_code == 0, verdict.output
    assert sorted(p.name for p in (run_dir / "sealed").iterdir() if not p.name.startswith(".")) == [
        "assignment.jsonl", "requests.jsonl"]


def _exported(project: Project, tmp_path: Path) -> tuple[list[str], Path, str]:
    """`export` (blinded: no verdict yet), killed with its CSV open and nothing written (pandas' `get_handle`
    returned)."""
    run_dir = strong_run(project)
    out = tmp_path / "cells.csv"
    return ["export", run_dir.name, "--out", str(out)], out, "pandas.io.formats.csvs:get_handle::after"


def _graded(project: Project, tmp_path: Path) -> tuple[list[str], Path, str]:
    """`grade`, killed with its grades written and synced but not yet moved into place."""
    run_dir = strong_run(project)
    sheet = tmp_path / "sheet.csv"
    assert cli_run(project, "blind-sheet", run_dir.name, "--out", str(sheet)).exit_code == 0
    write_sheet(sheet, [{**row, "grade": "pass"} for row in read_sheet(sheet)])
    out = run_dir / "grades" / "human.csv"
    return ["grade", run_dir.name, str(sheet)], out, f"benchcard._util.files:move_into_place:{out.name}"


@pytest.mark.parametrize("command", [_exported, _graded], ids=["export", "grade"])
def test_a_command_killed_while_it_writes_its_file_leaves_nothing_and_runs_again(
        tmp_path: Path, command: Callable[[Project, Path], tuple[list[str], Path, str]]) -> None:
    """Killed while its one file is written (benchmarks/kill_sweep.py kills these commands at random moments; this
    moment leaves the most): nothing in sight changed, and the same command given again writes the file whole.
    `export` wrote its file in place: a kill left a cut table that every later export refused to replace."""
    project = make_project(tmp_path / "p")
    args, target, where = command(project, tmp_path)
    before = _in_sight(tmp_path)
    assert killed_at(where, "-C", str(project.root), *args) == -9
    assert _in_sight(tmp_path) == before
    again = cli_run(project, *args)
    assert again.exit_code == 0, again.output
    assert target.is_file() and _work_files(tmp_path) == []
    assert sorted(_in_sight(tmp_path)) == sorted([*before, target.relative_to(tmp_path).as_posix()])


def _in_sight(folder: Path) -> dict[str, bytes]:
    """Every file a listing shows (hidden temporaries and locks aside), with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and not p.name.startswith(".") and not p.name.endswith(".lock")}


def test_the_next_write_removes_what_a_killed_writer_left_and_never_a_live_ones(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    left = [tmp_path / f".table.csv.{int(dead.stdout)}-0badcafe.tmp", tmp_path / "table.csv.tmp"]
    live = tmp_path / f".table.csv.{os.getppid()}-00c0ffee.tmp"  # a writer still at work (this test's parent)
    other = tmp_path / f".verdict.json.{int(dead.stdout)}-0badcafe.tmp"  # another file's: not this write's to remove
    for path in [*left, live, other]:
        path.write_bytes(b"half")
    write_atomic(target, "fixture,variant\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, live.name, other.name])


def test_a_temporary_whose_name_holds_no_process_id_does_not_stop_the_write(tmp_path: Path) -> None:
    """`.table.csv.²-0badcafe.tmp` (str.isdigit() takes '²' for a digit, int() does not) and a process id past
    what the system can hold (os.kill overflows) ended the write in a traceback. A name whose id is not ASCII
    digits alone ('²', '٣', '', ' 1', '+1', '1_000') is not a killed writer's and is left; an id of 30 digits can
    be no live process's, and one written with leading zeros is the dead process it names: both are removed like
    any dead writer's. Process 0 is never taken for a dead one (os.kill reads it as this process's group)."""
    target = tmp_path / "table.csv"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    odd = [tmp_path / f".table.csv.{pid}-0badcafe.tmp" for pid in (*NOT_NUMBERS, "0")]
    gone = [tmp_path / f".table.csv.{pid}-0badcafe.tmp" for pid in (THIRTY_DIGITS, f"00{int(dead.stdout)}")]
    for path in (*odd, *gone):
        path.write_bytes(b"half")
    write_atomic(target, "fixture,variant\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, *(p.name for p in odd)])


def test_a_full_disk_names_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A write the disk refuses (a file-size limit, as the kernel enforces one, in a child process) is an OSError
    naming the target, the one line the command line prints, and the temporary sibling is removed: before, the
    error said only "File too large" and the half-written `.tmp` stayed (a run's `sealed/requests.jsonl.tmp`)."""
    import resource
    import subprocess
    import sys

    target = tmp_path / "sealed" / "requests.jsonl"
    code = ("import sys; from pathlib import Path; from benchcard._util.files import write_atomic\n"
            "try:\n    write_atomic(Path(sys.argv[1]), b'x' * 100_000)\n"
            "except OSError as exc:\n    print(exc)")

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))

    done = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=60,
                          preexec_fn=limited, check=True)
    assert done.stdout.strip() == f"[Errno 27] File too large: '{target}'"
    assert list(target.parent.iterdir()) == []


def test_a_write_refused_in_parts_or_appended_names_the_file_it_is_for(tmp_path: Path) -> None:
    """Hostile audit (hostile21, disk): a table, an export, a set-aside note, a ledger row or a batch's journal
    written on a full disk said only `error: No space left on device`: the write's error names no file. Each names
    the file it was for (a temporary the file a temporary becomes); an error that names its file keeps it."""
    import errno

    from benchcard._util.files import writing

    meant, tmp = tmp_path / "table.csv", tmp_path / ".table.csv.1-abcd.tmp"
    with pytest.raises(OSError) as refused, synced_file(tmp, meant) as fh:
        fh.write(b"x")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert (refused.value.errno, refused.value.filename) == (errno.ENOSPC, str(meant))
    with pytest.raises(OSError) as appended, writing(tmp_path / "ledger.jsonl"):
        raise OSError(errno.EFBIG, "File too large")
    assert str(appended.value) == f"[Errno 27] File too large: '{tmp_path / 'ledger.jsonl'}'"
    with pytest.raises(OSError) as own, writing(meant):
        raise OSError(errno.EACCES, "Permission denied", "elsewhere.txt")
    assert own.value.filename == "elsewhere.txt"


def test_a_refused_write_says_make_room_only_when_room_mends_it() -> None:
    """One wording for every refused write (a run's rows, its plan): a full disk or a file-size limit says "Make
    room"; a refused permission said so too where a row was written, which no room mends."""
    import errno

    from benchcard._util.files import refused_write

    assert refused_write(OSError(errno.ENOSPC, "No space left on device")) == (
        "No space left on device: the disk is full or a file-size limit was reached", "Make room")
    assert refused_write(OSError(errno.EFBIG, "File too large"))[1] == "Make room"
    assert refused_write(OSError(errno.EACCES, "Permission denied")) == ("Permission denied", "Put that right")


def on_a_read_only_mount(project: Path, *commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """Each of `commands` run as `benchcard -C project …`, with `project` bind-mounted read-only onto itself, as a
    user's project on a read-only share or a CI cache is: a real mount, in a user and mount namespace of the
    commands' own (util-linux `unshare`, no privilege needed), so that the file system refuses every write and even
    the removal of a file that is not there (EROFS), as the kernel does there. One Python process runs them all,
    one after the other (helpers_cli.EACH_COMMAND)."""
    unshare = shutil.which("unshare")
    assert unshare, "unshare (util-linux) is needed to mount a project read-only"
    mount = 'mount --bind -o ro "$1" "$1" || exit 99; shift; exec "$@"'
    given = json.dumps([["-C", str(project), *command] for command in commands])
    done = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "sh", "-c", mount, "sh", str(project),
                           sys.executable, "-c", EACH_COMMAND, given],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 99 and not done.stderr.startswith("unshare:"), (
        f"could not mount {project} read-only in a namespace of its own (user namespaces off?): {done.stderr}")
    return each_command(done, commands)


def test_a_read_only_project_is_read_and_a_refusal_is_the_refusal_not_a_failed_cleanup(tmp_path: Path) -> None:
    """Read commands work on a read-only project; a command that would write says its own one line. `verdict`
    of a judged run said `…/.table.csv.<pid>-<hex>.tmp: Read-only file system`: removing its temporary, never
    made, failed there and took the place of `already has a verdict`."""
    project = published_project(tmp_path / "project")
    run = next(PUBLISHED.glob("*/v*/*")).name
    before = sorted((p.relative_to(project), p.stat().st_mtime_ns) for p in project.rglob("*"))
    reads = [["ledger", "--verify"], ["verdict", run, "--show"], ["status", run], ["ledger"],
             ["export", run, "--out", str(tmp_path / "cells.csv")]]
    said = on_a_read_only_mount(project, *reads, ["verdict", run], ["verdict", "bench-01"], ["site"])
    for command, done in zip(reads, said, strict=False):
        assert done.returncode == 0 and "Traceback" not in done.stderr, (command, done.stderr)
    assert (tmp_path / "cells.csv").is_file()
    for done in said[len(reads):len(reads) + 2]:
        assert (done.returncode, done.stdout) == (1, ""), done
        assert done.stderr == (f"error: run {run} already has a verdict (results/bench-01/v1/{run}/verdict.json); "
                       f"a verdict is given once — `benchcard verdict {run} --show` prints it\n")
    done = said[-1]
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Read-only file system" in done.stderr, done
    assert sorted((p.relative_to(project), p.stat().st_mtime_ns) for p in project.rglob("*")) == before


def test_a_folder_not_writable_is_said_of_the_file_asked_for_not_its_temporary(tmp_path: Path) -> None:
    """Hostile audit (hostile21, permissions): in a run folder the user may not write, `verdict` said
    `error: …/.table.csv.5228-5afbfd43.tmp: Permission denied`, `blind-sheet` named `sealed/.sheet-human.jsonl.…
    .tmp`, and `export` a hidden name in the working folder: names the user never gave and `ls` never shows. The
    refusal names the file the temporary was for; nothing is written, and the ledger is as it was."""
    project = make_project(tmp_path / "proj")
    run_dir = strong_run(project)
    before = sorted(p.name for p in run_dir.rglob("*"))
    out = tmp_path / "shut"
    out.mkdir()
    for folder in (run_dir, run_dir / "sealed", out):
        folder.chmod(0o555)
    try:
        commands = (("verdict", run_dir.name), ("blind-sheet", run_dir.name),
                    ("export", run_dir.name, "--out", str(out / "cells.csv")))
        said = {args[0]: done for args, done in zip(commands, as_a_user_each(
            *(("-C", str(project.root), *args) for args in commands)), strict=True)}
    finally:
        for folder in (run_dir, run_dir / "sealed", out):
            folder.chmod(0o755)
    assert {command: (done.returncode, done.stderr) for command, done in said.items()} == {
        "verdict": (1, f"error: {project.relative(run_dir / 'table.csv')}: Permission denied\n"),
        "blind-sheet": (1, f"error: {project.relative(run_dir / 'sealed' / 'sheet-human.jsonl')}: Permission denied\n"),
        "export": (1, f"error: {out / 'cells.csv'}: Permission denied\n")}
    assert sorted(p.name for p in run_dir.rglob("*")) == before and not any(out.iterdir())
    assert not project.ledger_path.exists()
