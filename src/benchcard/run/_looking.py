"""A sequential card's run: its grid called stretch by stretch, with a look after each, and nowhere else.

The grid of a sequential card is ordered so that the cells up to each look the seal names come first
(`grid._shuffled_blocks`). The runner calls one stretch (a batch run: one batch per stretch), scores it blind
(appended to scores.jsonl; a judge card: the stretch's outputs judged, their plan sealed apart before its first
judge call), and hands the run folder to the `Looker` it was given — the verdict's computation of the sealed
rule on the cells called so far (`verdict/looks.py`; this stage may not import it, so the door that starts a
run passes it in). The look is appended to the manifest's `looks` before anything else is called; a
decision other than `continue` closes the run there. A run killed between looks resumes at the same schedule:
the looks recorded stand, the stretch under way is finished, and its look is taken when it is whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from benchcard.card.model import Card
from benchcard.errors import RunError
from benchcard.records.rows import AssignmentRow, Look, Manifest, iter_rows
from benchcard.records.runreader import outcomes
from benchcard.run._retry import done_cells
from benchcard.run.store import RunStore

#: The verdict's look (`verdict.looks.look_at`): the card, the run folder, the look (1-based) → the look taken.
Looker = Callable[[Card, Path, int], Look]


@dataclass(frozen=True)
class Looked:
    """Where a sequential run got to: cells called by this invocation, the look that decided it (None when the
    schedule ran out without a decision, or the run is not finished), and whether every look it needed was taken."""

    called: int
    decided: Look | None
    finished: bool


def stretches(store: RunStore, looks: Sequence[int]) -> list[set[str]]:
    """The cells of each stretch of the sealed plan: those of repetitions from the previous look to this one."""
    out: list[set[str]] = [set() for _ in looks]
    for row in iter_rows(store.assignment_path, AssignmentRow):
        out[next(k for k, end in enumerate(looks) if row.repetition < end)].add(row.cell)
    return out


async def run_in_looks(card: Card, store: RunStore, manifest: Manifest, looker: Looker,
                       call: Callable[[set[str]], Awaitable[int]],
                       score: Callable[[int, tuple[int, int] | None], Awaitable[bool]]) -> Looked:
    """Call the grid stretch by stretch, `call(skip)` calling every planned cell not in `skip`, `score(look,
    since)` scoring blind what was appended since (None: from the start; a judge card: judging the stretch
    before `look`, False while its judging is unfinished), and take each sealed look."""
    schedule = manifest.sequential
    if schedule is None:
        raise RunError(f"{store.manifest_path}: a sequential card's run must record its schedule of looks; this "
                       "one has none (it was planned by an older benchcard): start a new run")
    taken = list(manifest.looks or [])
    groups = stretches(store, schedule.looks)
    every = set().union(*groups)
    called = 0
    previous: Look | None = taken[-1] if taken else None
    for k, cells in enumerate(groups, 1):
        if k <= len(taken):
            if taken[k - 1].decision != "continue":
                return Looked(called, taken[k - 1], True)
            continue
        done = done_cells(store)  # a retry's reopened cells of this stretch are called again
        if cells - done:
            called += await call(done | (every - cells))
            if cells - done_cells(store):
                return Looked(called, None, False)  # stopped, or a batch still running: resumed later
            _wait_for_retry(card, store, k)
        outputs_to = store.outputs_path.stat().st_size
        if not await score(k, None if previous is None else (previous.outputs_to, previous.scores_to)):
            return Looked(called, None, False)  # the stretch's judging stopped: its look is taken on resume
        look = msgspec.structs.replace(looker(card, store.folder, k), outputs_to=outputs_to,
                                       scores_to=store.scores_path.stat().st_size)
        store.append_look(look)
        previous = look
        if look.decision != "continue":
            return Looked(called, look, True)
    return Looked(called, None, True)


def _wait_for_retry(card: Card, store: RunStore, look: int) -> None:
    """A stretch just called that leaves more failed cells than `win.allow_failed` stops the run before its look
    (RunError): once taken, a look is final and its failed cells are never called again, so the user chooses
    first — `--retry-failed` calls them again, a plain `--resume` takes the look with them failed (a judge card's
    run: the plain resume alone, as `--retry-failed` does not re-judge)."""
    if not card.is_ab or card.win is None:
        return
    found = outcomes(store)  # `failed`: this stretch's (no look has read them); `final`: the earlier ones'
    if not found.failed or found.failed + found.final <= card.win.allow_failed:
        return
    run = f"benchcard run {card.id} --resume {store.run_id}"
    retry = ("`--retry-failed` does not re-judge a judge card's run" if card.judge_spec is not None
             else f"`{run} --retry-failed` calls them again first")
    raise RunError(f"{found.failed} cell(s) before look {look} failed ({found.failed + found.final} in all, more "
                   f"than win.allow_failed, {card.win.allow_failed}); the look is not taken yet, and once taken it is "
                   f"final. {retry}; `{run}` takes the look with them failed")
