"""The manifest's parts, typed (`records.Manifest` holds them): the rig, the counts, a judge's plan and its
tokens, and each `--retry-failed` with the closing fields it took away. Kept apart from `records.py` only for
its size (records imports them, so `from benchcard.records.rows import Counts` reads as before).
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType


class RigRecord(msgspec.Struct, frozen=True):
    """The rig a run used, and its one-line description."""

    provider: str
    model: str
    effort: str | None = None
    surface: str | None = None
    line: str = ""


class Counts(msgspec.Struct, frozen=True):
    ok: int = 0
    truncated: int = 0
    failed: int = 0


class Tokens(msgspec.Struct, frozen=True):
    """Tokens a run's judge calls used (`run/judging.py`; the manifest's `judge_tokens`)."""

    input: int
    output: int


class Closed(msgspec.Struct, frozen=True, kw_only=True):
    """The closing fields a run had when `--retry-failed` reopened it, kept so that its earlier
    `outputs_digest` stays on record (`run/retry.py`'s CLOSING_FIELDS); a field the run did not have is absent."""

    finished_at: str | UnsetType | None = UNSET
    outputs_digest: str | UnsetType | None = UNSET
    scores_digest: str | UnsetType | None = UNSET
    counts: Counts | UnsetType | None = UNSET


class Retry(msgspec.Struct, frozen=True, kw_only=True):
    """One `--retry-failed` in the manifest's `retries`: when, how many failed cells it reopened, where in
    outputs.jsonl it began (`from`; absent in retries made before 2026-12-01, which moved the failed rows to
    attempts.jsonl), the closing fields it took away and, when it reopened a closed run, where its scores
    begin in scores.jsonl (`scores_from`)."""

    at: str
    cells: int
    start: int | UnsetType = msgspec.field(default=UNSET, name="from")
    closed: Closed | UnsetType = UNSET
    scores_from: int | UnsetType = UNSET  # the size scores.jsonl had when a closed run was reopened


class JudgePlan(msgspec.Struct, frozen=True):
    """A judge card's judging plan, added to the manifest when it is sealed (`run/judging.py`)."""

    rig: RigRecord | None = None
    provider_type: str | None = None
    base_url: str | None = None
    per_output: int | None = None  # judgements of each output
    judgements: int | None = None  # judgements planned in all
    seed: int | None = None
    planned_at: str | None = None
    requests_digest: str | None = None  # of sealed/judge-requests.jsonl
