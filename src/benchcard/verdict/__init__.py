"""Stage 5, the verdict itself: the run folder read and unblinded, the clause rules over the statistics, findings, the
table, the ledger row, the human grades beside the scorer (read through `grading`), gates.

May import every lower stage (`_util`, `errors`, `stats`, `project`, `records`, `scoring`, `grading`, `card`,
`run`); never `planning`, `compare` or `publish`.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["audit", "clausestats", "columns", "entry", "findings", "gate", "give", "integrity",
           "judgefigures", "looks", "replicate", "report", "runfolder", "table"]
