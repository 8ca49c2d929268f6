"""The manifest and its parts, typed (`records.Retry`, `records.Tokens`, a sequential run's `Schedule` and `Look`…):
every shape written reads back to the same bytes, a retry's `from` is written under that name and only when known,
closing fields a run did not have stay absent, and a mistyped part is one line naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from benchcard.errors import RunError
from benchcard.records.rows import (
    Closed,
    Counts,
    IntegrationGrid,
    Look,
    Manifest,
    OutputFigures,
    OutputRow,
    Retry,
    RigRecord,
    Rules,
    Schedule,
    SealedJudging,
    Tokens,
    Usage,
    decode_manifest,
    decode_rows,
    dumps_line,
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

def test_a_retry_writes_start_as_from_and_leaves_out_what_it_does_not_know() -> None:
    new = Retry(at="2026-12-01T12:00:00Z", cells=2, start=5120, closed=Closed(outputs_digest="sha256:cc"))
    assert msgspec.json.encode(new) == (b'{"at":"2026-12-01T12:00:00Z","cells":2,"from":5120,'
                                        b'"closed":{"outputs_digest":"sha256:cc"}}')
    old = msgspec.json.decode(b'{"at":"2026-11-30T16:00:00Z","cells":1}', type=Retry)
    assert old.start is msgspec.UNSET and old.scores_from is msgspec.UNSET
    assert msgspec.json.encode(old) == b'{"at":"2026-11-30T16:00:00Z","cells":1}'
    assert msgspec.json.decode(msgspec.json.encode(new), type=Retry) == new


def test_closed_fields_keep_a_null_apart_from_an_absent_field() -> None:
    closed = msgspec.json.decode(b'{"finished_at":null,"counts":{"ok":3}}', type=Closed)
    assert closed.finished_at is None and closed.outputs_digest is msgspec.UNSET
    assert closed.counts == Counts(ok=3, truncated=0, failed=0)
    assert msgspec.to_builtins(closed) == {"finished_at": None, "counts": {"ok": 3, "truncated": 0, "failed": 0}}


def test_the_rig_and_judge_plan_read_with_their_defaults() -> None:
    rig = msgspec.json.decode(b'{"provider":"openrouter","model":"a/b"}', type=RigRecord)
    assert rig == RigRecord(provider="openrouter", model="a/b", effort=None, surface=None, line="")
    plan = msgspec.json.decode(b'{"per_output":3,"judgements":18,"rig":{"provider":"judge","model":"j"}}',
                               type=SealedJudging)
    assert (plan.per_output, plan.judgements, plan.rig, plan.seed) == (3, 18, RigRecord("judge", "j"), None)
    assert plan.endpoints is None  # a judge block written before a judge's pool was listed
    pooled = msgspec.json.decode(b'{"base_url":"http://a/v1","endpoints":["http://a/v1","http://b/v1"]}',
                                 type=SealedJudging)
    assert (pooled.base_url, pooled.endpoints) == ("http://a/v1", ["http://a/v1", "http://b/v1"])


@pytest.mark.parametrize(("raw", "kind", "message"), [
    (b'{"input":1}', Tokens, "Object missing required field `output`"),
    (b'{"input":1,"output":"2"}', Tokens, "Expected `int`, got `str` - at `$.output`"),
    (b'{"at":"x","cells":1,"from":"5"}', Retry, "Expected `int`, got `str` - at `$.from`"),
    (b'{"at":"x","cells":1,"closed":{"counts":{"ok":-1.5}}}', Retry, "at `$.closed.counts.ok`"),
    (b'{"model":"m"}', RigRecord, "Object missing required field `provider`"),
])
def test_a_part_of_the_wrong_shape_is_refused_naming_its_path(raw: bytes, kind: type, message: str) -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.json.decode(raw, type=kind)
    assert message in str(caught.value)


def test_a_sequential_runs_schedule_and_looks_read_back_and_say_where_it_stopped() -> None:

    schedule = Schedule(looks=[2, 4, 6], cells=[48, 96, 144], spending="obrien-fleming", futility=True, alpha=0.05)
    going = Look(look=1, repetitions=2, cells=48, statistic=1.2, boundary=3.9, lower=-3.9, futility=0.0,
                 decision="continue", at="2026-12-04T19:00:00Z", outputs_to=10, scores_to=5)
    won = msgspec.structs.replace(going, look=2, repetitions=4, cells=96, statistic=4.1, boundary=2.8,
                                  decision="win")
    base = Manifest(run="r", card="c", version=1, kind="ab", seal_root="sha256:" + "0" * 64)
    assert "sequential" not in base.fields() and "looks" not in base.fields()  # older manifests read unchanged
    assert base.stopped_look is None
    running = msgspec.structs.replace(base, sequential=schedule, looks=[going])
    assert running.stopped_look is None
    stopped = decode_manifest(encode_manifest(msgspec.structs.replace(running, looks=[going, won])), "m.json")
    assert stopped.stopped_look == won and stopped.sequential == schedule


def test_an_older_schedule_without_its_rule_parameters_reads_and_writes_back_unchanged() -> None:

    old = {"looks": [3, 6, 9], "cells": [96, 192, 288], "spending": "obrien-fleming", "futility": True, "alpha": 0.05}
    raw = msgspec.json.encode({"run": "r", "card": "c", "version": 1, "kind": "ab", "seal_root": "s",
                               "started_at": "2026-12-04T21:00:00Z", "sequential": old})
    manifest = decode_manifest(raw, "manifest.json")
    assert manifest.fields()["sequential"] == old  # re-encoded byte for byte: no field appears
    assert msgspec.json.decode(encode_manifest(manifest))["sequential"] == old
    assert manifest.sequential is not None and manifest.sequential.futility_level is msgspec.UNSET


def test_rule_parameters_say_the_first_that_differs() -> None:

    rules = Rules(futility_level=0.1, decide_from=1, grid=IntegrationGrid(points=401, sds=8.0, cap=10.0))
    today = Rules(futility_level=0.035, decide_from=3, grid=IntegrationGrid(points=801, sds=9.0, cap=12.0))
    assert today.changed(rules) == "futility level 0.035, this benchcard uses 0.1"
    assert today.changed(today) is None


OLD_ROW = (b'{"cell":"c1","fixture":"f1","status":"ok","text":"red","finish_reason":"stop","usage":{"input":12,'
           b'"output":7,"reasoning":0},"cost":0.0001,"latency_ms":5.0,"attempts":1,"error":null}\n')


def test_the_prompt_caches_counts_are_new_optional_fields_old_rows_read_and_are_written_as_before() -> None:
    """outputs.jsonl is append-only: a row written before the cache's counts reads (as none cached, its cost not
    an upper bound), a row without them is written byte for byte as before, and one with them adds only the new
    fields, which read back."""
    [old] = decode_rows(OLD_ROW, OutputRow, "outputs.jsonl")
    assert (old.usage.cached_tokens, old.usage.written_tokens, old.cost_upper_bound) == (0, 0, msgspec.UNSET)
    assert dumps_line(old) == OLD_ROW
    [figures] = decode_rows(OLD_ROW, OutputFigures, "outputs.jsonl")
    assert figures.cost_upper_bound is msgspec.UNSET
    cached = msgspec.structs.replace(old, usage=Usage.of(2048, 7, cached=1920), cost_upper_bound=True)
    line = dumps_line(cached)
    assert b'"usage":{"input":2048,"output":7,"reasoning":0,"cached":1920}' in line
    assert line.endswith(b',"error":null,"cost_upper_bound":true}\n')
    assert decode_rows(line, OutputRow, "outputs.jsonl") == [cached]
