import time

import pytest

from .helpers_wait import wait_until


def test_a_condition_that_never_holds_fails_naming_what_was_awaited_and_how_long() -> None:
    asked: list[float] = []

    def never() -> bool:
        asked.append(time.monotonic())
        return False

    with pytest.raises(AssertionError, match=r"^gave up waiting 0\.2 s for the moon to turn blue$"):
        wait_until(never, 0.2, "the moon to turn blue")
    assert len(asked) >= 2 and asked[-1] - asked[0] >= 0.2  # it kept asking until its time ran out


def test_a_condition_that_comes_to_hold_returns_its_value() -> None:
    answers = iter([None, {}, {"status": "ended"}])
    assert wait_until(lambda: next(answers), 30, "the status", every=0) == {"status": "ended"}
