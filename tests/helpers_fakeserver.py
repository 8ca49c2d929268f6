"""The request and reply helpers of the fake server's own tests (tests/testing/fakeserver/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

SRC = str(Path(__file__).resolve().parents[1] / "src")


def chat(text: str, model: str = "m-1", **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}],
        **extra,
    }


def content(resp: httpx.Response) -> str:
    assert resp.status_code == 200, resp.text
    text: str = resp.json()["choices"][0]["message"]["content"]
    return text
