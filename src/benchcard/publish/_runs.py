"""The runs a site shows: run folders read tolerantly, the runs a card's history records, and the ledger.

A run folder is read through `records` (its manifest and rows typed) but tolerantly: a row that does not decode
(a run killed mid-write) is left out, and a folder whose manifest does not decode is left out and named.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from benchcard._util.lastrow import last_per_cell, split_earlier
from benchcard._util.names import folded
from benchcard._util.safeio import json_loads, present
from benchcard.card.model import Card
from benchcard.card.reader import PUBLISHED_RUN
from benchcard.errors import BenchcardError, LedgerError, RunError
from benchcard.project import Project, version_named
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.rows import (
    ASSIGNMENT,
    MANIFEST,
    OUTPUTS,
    RUN_ID,
    SCORES,
    SEALED,
    VERDICT,
    AssignmentRow,
    Manifest,
    OutputRow,
    RigRecord,
    ScoreRow,
    SetAside,
    decode_line,
    decode_manifest,
    rig_line,
)
from benchcard.records.runreader import RunReader, outcomes, set_aside_of
from benchcard.records.verdictfigures import known
from benchcard.records.verdictfile import VerdictFile, decode_verdict
from benchcard.verdict.integrity import verdict_digest

T = TypeVar("T")

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass
class Run:
    """One run of one card version: a folder under results/, or a run the card's history records."""

    card: str
    version: int
    run_id: str
    folder: Path | None
    manifest: Manifest | None = None  # None for a run the history records, and for a comparison
    outputs: list[OutputRow] = field(default_factory=list)  # each cell's outcome (its last row)
    earlier: dict[str, list[OutputRow]] = field(default_factory=dict)  # a retried cell's earlier attempts
    reopened: int = 0  # cells a retry reopened that have no new outcome yet (an unfinished retry)
    scores: list[ScoreRow] = field(default_factory=list)
    assignment: list[AssignmentRow] = field(default_factory=list)
    verdict_file: VerdictFile | None = None  # verdict.json as decoded; None when it was edited after its row
    edited_file: VerdictFile | None = None  # verdict.json as edited after its ledger row (its figures not shown)
    verdict_digest: str | None = None  # verdict.json's digest as written (what its ledger row anchors)
    table: Any = None  # pandas.DataFrame of table.csv, when the verdict wrote one
    published: Mapping[str, Any] | None = None  # a `history[].published_runs` entry
    ledger_row: LedgerRow | None = None
    set_aside: SetAside | None = None  # `benchcard set-aside`: kept and shown, never a headline

    @property
    def ledger_seq(self) -> int | None:
        return self.ledger_row.seq if self.ledger_row is not None else None

    @property
    def is_set_aside(self) -> bool:
        return self.set_aside is not None

    @property
    def is_transfer(self) -> bool:
        return self.manifest is not None and self.manifest.replicates is not None and self.manifest.replicates.transfer

    @property
    def judged_file(self) -> VerdictFile | None:
        """verdict.json as decoded, edited after its ledger row or not: what the run says of itself beyond the
        row's judgement (its baseline, alpha, whether it was a trial). None when it has none (or it is unreadable)."""
        return self.verdict_file or self.edited_file

    @property
    def href(self) -> str:
        """The evidence page, relative to the site root."""
        return f"{self.site_dir}/index.html"

    @property
    def site_dir(self) -> str:
        return f"runs/{self.card}/v{self.version}/{self.run_id}"

    @property
    def started(self) -> str:
        if self.published is not None:
            return str(self.published.get("date") or "")
        started = self.manifest.started_at if self.manifest else None
        return started or _date_from_run_id(self.run_id) or ""

    @property
    def date(self) -> str:
        return self.started[:10]

    @property
    def rig(self) -> RigRecord | None:
        return self.manifest.rig if self.manifest else None

    @property
    def model(self) -> str:
        if self.published is not None:
            return str(self.published.get("model") or "")
        return self.rig.model if self.rig else ""

    @property
    def model_name(self) -> str:
        """The model's display name, which only a history entry records."""
        return str(self.published.get("model_name") or "") if self.published is not None else ""

    @property
    def scratch(self) -> bool:
        """A trial run (`run --scratch`, another endpoint than the card's rig) or a trial verdict: never a result."""
        return bool((self.manifest and self.manifest.scratch) or (self.judged_file and known(self.judged_file.scratch)))

    @property
    def scratch_note(self) -> str:
        """What a page says of a scratch run, with the runner's reason when it gave one."""
        if not self.scratch:
            return ""
        why = (self.manifest.scratch if self.manifest else None) or "a trial verdict"
        return f"Scratch run ({why}): a trial, never entered in the ledger, not a result of the card's rig."

    @property
    def rig_line(self) -> str:
        line = self._rig_line()
        return line + " · scratch" if self.scratch and not line.endswith(" · scratch") else line

    def _rig_line(self) -> str:
        if self.rig and self.rig.line:
            return self.rig.line
        if self.ledger_row and self.ledger_row.rig:
            return self.ledger_row.rig
        if self.rig is None:
            return self.model
        return rig_line(self.model, self.rig.effort, self.rig.surface, self.rig.provider)

    @property
    def score_values(self) -> list[float]:
        if self.published is not None:
            s = number(self.published.get("score"))
            return [] if s is None else [s]
        return [v for v in (number(r.score) for r in self.scores) if v is not None]

    @property
    def score(self) -> float | None:
        values = self.score_values
        return sum(values) / len(values) if values else None

    @property
    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.outputs:
            counts[row.status] = counts.get(row.status, 0) + 1
        if not counts and self.manifest and self.manifest.counts:
            counts = {k: v for k, v in msgspec.structs.asdict(self.manifest.counts).items() if v}
        return counts

    @property
    def unscored(self) -> int:
        """Cells not scored: cut off at max_tokens (the model's output, bounded by the verdict) or failed in
        transport (no answer); recorded, never scored as a wrong answer (`render.unscored_words` names each kind)."""
        return sum(n for status, n in self.status_counts.items() if status != "ok")

    @property
    def cost(self) -> float | None:
        if self.published is not None:
            return number(self.published.get("cost"))
        values = [r.cost for r in self.outputs if r.cost is not None]
        if values:
            return sum(values)
        return number(self.ledger_row.cost) if self.ledger_row else None

    @property
    def latency_ms(self) -> float | None:
        """Median latency of the run's calls."""
        if self.published is not None:
            return number(self.published.get("latency_ms"))
        values = [r.latency_ms for r in self.outputs if r.latency_ms is not None]
        return float(statistics.median(values)) if values else None

    @property
    def finished(self) -> bool:
        """Every cell has an outcome (the runner closed the manifest), or a published history entry says so."""
        return self.published is not None or (self.manifest is not None and self.manifest.finished_at is not None)

    @property
    def unfinished_label(self) -> str:
        """"unfinished (k of N cells)" for a run that stopped (a crash, Ctrl-C, a stop on errors), else ""."""
        if self.finished:
            return ""
        total = self.manifest.cells if self.manifest else None
        of = f" of {total}" if total is not None else ""
        return f"unfinished ({len({r.cell for r in self.outputs}) - self.reopened}{of} cells)"

    @property
    def finding(self) -> str:
        """The run's ledger row's (hash-chained, so an edited verdict.json cannot change what a page says), else
        its verdict's; empty when neither has one."""
        row, file = self.ledger_row, self.verdict_file
        return (row.finding if row else "") or (file.finding if file else "")

    @property
    def outcome(self) -> str:
        """Like `finding`."""
        row, file = self.ledger_row, self.verdict_file
        return (row.outcome if row else "") or (file.outcome if file else "")


