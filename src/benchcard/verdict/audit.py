"""`benchcard ledger --verify`: the hash chain, a torn last line, and every judged run's evidence against its row.

The chain alone proves the rows were not edited, removed or reordered (`ledger.verify`); it says nothing of the
files a row stands for. So each row that names a run is checked against that run's folder
(`integrity.evidence_problems`): the sealed plan, `outputs.jsonl`, `scores.jsonl` and `verdict.json`, each named
when it is missing or changed. Every problem is listed, not only the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchcard.project import Project
from benchcard.records import ledger
from benchcard.verdict._replication import foreign_originals, link_problems
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


def audit(project: Project) -> LedgerAudit:
    """Check the chain (a broken one is a LedgerError naming the first bad row), then each judged run's files."""
    rows = ledger.read(project)
    ledger.verify(project, copied=foreign_originals(rows))
    torn = ledger.torn_tail(project)
    problems: list[str] = []
    notes: list[str] = []
    judged = 0
    for row in rows:
        if not row.run:
            continue
        judged += 1
        head = f"seq {row.seq} (run {row.run})"
        problems += [f"{head}: {p}" for p in evidence_problems(project.root, row)]
        if not anchored(row):
            notes.append(f"{head}: entered before ledger rows carried their run's digests; its files were checked "
                         "against its own manifest only")
    linked, said = link_problems(project, rows)
    problems += linked
    notes += said
    return LedgerAudit(len(rows), rows[-1].hash if rows else None, judged, tuple(problems),
                       ledger.torn_message(project, torn) if torn else None, tuple(notes))


def audit_lines(report: LedgerAudit) -> list[str]:
    """The report as `ledger --verify` prints it: one line per problem, then the summary."""
    lines = [f"note {n}" for n in report.notes] + [f"FAIL {p}" for p in report.problems]
    if report.torn:
        lines.append(f"FAIL {report.torn}")
    head = f", last {report.last_hash}" if report.last_hash else ""
    if report.ok:
        lines.append(f"ledger ok: {report.rows} row(s), hash chain intact, evidence of {report.judged} judged run(s) "
                     f"unchanged{head}")
    else:
        n = len(report.problems) + (1 if report.torn else 0)
        lines.append(f"ledger NOT ok: {report.rows} row(s), hash chain intact, {n} problem(s) above{head}")
    return lines
