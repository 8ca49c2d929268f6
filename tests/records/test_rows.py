"""The manifest's retries and judge tokens, typed (`records.Retry`, `records.Tokens`): every shape written reads
back to the same bytes, and a mistyped one is one line naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.errors import RunError
from benchcard.records._manifestparts import Closed, Counts, Look, Retry, Schedule, Tokens
from benchcard.records.rows import (
    OutputRow,
    decode_manifest,
    encode_manifest,
    iter_rows,
    read_rows,
    rig_line,
    stop_line,
)

HEAD = {"run": "20261201T120000Z-0a0b", "card": "colour-ab", "version": 1, "kind": "ab", "seal_root": "sha256:00"}
OLD_RETRY = {"at": "2026-11-30T16:00:00Z", "cells": 2,  # before 2026-12-01: no `from`
             "closed": {"finished_at": "2026-11-30T15:59:00Z", "outputs_digest": "sha256:aa",
                        "scores_digest": "sha256:bb", "counts": {"ok": 6, "truncated": 0, "failed": 2}}}
NEW_RETRY = {"at": "2026-12-01T12:00:00Z", "cells": 1, "from": 5120, "closed": {"outputs_digest": "sha256:cc"},
             "scores_from": 2048}


def test_retries_and_judge_tokens_read_typed_and_back_the_same() -> None:
    raw = encode_manifest({**HEAD, "judge_tokens": {"input": 540, "output": 54}, "retries": [OLD_RETRY, NEW_RETRY]})
    manifest = decode_manifest(raw, "manifest.json")
    assert manifest.judge_tokens == Tokens(input=540, output=54)
    old, new = manifest.retries or []
    assert old == Retry(at="2026-11-30T16:00:00Z", cells=2, closed=Closed(
        finished_at="2026-11-30T15:59:00Z", outputs_digest="sha256:aa", scores_digest="sha256:bb",
        counts=Counts(ok=6, truncated=0, failed=2)))
    assert (new.start, new.scores_from, new.closed) == (5120, 2048, Closed(outputs_digest="sha256:cc"))
    fields = manifest.fields()  # what the run's digests and a rewrite of the manifest see
    assert fields["retries"] == [OLD_RETRY, NEW_RETRY]  # an absent `from` stays absent, `from` keeps its name
    assert fields["judge_tokens"] == {"input": 540, "output": 54}


@pytest.mark.parametrize(("field", "value", "message"), [
    ("retries", [{"at": "2026-12-01T12:00:00Z", "cells": "2"}], "Expected `int`, got `str` - at `$.retries[0].cells`"),
    ("retries", [{"cells": 2}], "Object missing required field `at` - at `$.retries[0]`"),
    ("judge_tokens", {"input": 1}, "Object missing required field `output` - at `$.judge_tokens`"),
])
def test_a_mistyped_retry_or_token_count_names_the_field(field: str, value: object, message: str) -> None:
    with pytest.raises(RunError) as caught:
        decode_manifest(json.dumps({**HEAD, field: value}).encode(), "results/r/manifest.json")
    assert str(caught.value) == f"results/r/manifest.json: {message}"


def test_one_rig_line_for_a_run_a_judge_and_a_page() -> None:
    """The model, its effort, and where it was called (the surface, else the provider), as the ledger, a judge's
    manifest and the pages all write it; a part not known is left out."""
    assert rig_line("fable-5", "high", "Claude API", "anthropic") == "fable-5 · effort high · Claude API"
    assert rig_line("j", None, None, "judge") == "j · judge"
    assert rig_line("m", "low", None, "") == "m · effort low"


@pytest.mark.parametrize(("bad", "said"), [
    (b"not json", "line 2 is not JSON"),
    (b'{"cell": "c2", "fixture": "f", "status": "done"}', "line 2: Invalid enum"),
])
def test_a_bad_row_is_named_alike_however_the_file_is_read(tmp_path: Path, bad: bytes, said: str) -> None:
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(b'{"cell": "c1", "fixture": "f", "status": "ok"}\n' + bad + b"\n")
    for read in (lambda: read_rows(path, OutputRow), lambda: list(iter_rows(path, OutputRow))):
        with pytest.raises(RunError) as info:
            read()
        assert str(info.value).startswith(f"{path}: {said}")


def test_one_stop_line_for_a_sequential_runs_end_its_verdict_and_its_page() -> None:
    schedule = Schedule(looks=[4, 8, 12], cells=[1200, 2400, 3600], spending="obf", futility=False, alpha=0.05)
    def look(n: int, decision: str) -> Look:
        return Look(look=n, repetitions=4 * n, cells=1200 * n, statistic=None, boundary=None, decision=decision,
                    at="2026-12-05T12:00:00Z")
    assert stop_line(schedule, look(2, "win")) == "stopped at look 2 of 3: win; 2,400 of 3,600 calls (33 % saved)"
    assert stop_line(schedule, look(3, "no-effect")) == "every look taken (3 of 3): no-effect; 3,600 calls"
    assert stop_line(schedule, None) == "every look taken (3 of 3); 3,600 calls"
