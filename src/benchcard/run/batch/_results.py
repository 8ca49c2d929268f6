"""A batch's result lines read into rows of `outputs.jsonl`, with the same statuses as an interactive call.

OpenAI: a line of the output or error file is `{custom_id, response: {status_code, body}, error}`; a 200's body is
a chat completion. Anthropic: a line is `{custom_id, result: {type: succeeded|errored|canceled|expired, ...}}`.
A request that expired, was cancelled or errored is `failed` with that cause, never scored; an answer cut by the
token limit is `truncated`; costs are the batch price (`cost_of(..., batch=True)`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from benchcard._util.text import squeezed
from benchcard.errors import CallError, RetryableError, RunError
from benchcard.records.rows import OutputRow, Usage
from benchcard.run.providers import Price, cost_of
from benchcard.run.providers.anthropic import parse_message
from benchcard.run.providers.base import Completion, mapping
from benchcard.run.providers.openai import parse_chat_completion

Outcome = Completion | str  # an answer, or why the request has none


#: The characters kept of a vendor's message; its word for a state, a code or a kind keeps `vendor_word`'s 60.
_MESSAGE = 300


def vendor_word(value: Any, limit: int = 60) -> str:
    """A vendor's word (a status, a code, an error's message) as one line of at most `limit` characters: a result
    line or an answer may be megabytes, and none of it but the answer is kept whole. A value that is not text is
    quoted in JSON, as the vendor sent it (`null`, `true`, `{"a": 1}`), not in Python's words for it."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return squeezed(text, limit)


def openai_outcome(line: Mapping[str, Any]) -> Outcome:
    response = mapping(line.get("response"))
    error = mapping(line.get("error"))
    if error:
        code = vendor_word(error.get("code") or "error")
        cause = {"batch_expired": "expired", "batch_cancelled": "cancelled"}.get(code, f"errored ({code})")
        return f"{cause}: {vendor_word(error.get('message', ''), _MESSAGE)}"
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        detail = mapping(mapping(body).get("error")).get("message", "")
        return f"errored: HTTP {vendor_word(status, 20)}" + (f": {vendor_word(detail, _MESSAGE)}" if detail else "")
    return parse_chat_completion(body)


def anthropic_outcome(line: Mapping[str, Any]) -> Outcome:
    result = mapping(line.get("result"))
    kind = result.get("type")
    if kind == "succeeded":
        return parse_message(result.get("message"))
    if kind == "errored":
        # the docs' error response, `{type: error, error: {type, message}}`; a proxy may send its inner object alone
        outer = mapping(result.get("error"))
        inner = mapping(outer.get("error")) or outer
        return f"errored: {vendor_word(inner.get('type', 'error'))}: {vendor_word(inner.get('message', ''), _MESSAGE)}"
    if kind == "canceled":
        return "cancelled: the batch was cancelled before this request ran"
    if kind == "expired":
        return "expired: the batch ended (24 h) before this request ran"
    return f"errored: unknown result type {vendor_word(repr(kind))}"


class _Id(msgspec.Struct):
    """Only a result line's custom_id: the first pass over a chunk's results reads no more."""

    custom_id: Any = None


Where = tuple[Path, int]  # a result line: its file and line number
T = TypeVar("T")


@dataclass(frozen=True)
class Unread:
    """A result line that cannot be read, and the custom_ids its bytes name (`"custom_id": "…"` outside a string):
    a cell whose answer it may be is known, so one also answered by a line that reads is not taken on that one."""

    path: Path
    line: int
    why: str
    named: tuple[str, ...] = ()


#: `"custom_id": "…"` as a line holds it as a key (not escaped inside a string, whose quotes are `\"`).
_NAMED = re.compile(rb'(?<![\\\w])"custom_id"\s*:\s*("(?:[^"\\\r\n]|\\.){0,400}")')


def named_ids(line: bytes) -> tuple[str, ...]:
    """The custom_ids a line that cannot be read names, in order, each once."""
    found: dict[str, None] = {}
    for m in _NAMED.finditer(line):
        try:
            value = json.loads(m.group(1))
        except ValueError:
            continue
        found[str(value)] = None
    return tuple(found)


def result_ids(paths: list[Path], unread: list[Unread] | None = None) -> dict[str, list[Where]]:
    """Every custom_id of the result files, with each line that answers it (more than one: answered twice). A line
    that cannot be read (not JSON, not an object, nested past the stack) is a RunError naming it; with `unread`,
    it is put there instead, with the ids its bytes name, and the rest is read: one vendor's garbage line must not
    hold back the answers of the whole batch, paid for, which a download again would only bring back with it."""
    seen: dict[str, list[Where]] = {}
    for path, n, line in _result_lines(paths, msgspec.json.Decoder(_Id).decode, unread):
        seen.setdefault(str(line.custom_id), []).append((path, n))
    return seen


def read_results(paths: list[Path], anthropic: bool) -> Iterator[tuple[str, Outcome]]:
    """(cell, outcome) for every line of the downloaded result files that can be read (`result_ids` names the
    others)."""
    outcome: Callable[[Mapping[str, Any]], Outcome] = anthropic_outcome if anthropic else openai_outcome
    decode = msgspec.json.Decoder().decode  # faster than json.loads on these lines (docs/scale.md, benchmarks/scale.py)
    for _, _, data in _result_lines(paths, decode, []):
        if not isinstance(data, dict):
            continue  # not a JSON object: `result_ids`'s decoder refuses it, and names it
        try:
            yield str(data.get("custom_id")), outcome(data)
        except (CallError, RetryableError) as exc:
            yield str(data.get("custom_id")), f"errored: {vendor_word(str(exc), _MESSAGE)}"


def _result_lines(paths: list[Path], decode: Callable[[bytes], T], unread: list[Unread] | None
                  ) -> Iterator[tuple[Path, int, T]]:
    """Each line of the result files that is not blank, decoded, with its file and number; a line that is not
    JSON (or not the object `decode` wants) is put in `unread` with why, or with `unread` None a RunError naming
    it."""
    for path in paths:
        with open(path, "rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    decoded = decode(line)
                except msgspec.ValidationError:
                    why = "is not a JSON object"
                except msgspec.DecodeError:
                    why = "is not JSON"
                except RecursionError:  # msgspec recurses as json does: lists nested 100,000 deep (200 kB)
                    why = "is JSON nested deeper than any vendor's answer is (past what a reader's stack holds)"
                else:
                    yield path, n, decoded
                    continue
                if unread is None:
                    again = "" if why == "is not a JSON object" else "; delete the file and resume to download it again"
                    raise RunError(f"{path}: line {n} {why}{again}")
                unread.append(Unread(path, n, why, named_ids(line)))


def output_row(cell: str, fixture: str, outcome: Outcome, batch: str, model: str,
               prices: Mapping[str, Price]) -> OutputRow:
    """The row of one cell; `batch` names the batch that answered it."""
    if isinstance(outcome, str):
        return OutputRow(cell=cell, fixture=fixture, status="failed", text="", finish_reason=None, usage=Usage(),
                         cost=None, latency_ms=None, attempts=1, error=outcome, batch=batch)
    c = outcome
    priced = cost_of(c.usage, c.cost, model, prices, batch=True, counted=c.counted)
    return OutputRow(cell=cell, fixture=fixture, status=c.status, text=c.text, finish_reason=c.finish_reason,
                     usage=c.usage, cost=priced.cost, latency_ms=None, attempts=1, error=c.error, batch=batch,
                     cost_upper_bound=priced.mark)
