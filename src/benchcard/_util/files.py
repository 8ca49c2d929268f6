"""Whole files written so that a reader sees the old state or the new one, never half of a file.

One implementation for every file benchcard replaces whole (manifest, seal, verdict.json, site files): written
to a temporary sibling, synced, renamed over the target, and the folder synced, so a kill or a power cut at any
instant leaves either the old file or the new one.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    """Sync a folder's entry list, so that a rename in it survives a power cut (best effort off POSIX)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to a temporary sibling, sync it, and move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
