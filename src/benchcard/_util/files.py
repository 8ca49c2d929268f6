"""Whole files written so that a reader sees the old state or the new one, never half of a file.

The one implementation for every file benchcard writes whole (manifest, seal, sealed plan, scores, chunks,
verdict.json, table.csv, sheet mappings, site files): written to a temporary sibling, synced, renamed over the
target, and the folder synced, so a kill or a power cut at any instant leaves either the old file or the new
one. The temporary is hidden and named for its process; one a killed process left is removed by the next write
of the same file, and no reader takes a work file (`is_work_file`) for content. `write_atomic` takes the bytes
at once, `AtomicFile` streams them, and `synced_file` + `move_into_place` split the two halves for a file whose
digest is recorded before it is moved into place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from benchcard._util.text import ascii_int


def fsync_dir(folder: Path) -> None:
    """Sync a folder's entry list, so that a rename in it survives a power cut (best effort off POSIX)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def tmp_sibling(path: Path, suffix: str = ".tmp") -> Path:
    """Where `path` is written before it is moved into place: beside it, hidden and named for this process
    (`.<name>.<pid>-<hex>.tmp`), so that a kill leaves no litter in a listing and no name another writer of
    `path` would take; what a killed writer left is removed by the next write of `path` (`sweep_stale`)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{suffix}")


def discard(path: Path) -> None:
    """Remove a temporary, if it is there, on the way out of a write that failed or was refused: never an error
    of its own. On a read-only mount even removing a file that was never made fails (EROFS), and that error
    would take the place of the one that led here (`already has a verdict`, a full disk); a temporary that
    could not be removed is removed by the next write of its file (`sweep_stale`)."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def is_work_file(name: str) -> bool:
    """A file being written, or left by a writer killed before its rename: never content to read or digest."""
    return name.endswith((".tmp", ".part"))


def sweep_stale(path: Path, suffix: str = ".tmp") -> None:
    """Remove what killed writers of `path` left beside it: their temporaries (`tmp_sibling`) whose process is
    gone, and `<name>.tmp`, the fixed name versions before 2026-12-06 used. A live writer's is left alone."""
    prefix = f".{path.name}."
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)):
                continue
            pid, _, token = entry.name[len(prefix):-len(suffix)].partition("-")
            number = ascii_int(pid, digits=None)
            if number is not None and len(token) == 8 and not alive(number):
                Path(entry.path).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def alive(pid: int) -> bool:
    """Whether a process of this id runs (off POSIX, always assumed: nothing is removed there)."""
    if os.name != "posix" or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none of this id, or an id no process can have
        return False
    except OSError:
        return True  # another user's process
    return True


def fresh_tmp(path: Path, suffix: str = ".tmp") -> Path:
    """A new temporary for `path` (`tmp_sibling`), after removing what killed writers of it left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(path, suffix)
    return tmp_sibling(path, suffix)


def named(exc: OSError, path: Path, tmp: Path | None = None) -> OSError:
    """A write the system refused (a full disk, a file-size limit, a folder not writable) said of the file it was
    for: a write's or a sync's error names no file, and the one line a user sees read `error: No space left on
    device`; an open's names the temporary `tmp` (`.table.csv.5228-5afbfd43.tmp: Permission denied`), a name the
    user never gave and never sees in a listing."""
    if exc.filename and (tmp is None or os.fspath(exc.filename) != os.fspath(tmp)):
        return exc
    return OSError(exc.errno, exc.strerror, str(path))


@contextlib.contextmanager
def writing(path: Path, tmp: Path | None = None) -> Iterator[None]:
    """A block that writes `path` (through its temporary `tmp`): an error of the system naming no file (a write, a
    flush, a sync) or naming the temporary names `path`."""
    try:
        yield
    except OSError as exc:
        raise named(exc, path, tmp) from None


@contextlib.contextmanager
def synced_file(path: Path, meant: Path | None = None) -> Iterator[BinaryIO]:
    """Open `path` for writing bytes; on leaving the block without error, flush it and sync it to disk. A write
    refused is said of `meant` (the file a temporary `path` becomes), else of `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with writing(meant or path, path), open(path, "wb") as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def move_into_place(tmp: Path, path: Path, overwrite: bool = True) -> None:
    """Rename a written and synced `tmp` over `path` and sync the folder(s), so the move survives a power cut.

    With `overwrite=False` an existing `path` is kept (FileExistsError, `tmp` removed): the file is linked, not
    renamed, so two writers racing for the same name cannot both win.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if overwrite:
        os.replace(tmp, path)
    else:
        try:
            os.link(tmp, path)
        except FileExistsError:
            discard(tmp)
            raise
        except OSError:  # a file system without hard links: checked, then renamed (a race is no longer refused)
            if os.path.lexists(path):
                discard(tmp)
                raise FileExistsError(path) from None
            os.replace(tmp, path)
        else:
            discard(tmp)
    fsync_dir(path.parent)
    if tmp.parent != path.parent:
        fsync_dir(tmp.parent)


class AtomicFile:
    """A file written as a stream and moved into place whole: `commit()` (or leaving a `with` block cleanly)
    moves it, `abort()` (or an exception in the block) removes the temporary file and leaves the target as it was.
    """

    def __init__(self, path: Path, overwrite: bool = True, suffix: str = ".tmp") -> None:
        self.path = path
        self.tmp = fresh_tmp(path, suffix)
        self._overwrite = overwrite
        with writing(path, self.tmp):
            self._fh: BinaryIO | None = open(self.tmp, "xb")  # noqa: SIM115 (closed by commit or abort)

    def write(self, data: bytes) -> int:
        """Append bytes to the temporary file."""
        assert self._fh is not None, f"{self.path}: written after commit or abort"
        try:
            return self._fh.write(data)
        except OSError as exc:
            raise self._named(exc) from None

    def commit(self) -> None:
        """Sync the temporary file and move it over the target."""
        if self._fh is None:
            return
        fh, self._fh = self._fh, None
        try:
            with fh:
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            discard(self.tmp)
            raise self._named(exc) from None
        move_into_place(self.tmp, self.path, self._overwrite)

    def abort(self) -> None:
        """Close and remove the temporary file; the target is untouched."""
        if self._fh is None:
            return
        fh, self._fh = self._fh, None
        with contextlib.suppress(OSError):  # the bytes a full disk refused, which closing tries to write again
            fh.close()
        discard(self.tmp)

    def _named(self, exc: OSError) -> OSError:
        return named(exc, self.path)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


def refused_write(exc: OSError) -> tuple[str, str]:
    """What the system said of a write it refused, and what mends it: a full disk or a file-size limit is mended
    by making room; anything else (a refused permission) is not, so the line never says so."""
    said = str(exc.strerror or exc)
    if exc.errno in _FULL:
        return f"{said}: the disk is full or a file-size limit was reached", "Make room"
    return said, "Put that right"


def write_atomic(path: Path, data: str | bytes, overwrite: bool = True) -> None:
    """Write `data` (text as UTF-8) to a temporary sibling, sync it, and move it into place.

    With `overwrite=False` an existing file is left as it is and FileExistsError raised.
    """
    with AtomicFile(path, overwrite=overwrite) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
