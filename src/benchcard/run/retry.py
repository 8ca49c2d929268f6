"""`run --resume RUN --retry-failed`: a run's failed cells called again, every earlier attempt kept on record.

`outputs.jsonl` holds one row per cell, the cell's current outcome; scoring, the verdict, grading and the pages
all read it that way. So before a retry the failed rows are appended, byte for byte, to `attempts.jsonl`
(flushed and synced), and only then is `outputs.jsonl` replaced by a copy without them. The manifest's
`retries` list says when each retry began, how many cells it took up, and the closing fields the run had before
(`finished_at`, `outputs_digest`, `scores_digest`, `counts`): the digest of `outputs.jsonl` as it was stays on
record, and the run is open again until the retried cells have an outcome, when it closes as any run does.

Each step can be interrupted and repeated: the manifest is reopened first, a block of rows already at the end of
`attempts.jsonl` is not appended twice, and the replacement of `outputs.jsonl` is a rename.
A run with a verdict is never retried: its evidence is anchored in the ledger.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records import utc_stamp
from benchcard.run.store import RunStore

ATTEMPTS = "attempts.jsonl"
CLOSING_FIELDS = ("finished_at", "outputs_digest", "scores_digest", "counts")
VERDICT = "verdict.json"


@dataclass(frozen=True)
class Outcomes:
    """A run's recorded cells by outcome: how many, and the lines of the failed ones."""

    recorded: int
    failed_lines: tuple[bytes, ...]

    @property
    def failed(self) -> int:
        return len(self.failed_lines)


def outcomes(store: RunStore) -> Outcomes:
    """Count the recorded cells and pick out the failed rows, exactly as written."""
    recorded, failed = 0, []
    for line in _lines(store.outputs_path):
        recorded += 1
        if b'"status":"failed"' in line and json.loads(line).get("status") == "failed":
            failed.append(line)
    return Outcomes(recorded, tuple(failed))


def refuse_if_judged(project: Project, store: RunStore) -> None:
    if (store.folder / VERDICT).exists():
        raise RunError(f"run {store.run_id} already has a verdict ({project.relative(store.folder / VERDICT)}); "
                       "a judged run is never changed: start a new run to call those cells again")


def reopen_failed(store: RunStore, found: Outcomes) -> int:
    """Move the failed rows to attempts.jsonl, out of outputs.jsonl, and reopen the manifest; returns how many."""
    if not found.failed:
        return 0
    with store.open_outputs():  # the run's lock (and a torn tail repaired) while its files change
        _reopen(store, found)
    return found.failed


def _reopen(store: RunStore, found: Outcomes) -> None:
    manifest = store.read_manifest()
    entry: dict[str, object] = {"at": utc_stamp(), "cells": found.failed}
    fields = manifest.fields()
    closed = {k: fields[k] for k in CLOSING_FIELDS if k in fields}
    if closed:
        entry["closed"] = closed
    store.reopen_manifest(entry, CLOSING_FIELDS)
    attempts = store.folder / ATTEMPTS
    block = b"".join(found.failed_lines)
    if not _ends_with(attempts, block):
        with open(attempts, "ab") as fh:
            fh.write(block)
            fh.flush()
            os.fsync(fh.fileno())
    failed = set(found.failed_lines)
    tmp = store.outputs_path.with_name(store.outputs_path.name + ".retry.tmp")
    with open(tmp, "wb") as out:
        for line in _lines(store.outputs_path):
            if line not in failed:
                out.write(line)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, store.outputs_path)


def _lines(path: Path) -> list[bytes]:
    """Whole lines of a JSONL file (a torn final line, from a kill mid-write, is left to the store's repair)."""
    if not path.is_file():
        return []
    with open(path, "rb") as fh:
        return [line for line in fh if line.endswith(b"\n") and line.strip()]


def _ends_with(path: Path, block: bytes) -> bool:
    if not path.is_file() or path.stat().st_size < len(block):
        return False
    with open(path, "rb") as fh:
        fh.seek(-len(block), os.SEEK_END)
        return fh.read() == block
