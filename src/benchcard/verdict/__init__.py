"""Stage 3, the verdict: the run folder read and unblinded, statistics, clause rules, findings, table, grading, power.

May import every lower stage (`_util`, `errors`, `project`, `ledger`, `scoring`, `card`, `run`); never `publish`.
"""
