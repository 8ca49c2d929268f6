"""Stage 1, the records: every file a project writes, typed once (a run's rows and manifest, verdict.json
and its figures, the ledger and its rows) and the one JSONL dialect they are read and written in.

May import `_util`, `errors`, `project`; nothing above.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["ledger", "ledgerrow", "rows", "verdictfigures", "verdictfile"]
