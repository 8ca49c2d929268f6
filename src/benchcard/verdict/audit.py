"""`benchcard ledger`: what it shows (`ledger_view`: the rows, and the runs left unfinished under them) and what
`--verify` checks (`audit`): the hash chain, a torn last line, and every judged run's evidence against its row.

The chain alone proves the rows were not edited, removed or reordered (`ledger.verify`); it says nothing of the
files a row stands for. So each row that names a run is checked against that run's folder
(`integrity.evidence_problems`): the sealed plan, `outputs.jsonl`, `scores.jsonl` and `verdict.json`, each named
when it is missing or changed. Every problem is listed, not only the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from msgspec import UnsetType

from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.unfinished import Unfinished, unfinished_runs
from benchcard.verdict._replication import foreign_originals, link_problems, linked_runs
from benchcard.verdict.integrity import anchored, evidence_problems


@dataclass(frozen=True)
class LedgerAudit:
    """What `--verify` found: rows, the head hash (what a user publishes to anchor the ledger), problems."""

    rows: int
    last_hash: str | None
    judged: int  # rows naming a run, whose evidence was checked
    problems: tuple[str, ...]
    torn: str | None
    notes: tuple[str, ...] = ()  # rows whose evidence could only be checked against its own manifest

    @property
    def ok(self) -> bool:
        return not self.problems and self.torn is None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "rows": self.rows, "last_hash": self.last_hash, "judged": self.judged,
                "problems": list(self.problems), "torn": self.torn, "notes": list(self.notes)}

    def lines(self) -> list[str]:
        """The report as `ledger --verify` prints it: one line per problem, then the summary."""
        lines = [f"note {n}" for n in self.notes] + [f"FAIL {p}" for p in self.problems]
        if self.torn:
            lines.append(f"FAIL {self.torn}")
        head = f", last {self.last_hash}" if self.last_hash else ""
        if self.ok:
            lines.append(f"ledger ok: {self.rows} row(s), hash chain intact, evidence of {self.judged} judged run(s) "
                         f"unchanged{head}")
        else:
            n = len(self.problems) + (1 if self.torn else 0)
            lines.append(f"ledger NOT ok: {self.rows} row(s), hash chain intact, {n} problem(s) above{head}")
        return lines


@dataclass(frozen=True)
class LedgerView:
    """What `benchcard ledger` shows: the rows, and the runs left unfinished, listed under them so that a stopped
    run is never taken for one waiting for its verdict. `--json` is the rows alone, as they are written. The rows
    are read as they are shown, never held: a ledger of 200,000 rows took 5 GB to list whole."""

    where: str  # the ledger's path, relative to the project
    project: Project
    unfinished: tuple[Unfinished, ...]
    skipped: tuple[str, ...] = ()  # run folders whose manifest cannot be read, each a line naming it

    def rows(self) -> Iterator[LedgerRow]:
        return ledger.rows(self.project)

    def json_rows(self) -> Iterator[dict[str, Any]]:
        """The rows as written, every row read once before the first is given (a row at a time, nothing kept): a
        row that does not read is then the one error line before any JSON, never after half a list on stdout."""
        for _ in self.rows():
            pass
        return (row.fields() for row in self.rows())


def ledger_view(project: Project, *, unfinished: bool = True) -> LedgerView:
    """The ledger's rows (read, not verified: `audit` checks) and, unless `unfinished` is False (`--json`, which
    lists rows only), the runs left unfinished."""
    skipped: list[str] = []
    stopped = tuple(unfinished_runs(project, skipped)) if unfinished else ()
    return LedgerView(project.relative(project.ledger_path), project, stopped, tuple(skipped))


def audit(project: Project) -> LedgerAudit:
    """Check the chain (a broken one is a LedgerError naming the first bad row), then each judged run's files.

    The ledger is read once, a row at a time, never held (a ledger of 200,000 rows took GBs to check whole; it
    was then read four times): each row is checked against the one before it, its evidence checked, and a
    replication row kept (few). The rows the replications link to are read again from their lines afterwards."""
    entered = list(ledger.entries(project))
    links: list[LedgerRow] = []
    problems: list[str] = []
    notes: list[str] = []
    count, last, judged = 0, None, 0
    with ledger.walk(project, {seq for _, seq, _ in entered}) as walked:
        for row in walked.rows():
            count, last = count + 1, row.hash
            if not isinstance(row.replicates, UnsetType):
                links.append(row)
            if not row.run:
                continue
            judged += 1
            head = f"seq {row.seq} (run {row.run})"
            problems += [f"{head}: {p}" for p in evidence_problems(project.root, row)]
            if not anchored(row):
                notes.append(f"{head}: entered before ledger rows carried their run's digests; its files were "
                             "checked against its own manifest only")
        copied = foreign_originals(links)
        ledger.check_entries(project, [e for e in entered if project.recorded(e[0].parent) not in copied],
                             walked.hashes)
        originals = {run: found for run in linked_runs(links) if (found := walked.last_row_of(run)) is not None}
    linked, said = link_problems(project, links, originals)
    return LedgerAudit(count, last, judged, tuple(problems + linked),
                       ledger.torn_message(project, walked.torn) if walked.torn else None, tuple(notes + said))
