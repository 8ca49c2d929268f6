"""A judge card's answer keys: `keys/<id>/<fixture>.json`, any JSON object, shown to the judge as written."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from benchcard.records.answerkey import AnswerKey, key_path, names_in, read_key_file


def load_judge_keys(keys_dir: Path, fixtures: Mapping[str, Path],
                    shown: Callable[[Path], str] = str) -> dict[str, AnswerKey]:
    """Every fixture's key; a missing or malformed one names its file (as `shown` writes it)."""
    names = names_in(keys_dir)
    keys: dict[str, AnswerKey] = {}
    for fixture in sorted(fixtures):
        path = key_path(keys_dir, fixture, names, shown, "the judge's prompt has {{key}}")
        keys[fixture] = read_key_file(path, shown(path))
    return keys


def key_text(key: AnswerKey | None) -> str:
    """The key as the judge reads it (`AnswerKey.text`: JSON on one line, non-ASCII kept); none without a key."""
    return "" if key is None else key.text()
