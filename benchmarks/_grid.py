"""The calibration grid and the table cache as the benchmarks set them, in one place for every script.

The cache's variable is `stats/_tablecache.ENV`; a benchmark may not import the stage's own module
(tests/test_architecture.py), so its documented name (README's "Layout") is spelled here once.
"""

from __future__ import annotations

import os

from benchcard.stats import worstcase

CACHE_ENV = "BENCHCARD_CACHE_DIR"  # stats/_tablecache.ENV


def cache_off() -> None:
    """No table read from or kept in the disk cache: a benchmark draws what it measures."""
    os.environ[CACHE_ENV] = ""


def use_grid(run_ratios: tuple[float, ...], shares: tuple[float, ...], draws: int) -> None:
    """Judge with another calibration grid than stats.worstcase's (an empty tuple or 0 keeps that part): read by
    worstcase at each draw, so the cache goes off, lest a table of another grid be kept under this code's name."""
    trial: dict[str, tuple[float, ...] | int] = {"RUN_RATIOS": run_ratios, "ARM_SHARES": shares, "DRAWS": draws}
    for name, value in trial.items():
        if value:
            cache_off()
            vars(worstcase)[name] = value
