"""A provider's `headers` of benchcard.yaml (`anthropic-beta`, a proxy's routing header) are part of what a run is:
its manifest records the ones its calls sent, a secret by its name alone; a resume refuses headers that changed;
a replication says the original's and its own. Over the fake server, which records the headers it received."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from benchcard.project import Project
from benchcard.records.plandigest import plan_digest
from benchcard.records.rows import Manifest
from benchcard.records.runreader import read_manifest
from benchcard.run._headers import header_changes, headers_text, secret_header
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import one_line_error
from ..helpers_replicate import HELPS
from ..helpers_run import KEY_ENV, ab_project, bc, ok

#: Headers a user sets: two plain ones, and three secrets (by the name, by an authentication scheme's look, by
#: holding the key, `{key}`).
PLAIN = {"anthropic-beta": "tools-2024-05-16", "X-Route": "eu-1"}
SECRET_VALUES = ("tok-S3CRET-value", "up-live-0a1b")


def configure(root: Path, url: str, headers: dict[str, str]) -> None:
    """benchcard.yaml declaring `fake` at `url` with `headers`."""
    lines = "".join(f"      {name}: {json.dumps(value)}\n" for name, value in headers.items())
    (root / "benchcard.yaml").write_text(
        f"providers:\n  fake:\n    type: openai\n    base_url: '{url}'\n    api_key_env: {KEY_ENV}\n"
        + (f"    headers:\n{lines}" if headers else ""), encoding="utf-8")


def all_headers(key: str) -> dict[str, str]:
    return {**PLAIN, "X-Api-Token": SECRET_VALUES[0], "X-Upstream": f"Bearer {SECRET_VALUES[1]}",
            "X-Mirror": f"k={key}"}


def stopped_run(tmp_path: Path, server: FakeServer, headers: dict[str, str]) -> tuple[Project, str]:
    """A colour-ab run with `headers`, stopped after 3 of its 12 calls, as a kill leaves it."""
    server.configure({"default_reply": "red", "record_headers": True})
    project = ab_project(tmp_path, fixtures=3, repetitions=2)
    configure(tmp_path, server.base_url, headers)
    [stopped] = run(project, "colour-ab", RunOptions(progress=False), stop_after=3)
    assert not stopped.finished
    return project, stopped.run


def test_a_run_records_its_headers_and_never_a_secret_value(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red", "record_headers": True})
    project = ab_project(tmp_path, fixtures=2, repetitions=1)
    configure(tmp_path, server.base_url, all_headers(key))
    result = ok(bc(project, "run", "colour-ab", "--json"))
    run_id = json.loads(result.stdout)["runs"][0]["run"]
    folder = project.results_dir / "colour-ab" / "v1" / run_id
    sent = server.stats()["headers"]
    assert len(sent) == 4 and all(h["x-api-token"] == SECRET_VALUES[0] and h["x-route"] == "eu-1" for h in sent)

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["headers"] == {**PLAIN, "X-Api-Token": None, "X-Upstream": None, "X-Mirror": None}
    ok(bc(project, "verdict", run_id))  # the plan's digest covers the headers, and verifies
    on_disk = b"".join(p.read_bytes() for p in project.results_dir.rglob("*") if p.is_file())
    for secret in (*SECRET_VALUES, key):
        assert secret.encode() not in on_disk and secret not in result.output + result.stderr


@pytest.mark.parametrize(("now", "said"), [
    ({**PLAIN, "X-Route": "us-2"}, "header X-Route was sent as 'eu-1' and is now 'us-2'"),
    ({"anthropic-beta": PLAIN["anthropic-beta"]}, "header X-Route was sent as 'eu-1' and is no longer set"),
    ({"anthropic-beta": PLAIN["anthropic-beta"], "x-route": "eu-1", "OpenAI-Organization": "org-lab"},
     "header OpenAI-Organization is now set to 'org-lab' and was not sent"),
    ({**PLAIN, "X-Api-Token": SECRET_VALUES[0]}, "header X-Api-Token is now set and was not sent"),
    ({"X-Route": "us-2", "X-Api-Token": SECRET_VALUES[0]},
     "header anthropic-beta was sent as 'tools-2024-05-16' and is no longer set (and 2 more)"),
])
@pytest.mark.parametrize("retry", [False, True])
def test_a_resume_refuses_headers_that_changed(tmp_path: Path, server: FakeServer, key: str,
                                               now: dict[str, str], said: str, retry: bool) -> None:
    """Before, a resume (or a retry of failed cells) sent whatever benchcard.yaml held then, the run's record
    none the wiser. Now it refuses in one line naming the header and the remedy, before any call; once the headers
    are set back it goes on. A header's name is compared without case, as HTTP does."""
    project, run_id = stopped_run(tmp_path, server, PLAIN)
    calls = server.stats()["calls"]
    configure(tmp_path, server.base_url, now)
    args = ["run", "colour-ab", "--resume", run_id, *(["--retry-failed"] if retry else [])]
    line = one_line_error(bc(project, *args))
    assert line == (f"error: results/colour-ab/v1/{run_id}: {said} (providers.fake.headers in benchcard.yaml); a "
                    "resumed run sends the headers it was started with: set them back, or start a new run "
                    "(benchcard run colour-ab)")
    assert SECRET_VALUES[0] not in line and server.stats()["calls"] == calls
    configure(tmp_path, server.base_url, PLAIN)
    ok(bc(project, *args))
    assert all(h["x-route"] == "eu-1" for h in server.stats()["headers"])


