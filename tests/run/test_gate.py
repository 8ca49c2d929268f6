"""The calls in flight a run allows: narrowed by refusals, never below one, grown back by answers."""

from __future__ import annotations

import asyncio

from benchcard.errors import CallError, RetryableError
from benchcard.run._gate import CallGate, is_refusal


def test_refusals_halve_the_width_down_to_one_and_answers_grow_it_back_to_the_most() -> None:
    async def go() -> list[int]:
        gate = CallGate(64)
        seen = [gate.allowed]
        gate.refused(gate.epoch)  # the first refusal of a burst sent at 64
        seen.append(gate.allowed)
        for _ in range(10):  # the rest of that burst
            gate.refused(0)
        seen.append(gate.allowed)
        for _ in range(31):  # quickly back to half the width the refusals began at
            gate.answered()
        seen.append(gate.allowed)
        for _ in range(5000):  # then slowly, up to --concurrency and no further
            gate.answered()
        seen.append(gate.allowed)
        return seen

    assert asyncio.run(go()) == [64, 32, 1, 32, 64]


def test_only_a_call_in_a_slot_runs_past_the_width() -> None:
    async def go() -> int:
        gate = CallGate(4)
        gate.refused(gate.epoch)  # 2 allowed
        most = 0
        running = 0

        async def call() -> None:
            nonlocal most, running
            async with gate.slot():
                running += 1
                most = max(most, running)
                await asyncio.sleep(0.01)
                running -= 1

        await asyncio.gather(*(call() for _ in range(10)))
        return most

    assert asyncio.run(go()) == 2


def test_a_refusal_is_a_429_a_503_or_a_529_only() -> None:
    assert all(is_refusal(RetryableError("x", status=status)) for status in (429, 503, 529))
    assert not is_refusal(RetryableError("x", status=500)) and not is_refusal(RetryableError("x", status=502))
    assert not is_refusal(CallError("x", status=400))
    assert not is_refusal(RetryableError("timed out"))


def test_a_call_cancelled_while_it_waits_keeps_no_slot() -> None:
    """Ctrl-C or a stop cancels calls waiting for a slot, some just let in: none keeps a slot it never used."""
    async def go() -> list[int]:
        gate = CallGate(2)
        gate.refused(gate.epoch)  # 1 allowed

        async def wait() -> None:
            async with gate.slot():
                await asyncio.sleep(10)

        async with gate.slot():
            waiters = [asyncio.create_task(wait()) for _ in range(2)]
            await asyncio.sleep(0)
            waiters[1].cancel()  # cancelled while it waits
        waiters[0].cancel()  # let in as the block above ended, cancelled before it ran
        await asyncio.gather(*waiters, return_exceptions=True)
        seen = [gate.in_flight]
        async with asyncio.timeout(5), gate.slot():  # a slot kept by a cancelled call would never come free
            seen.append(gate.in_flight)
        return seen

    assert asyncio.run(go()) == [0, 1]


def test_a_call_let_in_before_a_refusal_counts_as_sent_at_the_old_width() -> None:
    """A refusal of a call let in at the width before the last refusal halves the width on down but does not
    move where the width regrows quickly to: before, such a call (let in, not yet running) read the new epoch, and
    each probe past the server's width left the run at half the width it should have (2.1 × the ideal wall at a
    server taking 5, 1.2 × after; `benchmarks/run_throughput.py --mode limited`)."""
    async def go() -> tuple[list[int], float, float]:
        gate = CallGate(2)
        release = asyncio.Event()
        sent: list[int] = []

        async def call(refuse: bool) -> None:
            async with gate.slot() as sent_in:
                sent.append(sent_in)
                await release.wait()
                if refuse:
                    gate.refused(sent_in)

        first = asyncio.create_task(call(refuse=False))
        second = asyncio.create_task(call(refuse=True))
        await asyncio.sleep(0)
        late = asyncio.create_task(call(refuse=True))  # waits: 2 in flight
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, second, late)
        return sent, gate.regrow_to, gate.refused_at

    sent, regrow_to, refused_at = asyncio.run(go())
    assert sent == [0, 0, 0] and (regrow_to, refused_at) == (1.0, 2.0)
