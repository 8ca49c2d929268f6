"""A file a command was asked to write is created whole or not at all, and never over one it did not write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

import pytest

from benchcard._util.safewrite import write_new
from benchcard.errors import RunError


def test_a_write_that_fails_part_way_leaves_no_file(tmp_path: Path) -> None:
    def half(fh: IO[str]) -> None:
        fh.write("row,fixture\n1,")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_new(tmp_path / "sheet.csv", half, force=False, shown="sheet.csv", error=RunError)
    assert list(tmp_path.iterdir()) == []  # no half sheet to refuse next time, no temporary left behind


def test_the_new_file_is_whole_with_the_usual_permissions_and_force_keeps_the_old(tmp_path: Path) -> None:
    out = tmp_path / "sheet.csv"
    assert write_new(out, lambda fh: fh.write("a\r\nb\n"), force=False, shown="sheet.csv", error=RunError) is None
    assert out.read_bytes() == b"a\r\nb\n"
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(RunError, match=r"^sheet\.csv: already exists; benchcard never writes over a file"):
        write_new(out, lambda fh: fh.write("new"), force=False, shown="sheet.csv", error=RunError)
    backup = write_new(out, lambda fh: fh.write("new"), force=True, shown="sheet.csv", error=RunError)
    assert backup == tmp_path / "sheet.csv.bak" and backup.read_text() == "a\nb\n" and out.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet.csv", "sheet.csv.bak"]


@pytest.mark.parametrize("force", [False, True])
def test_a_full_disk_names_the_file_and_keeps_the_one_there_before(tmp_path: Path, force: bool) -> None:
    """Hostile audit (hostile21, disk): a sheet or a new project's file written to a full disk said only
    `error: No space left on device` (a write's error names no file); under --force the old sheet was left renamed
    to .bak, the name it was asked for empty. The line names the file and what mends it, and the old file is back."""
    import errno

    out = tmp_path / "sheet.csv"
    if force:
        out.write_text("graded by hand\n", encoding="utf-8")

    def full(fh: IO[str]) -> None:
        fh.write("row,fixture\n")
        raise OSError(errno.ENOSPC, "No space left on device")

    kept = "the file there before is as it was" if force else "nothing was written there"
    with pytest.raises(RunError) as refused:
        write_new(out, full, force=force, shown="sheet.csv", error=RunError)
    assert str(refused.value) == ("sheet.csv: could not be written (No space left on device: the disk is full or a "
                                  f"file-size limit was reached); {kept}. Make room, then try again")
    assert sorted(p.name for p in tmp_path.iterdir()) == (["sheet.csv"] if force else [])
    assert not force or out.read_text(encoding="utf-8") == "graded by hand\n"
