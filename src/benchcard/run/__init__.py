"""Stage 2, the run: options, the sealed grid, providers, concurrent calls, the run folder store, progress, curl.

May import `_util`, `errors`, `project`, `scoring` and `card`; never `verdict` or `publish`.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["batch", "curl", "grid", "griddraws", "judgelive", "judging", "options", "providers",
           "replicate", "runner", "store", "summary"]