def _date_from_run_id(run_id: str) -> str | None:
    m = re.match(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z", run_id)
    if not m:
        return None
    y, mo, d, h, mi, s = m.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:{s}Z"


def number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (true and false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _read_verdict(path: Path, shown: str, skipped: list[str]) -> tuple[VerdictFile | None, str | None]:
    """A verdict.json decoded through its struct (`verdictfile`), with its digest as written: the pages show its
    figures as written, and compare it with its ledger row by that digest (a field no struct declares counts
    too). One that does not decode is named and not shown; the run's ledger row still is."""
    if not path.is_file():
        return None, None
    try:
        raw = path.read_bytes()
        typed = decode_verdict(raw, shown)
    except (OSError, BenchcardError) as exc:
        skipped.append(f"{exc}; the run's verdict is not shown")
        return None, None
    return typed, verdict_digest(json_loads(raw))


def _outputs(run_dir: Path, manifest: Manifest) -> tuple[list[OutputRow], dict[str, list[OutputRow]]]:
    """Each cell's outcome, and a retried cell's earlier attempts, oldest first: its earlier rows in outputs.jsonl
    (run/_retry.py), after those a retry before 2026-12-01 moved to attempts.jsonl."""
    rows = _read_rows(run_dir / OUTPUTS, OutputRow)
    if not manifest.retries:
        return rows, {}
    current, superseded = split_earlier(rows, lambda row: row.cell)
    earlier: dict[str, list[OutputRow]] = {}
    for row in _read_rows(run_dir / "attempts.jsonl", OutputRow):
        earlier.setdefault(row.cell, []).append(row)
    for cell, prior in superseded.items():
        earlier.setdefault(str(cell), []).extend(prior)
    return current, earlier


def _latest_scores(run_dir: Path, manifest: Manifest) -> list[ScoreRow]:
    """Each cell's score: a retried run appends its retried cells' scores (run/_retry.py), the last one counts."""
    rows = _read_rows(run_dir / SCORES, ScoreRow)
    return last_per_cell(rows, lambda row: row.cell) if manifest.retries else rows


def _reopened(run_dir: Path, manifest: Manifest) -> int:
    """How many cells an unfinished retry reopened and has not called yet (0 when unknown: pages never fail)."""
    if not manifest.retries or manifest.finished_at is not None:
        return 0
    try:
        return len(outcomes(RunReader(run_dir)).waiting)
    except (BenchcardError, OSError, ValueError):
        return 0


def _read_rows(path: Path, kind: type[T]) -> list[T]:
    """Typed rows of a JSONL file; a line that is not a row (a run killed mid-write) is skipped, not fatal."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            rows.append(decode_line(line, kind))
        except (msgspec.ValidationError, msgspec.DecodeError):
            continue
    return rows


def _read_manifest(path: Path, shown: str, skipped: list[str]) -> Manifest | None:
    """A run folder's manifest; None for a folder that has none (no run), and for one that cannot be read, noted in
    `skipped` (a folder in its place too: the page says the run is left out, never drops it unsaid)."""
    try:
        if not present(path, shown, RunError):
            return None
        return decode_manifest(path.read_bytes(), shown)
    except (OSError, BenchcardError) as exc:
        skipped.append(f"{exc}; the run is left out")
        return None


def _read_table(path: Path) -> Any:
    if not path.is_file():
        return None
    import pandas as pd

    try:
        df = pd.read_csv(path, dtype={"fixture": str, "variant": str, "metric": str, "rig": str})
    except (OSError, ValueError):
        return None
    if not {"fixture", "variant", "metric", "value"} <= set(df.columns):
        return None
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    return df


def ledger_rows(project: Project) -> tuple[list[LedgerRow], str | None]:
    """Every ledger row in order, and the chain check's complaint (None when the chain verifies).

    A broken chain does not stop the build: the page shows the rows and says plainly that they fail
    verification, which is what a reader needs to know.
    """
    from benchcard.records import ledger as ledger_mod

    rows = ledger_mod.read(project)
    try:
        ledger_mod.verify(project)
    except LedgerError as exc:
        return rows, str(exc)
    return rows, None


def read_runs(project: Project, skipped: list[str]) -> list[Run]:
    """Every run folder under results/<card>/v<N>/<run>/ that has a manifest."""
    runs: list[Run] = []
    root = project.results_dir
    if not root.is_dir():
        return runs
    for card_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for version_dir in sorted(p for p in card_dir.iterdir() if p.is_dir()):
            version = version_named(version_dir.name)
            if version is None:
                continue
            for run_dir in sorted(p for p in version_dir.iterdir() if p.is_dir()):
                manifest = _read_manifest(run_dir / MANIFEST, project.relative(run_dir / MANIFEST), skipped)
                if manifest is None:
                    continue
                outputs, earlier = _outputs(run_dir, manifest)
                if not SAFE_NAME.fullmatch(run_dir.name) or not SAFE_NAME.fullmatch(card_dir.name):
                    skipped.append(f"{project.relative(run_dir)}: not a run id; left out")
                    continue
                if not RUN_ID.fullmatch(run_dir.name) or manifest.run != run_dir.name:
                    skipped.append(f"{project.relative(run_dir)}: its manifest is run {manifest.run}, in a folder not "
                                   "named for it (a copy of a run folder?); left out, as every command leaves it")
                    continue
                typed, written = _read_verdict(run_dir / VERDICT, project.relative(run_dir / VERDICT), skipped)
                runs.append(
                    Run(
                        card=card_dir.name,
                        version=version,
                        run_id=run_dir.name,
                        folder=run_dir,
                        manifest=manifest,
                        outputs=outputs,
                        earlier=earlier,
                        reopened=_reopened(run_dir, manifest),
                        scores=_latest_scores(run_dir, manifest),
                        assignment=_read_rows(run_dir / SEALED / ASSIGNMENT, AssignmentRow),
                        verdict_file=typed,
                        verdict_digest=written,
                        table=_read_table(run_dir / "table.csv"),
                        set_aside=set_aside_of(run_dir),
                    )
                )
    return runs


def published_runs(card: Card, skipped: list[str]) -> list[Run]:
    """Runs a card's history records from before benchcard kept their folders (e.g. run 19 of a v2)."""
    out = []
    for entry in card.history:
        taken: set[str] = set()
        for item in entry.published_runs:
            run_id = str(item.get("run") or "") if isinstance(item, Mapping) else ""
            if not PUBLISHED_RUN.fullmatch(run_id):  # the reader's rule, newer than some seals
                skipped.append(f"{card.id}: history v{entry.version}: published run {run_id!r} has no usable id")
                continue
            if folded(run_id) in taken:  # a card sealed before the reader's check (`_published_runs`)
                skipped.append(f"{card.id}: history v{entry.version}: published run {run_id!r} differs from another "
                               "only by case, and their folders in the site would be one on macOS and Windows")
                continue
            taken.add(folded(run_id))
            out.append(Run(card=card.id, version=entry.version, run_id=run_id, folder=None, published=item))
    return out
