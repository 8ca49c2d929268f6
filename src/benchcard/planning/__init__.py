"""Stage 6, planning: `benchcard plan`, what a run of a card will take and what it can hope to detect.

May import every stage below it (`card`, `run`, `verdict`, `stats`); never `publish` or `compare`.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["forecast", "power", "result"]
