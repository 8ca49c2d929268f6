"""A fake OpenAI- and Anthropic-compatible LLM server on 127.0.0.1, for tests and throughput benchmarks.

Why it exists: the runner must be proven against real sockets — retries on 429/5xx, ``Retry-After``,
dropped connections, hung servers, truncated and malformed answers — without spending money or waiting on
a real provider, and the throughput benchmark (10,000 calls at 100 ms, 64 in flight) must measure the
client, not the server. So the server:

* runs in its **own process** (``python -m benchcard.testing.fakeserver``, or :class:`FakeServer` from Python), so
  the runner under test and the server never share an event loop or a CPU;
* is built on ``aiohttp.web`` with no access log and no per-request output;
* keeps memory flat: only counters, the per-body-hash counter dict and (opt-in) the recorded bodies and headers grow;
* is driven by a JSON config (canned replies, reply cycles, faults, latency) that can be replaced at any time
  through ``POST /_control/config`` and observed through ``GET /_control/stats``.

Endpoints: ``POST /v1/chat/completions`` (OpenAI shape, with OpenRouter's ``usage.cost``),
``POST /v1/responses`` (OpenAI's Responses API, what inspect_ai's ``openai/`` provider calls by default),
``POST /v1/messages`` (Anthropic Messages shape), ``GET /v1/models``, and the control endpoints
``POST /_control/config``, ``GET /_control/stats``, ``POST /_control/reset``, ``POST /_control/release``.

Config keys (all optional), see :func:`parse_config`::

    {
      "latency_ms": 0, "latency_jitter_ms": 0, "seed": null,
      "default_reply": "ok", "record_bodies": false, "record_headers": false,
      "require_key": false, "echo_key": false,
      "replies": [{"match": "capital", "reply": "Paris", "finish_reason": "stop",
                   "reasoning_tokens": 0, "cost": 0.0012,
                   "cached_tokens": 0, "cache_write_tokens": 0, "cache_write_1h_tokens": 0},
                  {"match": "noisy", "replies_cycle": ["a", "b"]}],
      "faults":  [{"match": "", "kind": "429", "times": 1, "retry_after": 0, "held": false}],
      "models": ["fake-model"],
      "batch": {"validating_s": 0, "in_progress_s": 0, "finalizing_s": 0, "in_progress_polls": 0, "end": "completed",
                "done_fraction": 1.0, "delay_s": {"receive": 0, "upload": 0, "create": 0, "download": 0},
                "delay_times": 0, "bad_results": null, "bad_poll": null, "trickle_after": 0, "trickle_times": 0}
    }

Fault kinds: ``400`` (a request refused), ``401`` (a key refused, as a revoked key is), ``429`` (with
``Retry-After``), ``500``, ``503``, ``drop`` (connection
closed, no response), ``hang`` (sleep ``hang_s`` seconds, default 30, then answer), ``truncate`` (200, cut reply,
``length`` / ``max_tokens``), ``malformed`` (200 whose body is JSON cut off), ``shapeless`` (200 whose
body is JSON of another shape, ``[]``), ``html`` (200 with a proxy's HTML page), ``error200`` (200 whose body is
an error object reporting HTTP ``code``, default 502: OpenRouter's ``{"error": {code, message}}`` or the Messages API's
``{"type": "error", ...}``), ``null`` (200 whose message content is null, as a tool call or a refusal without
its reason comes: chat's ``content: null``, no text block, no Responses output; the finish reason still
``stop``), ``mistyped`` (200 with one field of another JSON type, as a proxy translating APIs may write it: chat's
content as a text part whose text is null, the Messages API's ``stop_reason`` as a list, the Responses API's text
null), ``redirect`` (307 to another host over http, an answer in its body), ``bad_redirect``
(307 whose ``Location`` is not a URL), ``zstd_bomb`` (200 whose
``zstd`` body of 8 KiB inflates to 256 MiB); and well-formed answers in shapes the vendors' docs show:
``refusal`` (chat's content null with ``message.refusal``; the Messages API's ``stop_reason`` ``refusal``),
``tool_call`` (a tool call, no text), ``blocks`` (the text in two parts or blocks, the Messages API's after a
``redacted_thinking`` block), ``no_usage`` (no ``usage``), ``extras`` (``system_fingerprint``, cached-token
details (chat: the whole prompt cached, unless the reply rule says its own), fields nobody documents),
``choices`` (chat: a second choice, ``index`` 1, listed first). A reply's
``finish_reason`` may also be one that ends no answer (``error``, ``content_filter``, ``tool_calls``,
``function_call``, ``refusal``, ``pause_turn``, ``tool_use``), ``stop_sequence`` or
``model_context_window_exceeded``, or ``null``: the reply says no reason (chat's ``finish_reason: null``, the
Messages API's ``stop_reason: null``), even when cut at the request's ``max_tokens``, as some OpenAI-compatible
servers answer. A fault hits the first
``times`` calls of *each distinct request body* (by hash) it matches; faults are tried in list order, so
``[429 ×1, 500 ×1]`` gives 429, then 500, then success for every body; ``total`` caps a fault's hits over all
bodies (a server that fails, then recovers). A ``held`` fault's calls wait, their latency spent, until ``POST
/_control/release`` (:meth:`FakeServer.release`) lets the calls held then be answered (``held`` in the stats counts
those waiting): a test orders a call's answer after an event it saw, with no timer. ``models`` is what ``GET
/v1/models`` lists (a pool checks its servers agree). ``echo_key`` quotes the key each request carried
(``x-api-key`` or the ``Authorization`` token) at the end of every answer's text and of a batch's error messages,
as a debugging proxy echoing headers would. A reply rule's ``cached_tokens``, ``cache_write_tokens`` and
``cache_write_1h_tokens`` (a part of the writes) stand for a prompt cache's prefix in front of the prompt's words,
sent in each vendor's shape: chat's and the Responses API's input count them (and name the read ones in
``prompt_tokens_details`` / ``input_tokens_details``), the Messages API's ``input_tokens`` does not (they are in
``cache_read_input_tokens``, ``cache_creation_input_tokens`` and ``cache_creation``); a batch's result lines hold
the same answers.
Several servers (a pool) are several :class:`FakeServer` processes, each on its own port; ``host`` (``--host``)
puts one on another loopback address (127.0.0.2, ::1), as a local server the proxy settings must not catch.

The package is cut by concept: ``_config`` (the JSON config and its strict parser), ``_replies`` (what a request
is answered and in which vendor's shape), ``_batches`` (the Batch APIs), ``app`` (the aiohttp server, its counters
and ``main``, which ``python -m`` runs) and ``_client`` (:class:`FakeServer`, which runs ``app`` in a child process).
What tests and benchmarks use is re-exported here (``__all__``); the ``_`` modules are this package's own.
"""

from __future__ import annotations

from benchcard.errors import FakeServerError
from benchcard.testing.fakeserver._app import build_app, main
from benchcard.testing.fakeserver._client import FakeServer
from benchcard.testing.fakeserver._config import FAULT_KINDS, Config, FaultRule, ReplyRule, parse_config

__all__ = [
    "FAULT_KINDS",
    "Config",
    "FakeServer",
    "FakeServerError",
    "FaultRule",
    "ReplyRule",
    "build_app",
    "main",
    "parse_config",
]
