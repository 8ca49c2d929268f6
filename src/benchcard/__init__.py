"""benchcard: pre-registered, blind, sealed experiments on LLM prompts.

The Python API (docs/api.md): a card is loaded, sealed, planned, run and judged, and its run read back, with the
functions below; each is the core of one command. (`run_card`, not `run`: `benchcard.run` is the run stage's
package.) They are imported on first use, so that `import benchcard`
(which every command line call pays) stays free of numpy, scipy and pandas; a type checker sees them imported
(the `TYPE_CHECKING` block), with their real signatures.
"""

from typing import TYPE_CHECKING, Any

from benchcard._util.version import __version__

if TYPE_CHECKING:  # the same names, as a type checker sees them (tests/test_exported_members.py checks they match)
    from benchcard.api import give_verdict, load_card, manifest_of, plan, run_card, seal_card, verdict_of
    from benchcard.card.model import Card
    from benchcard.card.sealing import Sealed
    from benchcard.errors import BenchcardError
    from benchcard.planning.power import Assumptions, assumptions
    from benchcard.planning.result import Plan
    from benchcard.project import Project
    from benchcard.records.frames import read_ledger, read_run
    from benchcard.records.rows import Manifest
    from benchcard.run.options import RunOptions
    from benchcard.run.summary import RunSummary
    from benchcard.verdict.give import Verdict

__all__ = [
    "Assumptions",
    "BenchcardError",
    "Card",
    "Manifest",
    "Plan",
    "Project",
    "RunOptions",
    "RunSummary",
    "Sealed",
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
    "seal_card",
    "verdict_of",
]

_LAZY = {
    "Assumptions": "benchcard.planning.power",
    "BenchcardError": "benchcard.errors",
    "Card": "benchcard.card.model",
    "Manifest": "benchcard.records.rows",
    "Plan": "benchcard.planning.result",
    "Project": "benchcard.project",
    "RunOptions": "benchcard.run.options",
    "RunSummary": "benchcard.run.summary",
    "Sealed": "benchcard.card.sealing",
    "Verdict": "benchcard.verdict.give",
    "assumptions": "benchcard.planning.power",
    "give_verdict": "benchcard.api",
    "load_card": "benchcard.api",
    "manifest_of": "benchcard.api",
    "plan": "benchcard.api",
    "read_ledger": "benchcard.records.frames",
    "read_run": "benchcard.records.frames",
    "run_card": "benchcard.api",
    "seal_card": "benchcard.api",
    "verdict_of": "benchcard.api",
}


if not TYPE_CHECKING:  # hidden from a type checker, so that a name not exported is an error there, not `Any`

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            import importlib

            return getattr(importlib.import_module(_LAZY[name]), name)
        raise AttributeError(f"module 'benchcard' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
