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
            await gate.answered()
        seen.append(gate.allowed)
        for _ in range(2000):  # then slowly, up to --concurrency and no further
            await gate.answered()
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


def test_a_refusal_is_a_429_or_a_529_only() -> None:
    assert is_refusal(RetryableError("x", status=429)) and is_refusal(RetryableError("x", status=529))
    assert not is_refusal(RetryableError("x", status=503)) and not is_refusal(CallError("x", status=400))
    assert not is_refusal(RetryableError("timed out"))
