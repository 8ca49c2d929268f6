"""The run folder's file names and row shapes, and the one way a row becomes a JSONL line.

Every on-disk row of a run is typed here once; the store writes them, the verdict and the site read them.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

MANIFEST = "manifest.json"
OUTPUTS = "outputs.jsonl"
SCORES = "scores.jsonl"
SEALED = "sealed"
ASSIGNMENT = "assignment.jsonl"
REQUESTS = "requests.jsonl"
STATUSES = ("ok", "truncated", "failed")
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{4}")


class UsageRow(TypedDict):
    input: int
    output: int
    reasoning: int


class OutputRow(TypedDict):
    """One finished cell as `outputs.jsonl` holds it: no variant, no model, no repetition."""

    cell: str
    fixture: str
    status: str  # ok | truncated | failed
    text: str
    finish_reason: str | None
    usage: UsageRow
    cost: float | None
    latency_ms: float | None
    attempts: int
    error: str | None
    endpoint: NotRequired[str]  # the server that answered, when the provider is a pool of servers
    batch: NotRequired[str]  # the vendor's batch that answered, in a `run --batch`


class AssignmentRow(TypedDict):
    cell: str
    variant: str
    fixture: str
    repetition: int
    order: int


class RequestRow(TypedDict):
    cell: str
    provider: str
    url: str
    body: dict[str, Any]


class Counts(TypedDict):
    ok: int
    truncated: int
    failed: int


def new_run_id(now: datetime | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-xxxx`: the UTC start and four random hex digits."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    return when.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # built once: rows are written by the 10⁵


_ASCII_LINE_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def dumps_line(row: Mapping[str, Any]) -> bytes:
    """One JSONL line: compact, UTF-8 kept as is, ending in a newline.

    A model's reply may hold a lone surrogate (`"\\ud800"` in its JSON), which has no UTF-8 form: such a row is
    written with JSON escapes instead, which read back to exactly the same text.
    """
    text = _LINE_ENCODER.encode(row)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return _ASCII_LINE_ENCODER.encode(row).encode("ascii") + b"\n"
