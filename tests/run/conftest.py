"""The provider tests' keys: `provider_keys` sets the keys their configs name and empties the requests seen."""

from __future__ import annotations

import pytest

from ..helpers_providers import SEEN


@pytest.fixture
def provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    monkeypatch.setenv("BC_TEST_OPENAI_KEY", "sk-openai-test")
    monkeypatch.setenv("BC_TEST_ANTHROPIC_KEY", "sk-ant-test")
