"""What one run did (`RunSummary`, printed by `benchcard run` or as `--json`), and the tally behind it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from operator import attrgetter
from typing import Any

from benchcard._util.lastrow import last_per_cell
from benchcard._util.numfmt import dollars
from benchcard.card.model import Rig
from benchcard.project import Project
from benchcard.records.replied import judge_replies_line, replies_line
from benchcard.records.rows import STATUSES, Manifest, OutputRow
from benchcard.records.runreader import outcomes
from benchcard.run.judging import JudgeSummary
from benchcard.run.providers import price_gap
from benchcard.run.store import RunStore


@dataclass
class RunSummary:
    """What one run did; `--json` prints a list of these."""

    run: str
    folder: str
    card: str
    version: int
    rig: str
    provider: str
    model: str
    cells: int
    counts: dict[str, int]  # ok, truncated, failed
    missing: int
    cost: float | None
    cost_unknown: int
    wall_s: float
    called: int
    finished: bool
    resumed: bool
    seed: int | None = None
    concurrency: int = 0  # calls in flight at most: --concurrency, capped by the provider (`workers_for`)
    capped: bool = False  # the provider took fewer calls at a time than asked
    narrowed: int | None = None  # calls in flight allowed at the end, when 429s, 503s or 529s narrowed them (run/_gate)
    note: str = ""  # what a resume found, when it had nothing to call
    rpm: float | None = None  # the rate limit the calls kept (a resumed run keeps its own)
    judge: JudgeSummary | None = None  # a judge card's judging pass, counted apart from the model's calls
    batch: bool = False  # through the vendor's batch API
    warnings: tuple[str, ...] = ()  # result lines a batch run refused, each naming its file (in `folder`) and line
    looks: str = ""  # a sequential run's looks: "stopped at look 2 of 3: win; 1,440 of 3,600 calls (60 % saved)"
    uncalled: int = 0  # a sequential run stopped at a look: its planned cells never called (`cells` counts them)
    replies: str = ""  # replies naming another model than the one asked, or never counted (records/replied.py)
    judge_replies: str = ""  # the same of a judge card's judge
    price_note: str = ""  # why cells answered have no cost: no price of the model in benchcard.yaml (price_gap)
    # cells whose cost priced input tokens read from the prompt cache at the full input price (no `cached_input`):
    # the run's cost is then an upper bound
    cost_upper_bound: int = 0
    failed_error: str = ""  # the last failed cell's error (outputs.jsonl holds each), said beside the failed count

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """What `benchcard run` prints for this run."""
        c = self.counts
        out = [f"{self.run} · {self.rig} → {self.folder}"]
        out += [f"  {line}" for line in (self.looks, self.note, self.replies, self.judge_replies) if line]
        if self.capped:
            out.append(f"  {capped_note(self.provider, self.concurrency)}")
        if self.narrowed is not None:
            out.append(f"  the server refused calls for load (429/503/529): {self.narrowed} call"
                       f"{'s' if self.narrowed > 1 else ''} at a time at the end, of {self.concurrency} allowed")
        out.append(f"  {self.cells} cell{'' if self.cells == 1 else 's'}: {c['ok']} ok, {c['truncated']} truncated, "
                   f"{c['failed']} failed"
                   + (f", {self.missing} missing" if self.missing else "")
                   + (f", {self.uncalled} never called (the run stopped at a look)" if self.uncalled else "")
                   + f" · {self.cost_text()} · "
                   f"{self.wall_s:.1f} s")
        out += [f"  cost: {self.price_note}"] if self.price_note else []
        out += self._notes()
        if self.judge is not None:
            out.append(f"  {self.judge.line()}")
            if self.judge.cost is not None and self.judge.cost_upper_bound:
                out.append(f"  judge {upper_bound_note(self.judge.cost_upper_bound, self.judge.model, 'judgement')}")
        if not self.finished:
            out.append(f"  not finished;{' see: benchcard status ' + self.run + ';' if self.batch else ''} "
                       f"continue with: benchcard run {self.card} --resume {self.run}")
        elif not self.note:
            out.append("  scored blind → scores.jsonl (truncated and failed cells are not scored)")
            if c["failed"] and self.looks:  # a finished sequential run: its looks read every cell it called
                out.append(f"  {c['failed']} cell(s) failed, each read by a look, and a look taken is final: no "
                           "retry calls them again (the verdict counts them failed)")
            elif c["failed"] and self.judge is None:
                out.append(f"  {c['failed']} cell(s) failed: `benchcard run {self.card} --resume {self.run} "
                           "--retry-failed` calls them again (the failed attempts stay on record)")
            # A run of few cells ends before the stop after 16 failed in a row; a batch's refused result lines are
            # already said above, each as a warning (the first few, then how many more).
            if c["failed"] and self.failed_error and self.failed_error not in self.warnings:
                out.append(f"  last failure: {self.failed_error} (each cell's error: outputs.jsonl)")
        return out

    def _notes(self) -> list[str]:
        """The lines under the counts: why the cost is an upper bound, the result lines a batch refused."""
        out = [f"  {upper_bound_note(self.cost_upper_bound, self.model)}"] if self.cost_upper_bound else []
        out += [f"  warning: {self.folder}/{line}" for line in self.warnings[:SHOWN_WARNINGS]]
        if len(self.warnings) > SHOWN_WARNINGS:
            out.append(f"  warning: and {len(self.warnings) - SHOWN_WARNINGS} more result lines refused (each "
                       "cell's cause is its error in outputs.jsonl)")
        return out

    def cost_text(self) -> str:
        """The run's cost as its summary line says it: `≤ $…` when it is an upper bound, the cells without a
        price beside it."""
        if self.cost is None:
            return "cost unknown"
        return ("≤ " if self.cost_upper_bound else "") + dollars(self.cost) + (
            f" (+{self.cost_unknown} cells without a price)" if self.cost_unknown else "")


SHOWN_WARNINGS = 5


def upper_bound_note(cells: int, model: str, what: str = "cell") -> str:
    """Why a run's cost (a judge's: `what` is a judgement) is an upper bound, in one line: the default it priced
    cached input tokens at."""
    return (f"cost ≤: {cells} {what}{'s' if cells > 1 else ''} read input from the prompt cache, priced at the full "
            f"input price (prices.{model} in benchcard.yaml gives no cached_input; the vendor bills them less)")


def capped_note(provider: str, workers: int) -> str:
    return f"{workers} call{'s' if workers > 1 else ''} at a time (provider '{provider}' takes no more)"


def run_summary(project: Project, store: RunStore, manifest: Manifest, rig: Rig, tally: Tally,
                wall: float, called: int, resumed: bool, workers: int, capped: bool, note: str = "",
                rpm: float | None = None, judge: JudgeSummary | None = None, batch: bool = False,
                warnings: tuple[str, ...] = (), looks: str = "", narrowed: int | None = None) -> RunSummary:
    """The summary of a run as it now stands; `wall` is the `perf_counter` at which this invocation began."""
    total = int(manifest.cells or 0)
    needed = total if manifest.stopped_look is None else manifest.stopped_look.cells  # a sequential run's stop
    return RunSummary(
        run=store.run_id, folder=project.relative(store.folder), card=manifest.card,
        version=manifest.version, rig=manifest.rig_line or rig.line(), provider=rig.provider, model=rig.model,
        cells=total,
        counts=tally.counts, missing=max(0, needed - tally.seen), uncalled=total - needed,
        cost=round(tally.cost, 6) if tally.priced else None,
        cost_unknown=tally.unpriced, cost_upper_bound=tally.upper_bound, failed_error=tally.last_error,
        wall_s=round(time.perf_counter() - wall, 3),
        called=called,
        finished=manifest.finished_at is not None, resumed=resumed, seed=manifest.seed, concurrency=workers,
        capped=capped, narrowed=narrowed, note=note, rpm=rpm, judge=judge, batch=batch, warnings=warnings, looks=looks,
        price_note=price_gap(rig.model, project.config().prices, batch) if tally.unpriced else "",
        **_replies(store.read_manifest()),
    )


def _replies(manifest: Manifest) -> dict[str, str]:
    """What the run says of the models its replies and its judge's named (records/replied.py)."""
    return {"replies": replies_line(manifest), "judge_replies": judge_replies_line(manifest)}


@dataclass
class Tally:
    """One pass over outputs.jsonl: counts by status and the cost so far."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    seen: int = 0
    cost: float = 0.0
    priced: int = 0
    unpriced: int = 0  # answered cells with no reported cost and no configured price
    upper_bound: int = 0  # priced cells whose cost is an upper bound (`OutputRow.cost_upper_bound`)
    last_error: str = ""  # the error of the last failed cell counted: the summary says why cells failed

    @classmethod
    def of(cls, store: RunStore) -> Tally:
        """The cells' current outcomes: a retried run's last row per cell, its reopened cells not yet counted."""
        t = cls()
        rows: Iterable[OutputRow] = store.iter_outputs()
        if store.read_manifest().retries:
            waiting = outcomes(store).waiting
            rows = [r for r in last_per_cell(rows, attrgetter("cell")) if r.cell not in waiting]
        for row in rows:
            t.add(row)
        return t

    def add(self, row: OutputRow) -> None:
        self.seen += 1
        self.counts[row.status] += 1
        if row.cost is not None:
            self.cost += row.cost
            self.priced += 1
            self.upper_bound += row.cost_upper_bound is True
        elif row.status != "failed":
            self.unpriced += 1
        if row.status == "failed" and row.error:
            self.last_error = row.error
