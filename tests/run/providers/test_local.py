"""The embedded model: SmolLM2-135M-Instruct through llama-cpp-python in its worker process, with no mocks.

Tests marked `local_model` run the real model (the `local` extra); deselect them with `-m "not local_model"`.
The tests of the missing-extra message need neither and always run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchcard.cli import cli
from benchcard.run.providers.base import Completion
from benchcard.run.providers.local import LocalProvider, call_seed, completion_from
from benchcard.run.providers.localmodel import EXTRA_HINT

from ...helpers_demo import DEMO, DemoRun, benchcard_exe, sealed_demo
from ...helpers_project import REPO
from ...helpers_providers import LOCAL, have_model

CFG = LOCAL


def body(provider: LocalProvider, user: str, **params: Any) -> dict[str, Any]:
    return provider.build_body("SmolLM2-135M-Instruct", [{"role": "user", "content": user}], params, None)


def complete(provider: LocalProvider, request: dict[str, Any]) -> Completion:
    return asyncio.run(provider.complete(request))


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider(CFG, None)


# ----------------------------------------------------------------------------------------------- the model file


@pytest.mark.local_model
@have_model
def test_body_is_the_openai_body_and_effort_is_not_sent(provider: LocalProvider) -> None:
    messages = [{"role": "user", "content": "hi"}]
    assert provider.build_body("m", messages, {"max_tokens": 5, "temperature": 0}, "high") == {
        "model": "m", "messages": messages, "max_tokens": 5, "temperature": 0}
    assert provider.should_retry(RuntimeError("x")) is False


# ----------------------------------------------------------------------------------------------- calls


@pytest.mark.local_model
@have_model
def test_temperature_zero_is_deterministic(provider: LocalProvider) -> None:
    request = body(provider, "What is the capital of France? Answer in one sentence.", max_tokens=24,
                   temperature=0)
    first, second = complete(provider, request), complete(provider, request)
    assert first == second
    assert first.text.strip() and first.status in ("ok", "truncated")
    assert first.usage.input > 10 and first.usage.output > 0
    assert first.cost == 0.0


@pytest.mark.local_model
@have_model
def test_token_limit_gives_truncated(provider: LocalProvider) -> None:
    result = complete(provider, body(provider, "Write a long story about a lighthouse keeper.", max_tokens=3,
                                     temperature=0))
    assert result.status == "truncated"
    assert result.finish_reason == "length"
    assert result.usage.output == 3
    assert result.text  # recorded unedited, never scored


@pytest.mark.local_model
@have_model
def test_the_context_window_cutting_an_answer_is_truncated_and_says_so() -> None:
    """A prompt of about 200 tokens leaves the answer about 55 of the 256-token window: the window ends it after
    a second of generating (from a one-line prompt SmolLM2 writes 217 tokens first, three times the CPU)."""
    small = LocalProvider(CFG, None, n_ctx=256)
    setting = (" The keeper is called Tom. He lives alone on a small rock far out at sea, where the waves are high"
               " and the wind never stops. Every night he climbs the stairs to light the lamp, and every morning"
               " he writes in his log what ships he saw.")
    result = complete(small, body(small, "Write a long story about a lighthouse keeper." + setting * 3,
                                  max_tokens=400, temperature=0))
    assert result.status == "truncated" and result.finish_reason == "length"
    assert result.usage.input > 150  # the prompt holds most of the window
    assert result.usage.input + result.usage.output >= 255
    assert result.error == "the context window (256 tokens) ended the answer before max_tokens (400)"
    assert LocalProvider(CFG, None).n_ctx == 8192  # the default: SmolLM2's training context


@pytest.mark.local_model
@have_model
def test_repetitions_differ_and_a_rerun_replays_them() -> None:
    """Identical bodies (the repetitions of one cell) are planned with seeds 0, 1, 2 of that body; the sealed
    bodies then replay on their own, on a fresh provider or twice in a row, at temperature > 0."""
    def planned(p: LocalProvider) -> list[dict[str, Any]]:
        request = body(p, "Write one line of a poem about the sea.", max_tokens=12, temperature=1.0)
        return [p.planned_body(request, n) for n in range(3)]

    first = LocalProvider(CFG, None)
    stored = planned(first)
    assert [b["seed"] for b in stored] == [call_seed({k: v for k, v in stored[0].items() if k != "seed"}, n)
                                           for n in range(3)]
    run_a = [complete(first, b).text for b in stored]
    fresh = LocalProvider(CFG, None)
    assert planned(fresh) == stored
    run_b = [complete(fresh, b).text for b in reversed(stored)][::-1]  # another provider, another order
    assert run_a == run_b
    assert len(set(run_a)) > 1
    assert complete(fresh, stored[1]).text == complete(fresh, stored[1]).text == run_a[1]  # the same body twice
    request = {"model": "m", "messages": [], "temperature": 0.7}
    assert len({call_seed(request, n) for n in range(3)}) == 3
    assert call_seed(request, 0) == call_seed(dict(reversed(list(request.items()))), 0)  # canonical JSON


#: Cells of the demo card whose replies differed between two `make demo` runs on one machine (2026-12-07): (fixture,
#: variant, occurrence). Each came right after another cell of its fixture, of the same variant in one run and of the
#: other variant in the next, so llama.cpp evaluated a different part of its prompt afresh.
DIVERGED = [("review-01", "answer-cue", 3), ("review-06", "answer-cue", 2), ("review-02", "plain", 3),
            ("review-03", "answer-cue", 4)]


@pytest.mark.local_model
@have_model
def test_a_sealed_body_replies_alike_whatever_call_came_before_it() -> None:
    """A reply is a function of the sealed body (and its seed) alone: not of the call before it. llama-cpp-python
    kept the previous prompt's tokens and evaluated only the rest, and the logits of a prompt evaluated in two
    parts differ in their last bits from those of one pass, enough to change a sampled token now and then: 4 of
    the demo card's 100 replies differed between two runs on one machine (hostile audit 13b), against the promise
    that every run has the same replies per (variant, fixture) and a resumed run those of an uninterrupted one."""
    provider = LocalProvider(CFG, None)
    card = (REPO / "cards" / f"{DEMO}.yaml").read_text(encoding="utf-8")
    assert "Is this review positive or negative? Answer with one word.\n\n    Review: {{fixture}}{{variant}}" in card
    cue = {"plain": "", "answer-cue": "\nAnswer:"}

    def request(fixture: str, variant: str, occurrence: int) -> dict[str, Any]:
        review = (REPO / "fixtures" / DEMO / f"{fixture}.txt").read_text(encoding="utf-8")
        user = f"Is this review positive or negative? Answer with one word.\n\nReview: {review}{cue[variant]}"
        return provider.planned_body(body(provider, user, max_tokens=128, temperature=0.7), occurrence)

    for fixture, variant, k in DIVERGED:
        cell = request(fixture, variant, k)
        other = "plain" if variant == "answer-cue" else "answer-cue"
        after = {before: (complete(provider, request(fixture, before, 0)), complete(provider, cell).text)[1]
                 for before in (variant, other)}
        assert after[variant] == after[other], (fixture, variant, k, after)


@pytest.mark.local_model
@have_model
def test_an_unplanned_body_without_a_seed_counts_its_calls() -> None:
    """A body handed to complete() with no seed (never planned) gets seed n of that body on its n-th call."""
    def three() -> list[str]:
        fresh = LocalProvider(CFG, None)
        request = body(fresh, "Write one line of a poem about the sea.", max_tokens=12, temperature=1.0)
        return [complete(fresh, request).text for _ in range(3)]

    texts = three()
    assert texts == three() and len(set(texts)) > 1
    p = LocalProvider(CFG, None)
    request = body(p, "Write one line of a poem about the sea.", max_tokens=12, temperature=1.0)
    assert [complete(p, p.planned_body(request, n)).text for n in range(3)] == texts


@pytest.mark.local_model
@have_model
def test_a_seed_in_the_card_params_is_used_as_is(provider: LocalProvider) -> None:
    request = body(provider, "Write one line of a poem about the sea.", max_tokens=12, temperature=1.0, seed=7)
    assert len({complete(provider, request).text for _ in range(3)}) == 1


@pytest.mark.local_model
@have_model
def test_the_event_loop_keeps_running_during_a_call(provider: LocalProvider) -> None:
    """The loop turns while the worker generates: counted in turns of the loop taken before the call is done, not
    in ticks per second of a clock (a loaded machine slowed the ticker as much as it slowed generation). A call that
    blocked the loop would let it turn only at the call's own awaits, a handful; 40 tokens take thousands."""
    async def scenario() -> int:
        call = asyncio.create_task(provider.complete(body(provider, "Write a long story about a lighthouse keeper.",
                                                          max_tokens=40, temperature=0)))
        turns = 0
        while not call.done():
            turns += 1
            await asyncio.sleep(0)
        assert (await call).usage.output == 40
        return turns

    turns = asyncio.run(scenario())
    assert turns >= 100, turns


