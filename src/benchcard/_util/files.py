"""Whole files written so that a reader sees the old state or the new one, never half of a file."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to a temporary sibling, sync it, and move it into place."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
