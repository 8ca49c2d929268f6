"""Stage 2, the run: options, the sealed grid, providers, concurrent calls, the run folder store, progress, curl.

May import `_util`, `errors`, `project`, `scoring` and `card`; never `verdict` or `publish`.
"""
