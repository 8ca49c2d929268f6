"""benchcard: pre-registered, blind, sealed experiments on LLM prompts.

The Python API (docs/api.md): a card is loaded, planned, run and judged, and its run read back, with the
functions below; each is the core of one command. (`run_card`, not `run`: `benchcard.run` is the run stage's
package.) They are imported on first use, so that `import benchcard`
(which every command line call pays) stays free of numpy, scipy and pandas.
"""

from typing import Any

from benchcard._util.version import __version__

__all__ = [
    "BenchcardError",
    "Card",
    "Manifest",
    "Project",
    "RunOptions",
    "RunSummary",
    "Verdict",
    "__version__",
    "assumptions",
    "give_verdict",
    "load_card",
    "manifest_of",
    "plan",
    "read_ledger",
    "read_run",
    "run_card",
    "verdict_of",
]

_LAZY = {
    "BenchcardError": "benchcard.errors",
    "Card": "benchcard.card.model",
    "Manifest": "benchcard.records.rows",
    "Project": "benchcard.project",
    "RunOptions": "benchcard.run.options",
    "RunSummary": "benchcard.run.summary",
    "Verdict": "benchcard.verdict.give",
    "assumptions": "benchcard.planning.power",
    "give_verdict": "benchcard.api",
    "load_card": "benchcard.api",
    "manifest_of": "benchcard.api",
    "plan": "benchcard.api",
    "read_ledger": "benchcard.verdict.frames",
    "read_run": "benchcard.verdict.frames",
    "run_card": "benchcard.api",
    "verdict_of": "benchcard.api",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'benchcard' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
