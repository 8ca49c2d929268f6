"""The options of `benchcard run`, apart from the runner so that the calls module can read them too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from benchcard.errors import RunError
from benchcard.project import MAX_CONCURRENCY

DEFAULT_CONCURRENCY = 8


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
