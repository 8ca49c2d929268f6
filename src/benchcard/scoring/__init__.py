"""Stage 0, blind scoring: exact, rules (JavaScript regex semantics) and fields; sees an output, a fixture and a key.

May import `benchcard._util` and `errors` only: a scorer can never learn the variant, the model or the run.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["fields", "jsregex", "judge", "keys", "rulelimit", "scorers", "textform"]
