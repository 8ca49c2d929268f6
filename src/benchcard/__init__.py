"""benchcard: pre-registered, blind, sealed experiments on LLM prompts."""

from typing import Any

from benchcard._util.version import __version__

__all__ = ["__version__", "read_ledger", "read_run"]

# Loaded on first use: they bring numpy, scipy and pandas, which `import benchcard` (every CLI call) must not pay.
_LAZY = {"read_run": "benchcard.verdict.frames", "read_ledger": "benchcard.verdict.frames"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'benchcard' has no attribute {name!r}")
