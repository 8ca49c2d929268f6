"""A command run in project A never reaches into project B: no verdict, resume or sheet of B's runs. And the
project's benchcard.yaml, checked whole before a run folder exists: a bad value is one line naming the file, the
field and what was expected, never a failed grid (a pool of servers, its settings and batch limits included)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchcard.errors import ProjectError, ProviderError
from benchcard.project import (
    Endpoint,
    Project,
    parse_batch_limits,
    parse_config,
    parse_endpoints,
    parse_pool,
    provider_settings,
    version_named,
)

from .helpers_cli import bc, one_line_error
from .helpers_run import KEY_ENV, ab_project
from .helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, make_project, make_run, the_card


@pytest.mark.parametrize("command", ["verdict", "blind-sheet"])
def test_a_run_of_another_project_is_refused(tmp_path: Path, command: str) -> None:
    a, b = make_project(tmp_path / "a"), make_project(tmp_path / "b")
    make_run(a, the_card(a), ab_metrics(STRONG_BASE, STRONG_VAR))
    theirs = make_run(b, the_card(b), ab_metrics(STRONG_BASE, STRONG_VAR))
    line = one_line_error(bc(a.root, command, str(theirs)))
    assert "outside this project" in line
    assert not a.ledger_path.exists() and not b.ledger_path.exists()
    assert not (theirs / "verdict.json").exists() and not list(tmp_path.glob("*.csv"))


def test_a_link_from_results_to_another_project_is_refused(tmp_path: Path) -> None:
    a, b = make_project(tmp_path / "a"), make_project(tmp_path / "b")
    theirs = make_run(b, the_card(b), ab_metrics(STRONG_BASE, STRONG_VAR))
    mine = a.results_dir / theirs.relative_to(b.results_dir)
    mine.parent.mkdir(parents=True)
    mine.symlink_to(theirs)
    assert "outside this project" in one_line_error(bc(a.root, "verdict", theirs.name))
    assert not a.ledger_path.exists()


def test_resume_of_a_run_folder_of_another_project_is_refused(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    a, b = ab_project(tmp_path / "a", "http://127.0.0.1:9/v1"), ab_project(tmp_path / "b", "http://127.0.0.1:9/v1")
    theirs = b.run_dir("colour-ab", 1, "20261130T000000Z-abcd")
    theirs.mkdir(parents=True)
    line = one_line_error(bc(a.root, "run", "colour-ab", "--resume", str(theirs), "--attempts", "1", "--json"))
    assert "outside this project" in line
    assert list(theirs.iterdir()) == [] and not a.results_dir.exists()


COMMANDS = [["check"], ["seal", "x"], ["run", "x"], ["curl", "x"], ["plan", "x"], ["verdict", "x"], ["ledger"],
            ["ledger", "--verify"], ["site"], ["blind-sheet", "x"], ["grade", "x", "s.csv"], ["status", "x"],
            ["export", "x"]]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_outside_a_project_every_command_says_so_and_suggests_c(tmp_path: Path, args: list[str]) -> None:
    from click.testing import CliRunner

    from benchcard.cli import cli

    (tmp_path / "s.csv").write_text("row\n", encoding="utf-8")
    result = CliRunner().invoke(cli, args)  # from tmp_path, which holds no cards/
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (f"error: no benchcard project here: no cards/ folder in {tmp_path.resolve()} or "
                                     "any folder above it; run from a project folder, or name one with -C DIR")
    assert not (tmp_path / "results").exists() and not (tmp_path / "site").exists()


def test_c_naming_a_folder_that_is_not_a_project(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    empty = tmp_path / "empty"
    assert one_line_error(bc(empty, "ledger")) == (
        f"error: -C {empty}: not a benchcard project (no cards/ folder in {empty.resolve()})")
    assert one_line_error(bc(tmp_path / "nowhere", "check")) == f"error: -C {tmp_path / 'nowhere'}: no such folder"


def test_project_of_takes_a_project_a_str_or_a_path_and_finds_the_project_above_a_folder(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "sub").mkdir()
    project = Project(tmp_path.resolve())
    assert Project.of(project) is project
    assert Project.of(str(tmp_path)) == project and Project.of(tmp_path) == project
    assert Project.of(tmp_path / "cards" / "sub") == project  # as `-C DIR` finds it
    with pytest.raises(ProjectError) as info:
        Project.of(tmp_path / "nowhere")
    assert str(info.value) == f"project={tmp_path / 'nowhere'}: no such folder"


# ------------------------------------------------------------ no output path over what the project owns

OWNED = ["results/ledger.jsonl", "results/new.csv", "results/colour-ab/new.csv", "cards/new.csv",
         "keys/new.csv", "fixtures/new.csv", "benchcard.yaml", "LINK-TO-RESULTS/x.csv"]


def _judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A project with a run not judged yet, so no ledger exists (the issue's case), a benchcard.yaml, and a
    link in the project pointing at its results/."""
    project = make_project(tmp_path / "proj")
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    (project.root / "benchcard.yaml").write_text("providers: {}\n", encoding="utf-8")
    (project.root / "LINK-TO-RESULTS").symlink_to(project.results_dir)
    return project.root, run_dir.name


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("target", OWNED)
@pytest.mark.parametrize("command", ["export", "export-parquet", "blind-sheet"])
def test_no_command_writes_a_file_over_or_into_what_the_project_owns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   command: str, target: str) -> None:
    """Issue 25: `export --out results/ledger.jsonl` wrote CSV where the ledger goes; every ledger command then
    failed. One check (`Project.refuse_protected`) serves every command that takes an output path."""
    root, run = _judged(tmp_path, monkeypatch)
    before = _snapshot(root)
    args = {"export": ["export", run, "--out"], "export-parquet": ["export", run, "--format", "parquet", "--out"],
            "blind-sheet": ["blind-sheet", run, "--force", "--out"]}[command]
    line = one_line_error(bc(root, *args, str(root / target)))
    assert "part of the project's own records; benchcard never writes over it or adds to it" in line, line
    assert _snapshot(root) == before  # nothing written, created, or moved aside
    assert not (root / "results" / "ledger.jsonl").exists()


