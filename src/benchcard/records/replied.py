"""The models the replies named, as a run's manifest records them per pass of calls (`replied_models` and the
rows each pass counted, `replied_rows`; the judge's calls apart, `judge_replied_models`/`judge_replied_rows`), and
what run, status, the verdict's notes and the run's page say of them (docs/security.md, "Another model than the
one asked"): a warning for another model, a note for replies whose model was never counted, and otherwise only
a fact on the run's page."""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchcard.records.rows import CountedPass, Manifest


@dataclass(frozen=True)
class _Calls:
    """One side's record: the model asked, its passes' names and rows, and how its lines name it."""

    asked: str
    passes: list[dict[str, int]]
    rows: list[CountedPass]
    replies: str  # "replies" or "judge replies"
    chosen: str  # "the one asked" or "the judge sealed"
    outputs: str  # what a row is: "output(s)" or "judgement(s)"


def replies_line(manifest: Manifest) -> str:
    """What is said of the model under test's replies, else empty: a warning when some named another model than
    the one asked, a note when some rows' replies were never counted. Never a finding."""
    calls = _run_calls(manifest)
    return _line(calls) if calls is not None else ""


def judge_replies_line(manifest: Manifest) -> str:
    """The same of a judged run's judge: replies naming another model than the judge sealed in the card."""
    calls = _judge_calls(manifest)
    return _line(calls) if calls is not None else ""


def replies_fact(manifest: Manifest) -> str:
    """The names the replies gave over every pass counted (`gpt-4o-2024-08-06 (40)`), which the run's page lists
    quietly when they were the model asked or a snapshot of it; empty when every reply named the model asked."""
    return _fact(_run_calls(manifest))


def judge_replies_fact(manifest: Manifest) -> str:
    """The same of the judge's replies."""
    return _fact(_judge_calls(manifest))


def _fact(calls: _Calls | None) -> str:
    total = _total(calls.passes) if calls is not None else {}
    return _named(total) if calls is not None and set(total) - {calls.asked} else ""


def _run_calls(manifest: Manifest) -> _Calls | None:
    if manifest.rig is None or not manifest.replied_models:
        return None
    return _Calls(manifest.rig.model, manifest.replied_models, manifest.replied_rows or [], "replies",
                  "the one asked", "output(s)")


def _judge_calls(manifest: Manifest) -> _Calls | None:
    judge = manifest.judge
    if judge is None or judge.rig is None or not judge.rig.model or not manifest.judge_replied_models:
        return None
    return _Calls(judge.rig.model, manifest.judge_replied_models, manifest.judge_replied_rows or [],
                  "judge replies", "the judge sealed", "judgement(s)")


def _line(calls: _Calls) -> str:
    """The warning and the unknown, in one line; empty when neither stands."""
    total = _total(calls.passes)
    other = sum(n for name, n in total.items() if not same_model(calls.asked, name))
    uncounted = _uncounted(calls)
    unknown = (f"{uncounted} {calls.outputs} were recorded by a pass whose replies' models were not counted (begun "
               "by an older benchcard, or killed outright): which model answered them is unknown")
    if other:
        warning = (f"warning: {other} of {sum(total.values())} {calls.replies} named another model than "
                   f"{calls.asked}, {calls.chosen}: {_named(total)}")
        return f"{warning}; {unknown}" if uncounted else warning
    return f"note: {unknown}" if uncounted else ""


def _uncounted(calls: _Calls) -> int:
    """The rows no pass counted the replies of. A run begun between 796acb3 and 3980c72 (2026-12-06) recorded a
    pass's names only, and only when one was another model, with no `replied_rows`: those passes are the leading
    entries of `replied_models` that `replied_rows` lacks. The first pass that recorded its rows after them took
    every row before it as uncounted, the rows those entries named too; they are known, so they are taken off here
    (those passes' failed rows, and the rows of a pass whose replies all named the model asked, stay unknown: such
    a pass wrote nothing)."""
    uncounted = sum(r.uncounted for r in calls.rows)
    old = len(calls.passes) - len(calls.rows)
    if old <= 0 or not calls.rows:
        return uncounted
    named = sum(n for counts in calls.passes[:old] for n in counts.values())
    return uncounted - min(named, calls.rows[0].uncounted)


def _total(passes: list[dict[str, int]]) -> dict[str, int]:
    """Each name replied over every pass recorded, with its count."""
    total: dict[str, int] = {}
    for counts in passes:
        for name, n in counts.items():
            total[name] = total.get(name, 0) + n
    return total


def _named(total: dict[str, int]) -> str:
    """`name (count)`, most replies first."""
    return ", ".join(f"{name} ({n})" for name, n in sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


def same_model(asked: str, replied: str) -> bool:
    """The name asked, or a snapshot of it in a shape the APIs answer with. A router's namespace (`openai/`,
    `models/`) on one side only is the router's: `openai/gpt-4o-2024-08-06` answers `gpt-4o`; on both sides the
    nearer namespaces must agree, so `vendorB/llama-3` is another provider's model than `vendorA/llama-3` (and
    `openrouter/openai/gpt-4o` the same as `openai/gpt-4o`). The snapshots: OpenAI's `gpt-4o-2024-08-06` and
    `gpt-4-0613`, Anthropic's `claude-3-5-sonnet-20241022` (also for the aliases `…-latest` and
    `claude-sonnet-4-0`), Vertex's `claude-sonnet-4@20250514`, Gemini's stable versions `gemini-1.5-pro-002` (for
    `gemini-1.5-pro` and `gemini-1.5-pro-latest`), Mistral's `mistral-large-2411` (for `mistral-large-latest`).
    Any other suffix is another model: `gpt-4o-mini`, `llama-3-70` for `llama-3`, `claude-opus-4-8` for
    `claude-opus-4`, an experimental `gemini-1.5-pro-exp-0827` for `gemini-1.5-pro`."""
    (asked_space, asked), (replied_space, replied) = _split(asked), _split(replied)
    nearer = min(len(asked_space), len(replied_space))
    if nearer and asked_space[-nearer:] != replied_space[-nearer:]:
        return False
    if replied == asked:
        return True
    base = re.sub(r"-(?:latest|0)$", "", asked)
    return any(re.fullmatch(re.escape(base) + shape, replied) for shape in _SNAPSHOTS)


def _split(name: str) -> tuple[list[str], str]:
    """A model's name as its namespaces (`a/b/x`: `a`, `b`) and the name itself (`x`)."""
    *space, model = name.split("/")
    return space, model


_MONTH_DAY = r"(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
_YEAR_MONTH = r"2\d(?:0[1-9]|1[0-2])"  # Mistral's 24.11, never a month and day: no month is 20 or more
#: The snapshot suffixes the providers' replies name: `-2024-08-06`, `-20241022` and `@20241022`, `-0613`,
#: `-2411`, and a stable version `-002` (Vertex also writes `@002`).
_SNAPSHOTS = (r"-20\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])", rf"[-@]20\d\d{_MONTH_DAY}",
              rf"-(?:{_MONTH_DAY}|{_YEAR_MONTH})", r"[-@]0\d\d")
