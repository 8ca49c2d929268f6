"""Stage 1, the card: its values, the validating YAML reader, the fixtures, the seal, `benchcard check`, and a
sequential card's schedule as its run records it and its boundaries are computed from it (`schedule`).

May import ranks 0–2: `benchcard._util`, `errors`, `stats`, `project`, `records` and `scoring` (a card validates
its scoring spec), nothing higher.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["check", "design", "judgecheck", "load", "model", "reader", "schedule", "seal", "sealing", "starter"]
