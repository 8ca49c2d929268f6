"""Writing a file a command was asked to write, without destroying one it did not write.

A user's `--out` may name a file that exists: a grader's filled-in sheet, or the ledger itself. Such a file
is never written over: the command refuses, or with `--force` first renames it to a free `<name>.bak[.N]`
(the rename moves a symbolic link itself, never its target). The new file is written to a temporary sibling and
moved into place without overwriting, so it is whole or absent, and a file or link that appears in between is
not written through either.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

from benchcard._util.files import discard, fresh_tmp, move_into_place, refused_write
from benchcard.errors import BenchcardError


def backup_name(path: Path) -> Path:
    """The first free `<name>.bak`, `<name>.bak.1`, ... beside `path`."""
    candidate = path.with_name(path.name + ".bak")
    n = 0
    while os.path.lexists(candidate):
        n += 1
        candidate = path.with_name(f"{path.name}.bak.{n}")
    return candidate


def refuse_existing(path: Path, *, force: bool, shown: str, error: type[BenchcardError] = BenchcardError) -> None:
    """`write_new`'s refusal of an existing `path` without `force`, asked alone by a command that writes other
    files first (a blind sheet's mapping) and must not write them for a sheet it will refuse."""
    if not force and os.path.lexists(path):
        raise error(f"{shown}: already exists; benchcard never writes over a file it did not create "
                    "(choose another name, or --force to keep the old one as a .bak and write anew)")


def write_new(path: Path, write: Callable[[IO[str]], object], *, force: bool, shown: str,
              error: type[BenchcardError] = BenchcardError) -> Path | None:
    """Create `path` and fill it with `write(fh)` (text, UTF-8, no newline translation); returns the backup
    made of an existing file under `--force`, else None. An existing file without `force` is `error`."""
    backup = None
    if os.path.lexists(path):
        refuse_existing(path, force=force, shown=shown, error=error)
        backup = backup_name(path)
        os.rename(path, backup)
    try:
        _write_whole(path, write)
    except FileExistsError:
        raise error(f"{shown}: appeared while writing; nothing was written over it") from None
    except OSError as exc:
        if os.path.lexists(path):  # written, its folder's sync refused: the system's words, naming the folder
            raise
        # a refused write (a full disk): the file named as the user knows it, the old one back in its place
        if backup is not None:
            os.rename(backup, path)
        said, mend = refused_write(exc)
        kept = "the file there before is as it was" if backup is not None else "nothing was written there"
        raise error(f"{shown}: could not be written ({said}); {kept}. {mend}, then try again") from None
    return backup


def _write_whole(path: Path, write: Callable[[IO[str]], object]) -> None:
    """Written whole or not at all (a kill leaves no half file to refuse later): an exclusive temporary sibling of
    a name no user file has, synced, then moved into place without overwriting."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = fresh_tmp(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        move_into_place(tmp, path, overwrite=False)
    finally:
        discard(tmp)
