"""`benchcard replicate` as a user runs it, against the fake server on 127.0.0.1: an A/A replication says
*replicated* (a probe: *no change shown*), a server that changed between the runs says *not replicated* (a probe:
*changed*), a replication killed mid-run resumes, and the link to the original is in the run folder, the status,
the verdict and the ledger, where `ledger --verify` checks it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchcard.records import ledger
from benchcard.records.cardruns import pick
from benchcard.records.rows import decode_manifest
from benchcard.records.runreader import RunReader
from benchcard.stats.replication import DEFAULT_RULE
from benchcard.testing.fakeserver import FakeServer

from ..helpers_replicate import HELPS, NO_HELP, folder_of, judged_ab, judged_probe, replicated
from ..helpers_run import KEY_ENV, PROBE, answer_every_held, bc, held_after, holding, ok, read_jsonl
from ..helpers_wait import wait_until


def _bodies(folder: Path) -> dict[tuple[str, str, int], bytes]:
    """Each cell's request body as sealed, byte for byte, by (variant, fixture, repetition)."""
    cells = {a["cell"]: (a["variant"], a["fixture"], a["repetition"]) for a in read_jsonl(folder / "sealed" /
                                                                                         "assignment.jsonl")}
    out = {}
    for line in (folder / "sealed" / "requests.jsonl").read_bytes().splitlines():
        cell = json.loads(line)["cell"]
        out[cells[cell]] = line[line.index(b'"body":'):]
    return out


