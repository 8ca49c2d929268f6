"""`FakeServer`: the fake server in a child process for the length of a `with` block, and its control calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from benchcard.errors import FakeServerError
from benchcard.testing.fakeserver._config import parse_config


class FakeServer:
    """Runs the fake server in a child process for the duration of a ``with`` block.

    A separate process (not a thread) so the server's event loop and CPU never compete with the runner being
    tested or benchmarked. Control calls use ``urllib`` with proxies disabled: they are rare, synchronous and
    must not be routed through an ``HTTP_PROXY`` from the environment.

    >>> with FakeServer({"default_reply": "hi"}) as server:   # doctest: +SKIP
    ...     client = httpx.Client(base_url=server.base_url)
    ...     client.post("/chat/completions", json={...})
    ...     server.stats()["calls"]
    """

    def __init__(
        self,
        config: dict[str, Any] | None = None,
        *,
        latency_ms: float | None = None,
        startup_timeout: float = 15.0,
        host: str | None = None,
    ) -> None:
        if latency_ms is not None and config is not None:
            config = {**config, "latency_ms": latency_ms}  # the keyword wins, as --latency-ms does
        if config is not None:
            parse_config(config)  # fail in the caller, before a process is spawned
        self._config = config
        self._latency_ms = latency_ms
        self._host = host  # another loopback address than 127.0.0.1 (`--host`): 127.0.0.2, ::1
        self._startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._origin: str | None = None
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # -- lifecycle

    def start(self) -> FakeServer:
        """Spawn the process and wait for its ``listening`` line; idempotent."""
        if self._process is not None:
            return self
        cmd = [sys.executable, "-m", "benchcard.testing.fakeserver", "--port", "0"]
        if self._latency_ms is not None:
            cmd += ["--latency-ms", str(self._latency_ms)]
        if self._host is not None:
            cmd += ["--host", self._host]
        env = dict(os.environ)
        # The child must import this very copy of benchcard, even from a source checkout not installed.
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
        self._process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        line = self._read_first_line(self._process)
        prefix = "listening "
        if not line.startswith(prefix):
            self.stop()
            raise FakeServerError(f"fake server did not start (first line {line!r})")
        self._origin = line[len(prefix) :].split()[0]
        if self._config is not None:
            self.configure(self._config)
        return self

    def _read_first_line(self, process: subprocess.Popen[bytes]) -> str:
        """Read one line with a deadline; a thread keeps this portable (no select() on Windows pipes)."""
        assert process.stdout is not None
        stdout = process.stdout
        result: list[bytes] = []
        reader = threading.Thread(target=lambda: result.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self._startup_timeout)
        if not result:
            self.stop()
            raise FakeServerError(f"fake server printed nothing within {self._startup_timeout:g} s")
        return result[0].decode("utf-8", "replace")

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 5 s); safe to call twice."""
        process, self._process = self._process, None
        self._origin = None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (no path; another loopback address when the server was given one)."""
        if self._origin is None:
            raise FakeServerError("fake server is not running")
        return self._origin

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI or Anthropic client takes as its base URL."""
        return self.origin + "/v1"

    @property
    def port(self) -> int:
        """The port the server bound."""
        return int(self.origin.rsplit(":", 1)[1])

    # -- control

    def _control(self, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(
            self.origin + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with self._opener.open(req, timeout=30) as resp:
                result: dict[str, Any] = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise FakeServerError(f"{method} {path} -> {exc.code}: {detail}") from None
        return result

    def configure(self, config: dict[str, Any]) -> None:
        """Replace the whole config and reset all counters (raises :class:`FakeServerError` if invalid)."""
        self._control("POST", "/_control/config", config)

    def stats(self, *, by_request: bool = True) -> dict[str, Any]:
        """Counters since the last ``configure``/``reset``.

        Shape (status keys are strings; ``"drop"`` means the connection was closed without a response)::

            {"calls": int, "distinct_requests": int,
             "by_request": {"sha256:<hex of canonical JSON body>": int},   # unless by_request=False
             "by_status": {"200": int, "429": int, "drop": int, ...},
             "after_first": {"200": int, "401": int, ...},  # calls received after the first that got each status
             "by_endpoint": {"/v1/chat/completions": int, "/v1/messages": int},
             "by_fault": {"429": int, "hang": int, ...},
             "with_key": int, "without_key": int,          # whether a key header was present, never its value
             "in_flight": int, "max_in_flight": int,
             "held": int,                                  # calls of a `held` fault waiting for `release` now
             "bodies": [<parsed JSON body>, ...],          # only when record_bodies is true
             "headers": [{"<name, lower case>": "<value>"}, ...]}  # each call's, only when record_headers is true
        """
        return self._control("GET", "/_control/stats" + ("" if by_request else "?by_request=0"))

    def release(self) -> int:
        """Let the calls a `held` fault holds now be answered (one held later waits for the next release); how
        many were held."""
        released: int = self._control("POST", "/_control/release")["released"]
        return released

    def reset(self) -> None:
        """Zero counters, fault budgets and reply cycles; keep the config."""
        self._control("POST", "/_control/reset")
