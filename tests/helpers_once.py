"""What the suite makes once per run and its tests only read (the demo card's embedded-model run, real inspect_ai
logs): pytest-xdist's workers share it, the first to ask makes it under a file lock and the others read it."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock


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
