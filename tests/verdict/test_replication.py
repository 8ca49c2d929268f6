"""The judgement of a replication against its original, and the link `ledger --verify` checks: a link that
names another row, another card or seal, or a rig changed without saying it is a transfer, is each named."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from benchcard.errors import VerdictError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.ledgerrow import LedgerRow
from benchcard.records.replication import RuleRecord
from benchcard.records.rows import decode_manifest
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict._replication import judgement, link_problems, linked_runs
from benchcard.verdict.give import load_verdict

from ..helpers_replicate import HELPS, folder_of, judged_ab, replicated


@pytest.fixture
def rows(tmp_path: Path, server: FakeServer, key: str) -> tuple[list[LedgerRow], Path]:
    project, run = judged_ab(tmp_path, server)
    server.configure(HELPS)
    folder = folder_of(project, replicated(project, run))
    return ledger.read(project), folder


def _with(rows: list[LedgerRow], **link: object) -> list[LedgerRow]:
    original, replica = rows
    assert not isinstance(replica.replicates, msgspec.UnsetType)
    return [original, msgspec.structs.replace(replica, replicates=msgspec.structs.replace(replica.replicates, **link))]


def _link_problems(project: Project, rows: list[LedgerRow]) -> tuple[list[str], list[str]]:
    """`link_problems` given what `audit` gives it: the replication rows, and the rows they link to."""
    links = [r for r in rows if not isinstance(r.replicates, msgspec.UnsetType)]
    wanted = linked_runs(links)
    return link_problems(project, links, {r.run: r for r in rows if r.run in wanted})


def test_a_true_link_has_no_problem_and_each_broken_one_is_named(rows: tuple[list[LedgerRow], Path]) -> None:
    found, folder = rows
    project = Project(folder.parents[3])
    assert _link_problems(project, found) == ([], [])
    [problem] = _link_problems(project, _with(found, hash="sha256:" + "0" * 64))[0]
    assert "the original's row is seq 1, sha256:" in problem and "not the linked seq 1, sha256:0000" in problem
    [problem] = _link_problems(project, _with(found, run="20260101T000000Z-dead"))[0]
    assert "the original has no row in the ledger" in problem
    [problem] = _link_problems(project, _with(found, transfer=True))[0]
    assert "stated as a transfer, but on the original's rig (test/model · fake)" in problem
    original, replica = found
    other = [original, msgspec.structs.replace(replica, rig="other/model · fake", seal_root="sha256:" + "1" * 64)]
    problems = _link_problems(project, other)[0]
    assert any("its seal_root is sha256:1111" in p for p in problems)
    assert any("on another rig (other/model · fake) than the original's (test/model · fake), not stated as a "
               "transfer" in p for p in problems)


def test_the_rule_is_the_one_recorded_and_an_unreadable_original_is_inconclusive(
        rows: tuple[list[LedgerRow], Path]) -> None:
    folder = rows[1]
    project = Project(folder.parents[3])
    manifest = decode_manifest((folder / "manifest.json").read_bytes(), "manifest.json")
    assert manifest.replicates is not None and manifest.replication_rule is not None
    body = load_verdict(project, folder).file
    assert judgement(project, manifest.replicates, manifest.replication_rule, body, folder, manifest).finding == \
        "replicated"
    wider = RuleRecord(name="x", parameters={**manifest.replication_rule.parameters, "level": 0.99},
                       digest=manifest.replication_rule.digest)
    with pytest.raises(VerdictError, match=r"its parameters give sha256:.*, not the recorded"):
        judgement(project, manifest.replicates, wider, body, folder, manifest)
    gone = msgspec.structs.replace(manifest.replicates, evidence="results/colour-ab/v1/missing")
    said = judgement(project, gone, manifest.replication_rule, body, folder, manifest)
    assert said.finding == "inconclusive" and "the original's verdict cannot be read" in said.text
