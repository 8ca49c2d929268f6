"""`benchcard verdict` (verdict/give.py): finding a run, the refusals before anything is written, one verdict per
run, and `--show` reading it back."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from benchcard._util.hashing import file_digest
from benchcard.cli import cli
from benchcard.errors import RunError, VerdictError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.cardruns import find_run
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict import give
from benchcard.verdict.give import give_verdict, load_verdict

from ..helpers_cli import one_line_error
from ..helpers_run import ab_project, only_run
from ..helpers_verdict import (
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    cli_run,
    make_run,
    strong_run,
    the_card,
)


def test_second_verdict_refuses_and_show_prints_the_first(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    give_verdict(project, run_dir)
    with pytest.raises(VerdictError, match=r"already has a verdict .*--show"):
        give_verdict(project, run_dir)
    assert len(ledger.read(project)) == 1
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1 and "already has a verdict" in result.output
    shown = cli_run(project, "verdict", run_dir.name, "--show", "--json")
    assert shown.exit_code == 0
    assert json.loads(shown.output)["finding"] == "inconclusive"  # Case A: docs/statistics.md
    assert load_verdict(project, run_dir).finding == "inconclusive"
    assert len(ledger.read(project)) == 1


def test_refuses_an_unfinished_run(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert (f"run {run_dir.name} is still in progress (36 of 36 cells recorded, not closed); a verdict waits for "
            f"the run to finish: `benchcard run extract-ab --resume {run_dir.name}`") in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (run_dir / "verdict.json").exists() and not project.ledger_path.exists()


def test_refuses_cells_without_outputs_unless_allowed(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR), drop_outputs=2)
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert result.output == (f"error: run {run_dir.name} is incomplete: 2 of 36 cells have no output; judge it "
                             "anyway with --allow-incomplete, which counts those cells as failed, or start a new "
                             "run\n")
    result = cli_run(project, "verdict", run_dir.name, "--allow-incomplete")
    assert result.exit_code == 0, result.output
    assert "finding: incomplete → non-result" in result.output
    assert json.loads((run_dir / "verdict.json").read_text())["counts"]["missing"] == 2


def test_refuses_when_the_seal_changed(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    fixture = project.root / "fixtures" / "extract-ab" / "ex-03.txt"
    fixture.write_text("edited after the run\n", encoding="utf-8")
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert "seal changed since run" in result.output and "fixtures/extract-ab/ex-03.txt" in result.output
    assert not (run_dir / "verdict.json").exists()


def test_refuses_when_the_card_was_resealed_under_another_root(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["seal_root"] = "sha256:" + "0" * 64
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VerdictError, match=r"seal changed since run .* was run on v1 sealed with root sha256:0000"):
        give_verdict(project, run_dir)


def test_refuses_when_outputs_changed_after_the_run(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    outputs = run_dir / "outputs.jsonl"
    outputs.write_text(outputs.read_text().replace("output 3)", "output 3, improved)"))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert "outputs.jsonl changed after the run finished" in result.output



@pytest.mark.parametrize("resealed", [False, True])
def test_edited_outputs_that_disagree_are_refused_as_edited_first(project: Project, resealed: bool) -> None:
    # outputs.jsonl is joined while the digests are computed; an edit that also breaks the join (a cell naming
    # another fixture) is still refused for the edit, and a changed seal before either
    run_dir = make_run(project, the_card(project), ab_metrics())
    outputs = run_dir / "outputs.jsonl"
    outputs.write_text(outputs.read_text().replace('"fixture": "ex-01"', '"fixture": "ex-02"', 1))
    if resealed:
        manifest = json.loads((run_dir / "manifest.json").read_text())
        manifest["seal_root"] = "sha256:" + "0" * 64
        (run_dir / "manifest.json").write_text(json.dumps(manifest))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1
    assert ("seal changed since run" if resealed else "outputs.jsonl changed after the run finished") in result.output
    assert not (run_dir / "verdict.json").exists() and not (run_dir / "table.csv").exists()

def test_refuses_scores_that_disagree_with_outputs(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-01", 0): "truncated"})
    scores = run_dir / "scores.jsonl"
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    for r in rows:
        if r["status"] == "truncated":
            r.update(status="ok", score=0.0, metrics={"field_recall": 0.0})
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((run_dir / "manifest.json").read_text())  # as a faulty scorer would have recorded it
    manifest["scores_digest"] = file_digest(scores)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VerdictError, match=r"scores\.jsonl does not match outputs\.jsonl"):
        give_verdict(project, run_dir)


def test_find_run(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    assert find_run(project, run_dir.name) == run_dir.resolve()
    assert find_run(project, str(run_dir)) == run_dir.resolve()
    assert find_run(project, run_dir.name[:12]) == run_dir.resolve()
    with pytest.raises(RunError, match="no such run"):
        find_run(project, "20991231T000000Z-ffff")
    result = cli_run(project, "verdict", "nope")
    assert result.exit_code == 1 and "nope: no such run" in result.output
    later = make_run(project, the_card(project), ab_metrics())
    assert find_run(project, "extract-ab") == later.resolve()  # a card id: its most recent run
    assert cli_run(project, "verdict", "extract-ab").exit_code == 0
    assert (later / "verdict.json").is_file() and not (run_dir / "verdict.json").exists()


def test_a_mistyped_verdict_json_is_one_line_naming_the_field(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics())
    assert cli_run(project, "verdict", run_dir.name).exit_code == 0
    path = run_dir / "verdict.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "finding": 3}))
    shown = cli_run(project, "verdict", run_dir.name, "--show")
    assert shown.exit_code == 1 and "Traceback" not in shown.output
    assert "verdict.json: Expected `str`, got `int` - at `$.finding`" in shown.output



def test_a_verdict_cut_off_after_its_ledger_row_is_completed_by_the_next(project: Project,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A verdict whose disk filled (or whose process died) between appending its ledger row and writing
    verdict.json left the run in the ledger with no verdict.json, and every later `verdict` refused it for ever
    ("already in the ledger … it is not entered twice"). The same verdict computed again now completes its files
    under that row: nothing is entered twice, and the record verifies."""
    import errno

    from benchcard.verdict import give

    run_dir = make_run(project, the_card(project), ab_metrics())
    real = give.write_atomic  # type: ignore[attr-defined]

    def full_disk(path: object, data: object, *args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(give, "write_atomic", full_disk)
    cut = cli_run(project, "verdict", run_dir.name)
    assert cut.exit_code == 1 and "No space left on device" in cut.output
    [row] = ledger.read(project)
    assert row.run == run_dir.name and not (run_dir / "verdict.json").exists()
    # hostile23b: `ledger --verify` in between said only that the files were missing, as if evidence were destroyed
    verified = cli_run(project, "ledger", "--verify")
    assert verified.exit_code == 1
    assert (f"{project.relative(run_dir)}/verdict.json is missing: a verdict cut short after its row was entered (a "
            f"kill, a full disk), or its files deleted; `benchcard verdict {run_dir.name}` writes them again under "
            "seq 1 when the evidence is as entered") in verified.output

    monkeypatch.setattr(give, "write_atomic", real)
    again = cli_run(project, "verdict", run_dir.name)
    assert again.exit_code == 0, again.output
    assert [r.hash for r in ledger.read(project)] == [row.hash]  # the one row, not entered twice
    written = json.loads((run_dir / "verdict.json").read_text())
    assert written["ledger"] == {"seq": row.seq, "hash": row.hash, "at": row.at} and written["given_at"] == row.at
    assert cli_run(project, "ledger", "--verify").exit_code == 0
    assert "already has a verdict" in cli_run(project, "verdict", run_dir.name).output


def test_a_verdict_and_a_retry_of_one_run_at_once_never_both_go_ahead(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchcard verdict RUN` while `benchcard run --resume RUN --retry-failed` starts on the same run: the verdict
    read the run as it was (6 ok, 2 failed), the retry reopened it, called the 2 cells and closed it (8 ok), and the
    verdict then entered its row, finding 'incomplete' with 2 failed, anchored to the files as the retry left them:
    a ledger row that contradicts its own evidence, which `ledger --verify` passed. The verdict holds the run's lock
    from its first read to its last write, so a retry begun meanwhile is refused in one line and the run stays as
    judged; a run being written refuses a verdict likewise."""
    server.configure({"default_reply": "red", "faults": [{"kind": "500", "times": 999, "match": "number 0"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=4, repetitions=1)
    first = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--json", "--attempts", "1"])
    assert first.exit_code == 0, first.output
    folder = only_run(project, "colour-ab")
    before = (folder / "outputs.jsonl").read_bytes()
    server.configure({"default_reply": "red"})
    retried: list[Result] = []
    annotated = give._annotated

    def meanwhile(*args: Any) -> Any:  # the other process, between the verdict's reading and its writing
        retried.append(CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--resume",
                                                folder.name, "--retry-failed"]))
        return annotated(*args)

    monkeypatch.setattr(give, "_annotated", meanwhile)
    verdict = give_verdict(project, folder, allow_incomplete=True)
    [retry] = retried
    assert one_line_error(retry) == f"error: {project.relative(folder)}: another benchcard process is running this run"
    assert (folder / "outputs.jsonl").read_bytes() == before and verdict.ledger_row is not None
    ledger.verify(project)
    later = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--resume", folder.name,
                                     "--retry-failed"])
    assert one_line_error(later).startswith(f"error: run {folder.name} already has a verdict")


def test_a_run_being_written_is_not_judged(project: Project) -> None:
    """A finished run that a retry holds (it has its lock and has not yet reopened the manifest) is refused."""
    run_dir = strong_run(project)
    with open(run_dir / "outputs.jsonl", "ab") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        with pytest.raises(VerdictError) as info:
            give_verdict(project, run_dir)
    assert str(info.value) == (f"run {run_dir.name} is being written by another benchcard process (a resume, a "
                               "retry of its failed cells, or grades imported); a verdict waits for it to finish")
    assert not (run_dir / "verdict.json").exists() and not project.ledger_path.exists()
    assert give_verdict(project, run_dir).ledger_row is not None


def test_an_unfinished_run_that_a_process_writes_now_is_said_to_run_now(project: Project) -> None:
    """A verdict asked while the run itself works (its writer holds the lock) says so, and so does a set-aside: the
    user is told to wait, not to resume a run that is running."""
    from benchcard.records.setaside import set_aside

    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False)
    with open(run_dir / "outputs.jsonl", "ab") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        with pytest.raises(VerdictError) as info:
            give_verdict(project, run_dir)
        with pytest.raises(RunError) as aside:
            set_aside(project, run_dir.name, "wrong endpoint")
    assert str(info.value) == (f"run {run_dir.name} is still in progress (36 of 36 cells recorded, not closed and is "
                               "running now); a verdict waits for the run to finish: give it once that run ends "
                               f"(`benchcard status {run_dir.name}` shows how far it got)")  # no --resume (hostile21)
    assert str(aside.value) == f"run {run_dir.name} is running now; stop it (Ctrl-C) before setting it aside"


def test_a_run_on_a_results_folder_linked_to_another_disk_is_entered_by_its_place_in_the_project(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """results/ a link to a folder on another disk (runs are large): the verdict entered its run in the ledger and
    verdict.json by where the link led, `/…/disk/colour-ab/v1/<run>`, a path of this machine that no clone of the
    project has, so `ledger --verify` in the project as committed (results/ a folder) said every such run was missing
    (hostile audit, 2026-12-08). Evidence is named by its place in the project, `results/colour-ab/v1/<run>`."""
    import shutil

    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    disk = tmp_path / "disk"
    disk.mkdir()
    project.results_dir.symlink_to(disk, target_is_directory=True)
    ran = CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab", "--json"])
    assert ran.exit_code == 0, ran.output
    run = json.loads(ran.stdout)["runs"][0]["run"]
    judged = CliRunner().invoke(cli, ["-C", str(project.root), "verdict", run])
    assert judged.exit_code == 0, judged.output
    [row] = [json.loads(line) for line in (disk / "ledger.jsonl").read_text().splitlines()]
    verdict = json.loads((disk / "colour-ab" / "v1" / run / "verdict.json").read_text())
    assert row["evidence"] == verdict["evidence"] == f"results/colour-ab/v1/{run}"
    project.results_dir.unlink()  # the project as committed and cloned: results/ a folder of its own
    shutil.move(disk, project.results_dir)
    verified = CliRunner().invoke(cli, ["-C", str(project.root), "ledger", "--verify"])
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.startswith("ledger ok: 1 row(s), hash chain intact, evidence of 1 judged run(s) unchanged")
