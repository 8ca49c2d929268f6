"""One way for a test to wait for something it cannot be told of (a file grown, a server's count, a run's state):
poll, and fail naming what was awaited and for how long. A loop that ran out of time and carried on as if the
condition held made tests assert on the wrong state, far from the cause (a KeyError in a manifest read too early)."""

from __future__ import annotations

import time
from collections.abc import Callable
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
