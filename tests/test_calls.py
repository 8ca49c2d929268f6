"""The calls of one run (`benchcard.run.calls`): what can be tested without a server. The retries, timeouts, rate
limit and pool are tested end to end over sockets in test_runner.py."""

from __future__ import annotations

import random

from benchcard.run.calls import backoff_delay


def test_backoff_is_full_jitter_and_honours_retry_after() -> None:

    rng = random.Random(1)
    draws = [backoff_delay(3, None, 0.5, 30, rng) for _ in range(200)]
    assert min(draws) >= 0 and max(draws) <= 2.0 and max(draws) > 1.5
    assert max(backoff_delay(20, None, 0.5, 30, rng) for _ in range(50)) <= 30
    assert backoff_delay(1, 7.0, 0.5, 30, rng) == 7.0
    assert backoff_delay(1, 1e6, 0.5, 30, rng) == 600.0
