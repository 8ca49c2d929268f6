"""What the suite makes once per run and its tests only read (the demo card's embedded-model run, real inspect_ai
logs, the decisions' null tables): pytest-xdist's workers share it, the first to ask makes it under a file lock and
the others read it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from filelock import FileLock

from benchcard.stats import _tablecache


def shared_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder every worker of this pytest run sees (beside the workers' own temporary folders); without xdist,
    a fresh one of this session's."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return factory.mktemp(name)
    folder = factory.getbasetemp().parent / name
    folder.mkdir(exist_ok=True)
    return folder


def made_once(folder: Path, make: Callable[[Path], Any]) -> Any:
    """What `make(folder / "made")` returned (a JSON value), made by the first caller only: the others wait for
    it on the lock and read its record. A folder left half-made by a worker that died is made again."""
    record, made = folder / "made.json", folder / "made"
    with FileLock(str(folder / "made.lock")):
        if not record.is_file():
            shutil.rmtree(made, ignore_errors=True)
            made.mkdir()
            record.write_text(json.dumps(make(made)), encoding="utf-8")
        return json.loads(record.read_text(encoding="utf-8"))


def drawn_once(folder: Path, draw: Callable[[int, int, int], npt.NDArray[np.float64]]
               ) -> Callable[[int, int, int], npt.NDArray[np.float64]]:
    """`draw` (the worst-case null table of a design: `stats/worstcase.draw_null_scores`) made once per pytest run
    for every worker: a decision draws its own table in each process that decides (a verdict in worker gw0 and the
    same design's in gw3 drew it twice, about 0.3 CPU-s each, a hundred designs). The first worker to ask draws it
    under a file lock and keeps its bytes in `folder`, named by the design and `_tablecache.code_digest()` (every
    `stats/` module's source, numpy's and scipy's versions), so a change of the statistics draws it again; the others
    read those bytes. Only these test workers read the folder: a `benchcard` the tests start draws its own."""
    def once(n: int, complete: int, r: int) -> npt.NDArray[np.float64]:
        key = hashlib.sha256(f"{(n, complete, r)!r}|{_tablecache.code_digest()}".encode()).hexdigest()[:32]
        path = folder / f"null-{key}.npy"
        with FileLock(str(folder / f"null-{key}.lock")):
            if not path.is_file():
                drawn = draw(n, complete, r)
                part = path.with_suffix(".part")
                with part.open("wb") as out:
                    np.save(out, drawn, allow_pickle=False)
                part.replace(path)
                return drawn
        kept: npt.NDArray[np.float64] = np.load(path, allow_pickle=False)
        return kept

    once.__wrapped__ = draw  # type: ignore[attr-defined]  # inspect.unwrap: the draw itself, for the tests of it
    return once
