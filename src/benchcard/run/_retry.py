"""`run --resume RUN --retry-failed`: a run's failed cells called again, every earlier attempt kept on record.

`outputs.jsonl` is append-only, a retry included: the failed rows stay where they are and the retried cells' new
rows are appended after them, so a cell's outcome is its last row (every reader of a retried run takes it, through
`_util/lastrow.py`). The manifest's `retries` list says when each retry began, how many cells it took up, `from`
(the size of outputs.jsonl then: a cell whose last row is a failure before that byte is waiting to be called
again) and the closing fields the run had (`finished_at`, `outputs_digest`, `scores_digest`, `counts`), so the
digest of outputs.jsonl as it was stays on record; the run is open again until the retried cells have an outcome,
when it closes as any run does, except that only the rows added since it was closed are scored, their scores
appended to scores.jsonl after `scores_from` (its size at the reopening; `scoring.scorers.score_run`). The
reopening is one atomic write of the manifest: a retry interrupted anywhere is continued by `--resume`.

Runs retried before 2026-12-01 moved their failed rows to `attempts.jsonl` and rewrote outputs.jsonl without them;
their retry entries have no `from`, and they read as they always did.
A run with a verdict is never retried: its evidence is anchored in the ledger (checked again under the run's lock,
which a verdict holds shared from its first read to its last write, so neither starts while the other works). In a
sequential run a look taken is final, so the failed cells of the repetitions a look has read are never reopened
(`runreader.Outcomes.final`): only those of the stretch under way are, and its look is taken once they have an
outcome.
"""

from __future__ import annotations

from msgspec import UnsetType

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.rows import Manifest, utc_stamp
from benchcard.records.runreader import Outcomes, outcomes, retry_from
from benchcard.run.store import RunStore

CLOSING_FIELDS = ("finished_at", "outputs_digest", "scores_digest", "counts")
VERDICT = "verdict.json"


def scoring_since(manifest: Manifest) -> tuple[int, int] | None:
    """For scoring a retried run as it closes again: where its unscored rows begin in outputs.jsonl and the size
    scores.jsonl had then, from the latest retry that reopened a closed run (None: score the whole run, as for
    a run never closed, or one retried the old way)."""
    for entry in reversed(manifest.retries or []):
        if not isinstance(entry.closed, UnsetType):
            start, size = entry.start, entry.scores_from
            return (start, size) if isinstance(start, int) and isinstance(size, int) else None
    return None


def done_cells(store: RunStore) -> set[str]:
    """The cells a resume does not call: every recorded cell but those a retry reopened."""
    done = store.done_cells()
    if store.has_manifest() and retry_from(store.read_manifest()) is not None:
        done -= outcomes(store).waiting
    return done


def refuse_if_judged(project: Project, store: RunStore) -> None:
    if (store.folder / VERDICT).exists():
        raise RunError(f"run {store.run_id} already has a verdict ({project.relative(store.folder / VERDICT)}); "
                       "a judged run is never changed: start a new run to call those cells again")


def reopen_failed(store: RunStore, found: Outcomes) -> int:
    """Reopen the run for its failed cells (their rows stay in outputs.jsonl); returns how many."""
    if not found.failed:
        return 0
    with store.open_outputs():  # the run's lock (and a torn tail repaired) while the manifest changes
        if (store.folder / VERDICT).exists():  # judged since the caller's check, before this lock was taken
            raise RunError(f"run {store.run_id} already has a verdict ({VERDICT}, given meanwhile); a judged run "
                           "is never changed: start a new run to call those cells again")
        manifest = store.read_manifest()
        entry: dict[str, object] = {"at": utc_stamp(), "cells": found.failed,
                                    "from": store.outputs_path.stat().st_size}
        fields = manifest.fields()
        closed = {k: fields[k] for k in CLOSING_FIELDS if k in fields}
        if closed:
            entry["closed"] = closed
            if store.scores_path.is_file():  # the retried cells' scores are appended after these bytes
                entry["scores_from"] = store.scores_path.stat().st_size
        store.reopen_manifest(entry, CLOSING_FIELDS)
    return found.failed
