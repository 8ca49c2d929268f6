"""The options of `benchcard run`, apart from the runner so that the calls module can read them too, and how a retry
waits (`backoff_delay`: the calls' and the batch vendors' one backoff, which a benchmark polling a server reuses)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from benchcard.errors import RunError
from benchcard.project import MAX_CONCURRENCY

DEFAULT_CONCURRENCY = 8
MAX_RETRY_AFTER = 600.0  # a server asking for more than ten minutes is waited on for ten minutes


@dataclass(frozen=True)
class RunOptions:
    """Everything `benchcard run` takes besides the card."""

    provider: str | None = None
    models: tuple[str, ...] = ()
    base_url: str | None = None
    concurrency: int | None = None  # None: DEFAULT_CONCURRENCY for a new run, the run's own for a resumed one
    rpm: float | None = None  # None: the provider's limit for a new run, the run's own for a resumed one
    timeout: float = 120.0
    attempts: int = 4
    seed: int | None = None
    resume: str | None = None
    retry_failed: bool = False
    scratch: bool = False
    progress: bool = True
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    max_wait: float = 600.0  # seconds one cell may wait between its attempts in all, Retry-After included
    batch: bool = False  # through the vendor's batch API (run/batch/)
    wait: bool = True  # a batch run polls until its batches end; False: submit, poll once, return
    poll_interval: float = 30.0  # seconds between polls of a batch

    def __post_init__(self) -> None:
        if isinstance(self.models, str):  # a str is a sequence of names too: "gpt-4o" would be six runs, of "g", "p", …
            raise RunError(f"models {self.models!r}: expected a list of model names, one run each (models="
                           f"[{self.models!r}])")
        for name in ("provider", "base_url", "resume"):  # "" is no value: never the card's own rig, or a new run
            if getattr(self, name) == "":
                raise RunError(f"{name}='': empty (a variable set but empty?); give a value, or None for the card's "
                               "own")
        for i, model in enumerate(self.models):  # as `--model ""` is: never a model named ''
            if model == "":
                raise RunError(f"models[{i}]='': empty (a variable set but empty?); give a model's name")
        if self.concurrency is not None and not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise RunError(f"--concurrency {self.concurrency:,}: expected 1 to {MAX_CONCURRENCY:,} calls in flight "
                           "(each holds a socket; no provider's rate limit lets more through)")


class RunFields(TypedDict, total=False):
    """`RunOptions`' fields as keywords (`benchcard.run_card(card, provider=…, seed=…)`), typed one by one for a
    user's type checker; only the keywords given are in it, so `run_card` can tell them from `options`. `models`
    takes any sequence. tests/run/test_options.py keeps it field for field with `RunOptions`."""

    provider: str | None
    models: Sequence[str]
    base_url: str | None
    concurrency: int | None
    rpm: float | None
    timeout: float
    attempts: int
    seed: int | None
    resume: str | None
    retry_failed: bool
    scratch: bool
    progress: bool
    backoff_base: float
    backoff_cap: float
    max_wait: float
    batch: bool
    wait: bool
    poll_interval: float


def backoff_delay(attempt: int, retry_after: float | None, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before attempt `attempt + 1`: full jitter, uniform in [0, min(cap, base · 2^(attempt-1))], added to
    what `Retry-After` asks when it asks (the sum up to ten minutes). Never what Retry-After asks alone: a server
    limiting the calls in flight tells every call it refuses the same wait, and cells waiting exactly that came
    back together to be refused together (64 workers against 5 slots with `Retry-After: 0.05`: 89 of 160 cells
    failed after their 4 attempts; with the jitter, 3 to 23)."""
    jitter = rng.uniform(0.0, min(cap, base * 2 ** (attempt - 1)))
    if retry_after is not None:
        return min(max(retry_after, 0.0) + jitter, MAX_RETRY_AFTER)
    return jitter
