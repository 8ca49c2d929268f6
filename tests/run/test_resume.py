"""A run killed with SIGKILL at any moment, then `--resume`d, ends with every cell exactly once, and no cell
that had finished is called again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner, Result

import benchcard as benchcard_package
from benchcard._util.hashing import digest
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records.replied import replies_fact, replies_line
from benchcard.records.rows import Manifest
from benchcard.records.runreader import read_manifest
from benchcard.run.store import RunStore
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import one_line_error
from ..helpers_run import (
    ab_project,
    answer_every_held,
    held_after,
    holding,
    only_run,
    read_jsonl,
    run_and_kill,
    runs_of,
)

CONCURRENCY = 4


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def start_and_kill(project: Project, server: FakeServer, kill_when: int, sig: signal.Signals = signal.SIGKILL,
                   background: bool = False, reply_model: str | None = None) -> Path:
    """Start `benchcard run` in a subprocess (`background`: with SIGINT ignored, as `benchcard run … &` in a
    script) and SIGKILL it (or send it `sig`) once `outputs.jsonl` has `kill_when` rows and the next CONCURRENCY
    calls are held (0: its first calls, before any is answered). The server answers `kill_when` calls "red" and
    holds the next CONCURRENCY until the signal is sent, so the run is there whatever the load (before left25,
    inside a window of the server's 20-40 ms answers); calls after those, the resume's, are answered at once."""
    server.configure({"default_reply": "red", "faults": held_after(kill_when, held=CONCURRENCY)}
                     | ({"reply_model": reply_model} if reply_model else {}))

    def ready() -> bool:
        runs = runs_of(project, "colour-ab")
        return bool(runs) and (runs[0] / "manifest.json").is_file() and lines(runs[0] / "outputs.jsonl") >= kill_when \
            and holding(server, CONCURRENCY)

    try:
        run_and_kill(project.root, ["colour-ab", "--json", "--concurrency", str(CONCURRENCY)], ready, sig=sig,
                     background=background, after=server.release)
    finally:
        answer_every_held(server)
    assert len(RunStore(only_run(project, "colour-ab")).done_cells()) >= kill_when
    return only_run(project, "colour-ab")


@pytest.mark.parametrize("kill_when", [0, 30])
def test_a_killed_run_resumes_to_every_cell_exactly_once(tmp_path: Path, server: FakeServer, key: str,
                                                         kill_when: int) -> None:
    project = ab_project(tmp_path, server.base_url, fixtures=40, repetitions=1)  # 80 distinct bodies
    folder = start_and_kill(project, server, kill_when)
    store = RunStore(folder)
    done_at_kill = store.done_cells()
    assert len(done_at_kill) >= kill_when and not (folder / "scores.jsonl").exists()
    assert store.read_manifest().finished_at is None

    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["resumed"] and s["finished"] and s["counts"] == {"ok": 80, "truncated": 0, "failed": 0}
    assert s["called"] == 80 - len(done_at_kill)

    outputs = read_jsonl(folder / "outputs.jsonl")
    cells = [o["cell"] for o in outputs]
    planned = {r["cell"]: digest(r["body"]) for r in read_jsonl(folder / "sealed" / "requests.jsonl")}
    assert sorted(cells) == sorted(planned)  # every cell, each exactly once
    calls = server.stats()["by_request"]
    assert set(calls) == set(planned.values())
    for cell, body in planned.items():
        if cell in done_at_kill:
            assert calls[body] == 1, "a cell that had finished was called again"
    # only the calls in flight at the kill (answered by the server, never recorded) were made twice
    assert sum(n - 1 for n in calls.values()) <= CONCURRENCY
    manifest = store.read_manifest()
    assert msgspec.to_builtins(manifest.counts) == s["counts"]
    assert manifest.outputs_digest is not None and manifest.outputs_digest.startswith("sha256:")


def test_a_run_never_ready_fails_the_test_rather_than_being_killed_anywhere(tmp_path: Path, server: FakeServer,
                                                                             key: str) -> None:
    """run_and_kill's timeout bounds a stuck run: a run not yet at the point a test waits for was SIGKILLed when it
    ran out, as if it were there, and the test read a run stopped anywhere (test_looking's kill between looks read
    a manifest with no `looks` at load 10). The run's first call is held, so it is never ready and never ends."""
    server.configure({"default_reply": "red", "faults": [{"kind": "500", "times": 1, "total": 1, "held": True}]})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    try:
        with pytest.raises(AssertionError, match=r"^gave up waiting 0\.5 s for the run to be ready to be killed"):
            run_and_kill(project.root, ["colour-ab", "--concurrency", "1"], lambda: False, timeout=0.5)
    finally:
        server.release()


def test_a_torn_last_line_is_tolerated(tmp_path: Path, server: FakeServer, key: str) -> None:
    project = ab_project(tmp_path, server.base_url, fixtures=20, repetitions=1)
    folder = start_and_kill(project, server, 10)
    with (folder / "outputs.jsonl").open("ab") as fh:  # a kill in the middle of a write
        fh.write(b'{"cell":"cdeadbeef00","fixture":"item-000","status":"ok","te')
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--json")
    assert result.exit_code == 0, result.output
    cells = [o["cell"] for o in read_jsonl(folder / "outputs.jsonl")]
    assert len(cells) == len(set(cells)) == 40 and "cdeadbeef00" not in cells


def test_a_run_killed_after_its_last_call_is_finished_without_calls(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    assert bc(project, "run", "colour-ab", "--json").exit_code == 0
    folder = only_run(project, "colour-ab")
    manifest = json.loads((folder / "manifest.json").read_text())
    finished = {k: manifest.pop(k) for k in ("finished_at", "outputs_digest", "counts")}
    (folder / "manifest.json").write_text(json.dumps(manifest))  # as if killed before the end was written
    (folder / "scores.jsonl").unlink()
    server.configure({"default_reply": "red"})
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--json")
    assert result.exit_code == 0, result.output
    assert server.stats()["calls"] == 0
    again = json.loads((folder / "manifest.json").read_text())
    assert again["outputs_digest"] == finished["outputs_digest"] and again["counts"] == finished["counts"]
    assert (folder / "scores.jsonl").is_file()
    # resuming a finished run changes nothing and calls nothing
    before = (folder / "manifest.json").read_bytes()
    result = bc(project, "run", "colour-ab", "--resume", str(folder), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["runs"][0]["called"] == 0
    assert (folder / "manifest.json").read_bytes() == before and server.stats()["calls"] == 0


def test_a_run_killed_while_planning_is_planned_again(tmp_path: Path, server: FakeServer, key: str) -> None:
    """No call is made before the manifest exists, so a folder without one is planned afresh."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    store = RunStore.create(project, "colour-ab", 1)
    (store.folder / "sealed").mkdir()
    (store.folder / "sealed" / "assignment.jsonl.tmp").write_text('{"cell": "c1", "vari')
    result = bc(project, "run", "colour-ab", "--resume", store.run_id, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["counts"]["ok"] == 4
    assert len(read_jsonl(store.assignment_path)) == 4 and store.read_manifest().run == store.run_id


def test_a_resume_keeps_its_rig_and_its_seal(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    assert bc(project, "run", "colour-ab", "--json").exit_code == 0
    folder = only_run(project, "colour-ab")
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--model", "other")
    assert result.exit_code == 1 and "--model test/model" in result.stderr
    result = bc(project, "run", "colour-ab", "--resume", "20200101T000000Z-0000")
    assert result.exit_code == 1 and "no such run" in result.stderr
    card = project.card_path("colour-ab")
    card.write_text(card.read_text().replace("temperature: 0.7", "temperature: 0.8"))
    result = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert result.exit_code == 1 and "cards/colour-ab.yaml" in result.stderr


@pytest.mark.parametrize(("first", "then", "begun_before_rows", "models", "rows"), [
    (None, "other-model", False, [{"test/model": 2}, {"other-model": 2}], [{"rows": 2, "uncounted": 0}] * 2),
    ("other-model", None, True, [{"other-model": 2}, {"test/model": 2}], [{"rows": 2, "uncounted": 2}]),
])
def test_a_resumed_runs_replies_are_counted_over_every_pass(
        tmp_path: Path, server: FakeServer, key: str, first: str | None, then: str | None, begun_before_rows: bool,
        models: list[dict[str, int]], rows: list[dict[str, int]]) -> None:
    """A pass that stopped (interrupted, every reply naming the model asked) is counted on record, so the resume
    that meets another model says how many of all the replies did, not of its own pass's only. A run begun between
    796acb3 and 3980c72 kept a pass's names (only when one was another model) and no rows: the pass that resumes
    it records every row before it as uncounted (`rows`), the named ones too, and read those are known: before,
    the same 2 replies were in the warning and again said to be of an unknown model."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    server.configure({"default_reply": "red", **({"reply_model": first} if first else {})})
    project = ab_project(tmp_path, server.base_url, fixtures=2, repetitions=1)
    [stopped] = run(project, "colour-ab", RunOptions(progress=False), stop_after=2)
    assert not stopped.finished
    folder = only_run(project, "colour-ab")
    if begun_before_rows:  # as those versions left it: the pass's names, no rows
        raw = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        del raw["replied_rows"]
        (folder / "manifest.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    server.configure({"default_reply": "red", **({"reply_model": then} if then else {})})
    result = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert result.exit_code == 0, result.output
    said = "warning: 2 of 4 replies named another model than test/model, the one asked: other-model (2), test/model (2)"
    assert f"  {said}\n" in result.output and "not counted" not in result.output
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["replied_models"], manifest["replied_rows"]) == (models, rows)
    assert f"  {said}\n" in bc(project, "status", folder.name).output


def test_a_resume_after_a_pass_killed_outright_says_its_replies_models_are_unknown(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """SIGKILL leaves no count of the killed pass's replies (as a run begun before benchcard counted them): the
    resume counts its own and says plainly, in run, status and the verdict, that the earlier rows' are unknown."""
    project = ab_project(tmp_path, server.base_url, fixtures=40, repetitions=1)
    folder = start_and_kill(project, server, 30)
    before = lines(folder / "outputs.jsonl")
    assert "replied_models" not in json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    server.configure({"default_reply": "red", "reply_model": "other-model"})
    result = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert result.exit_code == 0, result.output
    unknown = (f"{before} output(s) were recorded by a pass whose replies' models were not counted (begun by an "
               "older benchcard, or killed outright): which model answered them is unknown")
    said = (f"warning: {80 - before} of {80 - before} replies named another model than test/model, the one asked: "
            f"other-model ({80 - before}); {unknown}")
    assert f"  {said}\n" in result.output
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["replied_rows"] == [
        {"rows": 80 - before, "uncounted": before}]
    assert f"  {said}\n" in bc(project, "status", folder.name).output
    verdict = bc(project, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    assert unknown in verdict.output



@pytest.mark.parametrize(("sig", "background"), [(signal.SIGINT, False), (signal.SIGTERM, False),
                                                  (signal.SIGTERM, True), (signal.SIGHUP, False)],
                         ids=["ctrl-c", "sigterm", "sigterm-in-the-background", "sighup"])
def test_a_run_interrupted_then_resumed_counts_every_reply_once_as_a_run_never_stopped(
        tmp_path: Path, server: FakeServer, key: str, sig: signal.Signals, background: bool) -> None:
    """Ctrl-C (SIGINT) mid-run: the pass writes the replies it counted as it stops, the resume adds its own, and
    nothing is counted twice: the names, their counts and the rows they cover are a run never stopped's. SIGTERM
    (`kill`, `timeout`, a cancelled CI job) is taken as Ctrl-C: it ended the run on the spot, as SIGKILL does, and
    left the pass's replies uncounted (benchmarks/kill_sweep.py). So it did, until 2026-12-07, in a run started
    in the background by a shell without job control (SIGINT ignored: `benchcard run … &` in a script, nohup, a
    CI step), the very runs `timeout` and a cancelled job stop: 5 of 12 SIGTERMs mid-pass at the sweep's moments.
    SIGHUP (the terminal closed, an ssh session dropped) ended it on the spot too (hostile21), and is taken so."""
    server.configure({"default_reply": "red", "latency_ms": 40, "reply_model": "test/model-2024-08-06"})
    whole = ab_project(tmp_path / "whole", server.base_url, fixtures=40, repetitions=1)
    assert bc(whole, "run", "colour-ab").exit_code == 0
    project = ab_project(tmp_path / "cut", server.base_url, fixtures=40, repetitions=1)
    folder = start_and_kill(project, server, 30, sig, background, reply_model="test/model-2024-08-06")
    stopped = read_manifest(folder)
    assert stopped.finished_at is None and stopped.replied_models  # the stopped pass wrote what it counted
    resumed = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output

    def counted(manifest: Manifest) -> tuple[dict[str, int], int, int]:
        names: dict[str, int] = {}
        for counts in manifest.replied_models or []:
            for name, n in counts.items():
                names[name] = names.get(name, 0) + n
        rows = manifest.replied_rows or []
        return names, sum(r.rows for r in rows), sum(r.uncounted for r in rows)

    cut, never = read_manifest(folder), read_manifest(only_run(whole, "colour-ab"))
    assert len(cut.replied_models or []) == 2
    assert counted(cut) == counted(never) == ({"test/model-2024-08-06": 80}, 80, 0) and lines(
        folder / "outputs.jsonl") == 80
    assert replies_fact(cut) == replies_fact(never) == "test/model-2024-08-06 (80)"
    assert replies_line(cut) == replies_line(never) == ""


def test_a_run_started_in_the_background_is_not_stopped_by_ctrl_c(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    """A shell without job control starts `benchcard run … &` with SIGINT ignored: the terminal's Ctrl-C is not
    for it. benchcard blocks SIGINT instead, so that SIGTERM can stop such a run as Ctrl-C would (above): a SIGINT
    sent mid-run is still not taken, and the run ends on its own with every cell."""
    project = ab_project(tmp_path, server.base_url, fixtures=40, repetitions=1)
    folder = start_and_kill(project, server, 30, signal.SIGINT, background=True)
    manifest = read_manifest(folder)
    assert manifest.finished_at is not None and lines(folder / "outputs.jsonl") == 80
    assert manifest.replied_rows is not None and [msgspec.to_builtins(p) for p in manifest.replied_rows] == [
        {"rows": 80, "uncounted": 0}]


def test_a_run_started_under_nohup_is_not_stopped_by_a_hangup(tmp_path: Path, server: FakeServer, key: str) -> None:
    """`nohup benchcard run …` asks that a closed terminal leave the run going: a SIGHUP ignored stays ignored,
    and the run ends on its own with every cell, scored."""
    project = ab_project(tmp_path, server.base_url, fixtures=40, repetitions=1)
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup starts it (the child inherits the ignoring)
    try:
        folder = start_and_kill(project, server, 30, signal.SIGHUP)
    finally:
        signal.signal(signal.SIGHUP, before)
    assert read_manifest(folder).finished_at is not None and lines(folder / "scores.jsonl") == 80


_TWO_CTRL_CS = """\
import os, signal, sys
from benchcard.run.store import OutputWriter, RunStore
append, record = OutputWriter.append, RunStore.append_replies
def appended(self, row):  # the first Ctrl-C as the 30th row is written
    append(self, row)
    if self.written == 30:
        os.kill(os.getpid(), signal.SIGINT)
def recorded(self, *args, **kwargs):  # the second as the stopping pass records its replies
    os.kill(os.getpid(), signal.SIGINT)
    return record(self, *args, **kwargs)
OutputWriter.append, RunStore.append_replies = appended, recorded
from benchcard.cli import main
sys.argv = ["benchcard", *sys.argv[1:]]
main()
"""


def test_a_second_ctrl_c_as_the_pass_records_its_replies_waits_for_the_record(tmp_path: Path, server: FakeServer,
                                                                              key: str) -> None:
    """Ctrl-C twice (an impatient hand, or a CI runner's SIGINT then SIGTERM): the second is asyncio's hard stop,
    a KeyboardInterrupt wherever the process is. Arriving as the stopping pass writes its record, it lost the
    record, and the resume said those replies' models were unknown; the record now finishes first."""
    server.configure({"default_reply": "red", "latency_ms": 40})
    project = ab_project(tmp_path, server.base_url, fixtures=40, repetitions=1)
    src = str(Path(benchcard_package.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal
    try:
        done = subprocess.run([sys.executable, "-c", _TWO_CTRL_CS, "-C", str(project.root), "run", "colour-ab",
                               "--concurrency", str(CONCURRENCY)], env=env, capture_output=True, text=True,
                              check=False, timeout=60)
    finally:
        signal.signal(signal.SIGINT, before)
    folder = only_run(project, "colour-ab")
    assert done.returncode == 1 and "interrupted; every finished cell is recorded" in done.stderr, done.stderr
    rows = lines(folder / "outputs.jsonl")
    assert 30 <= rows < 80
    stopped = read_manifest(folder)
    assert stopped.replied_models == [{"test/model": rows}] and stopped.replied_rows is not None
    assert [msgspec.to_builtins(p) for p in stopped.replied_rows] == [{"rows": rows, "uncounted": 0}]


def test_a_run_of_a_version_the_card_moved_on_from_says_so_and_what_to_do(tmp_path: Path, server: FakeServer,
                                                                           key: str) -> None:
    """An interrupted v1 run, then cards/colour-ab.yaml edited to v2: `run --resume` said "no such run of
    colour-ab v2", and `status` and `verdict` advised that very resume. Each now says in one line that the run is
    v1's, that the card's text is no longer v1's, and what to do: put the card back as v1 was sealed, or start v2."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=3)
    [stopped] = run(project, "colour-ab", RunOptions(progress=False), stop_after=2)
    assert not stopped.finished
    folder = only_run(project, "colour-ab")
    path = project.root / "cards" / "colour-ab.yaml"
    v1 = path.read_text(encoding="utf-8")
    path.write_text(v1.replace("version: 1\n", "version: 2\n", 1).replace(
        "history:\n", "history:\n  - {version: 2, note: A second version.}\n"), encoding="utf-8")
    said = (f"run {folder.name} is of colour-ab v1, but cards/colour-ab.yaml is now v2, whose text is not the one v1 "
            "was sealed with; a run is resumed, judged and replicated only by the version that produced it: to resume "
            "it, put back cards/colour-ab.yaml as v1 was sealed (its seal, keys/colour-ab/v1.seal.json, checks it), "
            "or start a run of v2 with `benchcard run colour-ab`")
    for named in (folder.name, str(folder)):
        assert one_line_error(bc(project, "run", "colour-ab", "--resume", named)) == f"error: {said}"
    status = bc(project, "status", folder.name, "--no-poll")
    assert status.exit_code == 0 and f"2/36 cells recorded, not finished; {said}" in status.output, status.output
    verdict = one_line_error(bc(project, "verdict", folder.name))
    assert verdict.endswith(f"a verdict waits for the run to finish. R{said[1:]}"), verdict
    assert one_line_error(bc(project, "replicate", "--resume", folder.name)).endswith(
        f"not a replication (its manifest names no original); {said}")
    path.write_text(v1, encoding="utf-8")  # put back as v1 was sealed: the resume goes on
    resumed = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output


@pytest.mark.parametrize("how", ["resume", "retry"])
def test_answers_removed_from_a_stopped_run_are_never_called_again(tmp_path: Path, server: FakeServer, key: str,
                                                                   how: str) -> None:
    """Two answered rows deleted from a stopped run's outputs.jsonl were called again by `--resume` (a re-roll of
    answers one did not like), and the run closed, was judged and verified with 24 rows where 26 answers had come:
    no digest covers an unfinished run's outputs, but the manifest's `replied_rows` counts what each pass appended
    (hostile audit, round 24). The resume (and a retry of failed cells) refuses before any call."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    server.configure({"replies": [{"match": "Please.", "reply": "red"}], "default_reply": "blue"})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=2)
    [stopped] = run(project, "colour-ab", RunOptions(progress=False), stop_after=8)
    assert not stopped.finished
    folder = only_run(project, "colour-ab")
    outputs = folder / "outputs.jsonl"
    kept = outputs.read_bytes().splitlines(keepends=True)
    outputs.write_bytes(b"".join(kept[2:]))
    calls = server.stats(by_request=False)["calls"]
    args = ["--resume", folder.name] + (["--retry-failed"] if how == "retry" else [])
    assert one_line_error(bc(project, "run", "colour-ab", *args)) == (
        f"error: results/colour-ab/v1/{folder.name}/outputs.jsonl holds 6 rows, but the passes that wrote it "
        "appended 8 (manifest.json, replied_rows): rows were removed since, and their cells would be called again, "
        "replacing answers already given. Put the file back as it was, or set the run aside (`benchcard set-aside "
        f"{folder.name} --why …`) and start a new one")
    assert server.stats(by_request=False)["calls"] == calls and lines(outputs) == 6
    outputs.write_bytes(b"".join(kept))
    assert bc(project, "run", "colour-ab", "--resume", folder.name).exit_code == 0
    assert lines(outputs) == 24


@pytest.mark.parametrize("added", ["a second answer", "another run's row"])
@pytest.mark.parametrize("how", ["resume", "retry"])
def test_a_row_a_stopped_run_did_not_write_is_refused_before_any_call(tmp_path: Path, server: FakeServer, key: str,
                                                                      added: str, how: str) -> None:
    """A row added to a stopped run's outputs.jsonl by hand (a second answer of a cell already answered, or a row
    of another run's cell pasted in) was taken: `12 cells: 13 ok`, the rest called, the run scored and closed with
    its digest over that row, and every verdict then refused it naming scores.jsonl (hostile audit, 2026-12-08).
    The resume (and a retry of failed cells) refuses before any call, naming the line; status says so."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    server.configure({"replies": [{"match": "Please.", "reply": "red"}], "default_reply": "blue"})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=2)
    run(project, "colour-ab", RunOptions(progress=False), stop_after=8)
    folder = only_run(project, "colour-ab")
    outputs = folder / "outputs.jsonl"
    kept = outputs.read_bytes()
    first = json.loads(kept.splitlines()[0])
    row = {**first, "text": "a better answer"} if added == "a second answer" else {**first, "cell": "c0123456789"}
    outputs.write_bytes(kept + json.dumps(row, separators=(",", ":")).encode() + b"\n")
    calls = server.stats(by_request=False)["calls"]
    what = (f"gives cell {first['cell']} a second outcome (its first is line 1), which no retry of its failed call "
            "reopened" if added == "a second answer" else
            "gives an outcome of cell 'c0123456789', which the run's plan (sealed/assignment.jsonl) does not hold")
    args = ["--resume", folder.name] + (["--retry-failed"] if how == "retry" else [])
    assert one_line_error(bc(project, "run", "colour-ab", *args)) == (
        f"error: results/colour-ab/v1/{folder.name}/outputs.jsonl: line 9 {what}: a row this run did not write. Put "
        f"the file back as it was, or set the run aside (`benchcard set-aside {folder.name} --why …`) and start a "
        "new one")
    assert server.stats(by_request=False)["calls"] == calls and lines(outputs) == 9
    assert not read_manifest(folder).finished_at
    status = bc(project, "status", folder.name)
    assert status.exit_code == 0
    assert f"9/24 cells recorded, not finished; outputs.jsonl line 9 {what}: " in status.stdout
    outputs.write_bytes(kept)
    assert bc(project, "run", "colour-ab", "--resume", folder.name).exit_code == 0
    assert lines(outputs) == 24
