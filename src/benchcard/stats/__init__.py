"""Stage 0, the statistics: pure functions over numpy arrays (paired gaps, sign flips, resampling, the crossed
model and its worst-case p, decisions, a sequential card's boundaries and looks, simulation, agreement,
replication and drift). Imports nothing of benchcard's but itself.

`paired_gap`, `noise_floor`, `tost` and `wilson` are importable from here, as design.md promises a user (docs/api.md,
docs/statistics.md "The functions"); they are loaded on first use, so that importing one module of the stage does
not load the others.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, as a type checker sees them (tests/test_exported_members.py checks they match)
    from benchcard.stats.decision import tost
    from benchcard.stats.paired import noise_floor, paired_gap, wilson

# The modules other stages, the command line, the API and the benchmarks import, and the functions docs/api.md
# gives a user: the stage's surface (tests/test_architecture.py keeps it complete). A module not listed is this
# stage's own.
__all__ = ["crossed", "decision", "noise_floor", "paired", "paired_gap", "reach", "reliability", "replication",
           "resample", "sequential", "signflip", "simulate", "tost", "wilson", "worstcase"]

_LAZY = {"noise_floor": "benchcard.stats.paired", "paired_gap": "benchcard.stats.paired",
         "tost": "benchcard.stats.decision", "wilson": "benchcard.stats.paired"}

if not TYPE_CHECKING:  # hidden from a type checker, so that a name not exported is an error there, not `Any`

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            import importlib

            return getattr(importlib.import_module(_LAZY[name]), name)
        raise AttributeError(f"module 'benchcard.stats' has no attribute {name!r}")