def test_an_a_a_replication_sends_the_sealed_bodies_again_and_is_replicated(tmp_path: Path, server: FakeServer,
                                                                            key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    row = ledger.row_of_run(project, original)
    assert row is not None and row.finding == "win"
    server.configure(HELPS)
    data = replicated(project, original)
    folder = folder_of(project, data)
    assert folder.name != original and data["run"]["finished"]
    manifest = decode_manifest((folder / "manifest.json").read_bytes(), "manifest.json")
    assert manifest.replicates is not None and manifest.replication_rule is not None
    assert (manifest.replicates.run, manifest.replicates.hash, manifest.replicates.seq) == (original, row.hash, row.seq)
    assert not manifest.replicates.transfer and not manifest.replicates.foreign and manifest.replicates.seed_kept
    assert manifest.replication_rule.digest == DEFAULT_RULE.digest()
    first = project.root / row.evidence
    assert manifest.seed == RunReader(first).read_manifest().seed
    assert _bodies(folder) == _bodies(first)  # every body byte for byte

    judged = data["verdict"]["replication"]
    assert judged["finding"] == "replicated" and judged["original"] == original and not judged["transfer"]
    new_row = ledger.row_of_run(project, folder.name)
    assert new_row is not None and new_row.replicates == manifest.replicates
    assert new_row.replication is not None and new_row.replication.finding == "replicated"  # type: ignore[union-attr]
    shown = ok(bc(project, "verdict", folder.name, "--show")).stdout
    assert f"replication of run {original}: replicated: win again" in shown
    assert f"replication of run {original} (ledger seq {row.seq})" in ok(bc(project, "status", folder.name)).stdout
    verified = ok(bc(project, "ledger", "--verify")).stdout
    assert "ledger ok: 2 row(s)" in verified


def test_a_server_that_changed_is_not_replicated_and_the_gap_fell(tmp_path: Path, server: FakeServer,
                                                                  key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure(NO_HELP)
    result = ok(bc(project, "replicate", original))
    assert f"replication of run {original}: not replicated: the gap fell from +0.875 to +0.000" in result.stdout
    assert "→ non-result" in result.stdout  # the variant no longer helps
    [row] = [r for r in ledger.read(project) if r.run != original]
    assert row.replication.finding == "not replicated" and row.replication.direction == "fell"  # type: ignore[union-attr]


def test_a_probe_rerun_shows_no_change_then_a_change(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, original = judged_probe(tmp_path, server)
    server.configure({"default_reply": "negative"})
    same = replicated(project, PROBE)  # a card's name stands for its result
    assert same["verdict"]["replication"]["finding"] == "no change shown"
    assert same["verdict"]["replication"]["original"] == original
    server.configure({"default_reply": "Negative."})
    changed = ok(bc(project, "replicate", original)).stdout
    assert f"replication of run {original}: changed: score fell from 1.00" in changed
    assert "to 0.00" in changed and "CI of the change" in changed
    ok(bc(project, "ledger", "--verify"))


def test_a_transfer_to_another_model_is_said_so_everywhere(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure(HELPS)
    data = replicated(project, original, "--model", "other/model-2")
    folder = folder_of(project, data)
    manifest = decode_manifest((folder / "manifest.json").read_bytes(), "manifest.json")
    assert manifest.replicates is not None and manifest.replicates.transfer
    assert manifest.rig is not None and manifest.rig.model == "other/model-2"
    assert {json.loads(b"{" + b)["body"]["model"] for b in _bodies(folder).values()} == {"other/model-2"}
    assert data["verdict"]["replication"]["transfer"]
    assert f"transfer of run {original}:" in ok(bc(project, "verdict", folder.name, "--show")).stdout
    assert f"transfer of run {original} (ledger seq 1): its sealed requests sent to another rig" in \
        ok(bc(project, "status", folder.name)).stdout
    row = ledger.row_of_run(project, folder.name)
    assert row is not None and row.replicates.transfer  # type: ignore[union-attr]
    ok(bc(project, "ledger", "--verify"))
    # The transfer's row is the latest, but it speaks about another rig: the card's result stays the original.
    assert pick(project, "colour-ab", "result").name == original


def test_a_new_seed_calls_the_same_bodies_in_another_order(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure(HELPS)
    folder = folder_of(project, replicated(project, original, "--seed", "7"))
    manifest = RunReader(folder).read_manifest()
    assert manifest.seed == 7 and manifest.replicates is not None and not manifest.replicates.seed_kept
    first = project.root / f"results/colour-ab/v1/{original}"
    assert _bodies(folder) == _bodies(first)
    assert read_jsonl(folder / "sealed" / "assignment.jsonl") != read_jsonl(first / "sealed" / "assignment.jsonl")
    assert "with a new seed" in ok(bc(project, "status", folder.name)).stdout


def _outputs(folder: Path) -> int:
    path = folder / "outputs.jsonl"
    return path.read_bytes().count(b"\n") if path.is_file() else 0


def test_a_replication_killed_mid_run_resumes_to_its_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Killed at 10 of its 48 rows: the server answers 10 calls and holds the next 2 (--concurrency 2) until the
    kill, so the replication is killed there whatever the load (before left25, inside the 60 ms of each answer)."""
    project, original = judged_ab(tmp_path, server)
    server.configure({**HELPS, "faults": held_after(10, held=2)})
    benchcard = str(Path(sys.executable).with_name("benchcard"))
    proc = subprocess.Popen([benchcard, "-C", str(project.root), "replicate", original, "--concurrency", "2",
                             "--json"], env={**os.environ, KEY_ENV: "sk-test-0000"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    runs = project.results_dir / "colour-ab" / "v1"

    def ten_rows() -> bool:
        new = [p for p in runs.iterdir() if p.name != original]
        return bool(new) and _outputs(new[0]) >= 10 and holding(server, 2)

    try:
        wait_until(lambda: proc.poll() is not None or ten_rows(), 180,
                   "the replication to write 10 rows (to kill it there)", every=0.005)
        assert proc.poll() is None, "the replication ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()  # killed already, or never there: not left behind either way
        proc.wait()
        answer_every_held(server)
    [folder] = [p for p in runs.iterdir() if p.name != original]
    done = RunReader(folder).done_cells()
    assert len(done) == 10 and not (folder / "verdict.json").exists()
    assert f"replication of run {original} (ledger seq 1)" in ok(bc(project, "status", folder.name)).stdout

    data = replicated(project, "--resume", folder.name)
    assert data["run"]["resumed"] and data["run"]["called"] == 48 - len(done)
    assert sorted(o["cell"] for o in read_jsonl(folder / "outputs.jsonl")) == \
        sorted(a["cell"] for a in read_jsonl(folder / "sealed" / "assignment.jsonl"))  # each cell exactly once
    assert data["verdict"]["replication"]["finding"] == "replicated"
    again = replicated(project, original, "--resume", folder.name)  # finished: its verdict read back, not given again
    assert again["verdict"]["ledger"] == data["verdict"]["ledger"] and len(ledger.read(project)) == 2


def test_a_replication_goes_through_the_batch_api_like_any_run(tmp_path: Path, server: FakeServer,
                                                               key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure(HELPS)
    data = replicated(project, original, "--batch", "--poll-interval", "0.05")
    folder = folder_of(project, data)
    manifest = RunReader(folder).read_manifest()
    assert manifest.batch and manifest.replicates is not None and (folder / "batch" / "journal.jsonl").is_file()
    assert _bodies(folder) == _bodies(project.root / f"results/colour-ab/v1/{original}")
    assert data["verdict"]["replication"]["finding"] == "replicated"


def test_another_endpoint_makes_a_scratch_replication_judged_but_never_in_the_ledger(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure(HELPS)
    data = replicated(project, original, "--base-url", server.base_url)
    assert data["verdict"]["scratch"] and data["verdict"]["replication"]["finding"] == "replicated"
    assert data["run"]["rig"].endswith(" · scratch") and len(ledger.read(project)) == 1
    ok(bc(project, "ledger", "--verify"))


def test_failed_cells_wait_for_retry_failed_before_the_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure({**HELPS, "faults": [{"kind": "500", "times": 999, "match": "number 0"}]})
    data = replicated(project, original, "--attempts", "1")
    folder = folder_of(project, data)
    assert data["verdict"] is None and data["run"]["counts"]["failed"] == 6  # fixture 0: 2 variants × 3 repetitions
    assert f"`benchcard replicate --resume {folder.name} --retry-failed` calls them again" in data["waiting"]
    server.configure(HELPS)
    again = replicated(project, "--resume", folder.name, "--retry-failed")
    assert again["run"]["counts"] == {"ok": 48, "truncated": 0, "failed": 0}
    assert again["verdict"]["replication"]["finding"] == "replicated"


def test_the_ledger_table_marks_a_replication_row(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, original = judged_ab(tmp_path, server)
    server.configure(NO_HELP)
    ok(bc(project, "replicate", original))
    shown = ok(bc(project, "ledger")).stdout
    assert f"replication of {original}: not" in shown and "replicated" in shown


def test_the_runs_notes_go_to_the_callers_tell_and_the_cli_prints_them_on_stderr(
        tmp_path: Path, server: FakeServer, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    """As `run`'s: the core prints nothing of its own; the CLI passes its reporter, and stdout keeps the JSON."""
    from benchcard.run.options import RunOptions
    from benchcard.verdict.replicate import replicate

    project, run = judged_probe(tmp_path / "proj", server)
    (project.root / ".env").write_text("HF_TOKEN=abc\n", encoding="utf-8")
    note = ".env: ignored HF_TOKEN (only API keys are read from it)"
    said: list[str] = []
    done = replicate(project, run, RunOptions(progress=False), tell=said.append)
    assert said == [note] and done.verdict is not None
    assert capsys.readouterr() == ("", "")
    result = ok(bc(project, "replicate", run, "--json"))
    assert result.stderr.splitlines() == [note]
    assert json.loads(result.stdout)["verdict"] is not None


def test_a_ledger_that_would_refuse_the_verdict_is_refused_before_any_call(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """Hostile audit: with the original's ledger row edited (its stored hash kept), `replicate` sent every call,
    then its verdict was refused at the append; now it stops first, in one line, and spends nothing."""
    project, original = judged_ab(tmp_path, server)
    rows = project.ledger_path.read_text(encoding="utf-8").splitlines(keepends=True)
    forged = json.loads(rows[0]) | {"finding": "inconclusive", "outcome": "non-result"}
    project.ledger_path.write_text(json.dumps(forged) + "\n" + "".join(rows[1:]), encoding="utf-8")
    server.configure(HELPS)
    result = bc(project, "replicate", original)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == ("error: refusing to append to a ledger that fails verification: results/ledger.jsonl: "
                             "seq 1 (line 1) is the first bad row: its content does not match its hash (the row was "
                             "edited)\n")
    assert server.stats()["calls"] == 0
    assert [p.name for p in (project.results_dir / "colour-ab" / "v1").iterdir()] == [original]


def test_replicate_gate_exits_by_the_new_runs_verdict_as_verdict_gate_does(tmp_path: Path, server: FakeServer,
                                                                         key: str) -> None:
    """`replicate --gate` is `replicate` then `verdict NEW --show --gate` in one command: the same gate line and
    exit code, the verdict given and entered once. A gated probe still answering right passes (exit 0); after
    the server changed it is below its min_score (exit 2) while the replication line says the score fell."""
    project, original = judged_probe(tmp_path, server, min_score=0.8)
    server.configure({"default_reply": "negative"})
    passed = bc(project, "replicate", original, "--gate")
    assert passed.exit_code == 0, passed.output
    assert passed.stdout.endswith("gate: score 1.000 ≥ min_score 0.8 → pass, exit 0\n")
    assert f"replication of run {original}: no change shown" in passed.stdout
    server.configure({"default_reply": "Negative."})
    below = bc(project, "replicate", original, "--gate")
    assert below.exit_code == 2, below.output
    assert below.stdout.endswith("gate: score 0.000 < min_score 0.8 → below, exit 2\n")
    assert f"replication of run {original}: changed: score fell from 1.00" in below.stdout
    new = ledger.read(project)[-1]
    assert len(ledger.read(project)) == 3 and new.run != original  # each verdict given and entered, once
    again = bc(project, "verdict", new.run, "--show", "--gate")
    assert again.exit_code == 2 and again.stdout.splitlines()[-1] == below.stdout.splitlines()[-1]
    data = json.loads(bc(project, "replicate", original, "--resume", new.run, "--gate", "--json").stdout)
    assert data["gate"] == {"run": new.run, "finding": "below", "code": 2, "passed": False,
                            "why": "gate: score 0.000 < min_score 0.8 → below, exit 2"}
    assert len(ledger.read(project)) == 3  # a judged replication's verdict is read back, never given twice
    plain = ok(bc(project, "replicate", original))  # without --gate: said as `verdict` says it, exit 0
    assert plain.stdout.endswith("gate: score 0.000 < min_score 0.8 → below, --gate exits 2\n")


def test_replicate_gate_on_an_ab_card_exits_by_its_finding(tmp_path: Path, server: FakeServer, key: str) -> None:
    from benchcard.verdict.gate import EXIT_CODES

    project, original = judged_ab(tmp_path, server)
    server.configure(HELPS)
    won = bc(project, "replicate", original, "--gate")
    assert won.exit_code == 0 and won.stdout.endswith("gate: win → exit 0\n"), won.output
    server.configure(NO_HELP)
    lost = bc(project, "replicate", original, "--gate")
    finding = ledger.read(project)[-1].finding
    assert finding != "win" and lost.exit_code == EXIT_CODES[finding] > 1, lost.output
    assert lost.stdout.endswith(f"gate: {finding} → exit {EXIT_CODES[finding]} (only a win passes)\n")


def test_replicate_gate_refuses_an_ungated_probe_before_any_call(tmp_path: Path, server: FakeServer,
                                                                 key: str) -> None:
    project, original = judged_probe(tmp_path, server)
    calls = server.stats()["calls"]
    result = bc(project, "replicate", original, "--gate")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"error: cards/{PROBE}.yaml: field 'gate': missing; a probe needs a sealed pass threshold "
                             "for --gate, e.g. `gate: {min_score: 0.9}` (then reseal as a new version)\n")
    assert server.stats()["calls"] == calls and len(ledger.read(project)) == 1
    assert [p.name for p in (project.results_dir / PROBE / "v3").iterdir()] == [original]


def test_replicate_gate_with_failed_cells_is_incomplete_until_they_are_retried(tmp_path: Path, server: FakeServer,
                                                                              key: str) -> None:
    """Failed cells wait for --retry-failed (no verdict is given), so the gate has nothing to pass: exit 5, as
    `run --gate` holds a run that did not finish; retried, the replication is judged and gated."""
    project, original = judged_ab(tmp_path, server)
    server.configure({**HELPS, "faults": [{"kind": "500", "times": 999, "match": "number 0"}]})
    waiting = bc(project, "replicate", original, "--attempts", "1", "--gate")
    [folder] = [p for p in (project.results_dir / "colour-ab" / "v1").iterdir() if p.name != original]
    assert waiting.exit_code == 5, waiting.output
    assert waiting.stdout.endswith(f"gate: replication {folder.name} has no verdict yet → exit 5\n")
    assert "not judged yet: 6 cell(s) failed in transport" in waiting.stdout and len(ledger.read(project)) == 1
    server.configure(HELPS)
    retried = bc(project, "replicate", "--resume", folder.name, "--retry-failed", "--gate")
    assert retried.exit_code == 0 and retried.stdout.endswith("gate: win → exit 0\n"), retried.output


def test_replicate_gate_on_a_replication_stopped_mid_way_is_incomplete(tmp_path: Path, server: FakeServer,
                                                                       key: str) -> None:
    from benchcard.run.options import RunOptions
    from benchcard.verdict.replicate import replicate

    project, original = judged_probe(tmp_path, server, min_score=0.8)
    done = replicate(project, original, RunOptions(progress=False), stop_after=5, gate=True)
    assert done.verdict is None and done.code == 5
    assert done.lines()[-1] == f"gate: replication {done.summary.run} has no verdict yet → exit 5"
    assert json.loads(json.dumps(done.to_json()))["gate"]["finding"] == "incomplete"
