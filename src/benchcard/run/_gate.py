"""The calls in flight a run allows, found as it goes: additive increase, multiplicative decrease.

`--concurrency` is the most calls a run keeps in flight, not the rate the API takes. A server that takes fewer
answers the rest `429` (or `503`, overloaded; Anthropic: `529`), and a run that sends them again at the same width
is refused again: each refusal spends one of a cell's attempts, so cells failed at the rate limit they were meant
to find. The gate halves the calls allowed on each refusal (never below 1) and lets them grow again with each
answer, up to `--concurrency`: quickly (one per answer) back to half the width the refusals began at, then slowly
(one per a width's worth of answers, as TCP's congestion avoidance), and slower still within one of that width, so
that the run does not probe past the rate it found every few calls, each probe being another cell's attempt spent.
A server that never refuses keeps the full width.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

from benchcard.errors import CallError, RetryableError

#: The statuses that say "too many at once": a rate limit (429), overloaded (503: OpenAI's "engine overloaded",
#: nginx's limit_conn and limit_req, a gateway in front of a full vLLM) and Anthropic's overloaded (529).
REFUSED_STATUSES = frozenset({429, 503, 529})


def is_refusal(error: object) -> bool:
    """A call refused for the load it adds, which fewer calls in flight would spare."""
    return isinstance(error, RetryableError | CallError) and error.status in REFUSED_STATUSES


#: How much slower the width grows within one of where refusals last began: each probe past the server's width
#: spends a cell's attempt, so near it the run probes a tenth as often (as TCP CUBIC's plateau near its last
#: loss); past it, the width grows as before, in case the server now takes more.
NEAR_REFUSED = 10


class Width:
    """Calls in flight at most, between 1 and `most`: halved on a refusal, grown on an answer. Apart from the
    slots that hold calls to it (`CallGate`), so that a pool keeps one per server, its own choice of a server
    holding them (`_pool`)."""

    def __init__(self, most: int):
        self.most = max(1, most)
        self.limit = float(self.most)  # the calls allowed now (its floor); starts wide: no slow-down without cause
        self.regrow_to = float(self.most)  # below this, each answer adds one; above, one per width of answers
        self.refused_at = float("inf")  # the width refusals last began at: the server's width is about there
        self.epoch = 0  # how many times refusals began anew; a call sent before the last one is an old echo

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    @property
    def narrowed(self) -> int | None:
        """The calls allowed now, once a refusal narrowed them (None: never refused, the full width kept)."""
        return self.allowed if self.epoch else None

    def answered(self) -> None:
        """A call answered: allow one more at once (below `regrow_to`), or a width's fraction of one; within one
        of the width last refused at, a tenth of that (`NEAR_REFUSED`)."""
        if self.limit < self.regrow_to:
            step = 1.0
        elif abs(self.limit - self.refused_at) < 1.0:
            step = 1.0 / (NEAR_REFUSED * self.limit)
        else:
            step = 1.0 / self.limit
        self.limit = min(float(self.most), self.limit + step)

    def refused(self, sent_in: int) -> None:
        """A call refused for load: halve the calls allowed. The first refusal of calls sent at this width marks
        half of it as where to regrow quickly to; the rest of a burst sent at the same width halve the width on
        down (each was one call too many), but do not lower that mark."""
        if sent_in == self.epoch:
            self.refused_at = float(self.allowed)
            self.regrow_to = max(1.0, self.limit / 2)
            self.epoch += 1
        self.limit = max(1.0, self.limit / 2)


class CallGate(Width):
    """A `Width` and the slots that hold calls to it: a call waits for one before it is sent."""

    def __init__(self, most: int):
        super().__init__(most)
        self.in_flight = 0
        self._waiting: deque[asyncio.Future[int]] = deque()  # calls waiting for a slot, first come first served

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        """Hold one of the calls allowed for the body of the block; yields the epoch the call was let in at (a
        call let in, not yet running when a refusal narrows the width, was let in at the old one). A refusal is
        told (`refused`) inside the block, before its slot passes to another call at the old width. No lock: one
        event loop runs every call, and a call that need not wait (a server never refusing) costs no await."""
        if self._waiting or self.in_flight >= self.allowed:
            granted: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            self._waiting.append(granted)
            try:
                sent_in = await granted  # the call that left counted this one in flight (`_wake`)
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():  # let in as it was cancelled: pass the slot on
                    self.in_flight -= 1
                    self._wake()
                raise
        else:
            self.in_flight += 1
            sent_in = self.epoch
        try:
            yield sent_in
        finally:
            self.in_flight -= 1
            self._wake()

    def _wake(self) -> None:
        """Let in as many waiting calls as may go now, in the order they came."""
        while self._waiting and self.in_flight < self.allowed:
            granted = self._waiting.popleft()
            if not granted.done():  # not cancelled while it waited
                granted.set_result(self.epoch)
                self.in_flight += 1

    def answered(self) -> None:
        """A call answered: the width grown (`Width.answered`), and the calls it makes room for let in."""
        super().answered()
        self._wake()

    def follow(self, allowed: int) -> None:
        """Allow `allowed` calls at once (from 1 to `most`), a width a provider keeps itself (a pool's servers'
        together), letting in the waiting calls it makes room for."""
        self.limit = float(min(self.most, max(1, allowed)))
        self._wake()
