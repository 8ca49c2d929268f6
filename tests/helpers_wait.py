"""One way for a test to wait for something it cannot be told of (a file grown, a server's count, a run's state):
poll, and fail naming what was awaited and for how long. A loop that ran out of time and carried on as if the
condition held made tests assert on the wrong state, far from the cause (a KeyError in a manifest read too early).
And one way to guard against a hang (`watchdog`): a test whose broken form waits minutes fails instead."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T | None], timeout: float, what: str, every: float = 0.01) -> T:
    """Poll `condition` every `every` s until it returns a true value, and return that value; an AssertionError
    "gave up waiting {timeout} s for {what}" if it never does. The timeout bounds a stuck test, not its speed:
    keep it generous (2 cores, load up to 12)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up waiting {timeout:g} s for {what}")
        time.sleep(every)
    return value


class Hung(BaseException):
    """What `watchdog` raises: not an Exception, so that no `except Exception` of the code under test (a CLI's
    error boundary, a run's cleanup) takes it for an error of its own."""


@contextlib.contextmanager
def watchdog(seconds: int, what: str) -> Iterator[None]:
    """Raise `Hung` in the main thread if the block still runs after `seconds` (SIGALRM). A guard against a hang
    whose broken form waits minutes (a Retry-After of 590 s, a server out for an hour), not a measure of speed: the
    test's claim is what the block did, and `seconds` is many times what the block takes under load."""

    def hung(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds} s: {what}")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
