"""One error hierarchy, so the CLI can turn any user-facing failure into one clean line and exit 1."""

from __future__ import annotations


class BenchcardError(Exception):
    """Base of every error a user can cause or fix; the message is the whole story, one line."""


class ProjectError(BenchcardError):
    """No benchcard project where a command looked (no cards/ folder): it names the folder and suggests -C."""


class CardError(BenchcardError):
    """A card, fixture, key or example is malformed; the message names file, field and what was expected."""


class SealError(BenchcardError):
    """Sealed material is missing, changed, or would be resealed with different content."""


class ProviderError(BenchcardError):
    """A provider cannot be used (missing key, missing extra, bad response) — never carries a secret."""


class RunError(BenchcardError):
    """A run folder is missing, incomplete or inconsistent."""


class LedgerError(BenchcardError):
    """The ledger cannot be read, appended to, or fails verification."""


class VerdictError(BenchcardError):
    """A verdict cannot be given: incomplete run, changed outputs, or a changed seal."""


class CompareError(BenchcardError):
    """Logs given to `benchcard compare` cannot be read or paired, or its win rule is malformed."""


class PlanError(BenchcardError):
    """`benchcard plan` was given assumptions or a design out of range, or options that exclude each other."""


def one_line(exc: BaseException) -> str:
    """What the CLI prints after `error:`: a BenchcardError's message, or the file and the system's words for an
    OSError (a read-only results/, a full disk), never a traceback."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return str(exc)
