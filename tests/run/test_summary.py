"""What a run did, as `benchcard run` prints it: counts, cost, a capped concurrency, how to continue."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchcard.publish.build import build_site
from benchcard.records.rows import OutputRow
from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.providers.openai import OpenAIProvider
from benchcard.run.summary import RunSummary, Tally, capped_note
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import KEY_ENV, ab_project, bc, ok, only_run, write_config


def test_a_capped_concurrency_is_said_on_the_progress_line_and_in_the_summary(
        tmp_path: Path, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def capped(cfg: ProviderConfig, client: httpx.AsyncClient, model: str | None = None) -> Provider:
        provider = OpenAIProvider(cfg, client)
        provider.max_concurrency = 1
        return provider

    reply = {"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]}
    monkeypatch.setattr("benchcard.run._pool.make_provider", capped)
    monkeypatch.setattr(
        "benchcard.run.runner.make_client",
        lambda concurrency, timeout, transport=None: httpx.AsyncClient(
            transport=httpx.MockTransport(lambda request: httpx.Response(200, json=reply))))
    project = ab_project(tmp_path, "http://fake.invalid/v1", fixtures=2, repetitions=1)
    result = ok(bc(project, "run", "colour-ab"))
    assert "1 call at a time (provider 'fake' takes no more)" in result.stderr
    assert "1 call at a time (provider 'fake' takes no more)" in result.stdout
    result = ok(bc(project, "run", "colour-ab", "--concurrency", "1"))
    assert "at a time" not in result.output


def summary_of(**changes: Any) -> RunSummary:
    base = RunSummary(run="20261201T120000Z-ab12", folder="results/colour-ab/v1/20261201T120000Z-ab12",
                      card="colour-ab", version=1, rig="fake · test/model", provider="fake", model="test/model",
                      cells=8, counts={"ok": 5, "truncated": 1, "failed": 1}, missing=0, cost=0.01234567,
                      cost_unknown=0, wall_s=2.345, called=7, finished=True, resumed=False)
    return replace(base, **changes)


def test_a_finished_run_says_what_it_did_and_that_it_was_scored_blind() -> None:
    assert summary_of().lines() == [
        "20261201T120000Z-ab12 · fake · test/model → results/colour-ab/v1/20261201T120000Z-ab12",
        "  8 cells: 5 ok, 1 truncated, 1 failed · $0.0123 · 2.3 s",
        "  scored blind → scores.jsonl (truncated and failed cells are not scored)",
        "  1 cell(s) failed: `benchcard run colour-ab --resume 20261201T120000Z-ab12 --retry-failed` calls them "
        "again (the failed attempts stay on record)"]


def test_a_probe_of_one_repetition_says_one_cell() -> None:
    """docs/cards.md's first card, a probe of one repetition, printed `1 cells: 1 ok, …`."""
    assert summary_of(cells=1, counts={"ok": 1, "truncated": 0, "failed": 0}).lines()[1] == (
        "  1 cell: 1 ok, 0 truncated, 0 failed · $0.0123 · 2.3 s")


def test_failed_cells_name_the_command_that_calls_them_again() -> None:
    assert summary_of().lines()[-1] == ("  1 cell(s) failed: `benchcard run colour-ab --resume 20261201T120000Z-ab12 "
                                        "--retry-failed` calls them again (the failed attempts stay on record)")
    assert "retry" not in " ".join(summary_of(counts={"ok": 7, "truncated": 1, "failed": 0}).lines())


def test_an_unfinished_run_says_what_is_missing_and_how_to_continue() -> None:
    lines = summary_of(finished=False, missing=1, cost=None, capped=True, concurrency=1).lines()
    assert lines[1:] == ["  1 call at a time (provider 'fake' takes no more)",
                         "  8 cells: 5 ok, 1 truncated, 1 failed, 1 missing · cost unknown · 2.3 s",
                         "  not finished; continue with: benchcard run colour-ab --resume 20261201T120000Z-ab12"]
    batch = summary_of(finished=False, batch=True, cost=0.5, cost_unknown=2).lines()
    assert batch[1:] == ["  8 cells: 5 ok, 1 truncated, 1 failed · $0.5000 (+2 cells without a price) · 2.3 s",
                         "  not finished; see: benchcard status 20261201T120000Z-ab12; continue with: benchcard run "
                         "colour-ab --resume 20261201T120000Z-ab12"]
    assert capped_note("local", 3) == "3 calls at a time (provider 'local' takes no more)"


