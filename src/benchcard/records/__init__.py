"""Stage 1, the records: every file a project writes, typed once (a run's rows and manifest, verdict.json
and its figures, the ledger and its rows) and the one JSONL dialect they are read and written in.

May import `_util`, `errors`, `project`; nothing above.
"""
