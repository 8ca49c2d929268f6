"""The run's handle on the embedded model's worker process: start it, send it a request, end it, and say in one
line why it died.

A request blocks its caller (the provider runs it on a thread). When the worker dies mid-request, the pipe
closes and the cause is read from its exit: a signal (SIGILL, SIGSEGV, SIGKILL, ...) or an exit code.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from typing import Any

from benchcard.errors import CallError, ProviderError, WorkerLost
from benchcard.run.providers._localworker import serve

REBUILD = "rebuild it with `make wheel` (a portable build; see README)"
_CAUSES = {
    signal.SIGILL: "illegal instruction (SIGILL): this llama-cpp-python build uses CPU instructions this machine "
                   f"refuses; {REBUILD}",
    signal.SIGSEGV: "segmentation fault (SIGSEGV) inside llama.cpp",
    signal.SIGBUS: "bus error (SIGBUS) inside llama.cpp",
    signal.SIGFPE: "arithmetic fault (SIGFPE) inside llama.cpp",
    signal.SIGABRT: "abort (SIGABRT) inside llama.cpp",
    signal.SIGKILL: "killed (SIGKILL), most often by the out-of-memory killer",
}


def exit_cause(exitcode: int | None) -> str:
    """Why the worker ended, in words a user can act on."""
    if exitcode is None:
        return "stopped answering"
    if exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
        except ValueError:
            return f"killed by signal {-exitcode}"
        return _CAUSES.get(sig, f"killed by {sig.name}")
    return f"exited with code {exitcode}"


class WorkerProcess:
    """One worker process for one GGUF; started at first need and again after it died or was ended."""

    def __init__(self, path: str, n_ctx: int):
        self.path = path
        self.n_ctx = n_ctx
        self.starts = 0
        self.loaded = False  # the live worker has its model in memory
        self._process: Any = None
        self._conn: Any = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.is_alive() else None

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")  # never fork: the run's threads and event loop stay home
        parent, child = context.Pipe()
        process = context.Process(target=serve, args=(child, self.path, self.n_ctx), name="benchcard-local",
                                  daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        self.loaded = False
        self.starts += 1

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its answer; raises WorkerLost (with the cause) if the worker dies."""
        with self._lock:
            if self._process is None or not self._process.is_alive():
                self._start()
            process, conn = self._process, self._conn
            try:
                conn.send(message)
                reply: dict[str, Any] = conn.recv()
            except (EOFError, OSError):
                process.join(timeout=10)
                self._process = self._conn = None
                raise WorkerLost(f"the local model's worker process died: {exit_cause(process.exitcode)}") from None
        if reply.get("ok"):
            self.loaded = True  # a load or a call answered: the model is in the worker
        if not reply.get("ok"):
            error = str(reply.get("error"))
            raise ProviderError(error) if reply.get("kind") == "provider" else CallError(error)
        return reply

    def ready(self) -> bool:
        """Whether a live worker holds the model (a call then pays no start or load)."""
        return self.loaded and self._process is not None and self._process.is_alive()

    def end(self) -> None:
        """Kill the worker now (a call timed out or the run was interrupted); the next request starts another."""
        self.loaded = False
        process = self._process
        if process is not None and process.is_alive():
            process.kill()
            process.join(timeout=10)

    def close(self) -> None:
        """Ask the worker to stop, and kill it if it does not within a few seconds."""
        process, conn = self._process, self._conn
        if process is None:
            return
        if process.is_alive() and self._lock.acquire(timeout=1):
            try:
                conn.send({"op": "stop"})
            except OSError:
                pass
            finally:
                self._lock.release()
            process.join(timeout=5)
        self.end()
        self._process = self._conn = None
