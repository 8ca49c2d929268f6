"""The batch driver: the grid cut into batches under the vendor's (or the config's) limits, submitted, polled and
collected; a --retry-failed sends only the failed cells, in a new batch."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchcard.errors import RunError
from benchcard.project import Project
from benchcard.records.rows import RequestRow, dumps_line
from benchcard.run.batch._driver import WRAPPER_BYTES, cell_of, chunk_ids, plan_chunks, sealed_bodies
from benchcard.run.batch._journal import Journal
from benchcard.run.batch._vendors import OpenAIBatches
from benchcard.run.providers.base import ProviderConfig
from benchcard.run.providers.openai import OpenAIProvider
from benchcard.run.store import RunStore
from benchcard.testing.fakeserver import FakeServer

from ...helpers_batch import FAST, journal, project_for
from ...helpers_run import KEY_ENV, ab_project, bc, next_second, only_run, read_jsonl


def test_a_large_grid_is_split_under_the_limits(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    extra = "    batch_limits: {requests: 7}\n"
    project = ab_project(tmp_path, fixtures=10, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    base_url: "
                                             f"'{server.base_url}'\n    api_key_env: {KEY_ENV}\n{extra}")
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    [planned] = [e for e in journal(folder) if e["event"] == "planned"]
    assert [c["cells"] for c in planned["chunks"]] == [7, 7, 6]
    assert server.stats()["batch"]["batches"] == 3 and server.stats()["batch"]["distinct_submitted"] == 20
    assert len({o["batch"] for o in read_jsonl(folder / "outputs.jsonl")}) == 3


def test_retry_failed_sends_the_failed_cells_in_a_new_batch(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "faults": [{"match": "number 1", "kind": "500"}]})
    project = project_for(tmp_path, server, "anthropic", fixtures=3)
    assert bc(project, "run", "colour-ab", "--batch", *FAST).exit_code == 0
    folder = only_run(project, "colour-ab")
    server.configure({"default_reply": "red"})
    result = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["counts"] == {"ok": 6, "truncated": 0, "failed": 0}
    rows = read_jsonl(folder / "outputs.jsonl")
    assert [r["status"] for r in rows].count("failed") == 2 and len(rows) == 8  # the failed attempts stay
    assert [e["event"] for e in journal(folder)].count("added") == 1
    assert server.stats()["batch"]["submitted"] == 2  # only the two failed cells went again


def test_a_grid_is_also_split_by_size_and_a_reported_cost_is_kept(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    server.configure({"replies": [{"match": "", "reply": "red", "cost": 0.25}]})
    project = ab_project(tmp_path, fixtures=5, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    base_url: "
                                             f"'{server.base_url}'\n    api_key_env: {KEY_ENV}\n"
                                             "    batch_limits: {bytes: 1200}\n")
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    [planned] = [e for e in journal(folder) if e["event"] == "planned"]
    chunks = planned["chunks"]
    assert len(chunks) > 1 and sum(c["cells"] for c in chunks) == 10
    assert all(c["bytes"] <= 1200 - 32 for c in chunks)  # each file under the limit, with room for the wrapper
    assert all(o["cost"] == 0.25 for o in read_jsonl(folder / "outputs.jsonl"))  # the answer's own cost


# ------------------------------------------------------------------------------------- the plan of batches


def sealed_store(folder: Path, bodies: Mapping[str, dict[str, Any]]) -> RunStore:
    """A run folder whose sealed/requests.jsonl holds these bodies, written as the store writes them."""
    (folder / "sealed").mkdir(parents=True)
    store = RunStore(folder)
    with open(store.requests_path, "wb") as fh:
        for cell, body in bodies.items():
            fh.write(dumps_line(RequestRow(cell=cell, provider="fake", url="http://x/v1", body=body)))
    return store


def vendor(requests: int | None = None, size: int | None = None) -> OpenAIBatches:
    limits = {k: v for k, v in (("requests", requests), ("bytes", size)) if v is not None}
    cfg = ProviderConfig("fake", "openai", "http://x/v1", None, batch_limits=limits)
    return OpenAIBatches(OpenAIProvider(cfg, httpx.AsyncClient()), 1, (0.0, 0.0))


BODIES = {f"c{i:010d}": {"model": "m", "messages": [{"role": "user", "content": f"item {i} \"q\" ü"}]}
          for i in range(5)}


def test_sealed_bodies_are_the_exact_bytes_of_the_seal(tmp_path: Path) -> None:
    store = sealed_store(tmp_path / "run", BODIES)
    got = list(sealed_bodies(store))
    assert [c for c, _ in got] == list(BODIES)
    assert all(raw == dumps_line(BODIES[c])[:-1] for c, raw in got)
    # a row of another shape (body not last) is decoded, its body encoded as the row writer does
    with open(store.requests_path, "ab") as fh:
        fh.write(json.dumps({"body": {"model": "m"}, "cell": "c9999999999"}).encode() + b"\n")
    assert list(sealed_bodies(store))[-1] == ("c9999999999", b'{"model":"m"}')
    with open(store.requests_path, "ab") as fh:
        fh.write(b"{torn\n")
    with pytest.raises(RunError) as info:
        list(sealed_bodies(store))
    assert str(info.value) == f"{store.requests_path}: line 7 is not JSON"


def test_the_plan_is_cut_by_requests_and_recorded_before_any_upload(tmp_path: Path) -> None:
    store = sealed_store(tmp_path / "run", BODIES)
    j = Journal(store.folder)
    chunks = plan_chunks(store, vendor(requests=2), j)
    assert [(c.chunk, c.cells, c.file) for c in chunks] == [
        (0, 2, "batch/chunk-000.jsonl"), (1, 2, "batch/chunk-001.jsonl"), (2, 1, "batch/chunk-002.jsonl")]
    assert [cell_of(i, c.tag) for c in chunks for i in chunk_ids(store.folder / c.file)] == list(BODIES)
    [tag] = {c.tag for c in chunks}  # each custom_id is the cell and this plan's own random tag
    assert len(tag) == 16 and chunk_ids(store.folder / chunks[0].file) == [f"c0000000000-{tag}", f"c0000000001-{tag}"]
    for c in chunks:
        data = (store.folder / c.file).read_bytes()
        assert c.bytes == len(data) and c.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    [event] = read_jsonl(j.path)  # as written
    assert event["event"] == "planned" and event["limits"] == {"requests": 2, "bytes": 200_000_000}
    assert event["tag"] == tag and [c.tag for c in j.chunks()] == [tag] * 3
    assert [c.cells for c in j.chunks()] == [2, 2, 1]


def test_a_retry_plans_only_its_cells_numbered_after_the_others(tmp_path: Path) -> None:
    store = sealed_store(tmp_path / "run", BODIES)
    j = Journal(store.folder)
    plan_chunks(store, vendor(), j)
    added = plan_chunks(store, vendor(), j, only={"c0000000001", "c0000000003"}, first=1)
    assert [(c.chunk, c.file) for c in added] == [(1, "batch/chunk-001.jsonl")]
    assert [cell_of(i, added[0].tag) for i in chunk_ids(store.folder / added[0].file)] == ["c0000000001",
                                                                                             "c0000000003"]
    assert added[0].tag != j.chunks()[0].tag  # a new plan, a new tag
    assert [e["event"] for e in read_jsonl(j.path)] == ["planned", "added"] and len(j.chunks()) == 2


def test_a_request_larger_than_a_batch_is_refused_and_leaves_no_half_chunk(tmp_path: Path) -> None:
    bodies = {**BODIES, "c0000000003": {"model": "m", "messages": [{"role": "user", "content": "x" * 2000}]}}
    store = sealed_store(tmp_path / "run", bodies)
    big = len(vendor().line("c0000000003-" + "0" * 16, dumps_line(bodies["c0000000003"])[:-1]))  # id and tag
    with pytest.raises(RunError) as info:
        plan_chunks(store, vendor(size=1000 + WRAPPER_BYTES), Journal(store.folder))
    assert str(info.value) == (f"cell c0000000003: its request is {big:,} bytes, more than a openai batch may "
                               "hold (1,000); run it interactively")
    assert sorted(p.name for p in (store.folder / "batch").iterdir()) == []  # no chunk file, no journal


def test_chunk_ids_reads_ids_whatever_their_shape(tmp_path: Path) -> None:
    path = tmp_path / "chunk-000.jsonl"
    path.write_bytes(b'{"custom_id":"c0000000001-ab12","params":{}}\n{"params":{},"custom_id":"other-id"}\n')
    assert chunk_ids(path) == ["c0000000001-ab12", "other-id"]
    assert cell_of("c0000000001-ab12", "ab12") == "c0000000001" and cell_of("c0000000001", "") == "c0000000001"
    assert cell_of("c0000000001-ab12", "ffff") == "c0000000001-ab12"  # another plan's id is no cell of this one


# ------------------------------------------------------------------------------- result files not to be trusted


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_result_file_answering_each_cell_twice_decides_none_of_them(tmp_path: Path, server: FakeServer, key: str,
                                                                      vendor: str) -> None:
    """A cell answered twice is recorded failed (neither answer taken), with one line naming the file, the line
    and the custom_id, printed and kept; `--retry-failed` then asks those cells again."""
    server.configure({"default_reply": "red", "batch": {"bad_results": "duplicate"}})
    project = project_for(tmp_path, server, vendor, fixtures=3)
    result = bc(project, "run", "colour-ab", "--batch", *FAST)
    assert result.exit_code == 0, result.output
    folder = only_run(project, "colour-ab")
    rows = read_jsonl(folder / "outputs.jsonl")
    assert len(rows) == 6 and {r["status"] for r in rows} == {"failed"}
    [planned] = [e for e in journal(folder) if e["event"] == "planned"]
    tag = planned["tag"]
    shown = project.relative(folder)
    for row in rows:
        cell = row["cell"]
        line = re.fullmatch(rf"batch/chunk-000\.results-0\.jsonl: line (\d+): custom_id '{cell}-{tag}' is answered "
                            rf"2 times \(first at line (\d+)\); cell {cell} is recorded failed, neither answer taken",
                            str(row["error"]))
        assert line is not None, row["error"]
        assert int(line[1]) == int(line[2]) + 6  # the file holds every line twice
        assert f"warning: {shown}/{row['error']}" in result.output or cell not in result.output
    assert result.output.count("warning: ") == 6  # five lines shown, then how many more
    assert "warning: and 1 more result lines refused" in result.output
    [collected] = [e for e in journal(folder) if e["event"] == "collected"]
    assert collected["refused_count"] == 6 and len(collected["refused"]) == 6
    status = bc(project, "status", folder.name)
    assert status.output.count(f"  refused: {shown}/batch/chunk-000.results-0.jsonl: line ") == 6

    server.configure({"default_reply": "red"})
    again = bc(project, "run", "colour-ab", "--resume", folder.name, "--retry-failed", *FAST, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["runs"][0]["counts"] == {"ok": 6, "truncated": 0, "failed": 0}


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_compressed_result_file_cut_off_at_a_line_end_is_downloaded_again(tmp_path: Path, server: FakeServer,
                                                                          key: str, vendor: str) -> None:
    """Hostile audit (round 13e): a gzip result file whose compressed stream never ended (cut after a flush, at a
    line's end: no last line, no trailer) was inflated without a word and taken as whole, and the cell of its last
    line, answered and billed, was recorded failed, `no result for this cell`. Now the download is retried, and
    every cell is collected from the whole file."""
    server.configure({"default_reply": "red", "batch": {"bad_results": "cut_gzip"}})
    project = project_for(tmp_path, server, vendor, fixtures=3)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["counts"] == {"ok": 6, "truncated": 0, "failed": 0}, read_jsonl(only_run(project, "colour-ab")
                                                                             / "outputs.jsonl")
    assert server.stats()["batch"]["submitted"] == 6  # nothing was sent (and paid) twice


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_result_line_for_an_id_this_batch_never_sent_is_refused_by_name(tmp_path: Path, server: FakeServer,
                                                                           key: str, vendor: str) -> None:
    server.configure({"default_reply": "red", "batch": {"bad_results": "unknown"}})
    project = project_for(tmp_path, server, vendor, fixtures=3)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["counts"] == {"ok": 6, "truncated": 0, "failed": 0}  # every cell of ours answered once
    folder = only_run(project, "colour-ab")
    batch = read_jsonl(folder / "outputs.jsonl")[0]["batch"]
    assert s["warnings"] == [f"batch/chunk-000.results-0.jsonl: line 7: custom_id 'never-sent' is not a request of "
                             f"batch {batch} (chunk 0); the line is not used"]


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_results_out_of_order_are_matched_by_id_and_a_cell_without_a_line_fails(tmp_path: Path, server: FakeServer,
                                                                                key: str, vendor: str) -> None:
    """The vendors' docs: results may come in any order, matched by custom_id. A request whose line never comes is
    failed with that cause, never taken for an answer nor left out of the counts."""
    words = ["zero", "one", "two"]
    server.configure({"replies": [{"match": f"number {i}", "reply": w} for i, w in enumerate(words)],
                      "batch": {"bad_results": "shuffled"}})
    project = project_for(tmp_path, server, vendor, fixtures=3)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["counts"] == {"ok": 6, "truncated": 0, "failed": 0}
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    assert sorted((o["fixture"], o["text"]) for o in rows) == sorted(
        (f"item-00{i}", w) for i, w in enumerate(words) for _ in range(2))
    server.configure({"default_reply": "red", "batch": {"bad_results": "missing"}})
    next_second()
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["counts"] == {"ok": 5, "truncated": 0, "failed": 1}
    [lost] = [o for o in read_jsonl(project.root / s["folder"] / "outputs.jsonl") if o["status"] == "failed"]
    ended = " completed" if vendor == "openai" else ""  # was "(it ended ended)" for Anthropic's `ended`
    assert lost["error"] == f"no result for this cell in batch {lost['batch']} (it ended{ended})"


# ------------------------------------------------------------------------------ control answers not to be trusted


def _said(result: Any, status: bool) -> str:
    """The one line a run stops with (exit 1), or that `status` notes of a poll it could not make (exit 0)."""
    if status:
        assert result.exit_code == 0, result.output
        [line] = [x.strip() for x in result.output.splitlines() if x.strip().startswith("note: could not poll: ")]
        return str(line).removeprefix("note: could not poll: ")
    assert result.exit_code == 1, result.output
    return str(result.stderr.splitlines()[-1]).removeprefix("error: ")


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_trickled_poll_cannot_hold_status_nor_the_run(tmp_path: Path, server: FakeServer, key: str, vendor: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit: a poll's answer was read with the client's per-read timeout only, so a vendor sending it a
    byte every 0.2 s held `status` and `run --batch` for as long as it liked (a minute a poll here). A control
    call is now waited CONTROL_WAIT_S in all (1 s here, 120 s in use), then given up as any failed call is."""
    from benchcard.run.batch import _vendors

    monkeypatch.setattr(_vendors, "CONTROL_WAIT_S", 1.0, raising=False)
    server.configure({"default_reply": "red", "batch": {"bad_poll": "trickled"}})
    project = project_for(tmp_path, server, vendor)
    # two attempts (four by default) show the retry cut as well: `status` makes its own three
    for args in (("run", "colour-ab", "--batch", *FAST, "--attempts", "2"), ("status", "RUN"),
                 ("run", "colour-ab", "--resume", "RUN", "--attempts", "2")):
        result = bc(project, *(only_run(project, "colour-ab").name if a == "RUN" else a for a in args))
        last = _said(result, status=args[0] == "status")  # the wait cut, no clock: an answer in time goes on
        assert re.fullmatch(r"GET http://127\.0\.0\.1:\d+/v1/(messages/)?batches/\w+: no whole answer within "
                            r"1 s \(a control call is waited 1 s in all, and 1 s more for each 100,000 bytes it "
                            r"sends or receives\) \(gave up after " + ("3" if args[0] == "status" else "2")
                            + r" attempts\); nothing is lost, resume the run later.*", last), last


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_trickled_download_is_cut_at_its_deadline_and_the_run_resumes(tmp_path: Path, server: FakeServer, key: str,
                                                                         vendor: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A result file is downloaded under the control calls' deadline (CONTROL_WAIT_S in all, 1 s here and 120 s in
    use, and 1 s more for each MIN_RATE bytes received), which only polls were tested against. The second chunk's
    file comes 16 bytes every 0.1 s, never idle long enough for the client's per-read timeout: each attempt is cut
    at 1 s and the run ends in one line; the first chunk's cells, recorded before, stay as they were and no part
    file is left. `--resume` downloads the file whole (the vendor no longer trickles) and records the rest, each
    cell once, no request submitted twice."""
    from benchcard.run.batch import _vendors

    monkeypatch.setattr(_vendors, "CONTROL_WAIT_S", 1.0, raising=False)
    server.configure({"default_reply": "red", "batch": {"trickle_after": 1, "trickle_times": 2}})
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: {vendor}\n    base_url: "
                                             f"'{server.base_url}'\n    api_key_env: {KEY_ENV}\n"
                                             "    batch_limits: {requests: 2}\n")
    result = bc(project, "run", "colour-ab", "--batch", "--attempts", "2", *FAST)
    last = _said(result, status=False)
    assert re.fullmatch(r"GET http://127\.0\.0\.1:\d+/v1/\S+: no whole answer within 1 s \(a control call is "
                        r"waited 1 s in all, and 1 s more for each 100,000 bytes it sends or receives\) \(gave up "
                        r"after 2 attempts\); nothing is lost, resume the run later.*", last), last
    folder = only_run(project, "colour-ab")
    recorded = read_jsonl(folder / "outputs.jsonl")
    assert [r["status"] for r in recorded] == ["ok", "ok"] and server.stats()["batch"]["downloads"] == 3
    assert [p.name for p in (folder / "batch").iterdir() if p.suffix in (".part", ".tmp")] == []
    assert [e["chunk"] for e in journal(folder) if e["event"] == "downloaded"] == [0]
    again = bc(project, "run", "colour-ab", "--resume", folder.name, *FAST, "--json")
    assert again.exit_code == 0, again.output
    rows = read_jsonl(folder / "outputs.jsonl")
    assert rows[:2] == recorded and len(rows) == 4 and len({r["cell"] for r in rows}) == 4
    assert {r["status"] for r in rows} == {"ok"} and server.stats()["batch"]["submitted_twice"] == []


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_poll_whose_counts_come_in_another_shape_is_read_without_them(tmp_path: Path, server: FakeServer, key: str,
                                                                        vendor: str) -> None:
    """Hostile audit (round 12b): a poll's answer was read by indexing whatever JSON came, so `request_counts` sent
    as a list ended `run --batch` and `status` in an AttributeError traceback (a count that was no number, in a
    ValueError). Counts in another shape are read as none, as a reply's token counts are: they only show progress,
    and the batch's state and its result files are what the run goes by."""
    server.configure({"default_reply": "red", "batch": {"bad_poll": "mistyped", "in_progress_polls": 2}})
    project = project_for(tmp_path, server, vendor)
    submitted = bc(project, "run", "colour-ab", "--batch", "--no-wait", *FAST)
    assert submitted.exit_code == 0, submitted.output
    run = only_run(project, "colour-ab").name
    status = bc(project, "status", run)
    assert status.exit_code == 0, status.output
    assert re.search(r"batch 0: \S+ · in_progress 0/12 \(polled ", status.output), status.output
    result = bc(project, "run", "colour-ab", "--resume", run, *FAST, "--json")
    assert result.exit_code == 0, result.output
    [s] = json.loads(result.stdout)["runs"]
    assert s["finished"] and s["counts"] == {"ok": 12, "truncated": 0, "failed": 0}


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_vendor_asking_to_wait_a_day_is_not_waited_on(tmp_path: Path, server: FakeServer, key: str,
                                                        vendor: str) -> None:
    """Hostile audit (round 12b): a control call's Retry-After was waited up to 600 s between each of its attempts,
    silently, so a poll answered 429 with `Retry-After: 86400` held `status` 20 minutes and `run --batch` half an
    hour before its one line. A control call waits CONTROL_MAX_WAIT (120 s) in all between its attempts; a vendor
    asking for more is told at once, with what it asked: everything is kept, and a resume carries on later."""
    server.configure({"default_reply": "red", "batch": {"bad_poll": "throttled"}})
    project = project_for(tmp_path, server, vendor)
    for args in (("run", "colour-ab", "--batch", *FAST), ("status", "RUN")):
        result = bc(project, *(only_run(project, "colour-ab").name if a == "RUN" else a for a in args))
        assert re.fullmatch(r"GET http://127\.0\.0\.1:\d+/v1/(messages/)?batches/\w+: HTTP 429: slow down; the "
                            r"vendor asks to wait 86,400 s, more than a control call waits \(120 s in all\); nothing "
                            r"is lost, resume the run later", _said(result, status=args[0] == "status"))
    assert server.stats()["batch"]["batches"] == 1  # made once; the polls refused, none waited on


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_poll_answer_past_its_cap_is_refused_in_one_line(tmp_path: Path, server: FakeServer, key: str,
                                                           vendor: str) -> None:
    """Hostile audit: a poll's answer was read whole into memory, however large; past ANSWER_BYTES (4 MiB; a
    batch object is kilobytes) it is refused as it arrives, one line naming the call and the limit."""
    server.configure({"default_reply": "red", "batch": {"bad_poll": "huge"}})
    project = project_for(tmp_path, server, vendor)
    for args in (("run", "colour-ab", "--batch", *FAST), ("status", "RUN")):
        result = bc(project, *(only_run(project, "colour-ab").name if a == "RUN" else a for a in args))
        assert re.fullmatch(r"GET http://127\.0\.0\.1:\d+/v1/(messages/)?batches/\w+: the answer is more "
                            r"than 4 MiB, more than any answer of a batch API takes: refused; nothing of it is kept",
                            _said(result, status=args[0] == "status"))


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_result_line_past_its_cap_is_refused_and_nothing_of_the_file_kept(tmp_path: Path, server: FakeServer,
                                                                            key: str, vendor: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit: a result file was downloaded whatever its size. It streams to disk under two caps: no line
    past RESULT_LINE_BYTES (one reply's 32 MiB and 1 MiB of envelope; 256 KiB here, against a 2 MiB line) and no
    file past that times the chunk's cells; a breach is one line and leaves no file, whole or part."""
    from benchcard.run.batch import _vendors

    monkeypatch.setattr(_vendors, "RESULT_LINE_BYTES", 256 * 2**10, raising=False)
    server.configure({"default_reply": "red", "batch": {"bad_results": "huge"}})
    project = project_for(tmp_path, server, vendor)
    result = bc(project, "run", "colour-ab", "--batch", *FAST)
    assert result.exit_code == 1, result.output
    assert re.fullmatch(r"error: GET http://127\.0\.0\.1:\d+/v1/\S+: a result line is more than 262,144 bytes, "
                        r"more than one reply takes: refused; nothing of it is kept.*",
                        result.stderr.splitlines()[-1]), result.stderr
    folder = only_run(project, "colour-ab")
    assert not [p.name for p in (folder / "batch").iterdir() if ".results-" in p.name or p.suffix == ".part"]
    assert read_jsonl(folder / "outputs.jsonl") == []


def _batch_run_with_bad_results(tmp_path: Path, server: FakeServer, vendor: str,
                                fault: str) -> tuple[Project, dict[str, Any]]:
    """`run colour-ab --batch --json` against a batch whose result file holds the fake server's `bad_results`
    fault: the project and the run's summary, once the command exited 0."""
    server.configure({"default_reply": "red", "batch": {"bad_results": fault}})
    project = project_for(tmp_path, server, vendor)
    result = bc(project, "run", "colour-ab", "--batch", *FAST, "--json")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)["runs"]
    return project, summary


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_result_line_that_cannot_be_read_is_named_and_the_rest_collected(tmp_path: Path, server: FakeServer,
                                                                           key: str, vendor: str) -> None:
    """Hostile audit (round 12b): a result file's line holding lists nested 100,000 deep (200 kB, under every size
    cap) made msgspec's decoder raise RecursionError, which no handler caught. Round 13e: it then ended the run,
    one line asking to delete the file and resume, with none of the batch's answers recorded, though all were
    paid for; a download again brought the same line back, so they never were. A line that cannot be read (not
    JSON, not an object, nested past the stack) is now refused by name, as a line for an id nobody sent is, and
    every other line is collected; a cell only it could answer is recorded failed, for --retry-failed."""
    project, s = _batch_run_with_bad_results(tmp_path, server, vendor, "nested")
    assert s["counts"] == {"ok": 12, "truncated": 0, "failed": 0}
    [batch] = [e["batch"] for e in journal(only_run(project, "colour-ab")) if e["event"] == "created"]
    assert s["warnings"] == [f"batch/chunk-000.results-0.jsonl: line 13 is JSON nested deeper than any vendor's "
                             "answer is (past what a reader's stack holds); it names custom_id 'never-sent', not a "
                             f"request of batch {batch}; the line is not used (a cell it may answer is "
                             "recorded failed, no result)"]


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
def test_a_cell_answered_again_by_a_line_that_cannot_be_read_is_failed_not_taken(tmp_path: Path, server: FakeServer,
                                                                                 key: str, vendor: str) -> None:
    """A cell answered twice is recorded failed, neither answer taken; but when the second answer was a line that
    cannot be read, the cell was taken on the first, the duplicate unseen (the line was said to answer some cell
    'recorded failed, no result', which none was). The ids the line's bytes hold are read: its cell is failed,
    named, for --retry-failed."""
    project, s = _batch_run_with_bad_results(tmp_path, server, vendor, "nested_twice")
    assert s["counts"] == {"ok": 11, "truncated": 0, "failed": 1}
    [warning] = s["warnings"]
    named = re.fullmatch(r"batch/chunk-000\.results-0\.jsonl: line 13 is JSON nested deeper than any vendor's answer "
                         r"is \(past what a reader's stack holds\); it names custom_id '(c\w+)-\w+': cell (c\w+) is "
                         r"recorded failed, no answer taken \(this line may be one\)", warning)
    assert named and named[1] == named[2], warning
    rows = read_jsonl(only_run(project, "colour-ab") / "outputs.jsonl")
    [failed] = [row for row in rows if row["status"] == "failed"]
    assert (failed["cell"], failed["error"], failed["text"]) == (named[1], warning, "")
