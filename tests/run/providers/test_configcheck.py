"""benchcard.yaml is checked whole before a run folder exists: a bad value is one line, never a failed grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from ...helpers_cli import bc, one_line_error
from ...helpers_run import KEY_ENV, ab_project

GOOD = "providers:\n  fake: {type: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: BENCHCARD_TEST_KEY"


@pytest.mark.parametrize(("config", "expected"), [
    (GOOD + ", headers: {X-Team: \"a\\nb\"}}\n", "providers.fake.headers.X-Team"),
    (GOOD + ", headers: {\"X-Te\\nam\": b}}\n", "X-Te\\nam"),
    (GOOD + "}\n  \"ba\\nd\": {type: openai}\n", "ba\\nd"),
    ("providers:\n  fake: {type: openai, base_url: 'ftp://127.0.0.1/v1', api_key_env: BENCHCARD_TEST_KEY}\n",
     "providers.fake.base_url"),
    ("providers:\n  fake: {type: openai, base_url: 'javascript:alert(1)'}\n", "providers.fake.base_url"),
    ("providers:\n  fake: {type: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: 'K\"; touch x; \"'}\n",
     "providers.fake.api_key_env"),
    (GOOD + ", requests_per_minute: -5}\n", "providers.fake.requests_per_minute"),
    (GOOD + ", requests_per_minute: fast}\n", "providers.fake.requests_per_minute"),
    (GOOD + ", headers: [a, b]}\n", "providers.fake.headers"),
    ("providers: [fake, other]\n", "field 'providers'"),
    ("providers:\n  fake: openai\n", "providers.fake"),
    ("providers: {fake: {type: openai\n", "malformed YAML"),
    ("- just\n- a list\n", "expected a mapping"),
    (GOOD + "}\nproviders: {}\n", "written twice"),
    # every setting of every provider, whichever the run uses (issue 25: `bytes: 10` made a folder, then "(-22)")
    (GOOD + ", batch_limits: {bytes: 10}}\n", "field 'providers.fake.batch_limits.bytes': expected an integer >= 1024"),
    (GOOD + ", batch_limits: {requests: 0}}\n", "providers.fake.batch_limits.requests"),
    (GOOD + ", batch_limits: {files: 2}}\n", "providers.fake.batch_limits"),
    (GOOD + ", batch_limit: {requests: 5}}\n", "field 'providers.fake.batch_limit': not a provider setting"),
    (GOOD + ", pool: {fail_after: 2}}\n", "field 'providers.fake.pool': pool settings need a pool of servers"),
    ("providers:\n  fake:\n    type: openai\n    base_urls: ['http://127.0.0.1:9/v1']\n    pool: {fail_after: -1}\n",
     "providers.fake.pool.fail_after"),
    ("providers:\n  fake:\n    type: openai\n    base_urls: [{url: 'http://127.0.0.1:9/v1', concurrency: 0}]\n",
     "providers.fake.base_urls[0].concurrency"),
    (GOOD + "}\n  other: {type: openai, base_url: 'http://127.0.0.1:8/v1', batch_limits: {bytes: 10}}\n",
     "providers.other.batch_limits.bytes"),
    (GOOD + "}\nprices:\n  test/model: {input: -1, output: 1}\n", "prices.test/model.input"),
    (GOOD + "}\nprices:\n  test/model: {input: 1, output: 1, batch_discount: 2}\n",
     "prices.test/model.batch_discount"),
    # provider names a person reads on every page and rig line (issue 25.7)
    (GOOD + "}\n  \"\u043epenai\": {type: openai, base_url: 'http://127.0.0.1:8/v1'}\n",
     "field 'providers': provider names 'openai' and 'оpenai' ('\\u043epenai') read the same"),
    (GOOD + "}\n  \"fake\\u200b\": {type: openai, base_url: 'http://127.0.0.1:8/v1'}\n",
     "field 'providers': provider name 'fake\\u200b' holds an invisible or control character"),
])
def test_a_bad_config_is_one_line_before_any_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       config: str, expected: str) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(config, encoding="utf-8")
    line = one_line_error(bc(tmp_path, "run", "colour-ab", "--provider", "fake", "--json"))
    assert "benchcard.yaml" in line and expected in line, line
    assert not project.results_dir.exists()


def test_a_key_with_a_newline_is_refused_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0000\n")
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(GOOD + "}\n", encoding="utf-8")
    line = one_line_error(bc(tmp_path, "run", "colour-ab", "--provider", "fake", "--json"))
    assert KEY_ENV in line and "sk-test" not in line
    assert not project.results_dir.exists()


@pytest.mark.parametrize("url", ["ftp://host/v1", "http://", "http://host/v1?x=1", "http://ho st/v1", "host/v1"])
def test_a_base_url_flag_that_is_not_an_http_url_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            url: str) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(GOOD + "}\n", encoding="utf-8")
    line = one_line_error(bc(tmp_path, "run", "colour-ab", "--provider", "fake", "--base-url", url, "--json"))
    assert "--base-url" in line
    assert not project.results_dir.exists()


def test_a_batch_limit_too_small_for_one_request_is_refused_before_the_run_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(GOOD + ", batch_limits: {bytes: 10}}\n", encoding="utf-8")
    line = one_line_error(bc(tmp_path, "run", "colour-ab", "--provider", "fake", "--batch"))
    assert line == ("error: benchcard.yaml: field 'providers.fake.batch_limits.bytes': expected an integer >= 1024 "
                    "(a batch file must hold at least one whole request), got 10")
    assert not project.results_dir.exists()
