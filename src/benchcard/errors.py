"""One error hierarchy, so the CLI can turn any user-facing failure into one clean line and exit 1.

Every exception benchcard raises of its own is defined here (tests/test_errors.py checks that no other module
defines one, and that this drawing names every class below with its parent):

    Exception
    ├── BenchcardError               a user can cause or fix it; the CLI prints its message, one line, exit 1
    │   ├── ProjectError
    │   ├── CardError
    │   │   └── RuleTimeout          a rule ran past its time limit on one output
    │   ├── SealError
    │   ├── ProviderError
    │   ├── RunError
    │   ├── LedgerError
    │   ├── VerdictError
    │   ├── CompareError
    │   ├── PlanError
    │   └── FakeServerError          the test server could not start or refused a config
    └── _ControlFlow                 passed between benchcard's own parts, caught there, never shown as such
        ├── RetryableError           a call another attempt may cure
        ├── CallError                a call failed for good: its cell is recorded failed
        │   └── WorkerLost           the process answering calls died
        ├── Fatal                    the run must stop (caught by the run, which says why in a RunError)
        ├── UnreadableAnswer         a judge's answer not in its declared form (also a ValueError)
        ├── NotCanonicalError        a NaN or an infinity where canonical JSON is needed (also a ValueError)
        └── JsonProblem              JSON that parses but a person cannot have meant (also a ValueError)
"""

from __future__ import annotations

from typing import Any


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


class RuleTimeout(CardError):
    """A rule ran past the time limit on one output; `index` is its position in the list matched, `rule` its id
    once known (blind scoring records the output unscored, naming it: scoring/scorers.py)."""

    def __init__(self, index: int, literal: str, limit: float, rule: str | None = None):
        named = f"rule {rule!r}: " if rule is not None else ""
        super().__init__(f"{named}pattern {literal} took longer than {limit:g} s on one output (catastrophic "
                         "backtracking: a quantifier nested in a quantifier, such as (a+)+); rewrite it")
        self.index, self.literal, self.limit, self.rule = index, literal, limit, rule


class FakeServerError(BenchcardError):
    """The fake server could not start, or rejected a config; the message says why."""


class _ControlFlow(Exception):
    """Base of the exceptions benchcard raises to itself: each is caught by benchcard's own code, which records
    it (a failed cell, a judge's unreadable answer) or turns it into a `BenchcardError` for the user."""


class RetryableError(_ControlFlow):
    """A transport-level failure that another attempt may cure (429, 5xx, timeout, dropped connection, a 200
    whose body is not JSON or not in the API's shape)."""

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class CallError(_ControlFlow):
    """A call that failed for good (4xx other than 429, a reply past its cap): recorded, never scored."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class WorkerLost(CallError):
    """The process that answers calls died (a native crash, an out-of-memory kill): the cell in flight is
    recorded failed with the cause, and the run stops, since every later call would die the same way."""


class Fatal(_ControlFlow):
    """The run must stop. After an answer that says nothing about its cell (401, 403, 404) the cell stays
    missing; after the provider's worker died (`WorkerLost`) the cell in flight is recorded, `row`, with the cause.

    `row` is a `benchcard.records.rows.OutputRow` (typed `Any` here: this module imports nothing of benchcard's)."""

    def __init__(self, message: str, row: Any = None):
        super().__init__(message)
        self.row = row


class UnreadableAnswer(_ControlFlow, ValueError):
    """The judge's answer is not in the declared form; the message says what was expected."""


class NotCanonicalError(_ControlFlow, ValueError):
    """Data with no canonical JSON form: a NaN or an infinity, at `path` (`a.b[2]`, empty for the whole)."""

    def __init__(self, path: str):
        super().__init__(f"{f'field {path!r}' if path else 'the value'} is NaN or infinite; canonical JSON "
                         "holds finite numbers only")
        self.path = path


class JsonProblem(_ControlFlow, ValueError):
    """JSON that parses but that a person cannot have meant: `field` (a top-level field, or None) and what is
    wrong with it; the reader that met it names the file and line."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(f"field {field!r}: {problem}" if field is not None else problem)
        self.field = field
        self.problem = problem


def one_line(exc: BaseException) -> str:
    """What the CLI prints after `error:`: a BenchcardError's message, or the file and the system's words for an
    OSError (a read-only results/, a full disk), never a traceback."""
    if isinstance(exc, OSError):
        if exc.filename2:  # a copy or a move: the refusal is of its destination (a full disk there), said first
            return f"{exc.filename2}: {exc.strerror or exc} (from {exc.filename})"
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return str(exc)
