"""Stage 3, the verdict: the run folder read and unblinded, statistics, clause rules, findings, table, grading, power.

May import every lower stage (`_util`, `errors`, `project`, `ledger`, `scoring`, `card`, `run`); never `publish`.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["audit", "clausestats", "columns", "entry", "findings", "frames", "gate", "give", "grading", "integrity",
           "judgefigures", "looks", "replicate", "report", "runfolder", "table"]
