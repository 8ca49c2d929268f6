"""The fake server's behaviour as a JSON config (canned replies, reply cycles, faults, latency), validated strictly
into frozen dataclasses: a typo in a test's config must fail loudly, not do nothing. See the package docstring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from benchcard.errors import FakeServerError

FAULT_KINDS: Final = ("400", "401", "429", "500", "503", "drop", "hang", "truncate", "malformed", "shapeless",
                       "error200", "html", "null", "mistyped", "redirect", "bad_redirect", "zstd_bomb", "refusal",
                       "tool_call", "blocks", "no_usage", "extras", "choices")
FaultKind = Literal["400", "401", "429", "500", "503", "drop", "hang", "truncate", "malformed", "shapeless",
                    "error200", "html", "null", "mistyped", "redirect", "bad_redirect", "zstd_bomb", "refusal",
                    "tool_call", "blocks", "no_usage", "extras", "choices"]
#: The faults that give a well-formed answer in a shape real vendors send (their docs), read by `_replies.reshaped`.
SHAPES: Final = frozenset({"refusal", "tool_call", "blocks", "no_usage", "extras", "choices"})
#: The faults whose call is still answered in the API's shape (late, cut, or spoiled by `_replies.spoiled`).
ANSWERED_FAULTS: Final = frozenset({"hang", "truncate", "null", "mistyped"}) | SHAPES
#: Why a reply stops, as the OpenAI shape says it; the Anthropic shape says `end_turn` for stop and `max_tokens`
#: for length, and the rest as they are. `stop_sequence` ends an answer too, `model_context_window_exceeded` cuts
#: one as length does; each other is an answer that is not one (an error reported inside a 200, a content filter,
#: a tool or function call, a refusal, a paused turn). A reply rule's `finish_reason: null` sends none (`null`),
#: as some OpenAI-compatible servers do, even for a reply the server cut at `max_tokens`.
FINISH_REASONS: Final = ("stop", "length", "error", "content_filter", "tool_calls", "function_call", "refusal",
                         "pause_turn", "tool_use", "stop_sequence", "model_context_window_exceeded")
FinishReason = Literal["stop", "length", "error", "content_filter", "tool_calls", "function_call", "refusal",
                       "pause_turn", "tool_use", "stop_sequence", "model_context_window_exceeded"]


@dataclass(frozen=True, slots=True)
class ReplyRule:
    """A canned answer for requests whose last user message contains ``match`` (empty matches everything)."""

    match: str
    replies: tuple[str, ...]
    finish_reason: FinishReason | None = "stop"  # None: the reply says none (`null`), even when cut at max_tokens
    reasoning_tokens: int = 0
    cost: float | None = None
    # a prompt cache's tokens, in front of the prompt's words: read from it, written to it (of those, to the 1-hour
    # cache), each sent in the vendor's own shape (`_replies.cache_usage`)
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def cycles(self) -> bool:
        """True when successive calls of one body should walk through ``replies`` (run-to-run noise)."""
        return len(self.replies) > 1


@dataclass(frozen=True, slots=True)
class FaultRule:
    """An injected failure for the first ``times`` calls of each distinct matching request body."""

    match: str
    kind: FaultKind
    times: int = 1
    total: int | None = None  # at most this many hits over all bodies (a server that recovers), None: no cap
    retry_after: float | None = None
    hang_s: float = 30.0
    code: int = 502  # error200: the HTTP status the error object inside the 200 answer reports
    held: bool = False  # the call's answer waits for POST /_control/release (a test orders events, not a timer)


BatchEnd = Literal["completed", "expired", "cancelled", "failed"]
BadResults = Literal["duplicate", "unknown", "huge", "nested", "nested_twice", "cut_gzip", "missing", "shuffled"]
BadPoll = Literal["trickled", "huge", "mistyped", "throttled"]


@dataclass(frozen=True, slots=True)
class BatchConfig:
    """How the fake batch APIs behave: seconds spent in each status, how a batch ends, and what share of its
    requests ran before an expiry or cancellation; `delay_s` holds an answer back (after the work is done) on
    `upload`, `create` or `download`, so a test can kill its client while the call is in flight, or holds a
    create back before any work (`receive`): a create whose client is gone by then is dropped, never made (a
    request lost on its way); with `delay_times` N only each step's first N answers are held (a resume's own
    calls are not held again). `bad_results` spoils every result file as a vendor's bug might: `duplicate` serves
