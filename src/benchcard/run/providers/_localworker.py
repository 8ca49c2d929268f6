"""The embedded model's worker process: it loads the GGUF and answers one request at a time over a pipe.

It runs in a process of its own (started by `_localproc`) so that a native crash in llama.cpp (an illegal
instruction, a segmentation fault), an out-of-memory kill or a hang ends this process and never the run.
Messages are plain dicts: `{"op": "load"}`, `{"op": "complete", "messages": [...], "kwargs": {...}}`,
`{"op": "stop"}`; each is answered `{"ok": true, ...}` or `{"ok": false, "kind": "call"|"provider", "error": ...}`.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from benchcard.errors import CallError, ProviderError
from benchcard.run.providers.localmodel import LoadedModel, generate, load_model, system_info


def serve(conn: Any, path: str, n_ctx: int) -> None:
    """The worker's loop. Ctrl-C is the parent's to handle: the parent ends this process when it stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    model: LoadedModel | None = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        op = message.get("op")
        if op == "stop":
            return
        try:
            if model is None:
                model = load_model(Path(path), n_ctx)
            if op == "load":
                reply: dict[str, Any] = {"ok": True, "load_seconds": model.load_seconds, "system_info": system_info()}
            elif op == "complete":
                response, window = generate(model, message["messages"], message["kwargs"])
                reply = {"ok": True, "response": response, "window": window}
            else:
                reply = {"ok": False, "kind": "call", "error": f"unknown request {op!r}"}
        except ProviderError as exc:
            reply = {"ok": False, "kind": "provider", "error": str(exc)}
        except CallError as exc:
            reply = {"ok": False, "kind": "call", "error": str(exc)}
        except Exception as exc:  # anything else llama-cpp-python raises fails this call, not the worker
            reply = {"ok": False, "kind": "call", "error": f"local model: {type(exc).__name__}: {exc}"}
        conn.send(reply)
