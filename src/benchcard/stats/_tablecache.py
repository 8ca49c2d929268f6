"""Seeded tables kept on disk between processes: the worst-case null tables, the design searches' simulated runs
and `plan`'s simulated powers are the same numbers every time for the same design and code, and each costs up to a
few tenths of a CPU-second, so `check`, `seal`, `plan` and `verdict` read a table another process already made
instead of drawing it again.

The folder is `$BENCHCARD_CACHE_DIR` (a relative one is resolved against the working directory at its first use),
else `$XDG_CACHE_HOME/benchcard`, else `~/.cache/benchcard` (an empty `BENCHCARD_CACHE_DIR` turns the cache off). A
file is named by a digest of what makes its numbers (the table's kind and design, the source of every `stats/`
module, numpy's and scipy's versions, the machine), so a change of code or library never reads an old table; it holds
its name's digest and a checksum of its bytes, so a corrupt, truncated or foreign file is ignored and the table drawn
again. It is never required: a folder that cannot be read or written
only means the table is drawn here, as without a cache.

A checksum catches a torn file, not a forger, so what decides a result never reads the folder: a null table is read
from disk only inside `advisory()` (the design searches and power figures of `check`, `seal` and `plan`), and a run's
looks, its verdict, `compare` and `replicate` draw their own (and may keep them for the next `check`).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import scipy

FloatArray = npt.NDArray[np.float64]

#: The environment variable naming the cache folder (empty: no disk cache).
ENV = "BENCHCARD_CACHE_DIR"
#: The first line of every table file; a new layout gets a new number.
MAGIC = b"benchcard table 1\n"
_DIGEST = hashlib.sha256().digest_size
#: A table neither read nor written for this long is deleted when another is written (drawn again if asked for),
#: so the folder does not grow with each version of the statistics' code.
KEEP_SECONDS = 30 * 24 * 3600
#: A temporary file this old was left by a process killed while writing (a write takes milliseconds).
STALE_TEMP_SECONDS = 3600
#: Whether tables shared with a decision (`null`) may be read from disk here: only inside `advisory()`.
_ADVISORY: ContextVar[bool] = ContextVar("benchcard_advisory_tables", default=False)


@contextlib.contextmanager
def advisory() -> Iterator[None]:
    """Inside it, every table may be read from disk: for figures that advise before a run (a design's reach, a
    plan's power), never for a decision, which draws its own tables whatever the folder holds."""
    token = _ADVISORY.set(True)
    try:
        yield
    finally:
        _ADVISORY.reset(token)


def reading() -> bool:
    """Whether a table that a decision also uses may be read from disk here (inside `advisory()`)."""
    return _ADVISORY.get()


def folder() -> Path | None:
    """Where the tables are kept, or None when the cache is off or no folder can be named."""
    named = os.environ.get(ENV)
    if named is not None:
        return _named(named) if named else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "benchcard"
    try:
        return Path.home() / ".cache" / "benchcard"
    except RuntimeError:  # no home directory to name
        return None


@lru_cache(maxsize=8)
def _named(named: str) -> Path:
    """`$BENCHCARD_CACHE_DIR` as a folder: `~` expanded, and a relative name resolved against the working directory
    once, at its first use, so one process keeps one folder even if it changes directory later (as a library may)."""
    return Path(named).expanduser().absolute()


@lru_cache(maxsize=1)
def code_digest() -> str | None:
    """A digest of everything that makes a table's numbers besides its design: the statistics' source (every
    `stats/` module, since a table's code calls across them), numpy and scipy, the machine. None when the source
    cannot be read (then nothing is cached: a table from other code could not be told apart)."""
    digest = hashlib.sha256(f"{MAGIC!r}|{np.__version__}|{scipy.__version__}|{platform.machine()}|"
                            f"{sys.byteorder}".encode())
    try:
        sources = sorted(Path(__file__).parent.glob("*.py"))
        for path in sources:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:
        return None
    return digest.hexdigest() if sources else None  # an install without its source: nothing tells code apart


def path_of(kind: str, design: tuple[object, ...]) -> Path | None:
    """The file holding the `kind` table of `design` for this code, or None when the cache is off."""
    where, code = folder(), code_digest()
    if where is None or code is None:
        return None
    name = hashlib.sha256(f"{kind}|{design!r}|{code}".encode()).hexdigest()[:32]
    return where / "tables" / f"{kind}-{name}.bin"


def table(kind: str, design: tuple[object, ...], shape: tuple[int, ...], make: Callable[[], FloatArray], *,
          read: bool = True) -> FloatArray:
    """The `kind` table of `design` (float64, `shape`, read-only): read from the cache when `read` and a sound file
    of this code holds it, else `make()`, kept for the next process."""
    found = stored(kind, design, shape) if read else None
    if found is not None:
        return found
    path = path_of(kind, design)
    made = np.array(make(), dtype=np.float64)
    if made.shape != shape:
        raise ValueError(f"the {kind} table of {design}: expected shape {shape}, made {made.shape}")
    if path is not None:
        _write(path, made)
    made.setflags(write=False)
    return made


def stored(kind: str, design: tuple[object, ...], shape: tuple[int, ...]) -> FloatArray | None:
    """The `kind` table of `design` when a sound file of this code holds it (None: not kept, or the cache off)."""
    path = path_of(kind, design)
    return None if path is None else _read(path, shape)


def _signature(path: Path) -> bytes:
    """What a file's header names: its own file name's digest (a file copied or renamed over another is foreign)."""
    return path.stem.rsplit("-", 1)[-1].encode()


def _read(path: Path, shape: tuple[int, ...]) -> FloatArray | None:
    """The table in `path` when the file is whole and is this name's (else None: drawn again)."""
    start = MAGIC + _signature(path)
    head = len(start) + _DIGEST
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    payload = raw[head:]
    if (len(payload) != 8 * math.prod(shape) or not raw.startswith(start)
            or hashlib.sha256(payload).digest() != raw[len(start):head]):
        return None
    found: FloatArray = np.frombuffer(payload, dtype="<f8").astype(np.float64).reshape(shape)
    found.setflags(write=False)
    with contextlib.suppress(OSError):
        os.utime(path)  # in use: kept past KEEP_SECONDS
    return found


def _write(path: Path, values: FloatArray) -> None:
    """Keep the table for other processes: written to a temporary file and renamed, so a reader sees the whole
    file or none; any failure (a read-only folder, a full disk) leaves the cache as it was."""
    payload = values.astype("<f8").tobytes()
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as out:
            tmp = out.name
            out.write(MAGIC + _signature(path) + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
        tmp = None
        _prune(path.parent, time.time())
    except OSError:
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _prune(folder: Path, now: float) -> None:
    """Delete the tables no one has read or written for KEEP_SECONDS (another code's, or a design not asked for
    since) and the temporary files a killed writer left; a file another process removes first is no matter."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            age = now - entry.stat(follow_symlinks=False).st_mtime
            temporary = entry.name.startswith(".") and age > STALE_TEMP_SECONDS
            if temporary or (entry.name.endswith(".bin") and age > KEEP_SECONDS):
                os.unlink(entry.path)
