"""The manifest's parts, typed: a retry's `from` is written under that name and only when known, closing fields a
run did not have stay absent, and a part of the wrong shape is refused naming its path."""

from __future__ import annotations

import msgspec
import pytest

from benchcard.records._manifestparts import Closed, Counts, JudgePlan, Retry, RigRecord, Tokens


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
                               type=JudgePlan)
    assert (plan.per_output, plan.judgements, plan.rig, plan.seed) == (3, 18, RigRecord("judge", "j"), None)


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
    from benchcard.records._manifestparts import Look, Schedule
    from benchcard.records.rows import Manifest, decode_manifest, encode_manifest

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
    from benchcard.records.rows import decode_manifest, encode_manifest

    old = {"looks": [3, 6, 9], "cells": [96, 192, 288], "spending": "obrien-fleming", "futility": True, "alpha": 0.05}
    raw = msgspec.json.encode({"run": "r", "card": "c", "version": 1, "kind": "ab", "seal_root": "s",
                               "started_at": "2026-12-04T21:00:00Z", "sequential": old})
    manifest = decode_manifest(raw, "manifest.json")
    assert manifest.fields()["sequential"] == old  # re-encoded byte for byte: no field appears
    assert msgspec.json.decode(encode_manifest(manifest))["sequential"] == old
    assert manifest.sequential is not None and manifest.sequential.futility_level is msgspec.UNSET


def test_rule_parameters_say_the_first_that_differs() -> None:
    from benchcard.records._manifestparts import Grid, Rules

    rules = Rules(futility_level=0.1, decide_from=1, grid=Grid(points=401, sds=8.0, cap=10.0))
    today = Rules(futility_level=0.035, decide_from=3, grid=Grid(points=801, sds=9.0, cap=12.0))
    assert today.changed(rules) == "futility level 0.035, this benchcard uses 0.1"
    assert today.changed(today) is None
