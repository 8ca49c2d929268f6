"""Stage 0, the statistics: pure functions over numpy arrays (paired gaps, sign flips, resampling, the crossed
model and its worst-case p, decisions, a sequential card's boundaries and looks, simulation, agreement,
replication and drift). Imports nothing of benchcard's but itself.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["crossed", "decision", "paired", "reach", "reliability", "replication", "resample", "sequential", "signflip",
           "simulate", "worstcase"]