each line twice, `unknown` adds a line answering a custom_id nobody sent, `huge` adds a line of 2 MiB, `nested` a
line holding lists nested 100,000 deep (200 kB, past any JSON reader's stack), `nested_twice` such a line
answering the first request again, `missing` leaves out the first request's line, `shuffled` lists the lines in
reverse order (the docs say results may come in any order), `cut_gzip` sends the first
download gzip-compressed and cut off at its last line's start, its compressed stream never ended (no last line,
no trailer), as a connection cut after a flush delivers it. `bad_poll`
spoils every poll (a retrieval by id): `trickled` sends its answer a byte every 0.2 s for a minute, `huge` pads it
to 8 MiB, `mistyped` sends its `request_counts` as a list of the numbers, not an object of named counts,
`throttled` answers it 429 with `Retry-After: 86400` (a day). After the first `trickle_after` result downloads, the
next `trickle_times` are trickled: 16 bytes every 0.1 s, never idle long enough for a per-read timeout, so that only
a deadline on the whole download ends one."""

    validating_s: float = 0.0
    in_progress_s: float = 0.0
    finalizing_s: float = 0.0
    in_progress_polls: int = 0  # in progress for this many retrievals by id, whatever the clock
    end: BatchEnd = "completed"
    done_fraction: float = 1.0
    delay_s: tuple[tuple[str, float], ...] = ()
    delay_times: int = 0  # the first N answers of each step held; 0: every one
    bad_results: BadResults | None = None
    bad_poll: BadPoll | None = None
    trickle_after: int = 0
    trickle_times: int = 0

    def trickles(self, download: int) -> bool:
        """Whether the `download`-th result download (counted from 1) is trickled."""
        return self.trickle_after < download <= self.trickle_after + self.trickle_times

    def delay(self, step: str) -> float:
        return dict(self.delay_s).get(step, 0.0)


@dataclass(frozen=True, slots=True)
class Config:
    """The server's whole behaviour; immutable so a swap through the control endpoint is one assignment."""

    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    seed: int | None = None
    default_reply: str = "ok"
    record_bodies: bool = False
    record_headers: bool = False  # each call's headers (names in lower case) kept, in order, for the stats
    require_key: bool = False
    echo_key: bool = False  # every answer and error message quotes the key the request carried (a debugging proxy)
    replies: tuple[ReplyRule, ...] = ()
    faults: tuple[FaultRule, ...] = ()
    models: tuple[str, ...] = ("fake-model",)  # what GET /v1/models lists (a pool checks its servers agree)
    reply_model: str | None = None  # every reply names this model, not the one asked (a router's fallback)
    batch: BatchConfig = BatchConfig()


_TOP_KEYS: Final = frozenset(
    {
        "latency_ms",
        "latency_jitter_ms",
        "seed",
        "default_reply",
        "record_bodies",
        "record_headers",
        "require_key",
        "echo_key",
        "replies",
        "faults",
        "models",
        "reply_model",
        "batch",
    }
)
_REPLY_KEYS: Final = frozenset(
    {"match", "reply", "replies_cycle", "finish_reason", "reasoning_tokens", "cost", "cached_tokens",
     "cache_write_tokens", "cache_write_1h_tokens"}
)
_FAULT_KEYS: Final = frozenset({"match", "kind", "times", "total", "retry_after", "hang_s", "code", "held"})


