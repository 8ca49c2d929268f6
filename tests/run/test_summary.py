"""What a run did, as `benchcard run` prints it: counts, cost, a capped concurrency, how to continue."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from benchcard.run.providers.base import Provider, ProviderConfig
from benchcard.run.providers.openai import OpenAIProvider

from ..helpers_run import ab_project, bc, key, ok

__all__ = ["key"]  # fixtures used by name



def test_a_capped_concurrency_is_said_on_the_progress_line_and_in_the_summary(
        tmp_path: Path, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def capped(cfg: ProviderConfig, client: httpx.AsyncClient, model: str | None = None) -> Provider:
        provider = OpenAIProvider(cfg, client)
        provider.max_concurrency = 1  # type: ignore[attr-defined]
        return provider

    reply = {"choices": [{"message": {"content": "red"}, "finish_reason": "stop"}]}
    monkeypatch.setattr("benchcard.run.runner.make_provider", capped)
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
