"""The calls in flight a run allows, found as it goes: additive increase, multiplicative decrease.

`--concurrency` is the most calls a run keeps in flight, not the rate the API takes. A server that takes fewer
answers the rest `429` (Anthropic's overload, `529`), and a run that sends them again at the same width is refused
again: each refusal spends one of a cell's attempts, so cells failed at the rate limit they were meant to find. The
gate halves the calls allowed on each refusal (never below 1) and lets them grow again with each answer, up to
`--concurrency`: quickly (one per answer) back to half the width the refusals began at, then slowly (one per a
width's worth of answers, as TCP's congestion avoidance) so that the run does not probe past the rate it found every
few calls, each probe being another cell's attempt spent. A server that never refuses keeps the full width.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from benchcard.errors import CallError, RetryableError

#: The statuses that say "too many at once": a rate limit (429) and Anthropic's overloaded (529).
REFUSED_STATUSES = frozenset({429, 529})


def is_refusal(error: BaseException) -> bool:
    """A call refused for the load it adds, which fewer calls in flight would spare."""
    return isinstance(error, RetryableError | CallError) and error.status in REFUSED_STATUSES


class CallGate:
    """Calls in flight at most, between 1 and `most`: halved on a refusal, grown on an answer."""

    def __init__(self, most: int):
        self.most = max(1, most)
        self.limit = float(self.most)  # the calls allowed now (its floor); starts wide: no slow-down without cause
        self.regrow_to = float(self.most)  # below this, each answer adds one; above, one per width of answers
        self.in_flight = 0
        self.epoch = 0  # how many times refusals began anew; a call sent before the last one is an old echo
        self._changed = asyncio.Condition()

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    @property
    def narrowed(self) -> int | None:
        """The calls allowed now, once a refusal narrowed them (None: never refused, the full width kept)."""
        return self.allowed if self.epoch else None

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        """Hold one of the calls allowed for the body of the block; yields the epoch the call was sent in."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < self.allowed)
            self.in_flight += 1
        try:
            yield self.epoch
        finally:
            async with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    async def answered(self) -> None:
        """A call answered: allow one more at once (below `regrow_to`), or a width's fraction of one."""
        step = 1.0 if self.limit < self.regrow_to else 1.0 / self.limit
        self.limit = min(float(self.most), self.limit + step)
        async with self._changed:
            self._changed.notify_all()

    def refused(self, sent_in: int) -> None:
        """A call refused for load: halve the calls allowed. The first refusal of calls sent at this width marks
        half of it as where to regrow quickly to; the rest of a burst sent at the same width halve the width on
        down (each was one call too many), but do not lower that mark."""
        if sent_in == self.epoch:
            self.regrow_to = max(1.0, self.limit / 2)
            self.epoch += 1
        self.limit = max(1.0, self.limit / 2)
