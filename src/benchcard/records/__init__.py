"""Stage 1, the records: every file a project writes, typed once (a run's rows and manifest, verdict.json
and its figures, the ledger and its rows, a run set aside) and the one JSONL dialect they are read and written
in; a run folder read (`runreader.RunReader`; the run stage's `store` adds the writing); and finding a run on
disk (`cardruns.find_run`: a path, a run id, or the run a card's name stands for; `unfinished`: the runs that
stopped before every cell had an outcome), so that every stage finds runs the same way without reaching into
`run/` or `verdict/`; and a run and the ledger as pandas DataFrames for
other tools (`frames`: `benchcard.read_run`, `read_ledger`, `benchcard export`), which only read these files.

May import `_util`, `errors`, `project` and `stats` (rank 0); nothing above.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["answerkey", "cardruns", "frames", "ledger", "ledgerrow", "plandigest", "replication", "replicationinput",
           "replied", "rows", "runreader", "setaside", "unfinished", "verdictfigures", "verdictfile"]