def test_a_run_recorded_before_headers_were_still_reads_resumes_and_verifies(tmp_path: Path, server: FakeServer,
                                                                             key: str) -> None:
    """A manifest written before `headers` existed (none in it, its plan digest made without it) resumes on the
    headers of now, is judged, and its ledger row verifies."""
    project, run_id = stopped_run(tmp_path, server, PLAIN)
    path = project.results_dir / "colour-ab" / "v1" / run_id / "manifest.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    del old["headers"]
    old["plan_digest"] = plan_digest(old, old["sealed"])
    path.write_text(json.dumps(old, indent=2), encoding="utf-8")
    assert read_manifest(path.parent).headers is None
    configure(tmp_path, server.base_url, {"X-Route": "us-2"})
    ok(bc(project, "run", "colour-ab", "--resume", run_id))
    ok(bc(project, "verdict", run_id))
    assert "headers" not in json.loads(path.read_text(encoding="utf-8"))
    ok(bc(project, "ledger", "--verify"))


def test_a_header_edited_in_the_manifest_is_named_by_the_plan_digest(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    project, run_id = stopped_run(tmp_path, server, PLAIN)
    path = project.results_dir / "colour-ab" / "v1" / run_id / "manifest.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"eu-1"', '"us-2"'), encoding="utf-8")
    configure(tmp_path, server.base_url, {**PLAIN, "X-Route": "us-2"})
    assert "a field of the sealed plan" in one_line_error(bc(project, "run", "colour-ab", "--resume", run_id))


def test_replicate_says_the_headers_of_the_original_and_its_own(tmp_path: Path, server: FakeServer,
                                                               key: str) -> None:
    server.configure({**HELPS, "record_headers": True})
    project = ab_project(tmp_path, fixtures=8, repetitions=3)
    configure(tmp_path, server.base_url, all_headers(key))
    original = json.loads(ok(bc(project, "run", "colour-ab", "--json")).stdout)["runs"][0]["run"]
    ok(bc(project, "verdict", original))

    same = ok(bc(project, "replicate", original, "--json"))
    shown = ("anthropic-beta: tools-2024-05-16, X-Route: eu-1, X-Api-Token (a secret, not recorded), X-Upstream (a "
             "secret, not recorded), X-Mirror (a secret, not recorded)")
    assert f"headers of run {original} (the original): {shown}\n" in same.stderr
    assert f"headers of this replication: {shown}; the same as the original's\n" in same.stderr

    configure(tmp_path, server.base_url, {**PLAIN, "X-Route": "us-2"})
    moved = ok(bc(project, "replicate", original, "--json"))
    assert ("headers of this replication: anthropic-beta: tools-2024-05-16, X-Route: us-2; they differ: header "
            "X-Api-Token was sent and is no longer set, header X-Mirror was sent and is no longer set, header X-Route "
            "was sent as 'eu-1' and is now 'us-2', header X-Upstream was sent and is no longer set\n") in moved.stderr
    replica = json.loads(moved.stdout)["run"]["folder"]
    assert read_manifest(project.root / replica).headers == {**PLAIN, "X-Route": "us-2"}
    assert server.stats()["headers"][-1]["x-route"] == "us-2"
    on_disk = b"".join(p.read_bytes() for p in project.results_dir.rglob("*") if p.is_file())
    assert not any(s.encode() in on_disk for s in (*SECRET_VALUES, key))
    assert not any(s in same.output + moved.output for s in (*SECRET_VALUES, key))


def test_the_words_for_headers() -> None:
    assert headers_text(None) == "not recorded (a run made before benchcard recorded them)"
    assert headers_text({}) == "none"
    assert header_changes({"X-A": None}, {"x-a": None}) == []  # a secret's value is not recorded: not compared
    assert header_changes({"X-A": "1"}, {"X-A": None}) == ["header X-A was sent as '1' and is now a secret (not shown)"]
    assert secret_header("X-Upstream", "Bearer abc", ()) and not secret_header("X-Route", "eu-1", ())


def test_old_manifest_struct_reads_without_headers() -> None:
    decoded = msgspec.json.decode(b'{"run": "r", "card": "c", "version": 1, "kind": "ab", "seal_root": "s"}',
                                  type=Manifest)
    assert decoded.headers is None and "headers" not in decoded.fields()