def test_a_run_whose_few_cells_failed_says_why(tmp_path: Path, key: str) -> None:
    """docs/cards.md's probe (one cell) on a provider whose server was not started: the run ended `1 cells: 0 ok,
    0 truncated, 1 failed` and a retry line, the cause only in outputs.jsonl (a run stops and says it after 16
    cells failed in a row, which so few never reach)."""
    project = ab_project(tmp_path, "http://127.0.0.1:9/v1", fixtures=2, repetitions=1)  # nothing listens on 9
    result = bc(project, "run", "colour-ab")
    assert result.exit_code == 0, result.output
    [last] = [line for line in result.stdout.splitlines() if line.startswith("  last failure: ")]
    assert "Cannot connect to host 127.0.0.1:9" in last and last.endswith("(each cell's error: outputs.jsonl)")


def test_a_last_failure_already_warned_of_is_not_said_again() -> None:
    """A batch's refused result lines are each said as a warning (five, then how many more): the last failure,
    one of them, is not repeated under the counts; a failure no warning said still is."""
    refused = tuple(f"batch/chunk-000.results-0.jsonl: line {n}: refused" for n in range(7, 13))
    warned = summary_of(warnings=refused, failed_error=refused[-1]).lines()
    assert not any(line.startswith("  last failure: ") for line in warned)
    assert any(line.startswith("  warning: and 1 more result lines refused") for line in warned)
    unwarned = summary_of(warnings=refused, failed_error="HTTP 500").lines()
    assert "  last failure: HTTP 500 (each cell's error: outputs.jsonl)" in unwarned


def test_a_resume_with_nothing_to_call_says_so_instead_of_scoring() -> None:
    lines = summary_of(note="every cell already has an outcome; nothing was called").lines()
    assert lines[1] == "  every cell already has an outcome; nothing was called"
    assert not any("scored blind" in line for line in lines)
    assert summary_of().to_json()["counts"] == {"ok": 5, "truncated": 1, "failed": 1}


def test_the_tally_counts_statuses_and_prices_only_what_was_answered() -> None:
    t = Tally()
    for row in (OutputRow(cell="c1", fixture="f", status="ok", cost=0.25),
                OutputRow(cell="c2", fixture="f", status="truncated"),
                OutputRow(cell="c3", fixture="f", status="failed", error="HTTP 500"),
                OutputRow(cell="c4", fixture="f", status="ok", cost=0.0)):
        t.add(row)
    assert t.counts == {"ok": 2, "truncated": 1, "failed": 1} and t.seen == 4
    assert (t.cost, t.priced, t.unpriced) == (0.25, 2, 1)  # a failed call has no price to miss; a free one costs 0


@pytest.mark.parametrize(("reply_model", "warned"), [
    (None, False),  # each reply names the model asked
    ("test/model-2024-08-06", False),  # a snapshot of it, as real OpenAI answers gpt-4o on every call
    ("meta/llama-3-8b", True),
    ("test/model-70", True),  # a size added is another model (a snapshot is -2024-08-06, -20241022, -0613 …)
])
def test_the_models_replies_named_are_recorded_and_said_only_when_another_model_answered(
        tmp_path: Path, server: FakeServer, key: str, reply_model: str | None, warned: bool) -> None:
    """Every reply's model is counted in the manifest, the model asked too, so that a later pass (a resume, a
    retry) knows these rows were. Another model is a warning in run, status (and its --json), the verdict's notes
    and the run's page; the finding is the rule's, whoever answered. The model asked says nothing, and a snapshot
    of it only shows on the run's page as a fact beside its others."""
    server.configure({"default_reply": "red", **({"reply_model": reply_model} if reply_model else {})})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=2, repetitions=1)
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    folder = only_run(project, "colour-ab")
    name = reply_model or "test/model"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["replied_models"] == [{name: 4}] and manifest["replied_rows"] == [{"rows": 4, "uncounted": 0}]
    status, verdict = bc(project, "status", folder.name), bc(project, "verdict", folder.name)
    assert status.exit_code == 0 and verdict.exit_code == 0, status.output + verdict.output
    assert "finding: inconclusive" in verdict.output
    shown = json.loads(bc(project, "status", folder.name, "--json").stdout)
    assert shown["scratch"] is None
    build_site(project, tmp_path / "site")
    page = next((tmp_path / "site").rglob(f"{folder.name}/index.html")).read_text(encoding="utf-8")
    said = f"warning: 4 of 4 replies named another model than test/model, the one asked: {name} (4)"
    if warned:
        assert f"  {said}\n" in ran.output and f"  {said}\n" in status.output and shown["replies"] == said
        assert f"  note: {said.removeprefix('warning: ')}.\n" in verdict.output
        assert said in page
        return
    for out in (ran.output, status.output, verdict.output):
        assert "replies named" not in out and "warning" not in out and (reply_model or "?") not in out
    assert shown["replies"] is None  # absent as status's other optional lines are
    assert "warning" not in page and (f"{name} (4)" in page) is (reply_model is not None)