@pytest.mark.local_model
@have_model
def test_concurrent_calls_are_serialised_and_all_answered() -> None:
    async def scenario() -> list[Completion]:
        p = LocalProvider(CFG, None)
        requests = [body(p, f"Say the number {i}.", max_tokens=8, temperature=0) for i in range(6)]
        try:
            return list(await asyncio.gather(*(p.complete(r) for r in requests)))
        finally:
            await p.aclose()

    results = asyncio.run(scenario())
    assert len(results) == 6 and all(r.status in ("ok", "truncated") for r in results)


@pytest.mark.local_model
@have_model
def test_providers_of_one_model_share_one_worker_that_loads_it_once() -> None:
    first = LocalProvider(CFG, None)
    complete(first, body(first, "Hello.", max_tokens=2, temperature=0))
    starts, pid = first.worker.starts, first.worker.pid
    second = LocalProvider(CFG, "smollm2")
    for i in range(5):
        complete(second, body(second, f"Count to {i}.", max_tokens=2, temperature=0))
    assert second.worker is first.worker
    assert (first.worker.starts, first.worker.pid) == (starts, pid)
    assert pid is not None and pid != os.getpid()  # the model runs in a process of its own


# ----------------------------------------------------------------------------------------------- errors


@pytest.mark.local_model
@have_model
def test_cli_missing_gguf_and_missing_extra_are_one_line_errors(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = sealed_demo(tmp_path / "proj")
    result = CliRunner().invoke(cli, ["-C", str(root), "run", DEMO, "--provider", "local", "--model",
                                      "path/to/missing.gguf"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["error: the local model file path/to/missing.gguf does not exist"]
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    result = CliRunner().invoke(cli, ["-C", str(root), "run", DEMO, "--provider", "local"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"error: {EXTRA_HINT}"]
    assert not (root / "results").exists() or not any((root / "results").rglob("outputs.jsonl"))


# ----------------------------------------------------------------------------------------------- end to end


def _has_command(name: str) -> bool:
    return name in cli.commands


@pytest.mark.local_model
@have_model
def test_demo_card_end_to_end(demo_run: DemoRun) -> None:
    """Seal the demo card in a copy of the project, run it on the embedded model, then give the verdict. The run
    is the session's one demo run (`benchcard run demo-answer-cue --provider local --json` in a subprocess, made
    once and copied here: tests/helpers_demo.py)."""
    root, exe, wall = demo_run.root, benchcard_exe(), demo_run.wall
    assert demo_run.returncode == 0, demo_run.stderr
    summary = json.loads(demo_run.stdout)["runs"][0]
    assert summary["cells"] == 100 and summary["finished"] and summary["model"] == "SmolLM2-135M-Instruct"
    assert summary["counts"]["failed"] == 0
    assert summary["cost"] == 0.0
    folder = root / summary["folder"]
    outputs = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
    scores = [json.loads(line) for line in (folder / "scores.jsonl").read_text().splitlines()]
    requests = [json.loads(line) for line in (folder / "sealed" / "requests.jsonl").read_text().splitlines()]
    assert len(outputs) == len(scores) == len(requests) == 100
    assert all(o["usage"]["input"] > 0 for o in outputs)
    assert {r["body"]["model"] for r in requests} == {"SmolLM2-135M-Instruct"}
    assignment = [json.loads(line) for line in (folder / "sealed" / "assignment.jsonl").read_text().splitlines()]
    seeds: dict[tuple[str, str], set[int]] = {}
    for a, r in zip(assignment, requests, strict=True):  # temperature 0.7: every call's seed is sealed
        seeds.setdefault((a["variant"], a["fixture"]), set()).add(r["body"]["seed"])
    assert len(seeds) == 20 and all(len(s) == 5 for s in seeds.values())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rig"]["provider"] == "local" and manifest["provider_type"] == "local"
    assert manifest["concurrency"] == summary["concurrency"] == 1  # --concurrency 8 capped: one call at a time
    scored = [s["score"] for s in scores if s["status"] == "ok"]
    assert scored and all(0.0 <= s <= 1.0 for s in scored)
    print(f"\n{DEMO}: 100 cells on the embedded model in {wall:.1f} s, counts {summary['counts']}")
    if not _has_command("verdict"):
        return
    verdict = subprocess.run([exe, "-C", str(root), "verdict", summary["run"], "--json"], capture_output=True,
                             text=True, timeout=120, check=False)
    assert verdict.returncode == 0, verdict.stderr or verdict.stdout
    assert (folder / "table.csv").is_file()
    given = json.loads((folder / "verdict.json").read_text())
    assert given["finding"] in ("win", "loss", "no-effect", "inconclusive", "incomplete")
    means = given["metrics"]["score"]["means"]
    print(f"verdict: {given['finding']} -> {given['outcome']}; score means {means}")
    ledger = [json.loads(line) for line in (root / "results" / "ledger.jsonl").read_text().splitlines()]
    assert ledger[-1]["card"] == DEMO and ledger[-1]["run"] == summary["run"]
    assert ledger[-1]["outcome"] == given["outcome"] in ("result", "non-result")


def test_demo_card_is_in_the_repository() -> None:
    assert (REPO / "cards" / f"{DEMO}.yaml").is_file()
    assert len(list((REPO / "fixtures" / DEMO).glob("*.txt"))) == 10


@pytest.mark.local_model
@have_model
def test_a_timed_out_call_stops_generating_and_frees_the_model(provider: LocalProvider) -> None:
    """The runner's per-call timeout cancels the call; the generation must end too, or a runaway answer would
    hold the model (and every queued cell) until max_tokens: the worker generating it is ended, and the next
    call is answered by a fresh one."""
    long = body(provider, "Write a very long story about a dragon.", max_tokens=4000, temperature=0.8)
    short = body(provider, "Say hi.", max_tokens=5, temperature=0)
    complete(provider, short)  # the model is loaded: the timeout falls inside the long generation
    worker = provider.worker
    generating, starts = worker.pid, worker.starts

    async def scenario() -> Completion:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.5):
                await provider.complete(long)
        return await provider.complete(short)

    after = asyncio.run(scenario())
    assert after.text
    assert generating is not None and worker.starts > starts and worker.pid != generating
    with pytest.raises(ProcessLookupError):  # the worker that was generating is gone, not left to its 4000 tokens
        os.kill(generating, 0)


@pytest.mark.local_model
@have_model
def test_a_resumed_local_run_calls_with_the_planned_seeds(tmp_path: Path) -> None:
    """A local run killed after some cells and resumed gives every cell the output an uninterrupted run with the
    same card and run seed gives it: the seeds are read back from sealed/requests.jsonl, not counted again."""
    from benchcard.run.options import RunOptions
    from benchcard.run.runner import run

    from ...helpers_run import ab_project

    project = ab_project(tmp_path, None, fixtures=2, repetitions=3, max_tokens=10)
    opts = RunOptions(provider="local", seed=3, progress=False)

    def outputs(folder: str) -> dict[str, str]:
        rows = [json.loads(line) for line in (project.root / folder / "outputs.jsonl").read_text().splitlines()]
        return {o["cell"]: o["text"] for o in rows}

    def sealed(folder: str) -> list[dict[str, Any]]:
        path = project.root / folder / "sealed" / "requests.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    [whole] = run(project, "colour-ab", opts)
    [part] = run(project, "colour-ab", opts, stop_after=5)
    assert not part.finished and len(outputs(part.folder)) == 5
    [resumed] = run(project, "colour-ab", RunOptions(resume=part.run, progress=False))
    assert resumed.resumed and resumed.finished and resumed.called == 7
    assert sealed(part.folder) == sealed(whole.folder)
    assert all(isinstance(r["body"]["seed"], int) for r in sealed(whole.folder))
    assert outputs(part.folder) == outputs(whole.folder)
    texts = outputs(whole.folder)
    assert len(set(texts.values())) > 2  # temperature 0.7: the repetitions do differ


@pytest.mark.parametrize(("finish", "status", "error"), [
    ("stop", "ok", None), ("length", "truncated", None), (None, "ok", None),
    ("tool_calls", "failed", "not an answer: the model asked to call a tool"),
    ("function_call", "failed", "not an answer: the model asked to call a function"),
    ("abort", "failed", "not an answer: the stop reason 'abort' is not one benchcard reads as an answer")])
def test_the_local_models_finish_reason_is_read_as_every_vendors(finish: str | None, status: str,
                                                                 error: str | None) -> None:
    """llama-cpp-python's reply goes through the one reader of stop reasons: before, anything but `length` was an
    answer, scored (a tool call's empty text among them)."""
    reply = {"choices": [{"message": {"role": "assistant", "content": "red"}, "finish_reason": finish}],
             "usage": {"prompt_tokens": 5, "completion_tokens": 1}}
    c = completion_from(reply, n_ctx=2048, max_tokens=16)
    assert c.status == status and (c.error is None if error is None else (c.error or "").startswith(error))