@pytest.mark.parametrize("target", ["results", "results/site", "cards", "keys/site", "fixtures/x", ".", ".."])
def test_the_site_is_never_built_into_what_the_project_owns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            target: str) -> None:
    root, _ = _judged(tmp_path, monkeypatch)
    before = _snapshot(root)
    line = one_line_error(bc(root, "site", "--out", str(root / target)))
    assert "part of the project's own records" in line, line
    assert _snapshot(root) == before


def test_compare_out_may_not_be_in_the_projects_records_but_its_own_folder(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    root, _ = _judged(tmp_path, monkeypatch)
    for arm, shift in (("a", 0), ("b", 1)):
        lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float((i + shift) % 2)})
                 for i in range(8)]
        (tmp_path / f"{arm}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    logs = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--win", "acc rises"]
    line = one_line_error(bc(root, "compare", *logs, "--out", str(root / "results" / "colour-ab" / "cmp")))
    assert "part of the project's own records" in line
    assert bc(root, "compare", *logs, "--out", str(root / "results" / "_compare" / "mine")).exit_code == 0


# ---------------------------------------------------------------------------------------------- benchcard.yaml

GOOD = "providers:\n  fake: {type: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: BENCHCARD_TEST_KEY"


@pytest.mark.parametrize(("config", "expected"), [
    (GOOD + ", headers: {X-Team: \"a\\nb\"}}\n", "providers.fake.headers.X-Team"),
    (GOOD + ", headers: {\"X-Te\\nam\": b}}\n", "field 'providers.fake.headers': a key holding a control character"),
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
    ("providers:\n  fake:\n    type: openai\n    base_urls: [{url: 'http://127.0.0.1:9/v1', concurrency: 2000}]\n",
     "field 'providers.fake.base_urls[0].concurrency': expected at most 1,024 calls in flight (each holds a socket"),
    # a pool's servers together: its workers are all started at once (two of 1,024 each started 2,048)
    ("providers:\n  fake:\n    type: openai\n    base_urls: [{url: 'http://127.0.0.1:9/v1', concurrency: 1024}, "
     "{url: 'http://127.0.0.1:8/v1', concurrency: 1024}]\n", "field 'providers.fake.base_urls': 2 servers take 2,048 "
     "calls in flight together, more than the 1,024 a run may keep (each holds a socket and a worker); give the "
     "servers lower concurrencies, or fewer servers"),
    ("providers:\n  fake:\n    type: openai\n    base_urls: [{url: 'http://127.0.0.1:9/v1', concurrency: 1024}, "
     "'http://127.0.0.1:8/v1']\n", "field 'providers.fake.base_urls': 2 servers take 1,025 calls in flight together "
     "at the least"),
    (GOOD + "}\n  other: {type: openai, base_url: 'http://127.0.0.1:8/v1', batch_limits: {bytes: 10}}\n",
     "providers.other.batch_limits.bytes"),
    # a field benchcard.yaml does not know is refused, as a card's is (a misspelt `prices:` left every cost unknown)
    (GOOD + "}\nprice:\n  test/model: {input: 1, output: 1}\n",
     "field 'price': unknown field; expected providers or prices"),
    (GOOD + "}\nprices:\n  test/model: {input: -1, output: 1}\n", "prices.test/model.input"),
    (GOOD + "}\nprices:\n  test/model: {input: 1, output: 1, batch_discount: 2}\n",
     "prices.test/model.batch_discount"),
    (GOOD + "}\nprices:\n  test/model: {input: 1, output: 1, batch_dicsount: 0.5}\n",
     "field 'prices.test/model.batch_dicsount': unknown field; expected input, output, batch_discount, "
     "cached_input, cache_write or cache_write_1h"),
    (GOOD + "}\nprices:\n  test/model: {input: 1, output: 1, cached_input: .nan}\n",
     "field 'prices.test/model.cached_input': expected USD per million tokens (a number >= 0), got nan"),
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


@pytest.mark.parametrize(("pasted", "got"), [
    ("sk-proj-PASTED-c0ffee-4b1d", "expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got text of 26 "
     "character(s) that is not one, quoted nowhere since it may be the key itself (only the name of the variable "
     "that holds the key goes here)"),
    ("hf_PASTEDxQ7rT2mZ9vK4bN8cL1", "expected the name of the variable that holds the key, got 27 characters mixing "
     "lower and upper case and digits as a key does (`hf_…`, `gsk_…`), quoted nowhere since it may be the key "
     "itself; name its variable (OPENAI_API_KEY)"),
])
@pytest.mark.parametrize("command", [("check",), ("run", "colour-ab"), ("curl", "colour-ab")])
def test_a_key_pasted_as_api_key_env_is_quoted_by_no_line(tmp_path: Path, command: tuple[str, ...], pasted: str,
                                                          got: str) -> None:
    """`api_key_env: sk-proj-…` (the key where its variable's name goes, a common slip): the line refusing it quoted
    the key, `got 'sk-proj-…'`, onto the terminal and into CI logs; a key that reads as a name (`hf_…`) was taken,
    and `… is not set` and `curl`'s `$NAME` printed it (hostile audit, round 20)."""
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(
        f"providers:\n  fake: {{type: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: {pasted}}}\n",
        encoding="utf-8")
    result = bc(tmp_path, *command)
    assert result.exit_code == 1 and "PASTED" not in result.output + result.stderr
    assert f"benchcard.yaml: field 'providers.fake.api_key_env': {got}" in result.output
    assert not project.results_dir.exists()


#: A key in each shape YAML 1.1 reads as another type than text: hexadecimal, octal, base 60, underscores, a float, a
#: date (a valid one and one the calendar has not), true/false; with how YAML reads each, neither may be said back.
KEYLIKE = ["0x5f3a9b2c7d1e4f60a8b3c9d2", "017345627012345670", "1:20:30:45:12:33:58", "5_734_562_701_234_567",
           "738291.046518273645", "6.02214076e+23", "2026-12-07 10:20:30.738291046518", "2026-02-30", "2026-12-07",
           "YES", "0x_"]
#: Every field of benchcard.yaml that may hold a secret, as the line refusing it names it.
SECRET_FIELDS = [("headers: {Authorization: %s}", "providers.fake.headers.Authorization"),
                 ("base_url: %s", "providers.fake.base_url"),
                 ("base_urls: [%s]", "providers.fake.base_urls"),
                 ("base_urls: [{url: %s}]", "providers.fake.base_urls"),
                 ("api_key_env: %s", "providers.fake.api_key_env")]


def _said_forms(value: str) -> set[str]:
    """The key as written, and as YAML 1.1 reads it (the number a hexadecimal key is, `True`, a date)."""
    try:
        read = yaml.safe_load(value)
    except ValueError:  # a date the calendar has not, `0x_`
        return {value}
    return {value, str(read), repr(read)}


@pytest.mark.parametrize("value", KEYLIKE)
@pytest.mark.parametrize(("written", "field"), SECRET_FIELDS, ids=[f for _, f in SECRET_FIELDS])
def test_a_key_yaml_reads_as_another_type_is_said_back_by_no_line(tmp_path: Path, written: str, field: str,
                                                                   value: str) -> None:
    """Review (tail23a): `Authorization: 0x5f3a…` (a hexadecimal key, written plain) was refused as 'YAML 1.1 reads
    0x5f3a… as the number 4497…; write 4497…': the key twice, once in decimal, onto the terminal and into CI logs;
    a float-looking one as 'got 738291.046518273645', a date-looking one as 'got datetime.datetime(…)'. Each field
    that may hold a secret is named, with what YAML read it as and to quote it, and the key is not."""
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(
        "providers:\n  fake:\n    type: openai\n    " + written % value + "\n", encoding="utf-8")
    result = bc(tmp_path, "check")
    assert result.exit_code == 1
    said = result.output + result.stderr
    assert not any(form in said for form in _said_forms(value)), said
    assert f"benchcard.yaml:4: field '{field}" in said or f"benchcard.yaml: field '{field}" in said, said
    assert "quote" in said, said
    assert not project.results_dir.exists()


@pytest.mark.parametrize(("written", "field"), [
    ("headers: {Authorization:Bearer sk-live-0123456789}", "field 'providers.fake.headers': expected a header name"),
    ("headers: {Authorization: *sk-live-0123456789}", "malformed YAML: found undefined alias; likely a value"),
    ("headers:\n      Authorization: !sk-live-0123456789", "field 'providers.fake.headers.Authorization': a value "
                                                      "starting with '!'"),
    ("headers: {0x5f3a9b2c7d1e4f60: Bearer}", "field 'providers.fake.headers': YAML reads a key here as a number"),
    ("Authorization:Bearer sk-live-0123456789: x", "field 'providers.fake': a key of 39 character(s) that is no name"),
    ("x: 1\nAuthorization:Bearer sk-live-0123456789: x", "field '(top level)': a key of 39 character(s) that is no "
                                                        "name"),
])
def test_a_header_written_as_yaml_reads_otherwise_is_said_back_by_no_line(tmp_path: Path, written: str,
                                                                          field: str) -> None:
    """A header written without the space after its colon is one key holding the value (`{Authorization:Bearer
    sk-…}`), which the line quoted (and so did the line refusing it as a provider's setting or a top-level field
    when it stood there); a value starting with `*` (an alias to YAML) or `!` (a tag) was said back as
    the alias's or the tag's name."""
    ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").write_text(
        "providers:\n  fake:\n    type: openai\n    " + written + "\n", encoding="utf-8")
    result = bc(tmp_path, "check")
    said = result.output + result.stderr
    assert result.exit_code == 1 and "sk-live" not in said and "5f3a" not in said, said
    assert field in said, said


def test_a_pool_at_the_run_s_concurrency_past_the_cap_is_one_line_before_any_run_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers stating no concurrency take --concurrency each: 3 servers at 600 started 1,800 workers."""
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path)
    urls = "".join(f"      - http://127.0.0.1:{port}/v1\n" for port in (7, 8, 9))
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    api_key_env: {KEY_ENV}\n"
                                             f"    base_urls:\n{urls}", encoding="utf-8")
    line = one_line_error(bc(tmp_path, "run", "colour-ab", "--provider", "fake", "--concurrency", "600"))
    assert line == ("error: benchcard.yaml: field 'providers.fake.base_urls': 3 servers take 1,800 calls in flight "
                    "together (3 of them at --concurrency 600 each, stating none), more than the 1,024 a run may keep "
                    "(each holds a socket and a worker); give each server its concurrency, or a lower --concurrency")
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


@pytest.mark.parametrize(("entry", "message"), [
    ("base_urls: []", "field 'providers.fake.base_urls': expected a non-empty list"),
    ("base_urls: [ftp://x]", "field 'providers.fake.base_urls[0]': expected an http:// or https:// URL"),
    ("base_urls: [{url: 'http://a/v1', concurrency: 0}]", "field 'providers.fake.base_urls[0].concurrency': "
                                                          "expected an integer > 0"),
    ("base_urls: ['http://a/v1', 'http://a/v1/']", "http://a/v1 is listed twice"),
    ("base_url: 'http://a/v1'\n    base_urls: ['http://b/v1']", "give base_url or base_urls, not both"),
    ("base_urls: ['http://a/v1']\n    pool: {fail_after: 1.5}", "field 'providers.fake.pool.fail_after'"),
])
def test_a_bad_pool_is_one_line_naming_the_field(tmp_path: Path, key: str, entry: str, message: str) -> None:
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    (tmp_path / "benchcard.yaml").write_text(f"providers:\n  fake:\n    type: openai\n    {entry}\n",
                                             encoding="utf-8")
    result = bc(project.root, "run", "colour-ab")
    assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_a_pool_is_its_urls_with_each_servers_limits() -> None:
    declared = {"base_urls": ["http://gpu1:8000/v1", {"url": "http://gpu2:8000/v1", "concurrency": 32,
                                                      "requests_per_minute": 600}]}
    assert parse_endpoints("vllm", declared, None) == (
        Endpoint("http://gpu1:8000/v1"), Endpoint("http://gpu2:8000/v1", 32, 600))
    assert parse_endpoints("vllm", {"base_url": "http://one/v1"}, None) == ()  # one server is no pool


@pytest.mark.parametrize(("declared", "message"), [
    ({"base_urls": "http://a/v1"}, "field 'providers.p.base_urls': expected a non-empty list of URLs or "
                                   "{url, concurrency, requests_per_minute}"),
    ({"base_urls": [7]}, "field 'providers.p.base_urls[0]': expected a URL or {url, concurrency, "
                         "requests_per_minute}, got a number (not shown: a URL may hold a password; quote a URL "
                         "YAML reads so)"),
    ({"base_urls": [{"url": "http://a/v1", "weight": 2}]}, "field 'providers.p.base_urls[0]': unknown key "
                                                           "'weight'; expected url, concurrency, requests_per_minute"),
    ({"base_urls": ["http://user:pw@a/v1"]}, "field 'providers.p.base_urls[0]': a pool URL may not carry "
                                             "user:password; use one base_url for a server behind a password"),
    ({"base_urls": [{"url": "http://a/v1", "requests_per_minute": True}]},
     "field 'providers.p.base_urls[0].requests_per_minute': expected a number > 0, got True"),
    ({"base_urls": [{"url": "http://a/v1", "concurrency": 2.5}]},
     "field 'providers.p.base_urls[0].concurrency': expected an integer > 0, got 2.5"),
])
def test_a_bad_pool_entry_names_its_field(declared: dict[str, Any], message: str) -> None:
    with pytest.raises(ProviderError) as info:
        parse_endpoints("p", declared, None)
    assert str(info.value) == f"benchcard.yaml: {message}"


def test_a_pool_url_carrying_a_key_says_the_variable_the_provider_names_for_it() -> None:
    """The provider's api_key_env is read once, checked, and is what a base_url's line, a pool URL's line and the
    settings all name (`provider_settings`)."""
    entry: dict[str, Any] = {"type": "openai", "api_key_env": "MY_KEY", "base_urls": ["http://a/v1?api_key=sk-1"]}
    with pytest.raises(ProviderError) as info:
        provider_settings("p", entry)
    assert str(info.value) == ("benchcard.yaml: field 'providers.p.base_urls[0]': the URL carries a key in its query "
                               "(?api_key=…), which would be stored with the URL: put the key in $MY_KEY (the "
                               "provider's api_key_env), sent as a header and never stored, and give the URL "
                               "without its query")
    entry["base_urls"] = ["http://a/v1", "http://b/v1"]
    assert provider_settings("p", entry).api_key_env == "MY_KEY"
    entry["api_key_env"] = 7
    with pytest.raises(ProviderError, match=r"field 'providers.p.api_key_env': expected an environment variable"):
        provider_settings("p", entry)


def test_the_pool_settings_default_and_are_checked() -> None:
    assert parse_pool("p", {}) == {"fail_after": 3.0, "out_for_s": 10.0}
    assert parse_pool("p", {"pool": {"out_for_s": 2.5}}) == {"fail_after": 3.0, "out_for_s": 2.5}
    for raw, message in (([3], "expected {fail_after: N, out_for_s: seconds}"),
                         ({"fail": 3}, "unknown key 'fail'; expected fail_after, out_for_s"),
                         ({"out_for_s": -1}, "field 'providers.p.pool.out_for_s': expected a number > 0, got -1")):
        with pytest.raises(ProviderError, match=re.escape(message)):
            parse_pool("p", {"pool": raw})


def test_batch_limits_may_only_be_counts() -> None:
    assert parse_batch_limits("p", {}) == {}
    assert parse_batch_limits("p", {"batch_limits": {"requests": 7, "bytes": 1200}}) == {"requests": 7, "bytes": 1200}
    with pytest.raises(ProviderError) as info:
        parse_batch_limits("p", {"batch_limits": {"requests": 7, "tokens": 9}})
    assert str(info.value) == "benchcard.yaml: field 'providers.p.batch_limits': expected {requests: N, bytes: N}"
    with pytest.raises(ProviderError, match=re.escape("field 'providers.p.batch_limits.bytes': expected an integer")):
        parse_batch_limits("p", {"batch_limits": {"bytes": 0}})


def test_the_built_in_provider_names_the_config_check_knows_are_the_runs() -> None:
    """project.py cannot import run/ (a lower layer), so it names the built-in providers itself: the two lists
    must stay one, or a clash with a new built-in name would go unseen."""
    from benchcard.project import BUILTIN_NAMES
    from benchcard.run.providers import BUILTIN

    assert sorted(BUILTIN_NAMES) == sorted(BUILTIN)


def test_an_empty_project_or_name_from_python_is_refused_not_the_current_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchcard.give_verdict(run, project=os.environ.get("PROJ", ""))` with PROJ unset worked on the project
    around the current folder, as `-C ""` did before the command line refused it (31758b0); a run or card named
    empty was `: not a run folder (no manifest.json)`, or the run the current folder is. Both are one line naming
    the argument, as `run_card(base_url="")` is."""
    import benchcard

    here = tmp_path / "here"
    (here / "cards").mkdir(parents=True)
    monkeypatch.chdir(here)
    with pytest.raises(ProjectError) as info:
        Project.of("")
    assert str(info.value) == "project='': empty (a variable set but empty?); give a folder, or None for the project " \
                              "around the current folder"
    for call, said in ((lambda: benchcard.give_verdict("x", project=""), "project=''"),
                       (lambda: benchcard.give_verdict(""), "run=''"), (lambda: benchcard.manifest_of(""), "run=''"),
                       (lambda: benchcard.load_card(""), "card=''"), (lambda: benchcard.seal_card(""), "card=''"),
                       (lambda: benchcard.plan("tiny", pilot=""), "pilot=''")):
        with pytest.raises(benchcard.BenchcardError) as raised:
            call()
        assert str(raised.value).startswith(f"{said}: empty (a variable set but empty?); give "), raised.value
    assert list(here.iterdir()) == [here / "cards"]


def test_a_version_is_read_only_from_the_name_the_project_writes_for_it(tmp_path: Path) -> None:
    """`v<N>` as `run_dir` and `seal_path` write it, for run folders, seals and the site alike: '²', '١', `v1_0`
    (int() read it as 10) and `v01`, which would be a second folder of v1, are no version's name."""
    project = Project(tmp_path)
    assert version_named(project.run_dir("c", 12, "r").parent.name) == 12
    assert version_named(project.seal_path("c", 0).name.removesuffix(".seal.json")) == 0
    assert version_named("v999999999") == 999999999
    assert [version_named(name) for name in ("v01", "v00", "v\u00b2", "v\u0663", "v1_0", "v", "3", "v1 ", "V1",
                                             "v1000000000")] == [None] * 10


@pytest.mark.parametrize(("target", "expected"), [
    ("providers.yaml", "benchcard.yaml: a symbolic link to providers.yaml, which is not there; expected the file: "
                       "point the link at it or put the file in its place"),
    ("benchcard.yaml", "benchcard.yaml: a symbolic link that leads back to itself (a loop); expected the file: put "
                       "it in the link's place"),
])
def test_a_config_linked_to_nothing_is_one_line_not_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               target: str, expected: str) -> None:
    """Small audit (small21): a benchcard.yaml linked to nothing or to itself was read as none, so its providers
    and prices were silently not used (a run on a provider it declares said the provider was unknown)."""
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    project = ab_project(tmp_path)
    (tmp_path / "benchcard.yaml").unlink(missing_ok=True)
    (tmp_path / "benchcard.yaml").symlink_to(target)
    assert one_line_error(bc(tmp_path, "run", "colour-ab", "--provider", "fake")) == f"error: {expected}"
    assert not project.results_dir.exists()


