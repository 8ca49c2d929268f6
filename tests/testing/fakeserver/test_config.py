"""The fake server's config: a bad one is refused with the key at fault, before or while the server runs."""

from __future__ import annotations

import pytest

from benchcard.testing.fakeserver import FakeServer, FakeServerError, parse_config


def test_invalid_config_is_rejected(fake: FakeServer) -> None:
    with pytest.raises(FakeServerError, match="unknown key"):
        fake.configure({"latency": 5})
    with pytest.raises(FakeServerError, match="kind"):
        fake.configure({"faults": [{"kind": "404"}]})
    with pytest.raises(FakeServerError, match="exactly one"):
        parse_config({"replies": [{"match": "x"}]})
    with pytest.raises(FakeServerError):
        FakeServer({"replies": "nope"})


def test_a_config_is_read_with_its_defaults() -> None:
    config = parse_config({"replies": [{"match": "sky", "replies_cycle": ["blue", "grey"], "cost": 0.5}],
                           "faults": [{"kind": 429, "retry_after": 2}], "batch": {"delay_s": {"upload": 1}}})
    assert config.default_reply == "ok" and config.latency_ms == 0 and config.models == ("fake-model",)
    assert config.replies[0].replies == ("blue", "grey") and config.replies[0].cycles and config.replies[0].cost == 0.5
    fault = config.faults[0]
    assert (fault.kind, fault.times, fault.retry_after, fault.hang_s, fault.code, fault.held) == (
        "429", 1, 2.0, 30.0, 502, False)
    assert config.batch.delay("upload") == 1.0 and config.batch.delay("download") == 0.0
    assert parse_config(None) == parse_config({})


@pytest.mark.parametrize(("config", "message"), [
    ({"latency_ms": -1}, "config.latency_ms: expected a number >= 0, got -1"),
    ({"record_bodies": "yes"}, "config.record_bodies: expected true or false, got 'yes'"),
    ({"replies": [{"reply": "x", "finish_reason": "done"}]}, "config.replies[0].finish_reason: expected one of"),
    ({"replies": [{"replies_cycle": []}]}, "config.replies[0].replies_cycle: expected a non-empty list of strings"),
    ({"faults": [{"kind": "500", "code": 99}]}, "config.faults[0].code: expected an integer >= 100, got 99"),
    ({"faults": [{"kind": "500", "times": True}]}, "config.faults[0].times: expected an integer >= 0, got True"),
    ({"faults": [{"kind": "500", "held": 1}]}, "config.faults[0].held: expected true or false, got 1"),
    ({"batch": {"done_fraction": 1.5}}, "config.batch.done_fraction: expected a number in [0, 1], got 1.5"),
    ({"batch": {"end": "paused"}}, "config.batch.end: expected completed, expired, cancelled or failed"),
    ({"batch": {"delay_s": {"poll": 1}}}, "config.batch.delay_s: unknown key(s) poll; allowed: create, download"),
    ({"batch": {"bad_results": "twice"}},
     "config.batch.bad_results: expected duplicate, unknown, huge, nested, nested_twice, cut_gzip, missing, "
     "shuffled or null, got 'twice'"),
    ({"batch": {"bad_poll": "slow"}},
     "config.batch.bad_poll: expected trickled, huge, mistyped, throttled or null, got 'slow'"),
    ({"batch": {"trickle_times": -1}}, "config.batch.trickle_times: expected an integer >= 0, got -1"),
    ({"replies": [{"reply": "x", "cached_tokens": -1}]}, "config.replies[0].cached_tokens: expected an integer >= 0"),
    ({"replies": [{"reply": "x", "cache_write_tokens": 10, "cache_write_1h_tokens": 11}]},
     "config.replies[0].cache_write_1h_tokens: expected at most cache_write_tokens (10), of which they are a part, "
     "got 11"),
    ({"models": "m"}, "config.models: expected a list of model ids"),
    ({"reply_model": 4}, "config.reply_model: expected a string, got 4"),
    ([], "config: expected an object, got []"),
])
def test_each_bad_value_names_where_it_is_and_what_was_expected(config: object, message: str) -> None:
    with pytest.raises(FakeServerError) as caught:
        parse_config(config)
    assert str(caught.value).startswith(message)
