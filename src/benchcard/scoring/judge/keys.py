"""A judge card's answer keys: `keys/<id>/<fixture>.json`, any JSON object, shown to the judge as written."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchcard._util.safeio import load_json_file
from benchcard.errors import CardError


def load_judge_keys(keys_dir: Path, fixtures: Mapping[str, Path]) -> dict[str, Mapping[str, Any]]:
    """Every fixture's key; a missing or malformed one names its file."""
    keys: dict[str, Mapping[str, Any]] = {}
    for fixture in sorted(fixtures):
        path = keys_dir / f"{fixture}.json"
        if not path.is_file():
            raise CardError(f"{path}: missing answer key for fixture '{fixture}' (the judge's prompt has {{{{key}}}})")
        data = load_json_file(path, str(path), CardError)
        if not isinstance(data, dict):
            raise CardError(f"{path}: expected a JSON object, got {type(data).__name__}")
        keys[fixture] = data
    return keys


def key_text(key: Mapping[str, Any] | None) -> str:
    """The key as the judge reads it: JSON on one line, non-ASCII kept."""
    return "" if key is None else json.dumps(key, ensure_ascii=False)