def _number(value: Any, where: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise FakeServerError(f"{where}: expected a number >= {minimum:g}, got {value!r}")
    return float(value)


def _integer(value: Any, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise FakeServerError(f"{where}: expected an integer >= {minimum}, got {value!r}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise FakeServerError(f"{where}: expected a string, got {value!r}")
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise FakeServerError(f"{where}: expected true or false, got {value!r}")
    return value


def _check_keys(obj: Any, allowed: frozenset[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise FakeServerError(f"{where}: expected an object, got {obj!r}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise FakeServerError(
            f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )
    return obj


def _parse_reply(obj: Any, where: str) -> ReplyRule:
    raw = _check_keys(obj, _REPLY_KEYS, where)
    if ("reply" in raw) == ("replies_cycle" in raw):
        raise FakeServerError(f"{where}: give exactly one of 'reply' or 'replies_cycle'")
    if "reply" in raw:
        replies: tuple[str, ...] = (_string(raw["reply"], f"{where}.reply"),)
    else:
        cycle = raw["replies_cycle"]
        if not isinstance(cycle, list) or not cycle:
            raise FakeServerError(f"{where}.replies_cycle: expected a non-empty list of strings")
        replies = tuple(_string(r, f"{where}.replies_cycle[{i}]") for i, r in enumerate(cycle))
    finish = raw.get("finish_reason", "stop")
    if finish is not None and finish not in FINISH_REASONS:
        raise FakeServerError(f"{where}.finish_reason: expected one of {', '.join(FINISH_REASONS)}, got {finish!r}")
    cost = raw.get("cost")
    written = _integer(raw.get("cache_write_tokens", 0), f"{where}.cache_write_tokens")
    written_1h = _integer(raw.get("cache_write_1h_tokens", 0), f"{where}.cache_write_1h_tokens")
    if written_1h > written:
        raise FakeServerError(f"{where}.cache_write_1h_tokens: expected at most cache_write_tokens ({written}), "
                              f"of which they are a part, got {written_1h}")
    return ReplyRule(
        match=_string(raw.get("match", ""), f"{where}.match"),
        replies=replies,
        finish_reason=finish,
        reasoning_tokens=_integer(raw.get("reasoning_tokens", 0), f"{where}.reasoning_tokens"),
        cost=None if cost is None else _number(cost, f"{where}.cost"),
        cached_tokens=_integer(raw.get("cached_tokens", 0), f"{where}.cached_tokens"),
        cache_write_tokens=written,
        cache_write_1h_tokens=written_1h,
    )


def _parse_fault(obj: Any, where: str) -> FaultRule:
    raw = _check_keys(obj, _FAULT_KEYS, where)
    kind = str(raw.get("kind", ""))  # accept 429 as well as "429"
    if kind not in FAULT_KINDS:
        raise FakeServerError(
            f"{where}.kind: expected one of {', '.join(FAULT_KINDS)}, got {raw.get('kind')!r}"
        )
    retry_after = raw.get("retry_after")
    return FaultRule(
        match=_string(raw.get("match", ""), f"{where}.match"),
        kind=kind,  # type: ignore[arg-type]  # narrowed by the membership test above
        times=_integer(raw.get("times", 1), f"{where}.times"),
        total=None if raw.get("total") is None else _integer(raw["total"], f"{where}.total"),
        retry_after=None if retry_after is None else _number(retry_after, f"{where}.retry_after"),
        hang_s=_number(raw.get("hang_s", 30.0), f"{where}.hang_s"),
        code=_integer(raw.get("code", 502), f"{where}.code", minimum=100),
        held=_boolean(raw.get("held", False), f"{where}.held"),
    )


def parse_config(obj: Any) -> Config:
    """Validate a JSON config strictly: a typo in a test's config must fail loudly, not do nothing."""
    raw = _check_keys({} if obj is None else obj, _TOP_KEYS, "config")
    replies = raw.get("replies", [])
    faults = raw.get("faults", [])
    if not isinstance(replies, list):
        raise FakeServerError("config.replies: expected a list")
    if not isinstance(faults, list):
        raise FakeServerError("config.faults: expected a list")
    seed = raw.get("seed")
    return Config(
        latency_ms=_number(raw.get("latency_ms", 0), "config.latency_ms"),
        latency_jitter_ms=_number(raw.get("latency_jitter_ms", 0), "config.latency_jitter_ms"),
        seed=None if seed is None else _integer(seed, "config.seed"),
        default_reply=_string(raw.get("default_reply", "ok"), "config.default_reply"),
        record_bodies=_boolean(raw.get("record_bodies", False), "config.record_bodies"),
        record_headers=_boolean(raw.get("record_headers", False), "config.record_headers"),
        require_key=_boolean(raw.get("require_key", False), "config.require_key"),
        echo_key=_boolean(raw.get("echo_key", False), "config.echo_key"),
        replies=tuple(_parse_reply(r, f"config.replies[{i}]") for i, r in enumerate(replies)),
        faults=tuple(_parse_fault(f, f"config.faults[{i}]") for i, f in enumerate(faults)),
        models=_models(raw.get("models", ["fake-model"])),
        reply_model=None if raw.get("reply_model") is None else _string(raw["reply_model"], "config.reply_model"),
        batch=_parse_batch(raw.get("batch") or {}),
    )


_BATCH_KEYS: Final = frozenset({"validating_s", "in_progress_s", "finalizing_s", "in_progress_polls", "end",
                                 "done_fraction", "delay_s", "delay_times", "bad_results",
                                 "bad_poll", "trickle_after", "trickle_times"})
_BATCH_STEPS: Final = frozenset({"receive", "upload", "create", "download"})


def _parse_batch(obj: Any) -> BatchConfig:
    raw = _check_keys(obj, _BATCH_KEYS, "config.batch")
    end = raw.get("end", "completed")
    if end not in ("completed", "expired", "cancelled", "failed"):
        raise FakeServerError(f"config.batch.end: expected completed, expired, cancelled or failed, got {end!r}")
    fraction = _number(raw.get("done_fraction", 1.0), "config.batch.done_fraction")
    if fraction > 1:
        raise FakeServerError(f"config.batch.done_fraction: expected a number in [0, 1], got {fraction!r}")
    delays = _check_keys(raw.get("delay_s") or {}, _BATCH_STEPS, "config.batch.delay_s")
    return BatchConfig(
        validating_s=_number(raw.get("validating_s", 0), "config.batch.validating_s"),
        in_progress_s=_number(raw.get("in_progress_s", 0), "config.batch.in_progress_s"),
        finalizing_s=_number(raw.get("finalizing_s", 0), "config.batch.finalizing_s"),
        in_progress_polls=_integer(raw.get("in_progress_polls", 0), "config.batch.in_progress_polls"),
        end=end,
        done_fraction=fraction,
        delay_s=tuple(sorted((k, _number(v, f"config.batch.delay_s.{k}")) for k, v in delays.items())),
        delay_times=_integer(raw.get("delay_times", 0), "config.batch.delay_times"),
        bad_results=_bad_results(raw.get("bad_results")),
        bad_poll=_bad_poll(raw.get("bad_poll")),
        trickle_after=_integer(raw.get("trickle_after", 0), "config.batch.trickle_after"),
        trickle_times=_integer(raw.get("trickle_times", 0), "config.batch.trickle_times"),
    )


def _bad_results(value: Any) -> BadResults | None:
    if value is None or value in ("duplicate", "unknown", "huge", "nested", "nested_twice", "cut_gzip", "missing",
                                  "shuffled"):
        return cast(BadResults | None, value)
    raise FakeServerError("config.batch.bad_results: expected duplicate, unknown, huge, nested, nested_twice, "
                          f"cut_gzip, missing, shuffled or null, got {value!r}")


def _bad_poll(value: Any) -> BadPoll | None:
    if value is None or value in ("trickled", "huge", "mistyped", "throttled"):
        return cast(BadPoll | None, value)
    raise FakeServerError(f"config.batch.bad_poll: expected trickled, huge, mistyped, throttled or null, got "
                          f"{value!r}")


def _models(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise FakeServerError("config.models: expected a list of model ids")
    return tuple(_string(m, f"config.models[{i}]") for i, m in enumerate(value))
