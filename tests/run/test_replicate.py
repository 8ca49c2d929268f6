"""What `benchcard replicate` checks of the original before anything is planned, each refusal one line naming
the file (exit 1, nothing planned), and a run copied in from another project, replicated on its seal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchcard.project import Project
from benchcard.records import ledger
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import one_line_error
from ..helpers_replicate import HELPS, folder_of, judged_ab, replicated
from ..helpers_run import (
    ab_project,
    answer_every_held,
    bc,
    held_after,
    holding,
    ok,
    read_jsonl,
    run_and_kill,
    write_config,
)


def _runs(project: Project) -> set[str]:
    return {p.name for p in (project.results_dir / "colour-ab" / "v1").iterdir()}


def _refused(project: Project, *args: str) -> str:
    before = _runs(project)
    line = one_line_error(bc(project, "replicate", *args))
    assert _runs(project) == before  # nothing planned
    return line


@pytest.fixture
def judged(tmp_path: Path, server: FakeServer, key: str) -> tuple[Project, str]:
    return judged_ab(tmp_path / "a", server)


def test_a_fixture_changed_since_the_seal_is_named(judged: tuple[Project, str]) -> None:
    project, run = judged
    (project.root / "fixtures" / "colour-ab" / "item-003.txt").write_text("a green apple", encoding="utf-8")
    line = _refused(project, run)
    assert "fixtures/colour-ab/item-003.txt changed after sealing v1" in line


def test_an_edited_sealed_request_is_named(judged: tuple[Project, str]) -> None:
    project, run = judged
    path = project.results_dir / "colour-ab" / "v1" / run / "sealed" / "requests.jsonl"
    path.write_bytes(path.read_bytes().replace(b"Please.", b"Kindly.", 1))
    line = _refused(project, run)
    assert f"results/colour-ab/v1/{run}: sealed/requests.jsonl changed after the plan was written" in line
    assert "a replication sends only sealed requests that verify" in line


@pytest.mark.parametrize(("name", "edit"), [
    ("outputs.jsonl", lambda text: text.replace('"red"', '"blue"', 1)),
    ("verdict.json", lambda text: text.replace('"finding": "win"', '"finding": "no-effect"', 1)),
])
def test_an_original_edited_after_its_verdict_is_refused_before_a_call(judged: tuple[Project, str], name: str,
                                                                       edit: object) -> None:
    """A replication is judged against the original's verdict and figures; with its outputs or its verdict.json
    edited after the ledger row anchored them (the row's hash untouched), the replication was run, judged against
    the edited record and entered in the ledger as replicated."""
    project, run = judged
    path = project.results_dir / "colour-ab" / "v1" / run / name
    assert callable(edit)
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    rows = project.ledger_path.read_bytes()
    line = _refused(project, run)
    assert line.startswith(f"error: results/colour-ab/v1/{run}/{name}")
    assert line.endswith("a replication is judged against the original's record as its ledger row (seq 1) anchors "
                         "it: `benchcard ledger --verify` names every change")
    assert project.ledger_path.read_bytes() == rows


def test_a_run_without_a_verdict_and_a_scratch_run_are_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, run = judged_ab(tmp_path, server)
    second = json.loads(ok(bc(project, "run", "colour-ab", "--json")).stdout)["runs"][0]["run"]
    assert f"run {second} has no verdict; a replication is judged against the original's verdict: " \
        f"`benchcard verdict {second}` first" in _refused(project, second)
    trial = json.loads(ok(bc(project, "run", "colour-ab", "--scratch", "--json")).stdout)["runs"][0]["run"]
    assert "a scratch run (a trial, never in the ledger) has no result to replicate" in _refused(project, trial)
    assert "No such option '--scratch'" in one_line_error(bc(project, "replicate", run, "--scratch"))


def test_a_run_killed_mid_way_or_set_aside_is_refused_with_what_would_judge_it(tmp_path: Path, server: FakeServer,
                                                                               key: str) -> None:
    """A run killed before its end: the line named `benchcard verdict RUN` first, which refuses an unfinished run
    (a command that fails as written); it names the resume, then the verdict. Set aside, the run is never judged:
    the line says so, with no command that would refuse too."""
    project, _ = judged_ab(tmp_path, server)
    server.configure(HELPS | {"faults": held_after(held=2)})  # its first 2 calls held: killed before its end
    try:
        run_and_kill(project.root, ["colour-ab", "--concurrency", "2"],
                     lambda: len(list(project.results_dir.glob("colour-ab/v1/*/outputs.jsonl"))) == 2
                     and holding(server, 2))
    finally:
        answer_every_held(server)
    stopped = max(_runs(project))
    line = _refused(project, stopped)
    assert line.startswith(f"error: results/colour-ab/v1/{stopped}: run {stopped} is still in progress (")
    assert line.endswith(" of 48 cells recorded, not closed); a replication is judged against the original's "
                         f"verdict: finish it (`benchcard run colour-ab --resume {stopped}`), then `benchcard "
                         f"verdict {stopped}`")
    assert "still in progress" in one_line_error(bc(project, "verdict", stopped))  # why the old advice failed
    ok(bc(project, "set-aside", stopped, "--why", "killed on purpose"))
    line = _refused(project, stopped)
    assert line.startswith(f"error: results/colour-ab/v1/{stopped}: run {stopped} was set aside ")
    assert line.endswith("; it has no verdict and never will, so it has no result to replicate")


def test_a_card_with_no_run_yet_is_said_so(tmp_path: Path) -> None:
    """`replicate CARD` (and `verdict`, `status`, `export`) of a sealed card never run said 'no such run … (give a
    run id …, a card id, or the run's folder)': a card id was given. The line now says the card has no run yet."""
    project = ab_project(tmp_path)
    for command in ("replicate", "verdict", "status", "export"):
        assert one_line_error(bc(project, command, "colour-ab")) == (
            "error: colour-ab: card cards/colour-ab.yaml has no run yet under results/; start one with `benchcard "
            "run colour-ab`")
    assert one_line_error(bc(project, "replicate", "no-such-card")) == (
        "error: no-such-card: no such run under results/ (give a run id like 20261130T151200Z-3f9a, a card id, or "
        "the run's folder)")


def test_a_card_at_another_version_is_refused(judged: tuple[Project, str]) -> None:
    project, run = judged
    path = project.root / "cards" / "colour-ab.yaml"
    text = path.read_text(encoding="utf-8").replace("version: 1\n", "version: 2\n", 1)
    path.write_text(text.replace("history:\n", "history:\n  - {version: 2, note: A second version.}\n"),
                    encoding="utf-8")
    assert _refused(project, run).endswith(  # the verdict's words (card/load.card_of_run, one check)
        f"run {run} is of colour-ab v1, but cards/colour-ab.yaml is now v2, whose text is not the one v1 was sealed "
        "with; a run is resumed, judged and replicated only by the version that produced it: to replicate it, put "
        "back cards/colour-ab.yaml as v1 was sealed (its seal, keys/colour-ab/v1.seal.json, checks it), or start a "
        "run of v2 with `benchcard run colour-ab`")


def test_resume_names_a_run_that_is_no_replication(judged: tuple[Project, str]) -> None:
    project, run = judged
    line = one_line_error(bc(project, "replicate", "--resume", run))
    assert "not a replication (its manifest names no original)" in line
    assert "name the run to replicate" in one_line_error(bc(project, "replicate"))


def test_a_replication_killed_while_it_was_planned_is_named_as_one(tmp_path: Path) -> None:
    """Killed before its manifest was written, a replication's folder names no original: `replicate --resume` of
    it once advised `run colour-ab --resume`, which plans an ordinary run of the card there (benchmarks/kill_sweep.py
    found it). It says to delete the folder and replicate the original again."""
    project = ab_project(tmp_path / "a")
    half = project.results_dir / "colour-ab" / "v1" / "20261206T101010Z-0a0a"
    (half / "sealed").mkdir(parents=True)
    line = one_line_error(bc(project, "replicate", "--resume", half.name))
    assert line == ("error: results/colour-ab/v1/20261206T101010Z-0a0a is a run stopped while it was planned (no "
                    "manifest.json: no call was made from it, and nothing in it names its original); delete the "
                    "folder and give `benchcard replicate RUN` again with the run it replicates"), line
    assert not (half / "manifest.json").exists()


def _copy(src: Project, dest: Path, run: str, base_url: str) -> Project:
    """What a reader copies from a published project: the card, its fixtures, keys and seal, and the run folder
    (its verdict names a row of the publisher's ledger, not of this project's)."""
    for part in ("cards", "fixtures", "keys"):
        shutil.copytree(src.root / part, dest / part)
    shutil.copytree(src.results_dir / "colour-ab" / "v1" / run, dest / "results" / "colour-ab" / "v1" / run)
    write_config(dest, base_url)
    return Project(dest)


def test_a_run_copied_from_another_project_replicates_on_its_seal(tmp_path: Path, server: FakeServer,
                                                                  key: str) -> None:
    theirs, run = judged_ab(tmp_path / "theirs", server)
    ok(bc(theirs, "run", "colour-ab", "--json"))  # their ledger goes on; the copied run's row stays theirs
    mine = _copy(theirs, tmp_path / "mine", run, server.base_url)
    server.configure(HELPS)
    data = replicated(mine, run)
    folder = folder_of(mine, data)
    link = json.loads((folder / "manifest.json").read_text())["replicates"]
    row = ledger.row_of_run(theirs, run)
    assert row is not None and (link["run"], link["hash"], link["foreign"]) == (run, row.hash, True)
    assert data["verdict"]["replication"]["finding"] == "replicated"
    [mine_row] = ledger.read(mine)
    assert mine_row.seq == 1 and mine_row.run == folder.name
    verified = ok(bc(mine, "ledger", "--verify")).stdout
    assert f"the original's row is in another project's ledger; the link was checked against " \
        f"results/colour-ab/v1/{run}/verdict.json" in verified and "ledger ok: 1 row(s)" in verified
    assert read_jsonl(folder / "sealed" / "requests.jsonl")[0]["url"].startswith(server.base_url)


def test_a_copied_run_whose_key_was_changed_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    theirs, run = judged_ab(tmp_path / "theirs", server)
    mine = _copy(theirs, tmp_path / "mine", run, server.base_url)
    (mine.root / "cards" / "colour-ab.yaml").write_text(
        (mine.root / "cards" / "colour-ab.yaml").read_text(encoding="utf-8").replace("Name the colour.",
                                                                                     "Name a colour."),
        encoding="utf-8")
    assert "cards/colour-ab.yaml (field 'prompt') changed after sealing v1" in _refused(mine, run)


def test_a_replication_spreads_over_a_pool_of_servers(tmp_path: Path, server: FakeServer, key: str) -> None:
    steady = HELPS
    project, run = judged_ab(tmp_path, server, steady)
    with FakeServer() as other:
        for s in (server, other):
            s.configure(steady)
        urls = "\n".join(f"      - {{url: '{s.base_url}', concurrency: 2}}" for s in (server, other))
        (project.root / "benchcard.yaml").write_text(
            f"providers:\n  fake:\n    type: openai\n    api_key_env: BENCHCARD_TEST_KEY\n    base_urls:\n{urls}\n",
            encoding="utf-8")
        data = replicated(project, run)
        both = [server.base_url, other.base_url]
    folder = folder_of(project, data)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["endpoints"] == both and manifest["replicates"]["run"] == run
    assert {o.get("endpoint") for o in read_jsonl(folder / "outputs.jsonl")} == set(both)  # each server answered
    assert data["verdict"]["replication"]["finding"] == "replicated"