QUOTED = ("providers:\n  \"o'k: field 'x\":\n    type: openai\n    base_url: 'http://127.0.0.1:9/v1'\n"
          "    \"it's\": 1\n")


def test_a_setting_no_provider_has_is_named_whatever_quotes_its_file_and_fields_hold(tmp_path: Path) -> None:
    """Review (left24b): the line refusing a provider's unknown setting was cut out of another line's text at its
    first quote (`project._unknown_field`): read from a folder whose name holds a quote, it named the field
    's/benchcard.yaml: field 'providers.o'k…' and the file as the folder's first part. The location is kept as
    its parts, the file and the provider's name, and every line is built from them."""
    folder = tmp_path / "it's a \"proj\": field 'x'"
    ab_project(folder)
    (folder / "benchcard.yaml").write_text(QUOTED, encoding="utf-8")
    setting = ("field 'providers.o'k: field 'x.it's': not a provider setting; expected one of type, base_url, "
               "api_key_env, requests_per_minute, headers, base_urls, pool, batch_limits")
    assert one_line_error(bc(folder, "check")) == f"error: benchcard.yaml: {setting}"
    source = str(folder / "benchcard.yaml")  # a Python caller naming the file as it is
    with pytest.raises(ProviderError) as raised:
        parse_config(yaml.safe_load(QUOTED), source)
    assert str(raised.value) == f"{source}: {setting}"
    pool = QUOTED.replace("    base_url: 'http://127.0.0.1:9/v1'\n    \"it's\": 1\n",
                          "    base_urls: [{url: 'http://a/v1', w: 1}]\n")
    with pytest.raises(ProviderError) as raised:
        parse_config(yaml.safe_load(pool), source)
    assert str(raised.value) == (f"{source}: field 'providers.o'k: field 'x.base_urls[0]': unknown key 'w'; expected "
                                 "url, concurrency, requests_per_minute")