def test_a_replied_model_name_keeps_no_part_of_the_key_and_no_character_that_does_not_show(
        tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server echoing the key into its reply's `model`, past the 200 characters kept, with a terminal escape
    and a right-to-left override: the key is removed before the name is cut, and what does not show is escaped."""
    secret = "Zq7plainsecretvalue9"
    monkeypatch.setenv(KEY_ENV, secret)
    server.configure({"default_reply": "red", "reply_model": "\x1b[2J\u202e" + "m" * 180 + secret})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=1, repetitions=1)
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    manifest = (only_run(project, "colour-ab") / "manifest.json").read_text(encoding="utf-8")
    for shown in (ran.output, manifest, bc(project, "status", only_run(project, "colour-ab").name).output):
        assert secret[:6] not in shown and "\x1b" not in shown and "\u202e" not in shown
    name = ("\\x1b[2J\\u202e" + "m" * 180 + "[redacted]")[:200]  # the key out, then the name cut (text.escape)
    assert json.loads(manifest)["replied_models"] == [{name: 2}]
    assert f"the one asked: {name} (2)\n" in ran.output


def test_a_replied_model_name_beyond_the_basic_plane_is_kept_in_one_escape(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """A tag character (U+E0001, invisible) was kept as `\\ue0001`, which reads back as U+E000 and a `1`; the
    one escape notation (`_util/text.escape`, as a terminal's and a message's) writes `\\U000e0001`."""
    server.configure({"default_reply": "red", "reply_model": "other\U000e0001model"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=1, repetitions=1)
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    manifest = json.loads((only_run(project, "colour-ab") / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["replied_models"] == [{"other\\U000e0001model": 2}]
    assert "the one asked: other\\U000e0001model (2)\n" in ran.output



def test_a_run_narrowed_by_refusals_says_how_many_calls_it_kept_in_flight() -> None:
    """A server that refused calls for load (run/_gate) narrowed the run's calls in flight: the summary says to
    what, so that a user sees the rate the API took, not only the --concurrency asked."""
    lines = summary_of(concurrency=64, narrowed=5).lines()
    assert lines[1] == "  the server refused calls for load (429/503/529): 5 calls at a time at the end, of 64 allowed"
    assert "refused" not in " ".join(summary_of(concurrency=64).lines())


def test_a_cost_left_unknown_says_which_price_is_missing_and_how_a_price_is_named(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """A price is named by the model id as sent: `fake/test/model` (provider/model, as the README's example
    once read) prices no call to `test/model`. The run said only "cost unknown", as if the server had not said
    its tokens; it now names the price it lacks, the near miss, and the form that prices the calls."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=1, repetitions=1)
    price = "prices:\n  {model}: {{input: 1, output: 2}}\n"
    write_config(project.root, server.base_url, extra=price.format(model="fake/test/model"))
    ran = ok(bc(project, "run", "colour-ab", "--scratch"))
    assert ("  2 cells: 2 ok, 0 truncated, 0 failed · cost unknown" in ran.output
            and "  cost: no price for 'test/model' in benchcard.yaml (it prices 'fake/test/model', not the id sent): "
            "a price is named by the model id as sent, prices: {test/model: {input: USD, output: USD}} per million "
            "tokens\n" in ran.output)
    write_config(project.root, server.base_url, extra=price.format(model="test/model"))
    ran = ok(bc(project, "run", "colour-ab", "--scratch"))
    assert "cost unknown" not in ran.output and "  cost:" not in ran.output
    ran = ok(bc(project, "run", "colour-ab", "--scratch", "--batch"))
    assert ("  cost: benchcard.yaml's price of 'test/model' has no batch_discount, so a batch cell is not priced (its "
            "cost is unknown, never the interactive price): add batch_discount, 0.5 for half price\n" in ran.output)


def test_the_judges_unknown_cost_names_the_price_it_lacks() -> None:
    from benchcard.run.judging import JudgeSummary
    from benchcard.run.providers import price_gap

    judge = JudgeSummary(rig="judge-model · fake", judgements=2, per_output=1, counts={"ok": 2, "truncated": 0,
                         "failed": 0}, unreadable=0, called=2, cost=None, tokens={"input": 10, "output": 4},
                         finished=True, price_note=price_gap("judge-model", {}))
    assert ("· cost unknown (no price for 'judge-model' in benchcard.yaml: a price is named by the model id as sent, "
            "prices: {judge-model: {input: USD, output: USD}} per million tokens) ·") in judge.line()
