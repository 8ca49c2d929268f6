"""Stage 4 (beside `run/`), blind human grading: a run's answered outputs exported as a shuffled sheet that names no
variant, model, repetition or cell (`sheets.blind_sheet`), the filled sheet checked and imported (`import_grades`),
and the grades read back for the verdict (`imported_grades`), which compares them with the blind scorer.

May import ranks 0–3: `_util`, `errors`, `stats`, `project`, `records` (a run's files are read through it),
`scoring` (an output blinded as the judge sees it) and `card` (the run's sealed card, whose variants' texts an
output may echo); nothing higher.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["sheets"]
