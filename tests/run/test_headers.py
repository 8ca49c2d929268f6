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


# ------------------------------------------------------------------------------------------- the judge's headers

#: The judge's provider's headers: two plain ones and a secret by its name.
JUDGE_PLAIN = {"anthropic-beta": "judge-beta-1", "X-Route": "judge-eu"}
JUDGE_SECRET = "jtok-S3CRET-judge"


def configure_judged(root: Path, url: str, run_headers: dict[str, str], judge_headers: dict[str, str]) -> None:
    """benchcard.yaml declaring the run's provider `fake` and the judge's `judge`, both at `url`, with headers."""
    def block(name: str, headers: dict[str, str]) -> str:
        lines = "".join(f"      {n}: {json.dumps(v)}\n" for n, v in headers.items())
        return (f"  {name}:\n    type: openai\n    base_url: '{url}'\n    api_key_env: {KEY_ENV}\n"
                + (f"    headers:\n{lines}" if headers else ""))

    (root / "benchcard.yaml").write_text("providers:\n" + block("fake", run_headers) + block("judge", judge_headers),
                                         encoding="utf-8")


def judged_stopped(tmp_path: Path, server: FakeServer, run_headers: dict[str, str],
                   judge_headers: dict[str, str]) -> tuple[Project, str]:
    """A judge card's run whose 4 outputs are called and 4 of its 8 judgements made, stopped there."""
    from ..helpers_judge import CARD_ID, judge_project, script

    server.configure(script({"reply": "GRADE: PASS"}, record_headers=True))
    project = judge_project(tmp_path, fixtures=2, repetitions=1, k=2)
    configure_judged(tmp_path, server.base_url, run_headers, judge_headers)
    [stopped] = run(project, CARD_ID, RunOptions(progress=False), stop_after=4)
    assert stopped.judge is not None and not stopped.judge.finished
    return project, stopped.run


def test_a_judged_run_records_its_judges_headers_and_never_a_secret_value(tmp_path: Path, server: FakeServer,
                                                                         key: str) -> None:
    """The judge's provider's headers were sent on every judge call and recorded nowhere, while the run's own
    were. The manifest's `judge` block now records them as the run's are: a secret by its name alone."""
    project, run_id = judged_stopped(tmp_path, server, PLAIN, {**JUDGE_PLAIN, "X-Judge-Token": JUDGE_SECRET})
    manifest = json.loads((project.results_dir / "judged-ab" / "v1" / run_id / "manifest.json").read_text())
    assert manifest["headers"] == PLAIN
    assert manifest["judge"]["headers"] == {**JUDGE_PLAIN, "X-Judge-Token": None}
    sent = [h for h in server.stats()["headers"] if h.get("x-route") == "judge-eu"]
    assert len(sent) == 4 and all(h["x-judge-token"] == JUDGE_SECRET for h in sent)
    on_disk = b"".join(p.read_bytes() for p in project.results_dir.rglob("*") if p.is_file())
    assert JUDGE_SECRET.encode() not in on_disk and key.encode() not in on_disk


@pytest.mark.parametrize(("now", "said"), [
    ({**JUDGE_PLAIN, "X-Route": "judge-us"}, "header X-Route was sent as 'judge-eu' and is now 'judge-us'"),
    ({"X-Route": "judge-eu"}, "header anthropic-beta was sent as 'judge-beta-1' and is no longer set"),
    ({**JUDGE_PLAIN, "X-Judge-Token": JUDGE_SECRET}, "header X-Judge-Token is now set and was not sent"),
])
def test_a_judged_resume_refuses_judge_headers_that_changed(tmp_path: Path, server: FakeServer, key: str,
                                                            now: dict[str, str], said: str) -> None:
    """Stopped half-way through its judging, the run resumed with the judge's headers changed: refused in one line
    before any call, as a changed header of the run's own provider is; set back, it goes on and every judge call
    carries the headers the judging was planned with."""
    project, run_id = judged_stopped(tmp_path, server, PLAIN, JUDGE_PLAIN)
    calls = server.stats()["calls"]
    configure_judged(tmp_path, server.base_url, PLAIN, now)
    line = one_line_error(bc(project, "run", "judged-ab", "--resume", run_id))
    assert line == (f"error: results/judged-ab/v1/{run_id}: the judge's {said} (providers.judge.headers in "
                    "benchcard.yaml); a resumed run's judge sends the headers its judging was planned with: set them "
                    "back, or start a new run (benchcard run judged-ab)")
    assert JUDGE_SECRET not in line and server.stats()["calls"] == calls
    configure_judged(tmp_path, server.base_url, PLAIN, JUDGE_PLAIN)
    ok(bc(project, "run", "judged-ab", "--resume", run_id))
    judged = [h for h in server.stats()["headers"] if h.get("x-route", "").startswith("judge")]
    assert len(judged) == 8 and all(h["x-route"] == "judge-eu" for h in judged)


def test_a_resume_names_the_secret_headers_it_could_not_compare(tmp_path: Path, server: FakeServer,
                                                                key: str) -> None:
    """A secret header's value is never written (nor a digest), so a resume cannot tell whether it changed: it says
    so in one line naming each such header, the run's and the judge's, and goes on. A resume with no secret says
    nothing of them."""
    project, run_id = judged_stopped(tmp_path, server, {**PLAIN, "X-Api-Token": SECRET_VALUES[0]},
                                     {**JUDGE_PLAIN, "X-Judge-Token": JUDGE_SECRET})
    configure_judged(tmp_path, server.base_url, {**PLAIN, "X-Api-Token": "another-token-value"},
                     {**JUDGE_PLAIN, "X-Judge-Token": "another-judge-token"})
    result = ok(bc(project, "run", "judged-ab", "--resume", run_id))
    said = [line for line in result.stderr.splitlines() if "not compared" in line]
    assert said == ["headers not compared: X-Api-Token (providers.fake.headers), X-Judge-Token (providers.judge."
                    "headers, the judge's): a run records a secret header's name, never its value (nor a digest, "
                    "from which a short one could be found), so a change of its value since the run started cannot "
                    "be seen; they are sent as benchcard.yaml sets them now"]
    assert not any(s in result.output + result.stderr for s in (SECRET_VALUES[0], JUDGE_SECRET))

    plain, plain_run = judged_stopped(tmp_path / "plain", server, PLAIN, JUDGE_PLAIN)
    assert "not compared" not in ok(bc(plain, "run", "judged-ab", "--resume", plain_run)).stderr


def test_a_judging_planned_before_judge_headers_were_recorded_resumes(tmp_path: Path, server: FakeServer,
                                                                      key: str) -> None:
    """A manifest whose judge block has no `headers` (a judging planned before 2026-12-08) resumes on the judge's
    headers of now, uncompared, and is judged."""
    project, run_id = judged_stopped(tmp_path, server, PLAIN, JUDGE_PLAIN)
    path = project.results_dir / "judged-ab" / "v1" / run_id / "manifest.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    del old["judge"]["headers"]
    path.write_text(json.dumps(old, indent=2), encoding="utf-8")
    configure_judged(tmp_path, server.base_url, PLAIN, {"X-Route": "judge-us"})
    ok(bc(project, "run", "judged-ab", "--resume", run_id))
    ok(bc(project, "verdict", run_id))
