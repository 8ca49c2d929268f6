"""The run folder: a manifest written once, a streamed plan, and outputs that survive a kill mid-write."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.rows import (
    AssignmentRow,
    JudgeStretch,
    Manifest,
    OutputRow,
    RequestRow,
    Status,
    Usage,
    new_run_id,
)
from benchcard.run.store import RunStore
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import as_a_user, bc, one_line_error
from ..helpers_run import ab_project


def row(cell: str, status: Status = "ok", text: str = "red") -> OutputRow:
    return OutputRow(cell=cell, fixture="f", status=status, text=text, finish_reason="stop",
                     usage=Usage(input=1, output=1, reasoning=0), cost=None, latency_ms=1.0, attempts=1,
                     error=None)


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore.create(Project(tmp_path), "card", 1)


def test_run_ids_are_utc_start_and_four_hex() -> None:
    rid = new_run_id(datetime(2026, 11, 30, 15, 12, 0, tzinfo=UTC))
    assert re.fullmatch(r"20261130T151200Z-[0-9a-f]{4}", rid)


def test_create_never_reuses_a_folder(tmp_path: Path) -> None:
    project = Project(tmp_path)
    first = RunStore.create(project, "card", 1, "20261130T151200Z-0000")
    assert first.folder == tmp_path / "results" / "card" / "v1" / "20261130T151200Z-0000"
    with pytest.raises(RunError, match="already exists"):
        RunStore.create(project, "card", 1, "20261130T151200Z-0000")
    assert RunStore.find(project, "card", 1, "20261130T151200Z-0000").folder == first.folder


def test_a_run_started_in_the_same_second_as_another_gets_a_fresh_id(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import secrets

    from benchcard.run import store as storemod

    drawn = iter(["0000", "0000", "0000", "0001"])  # a run draws another's four hex digits, then others
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(drawn))
    started = datetime(2026, 11, 30, 15, 12, 0, tzinfo=UTC)
    first = RunStore.create(Project(tmp_path), "card", 1, started=started)
    second = RunStore.create(Project(tmp_path), "card", 1, started=started)  # stamped after the newest
    assert (first.run_id, second.run_id) == ("20261130T151200Z-0000", "20261130T151201Z-0000")
    # two processes that both looked at the folder before either made its run: the id is drawn again
    monkeypatch.setattr(storemod, "_after_newest", lambda _folder, when: when)
    third = RunStore.create(Project(tmp_path), "card", 1, started=started)
    assert third.run_id == "20261130T151200Z-0001"


def test_the_manifest_is_written_once_and_only_grows(store: RunStore) -> None:
    first = Manifest(run=store.run_id, card="card", version=1, kind="ab", seal_root="sha256:0", cells=2)
    store.write_manifest(first)
    with pytest.raises(RunError, match="never rewritten"):
        store.write_manifest(first)
    store.add_to_manifest({"finished_at": "now", "cells": 2})
    assert store.read_manifest() == msgspec.structs.replace(first, finished_at="now")
    with pytest.raises(RunError, match="'cells'"):
        store.add_to_manifest({"cells": 3})
    assert not list(store.folder.glob("*.tmp"))


def test_a_judged_stretch_is_planned_once_in_order_after_the_first_stretch_s_plan(store: RunStore) -> None:
    store.write_manifest(Manifest(run=store.run_id, card="card", version=1, kind="ab", seal_root="sha256:0",
                                  cells=2))

    def stretch(look: int) -> JudgeStretch:
        return JudgeStretch(look=look, file=f"sealed/judge-requests-{look}.jsonl", judgements=4, seed=look,
                            planned_at="now", requests_digest="sha256:1")

    with pytest.raises(RunError, match="needs the judging plan of the first stretch"):
        store.append_judge_stretch(stretch(2))
    store.add_to_manifest({"judge": {"judgements": 4, "seed": 1}})
    assert store.append_judge_stretch(stretch(2)).judge_stretches == [stretch(2)]
    with pytest.raises(RunError, match="planned once, in order"):
        store.append_judge_stretch(stretch(2))
    assert store.append_judge_stretch(stretch(3)).judge_stretches == [stretch(2), stretch(3)]
    assert store.read_manifest().judge_stretches == [stretch(2), stretch(3)]


def test_fields_the_manifest_type_does_not_know_survive_an_addition(store: RunStore) -> None:
    """A manifest written by a newer benchcard keeps its extra fields when this one closes the run."""
    store.manifest_path.write_text(json.dumps({"run": store.run_id, "card": "card", "version": 1, "kind": "ab",
                                               "seal_root": "sha256:0", "sealed": {"x": "sha256:1"}}))
    store.add_to_manifest({"finished_at": "now"})
    assert json.loads(store.manifest_path.read_text())["sealed"] == {"x": "sha256:1"}
    assert store.read_manifest().finished_at == "now"


def test_the_plan_streams_in_step(store: RunStore) -> None:
    rows = [(AssignmentRow(cell=f"c{i}", variant="v", fixture="f", repetition=0, order=i),
             RequestRow(cell=f"c{i}", provider="p", url="u", body={"n": i, "text": "é"})) for i in range(5)]
    assert store.write_sealed(iter(rows)) == 5
    assert list(store.iter_sealed()) == rows
    assert "é" in store.requests_path.read_text(encoding="utf-8")  # UTF-8 kept as is
    with store.requests_path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"cell": "c9"}) + "\n")
    with pytest.raises(RunError, match="differ in length"):
        list(store.iter_sealed())


def test_each_row_is_on_disk_as_soon_as_it_is_appended(store: RunStore) -> None:
    with store.open_outputs() as writer:
        writer.append(row("c1"))
        assert store.outputs_path.read_bytes().count(b"\n") == 1  # flushed, before close
        writer.append(row("c2", "failed"))
    assert store.done_cells() == {"c1", "c2"}
    assert [(r.cell, r.status) for r in store.iter_outputs()] == [("c1", "ok"), ("c2", "failed")]


def test_a_torn_final_line_is_dropped(store: RunStore) -> None:
    with store.open_outputs() as writer:
        writer.append(row("c1"))
    whole = store.outputs_path.read_bytes()
    store.outputs_path.write_bytes(whole + b'{"cell":"c2","fixture":"f","status":"o')
    assert store.done_cells() == {"c1"}  # reading skips the torn tail
    assert store.repair_outputs() is not None
    assert store.outputs_path.read_bytes() == whole
    assert store.repair_outputs() is None


def test_a_whole_final_row_without_its_newline_is_kept(store: RunStore) -> None:
    """The answer was recorded; dropping it would call that cell a second time."""
    line = json.dumps(msgspec.to_builtins(row("c1"))).encode()
    store.outputs_path.write_bytes(line)
    assert store.done_cells() == {"c1"}
    with store.open_outputs() as writer:  # opening repairs
        writer.append(row("c2"))
    second = json.dumps(msgspec.to_builtins(row("c2")), separators=(",", ":")).encode()
    assert store.outputs_path.read_bytes() == line + b"\n" + second + b"\n"


def test_one_writer_per_run(store: RunStore) -> None:
    with store.open_outputs(), pytest.raises(RunError, match="another benchcard process"):
        store.open_outputs().open()


def test_a_resume_skips_done_cells_by_their_id(store: RunStore) -> None:
    ids = [f"c{i:010x}" for i in range(6)]
    store.write_sealed((AssignmentRow(cell=c, variant="v", fixture="f", repetition=0, order=i),
                      RequestRow(cell=c, provider="p", url="u", body={"n": i})) for i, c in enumerate(ids))
    with store.open_outputs() as writer:
        for c in ids[:4]:
            writer.append(row(c))
    done = store.done_cells()
    assert done == set(ids[:4])
    assert [a.cell for a, _ in store.iter_sealed(skip=done)] == ids[4:]


def test_a_full_disk_mid_run_is_one_line_naming_the_file_and_the_resume(tmp_path: Path, server: FakeServer,
                                                                        key: str) -> None:
    """A disk that fills while cells are written (here a file-size limit of 100 kB, as the kernel enforces one,
    on `benchcard run` in its own process): one line naming outputs.jsonl, what the OS said, and the command
    that continues; the rows written stay, and the resume calls only the rest (the torn row's cell again)."""
    import resource
    import subprocess
    import sys

    server.configure({"default_reply": "red " + "x" * 2000})
    project = ab_project(tmp_path, server.base_url, fixtures=20, repetitions=5)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    done = subprocess.run([sys.executable, "-m", "benchcard", "-C", str(project.root), "run", "colour-ab",
                           "--concurrency", "1"], capture_output=True, text=True, timeout=300, preexec_fn=limited,
                          check=False)
    assert done.returncode == 1, done.stderr
    [folder] = [p for p in project.results_dir.glob("colour-ab/v1/*") if p.is_dir()]
    kept = (folder / "outputs.jsonl").read_bytes().count(b"\n")
    assert 0 < kept < 200
    line = done.stderr.strip().splitlines()[-1]
    assert line == (f"error: results/colour-ab/v1/{folder.name}/outputs.jsonl: a finished cell could not be "
                    "written (File too large: the disk is full or a file-size limit was reached); every row "
                    f"before it is kept. Make room, then: benchcard run colour-ab --resume {folder.name}")
    resumed = bc(project.root, "run", "colour-ab", "--resume", folder.name, "--json")  # the disk has room again
    assert resumed.exit_code == 0, resumed.stderr
    [s] = json.loads(resumed.stdout)["runs"]
    assert s["called"] == 200 - kept and s["counts"]["ok"] == 200 and s["finished"]


def test_a_full_disk_while_planning_leaves_no_half_made_run(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A disk that fills while a run writes its sealed plan (a 50 kB file-size limit, as the kernel enforces one,
    on `benchcard run` in its own process) left a folder with an empty `sealed/` and no manifest: every command
    read past it, and `status` of its id said there was no such run. No call was made from it, so it is removed,
    and the one line says so and what to run; a folder a kill left in planning is named by `status`, and a resume
    plans it again."""
    import resource
    import subprocess
    import sys

    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=50, repetitions=4)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    done = subprocess.run([sys.executable, "-m", "benchcard", "-C", str(project.root), "run", "colour-ab"],
                          capture_output=True, text=True, timeout=300, preexec_fn=limited, check=False)
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"error: results/colour-ab/v1/\S+: the run could not be planned \(File too large: the disk is "
                        r"full or a file-size limit was reached\) writing sealed/(requests|assignment)\.jsonl; nothing "
                        r"was called, and the half-made folder is removed\. Make room, then: benchcard run colour-ab",
                        line), line
    assert not [p for p in project.results_dir.rglob("*") if p.is_file() or p.name.startswith("2")]
    assert server.stats()["calls"] == 0

    # a run killed while planning leaves what it wrote: status names it, and a resume plans it again
    half = project.results_dir / "colour-ab" / "v1" / "20261206T101010Z-0a0a"
    (half / "sealed").mkdir(parents=True)
    (half / "sealed" / "assignment.jsonl").write_text('{"cell": "c0000000000"}\n', encoding="utf-8")
    said = ("results/colour-ab/v1/20261206T101010Z-0a0a is a run stopped while it was planned (no manifest.json: no "
            "call was made from it), which no command reads; `benchcard run colour-ab --resume 20261206T101010Z-0a0a` "
            "plans it again, or delete the folder")
    for name in ("20261206T101010Z-0a0a", "20261206T1010"):  # in this process: only the full disk needed its own
        status = bc(project.root, "status", name)
        assert (status.exit_code, status.stderr) == (1, f"error: {said}\n"), status.stderr
    by_card = bc(project.root, "status", "colour-ab")
    assert by_card.stderr == f"error: colour-ab: the card has no run under results/colour-ab/; {said}\n"
    resumed = bc(project.root, "run", "colour-ab", "--resume", half.name, "--json")
    assert resumed.exit_code == 0, resumed.stderr
    [s] = json.loads(resumed.stdout)["runs"]
    assert s["run"] == half.name and s["counts"]["ok"] == 400 and s["finished"]


def test_the_run_just_made_is_the_newest_even_when_the_clock_went_back(tmp_path: Path, server: FakeServer, key: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A card's runs are ordered by id (their UTC start) and its name stands for the newest. A run made while the
    clock was an hour ahead, then one made after it was set right, got the earlier id: `status CARD` and
    `verdict CARD` went to the older run. A new id is stamped at least a second after the newest in its folder
    (the manifest keeps the real start), so the run just made is the newest; two runs in one second likewise."""
    from datetime import timedelta

    from benchcard.run import runner

    from ..helpers_run import bc, ok, summary

    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    ahead = datetime.now(UTC) + timedelta(hours=1)

    class Ahead(datetime):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return ahead

    monkeypatch.setattr(runner, "datetime", Ahead)
    [first] = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"]
    monkeypatch.setattr(runner, "datetime", datetime)
    made = []
    for _ in range(2):  # the clock set right again, and two runs within one second
        [run] = summary(ok(bc(project, "run", "colour-ab", "--json")))["runs"]
        made.append(run["run"])
    assert first["run"] < made[0] < made[1]
    assert f"{made[1]} · colour-ab v1" in ok(bc(project, "status", "colour-ab")).output
    manifest = json.loads((project.results_dir / "colour-ab" / "v1" / made[0] / "manifest.json").read_text())
    assert manifest["started_at"] < ahead.strftime("%Y-%m-%dT%H:%M:%SZ")  # the real start, on record


def test_a_new_run_id_is_stamped_after_the_newest_in_its_folder(tmp_path: Path) -> None:
    project = Project(tmp_path)
    later = project.run_dir("card", 1, "20261206T120000Z-ffff")
    later.mkdir(parents=True)
    early = datetime(2026, 12, 6, 11, 0, tzinfo=UTC)
    assert RunStore.create(project, "card", 1, started=early).run_id.startswith("20261206T120001Z-")
    assert RunStore.create(project, "card", 2, started=early).run_id.startswith("20261206T110000Z-")  # own folder
    project.run_dir("card", 3, "99991231T235959Z-0000").mkdir(parents=True)  # no second after it: the start
    assert RunStore.create(project, "card", 3, started=early).run_id.startswith("20261206T110000Z-")


def test_a_plan_refused_for_another_reason_than_a_full_disk_does_not_say_make_room(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The line named a full disk's remedy ('Make room') whatever the system said, a refused permission too."""
    import errno

    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=3, repetitions=2)

    def refused(self: RunStore, rows: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", str(self.folder / "sealed" / "requests.jsonl"))

    monkeypatch.setattr(RunStore, "write_sealed", refused)
    line = one_line_error(bc(project.root, "run", "colour-ab"))
    assert re.fullmatch(r"error: results/colour-ab/v1/\S+: the run could not be planned \(Permission denied\) writing "
                        r"sealed/requests\.jsonl; nothing was called, and the half-made folder is removed\. Put that "
                        r"right, then: benchcard run colour-ab", line), line
    assert not [p for p in project.results_dir.rglob("*") if p.is_file() or p.name.startswith("2")]


def test_a_results_folder_not_writable_names_itself_not_the_run_never_made(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    """`run` where results/ may not be written (hostile21, permissions) said `error: …/results/colour-ab/v1/
    20261207T161139Z-2ae2: Permission denied`, naming a folder that is not there; the line names the folder that
    refused, that nothing was called, and the command to run again."""
    server.configure({})  # its counters zeroed: the module's server had the calls of the tests before this one
    project = ab_project(tmp_path / "proj", server.base_url)
    (project.results_dir / "colour-ab" / "v1").mkdir(parents=True)
    shut = project.results_dir / "colour-ab" / "v1"
    shut.chmod(0o555)
    try:
        done = as_a_user("-C", str(project.root), "run", "colour-ab")
    finally:
        shut.chmod(0o755)
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (1, [
        "error: results/colour-ab/v1: a new run's folder could not be made in it (Permission denied); nothing was "
        "called. Put that right, then: benchcard run colour-ab"])
    assert not any(shut.iterdir()) and server.stats()["calls"] == 0
