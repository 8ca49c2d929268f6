"""`benchcard ledger --verify` (verdict/audit.py): the chain, a torn last line, and each judged run's evidence
against its row, every problem listed with the row it belongs to, and the summary line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.errors import LedgerError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.verdict.audit import LedgerAudit, audit
from benchcard.verdict.give import give_verdict

from ..helpers_verdict import ab_metrics, cli_run, make_project, make_run, the_card


def _judged(project: Project, n: int) -> list[Path]:
    runs = [make_run(project, the_card(project), ab_metrics()) for _ in range(n)]
    for run_dir in runs:
        give_verdict(project, run_dir)
    return runs


def test_untouched_evidence_is_ok_and_names_the_head_hash(project: Project) -> None:
    _judged(project, 2)
    report = audit(project)
    head = ledger.read(project)[-1].hash
    assert (report.ok, report.rows, report.judged, report.problems, report.torn) == (True, 2, 2, (), None)
    assert report.last_hash == head
    assert report.lines() == [f"ledger ok: 2 row(s), hash chain intact, evidence of 2 judged run(s) unchanged, "
                                   f"last {head}"]
    assert report.to_json() == {"ok": True, "rows": 2, "last_hash": head, "judged": 2, "problems": [],
                                "torn": None, "notes": []}


def test_each_changed_file_is_named_with_its_row_and_counted(project: Project) -> None:
    _, second = _judged(project, 2)
    (second / "verdict.json").unlink()
    scores = second / "scores.jsonl"
    scores.write_text(scores.read_text(encoding="utf-8").replace('"abstains": 1.0', '"abstains": 0.0', 1),
                      encoding="utf-8")
    report = audit(project)
    where = project.relative(second)
    assert not report.ok and len(report.problems) == 2
    assert all(p.startswith(f"seq 2 (run {second.name}): {where}/") for p in report.problems)  # not the first run's
    assert any("scores.jsonl changed" in p for p in report.problems)
    assert any("verdict.json is missing" in p for p in report.problems)
    lines = report.lines()
    assert lines[:2] == [f"FAIL {p}" for p in report.problems]
    assert lines[-1] == f"ledger NOT ok: 2 row(s), hash chain intact, 2 problem(s) above, last {report.last_hash}"
    result = cli_run(project, "ledger", "--verify")
    assert result.exit_code == 1 and result.output.splitlines() == lines


def test_a_torn_last_line_is_a_problem_of_its_own(project: Project) -> None:
    _judged(project, 1)
    with project.ledger_path.open("ab") as fh:
        fh.write(b'{"seq": 2, "card": "extract')
    report = audit(project)
    assert report.problems == () and report.torn is not None and not report.ok
    assert report.torn.startswith("results/ledger.jsonl: line 2 is torn (")
    lines = report.lines()
    assert lines[0] == f"FAIL {report.torn}"
    assert lines[-1].startswith("ledger NOT ok: 1 row(s), hash chain intact, 1 problem(s) above")


@pytest.mark.parametrize("edited", [0, 1])
def test_a_broken_chain_is_the_one_error_whatever_the_evidence(project: Project, edited: int) -> None:
    """The chain is checked as the evidence is, in one read: a bad row is the one error, even with the evidence of
    the rows before it checked (and here changed), as it was when the chain was checked first."""
    runs = _judged(project, 2)
    (runs[0] / "scores.jsonl").write_text("", encoding="utf-8")
    lines = project.ledger_path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[edited])
    row["finding"] = "loss"
    lines[edited] = json.dumps(row) + "\n"
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(LedgerError, match=f"seq {edited + 1} .* is the first bad row"):
        audit(project)


def test_notes_come_first_and_an_empty_ledger_has_no_head() -> None:
    report = LedgerAudit(rows=0, last_hash=None, judged=0, problems=(), torn=None, notes=("seq 1 (run r): old",))
    assert report.lines() == ["note seq 1 (run r): old",
                                   "ledger ok: 0 row(s), hash chain intact, evidence of 0 judged run(s) unchanged"]


def test_a_verdict_refuses_a_ledger_edited_above_its_last_rows_and_ledger_verify_names_the_same_row(
        project: Project) -> None:
    """A row edited anywhere, not only near the end, stops the next verdict before it writes anything: the
    refusal names the row `ledger --verify` names, and the ledger is left as it was."""
    _judged(project, 3)
    lines = project.ledger_path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = json.dumps(json.loads(lines[0]) | {"finding": "win"}, separators=(",", ":")) + "\n"
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    before = project.ledger_path.read_bytes()
    run_dir = make_run(project, the_card(project), ab_metrics())
    given = cli_run(project, "verdict", run_dir.name)
    assert given.exit_code == 1
    bad = ("results/ledger.jsonl: seq 1 (line 1) is the first bad row: its content does not match its hash (the row "
           "was edited)")
    assert given.stderr == f"error: refusing to append to a ledger that fails verification: {bad}\n"
    assert project.ledger_path.read_bytes() == before
    checked = CliRunner().invoke(cli, ["-C", str(project.root), "ledger", "--verify"])
    assert checked.exit_code == 1
    assert checked.stderr == f"error: {bad}\n"


ONCE = """
import os, sys
from pathlib import Path
from benchcard.project import Project
from benchcard.verdict.audit import audit
project = Project(Path(sys.argv[1]))
ledger = os.path.realpath(project.ledger_path)
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) and os.path.realpath(args[0]) == ledger:
        opened.append(args[0])
def read():
    if not os.path.exists("/proc/self/io"):
        return 0
    with open("/proc/self/io") as fh:
        return int(next(line for line in fh if line.startswith("rchar:")).split()[1])
audit(Project(Path(sys.argv[2])))  # what is imported on first use is not counted
sys.addaudithook(hook)
before = read()
found = audit(project)
print(len(opened), read() - before, found.rows, len(found.problems), file=sys.stderr)
"""


def test_verify_reads_the_ledger_once(project: Project, tmp_path: Path) -> None:
    """`ledger --verify` read the ledger four times (its replication rows, the chain, the torn line, the evidence);
    it now opens it once and reads it through once, the one original a replication links to read again from its
    line. Counted in a process of its own: the opens of the ledger (an audit hook) and, on Linux, the bytes read."""
    import subprocess
    import sys

    from benchcard.records.replication import ReplicaLink

    from ..helpers_project import ledger_row, long_ledger

    long_ledger(project, 3000, runs=False)
    first = ledger.read(project)[0]
    link = ReplicaLink(run=first.run, hash=first.hash, seq=1, evidence=first.evidence)
    ledger.append(project, ledger_row("run-r", replicates=link))
    size = project.ledger_path.stat().st_size
    warm = make_project(tmp_path / "warm")
    done = subprocess.run([sys.executable, "-c", ONCE, str(project.root), str(warm.root)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    opens, read, rows, problems = (int(x) for x in done.stderr.split()[-4:])
    assert (opens, rows) == (1, 3001), done.stderr[-2000:]
    assert problems >= 2  # the two rows naming runs whose folders this test does not write
    assert read < 1.2 * size, (read, size)  # once, and the original's line (three times: 3.0 × the size)
