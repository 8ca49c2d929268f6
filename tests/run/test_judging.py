"""The judging pass over real sockets: the fake server plays both the model and a scripted judge."""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records.runreader import read_manifest
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.scoring.judge import blind_output
from benchcard.testing.fakeserver import FakeServer

from ..helpers_judge import (
    CARD_ID,
    ECHO,
    VARIANT_TEXT,
    judge_bodies,
    judge_project,
    script,
    write_judge_config,
    write_judge_pool_config,
)
from ..helpers_project import copy_project
from ..helpers_run import only_run, read_jsonl


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def test_a_judged_run_is_blind_counted_apart_and_gives_a_verdict(tmp_path: Path, server: FakeServer,
                                                                 key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3)
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    assert ("judge test/judge · judge: 36 judgements (3 per ok output): 36 read as grades, 0 unreadable, 0 truncated, "
            "0 failed") in result.output
    folder = only_run(project, CARD_ID)
    # the judge saw each output alone, with its fixture and key, and nothing naming the variant or the run
    bodies = judge_bodies(server)
    assert len(bodies) == 36
    assignment = read_jsonl(folder / "sealed" / "assignment.jsonl")
    forbidden = [VARIANT_TEXT.strip(), "zz-colour-variant", "yy-plain-variant", "test/model", folder.name,
                 *(a["cell"] for a in assignment)]
    for body in bodies:
        text = json.dumps(body, ensure_ascii=False)
        assert not [f for f in forbidden if f in text], text
        assert text.count("<<") == 1 and '\\"colour\\": \\"red\\"' in text and "a ripe tomato" in text
    # planned before the first judge call, in a shuffled order that mixes the variants
    requests = read_jsonl(folder / "sealed" / "judge-requests.jsonl")
    def canon(bodies: list[dict[str, Any]]) -> list[str]:
        return sorted(json.dumps(b, sort_keys=True) for b in bodies)

    assert canon([r["body"] for r in requests]) == canon(bodies)  # what was sealed is what was sent
    variant_of = {a["cell"]: a["variant"] for a in assignment}
    order = [variant_of[r["output"]] for r in requests]
    assert order != sorted(order) and order != sorted(order, reverse=True)
    assert sum(r["redacted"] for r in requests) == 18  # every echo of the instruction, k times each
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["judge"]["judgements"] == 36 and manifest["judge"]["per_output"] == 3
    assert manifest["judge_counts"] == {"ok": 36, "truncated": 0, "failed": 0, "unreadable": 0}
    assert manifest["judge_tokens"]["input"] > 0 and manifest["counts"]["ok"] == 12
    scores = read_jsonl(folder / "scores.jsonl")
    assert sorted(s["score"] for s in scores) == [0.0] * 6 + [1.0] * 6
    verdict = bc(tmp_path, "verdict", folder.name, "--json")
    assert verdict.exit_code == 0, verdict.output
    given = json.loads(verdict.output)
    # every fixture moves alike, but three fixtures can never win (exact sign-flip p 0.25 > α)
    assert given["finding"] == "inconclusive" and "3 fixtures can never reach α" in given["why"]
    judge = given["judge"]
    assert judge["self_agreement"]["alpha"] == 1.0 and judge["self_agreement"]["outputs"] == 12
    assert judge["noise"]["sd"] == 0.0 and judge["same_model_as_run"] is False and judge["redacted"] == 6
    # the variant's outputs are longer and judged better: the length figure shows it
    assert judge["verbosity"]["spearman_length_score"] > 0.5
    chars = judge["verbosity"]["mean_chars"]
    assert chars["zz-colour-variant"] > chars["yy-plain-variant"]
    # the card's page shows the sealed judge (and builds with a judged run on it)
    site = bc(tmp_path, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    page = (tmp_path / "site" / "cards" / CARD_ID / "index.html").read_text()
    assert "The judge, as sealed" in page and "test/judge · judge" in page and "3 judgements per output" in page
    assert "names the fruit&#39;s colour as the key states it" in page and "Description: &lt;&lt;{{output}}" in page
    run_pages = [p.read_text() for p in (tmp_path / "site").rglob("*.html") if folder.name in p.read_text()]
    assert any("Krippendorff&#39;s alpha (with itself)" in p and "The judge: its agreement" in p for p in run_pages)
    shown = bc(tmp_path, "verdict", folder.name, "--show")
    assert "self-agreement: Krippendorff's alpha (nominal) 1.000 over 12 output(s) judged twice or more" in shown.output


def test_a_killed_judging_resumes_with_the_judgements_it_lacks(tmp_path: Path, server: FakeServer,
                                                               key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=2, k=2)
    server.configure(script({"reply": "GRADE: PASS"}))
    # 8 model calls, then the judging is stopped after 8 of its 16 calls, as a kill would
    [first] = run(project, CARD_ID, RunOptions(progress=False), stop_after=8)
    assert first.judge is not None and not first.finished and first.judge.counts["ok"] == 8
    folder = only_run(project, CARD_ID)
    assert not (folder / "scores.jsonl").exists()
    assert "finished_at" not in json.loads((folder / "manifest.json").read_text())
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(tmp_path, "run", CARD_ID, "--resume", folder.name)
    assert result.exit_code == 0, result.output
    assert server.stats()["calls"] == 8 and len(judge_bodies(server)) == 8  # no model call, 8 judge calls
    assert len(read_jsonl(folder / "judge-outputs.jsonl")) == 16
    assert bc(tmp_path, "verdict", folder.name).exit_code == 0


def test_judgements_removed_from_a_stopped_judging_are_never_asked_again(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """A grade one did not like, deleted from judge-outputs.jsonl between passes, was asked of the judge again by
    `--resume` (hostile audit, round 24): the judge's passes count their rows too (`judge_replied_rows`)."""
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=2, k=2)
    server.configure(script({"reply": "GRADE: PASS"}))
    [first] = run(project, CARD_ID, RunOptions(progress=False), stop_after=8)
    assert first.judge is not None and first.judge.counts["ok"] == 8
    folder = only_run(project, CARD_ID)
    judged = folder / "judge-outputs.jsonl"
    judged.write_bytes(b"".join(judged.read_bytes().splitlines(keepends=True)[1:]))
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(tmp_path, "run", CARD_ID, "--resume", folder.name)
    assert result.exit_code == 1 and not judge_bodies(server)
    assert (f"error: results/{CARD_ID}/v1/{folder.name}/judge-outputs.jsonl holds 7 rows, but the passes that "
            "wrote it appended 8 (manifest.json, judge_replied_rows): rows were removed since") in result.stderr


def test_a_judge_that_stops_answering_stops_the_judging_in_one_line(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    """The judging stops as a run does (the same helper, its own noun), and the command it names continues it."""
    project = judge_project(tmp_path, server.base_url, fixtures=5, repetitions=1, k=2)
    server.configure(script({"reply": "GRADE: PASS"}, faults=[{"match": "Rubric:", "kind": "503", "times": 999}]))
    result = bc(tmp_path, "run", CARD_ID, "--attempts", "1", "--concurrency", "1")
    assert result.exit_code == 1
    folder = only_run(project, CARD_ID)
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: the judging stopped: 5 cells in a row failed in transport (last: HTTP 503")
    assert line.endswith(f"; 5 of 20 judgements recorded. When the endpoint answers again: benchcard run {CARD_ID} "
                         f"--resume {folder.name}")
    server.configure(script({"reply": "GRADE: PASS"}))
    resumed = bc(tmp_path, "run", CARD_ID, "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output
    assert len(judge_bodies(server)) == 15 and len(read_jsonl(folder / "judge-outputs.jsonl")) == 20


def test_a_judge_that_takes_calls_and_answers_none_stops_the_judging_in_one_line(tmp_path: Path, server: FakeServer,
                                                                                 key: str) -> None:
    """A judge model on a server that takes each call and answers none: the judging stops by the silence rule, as
    a run does (calls timed out in a row over several judgements, no answer for twice --timeout), in one line
    naming the --resume that continues it, with no judgement in flight recorded; the resume judges them all."""
    project = judge_project(tmp_path, server.base_url, fixtures=5, repetitions=1, k=2)
    server.configure(script({"reply": "GRADE: PASS"}, faults=[{"match": "Rubric:", "kind": "hang", "times": 999,
                                                               "hang_s": 5}]))
    result = bc(tmp_path, "run", CARD_ID, "--concurrency", "4", "--timeout", "0.3")
    assert result.exit_code == 1, result.output
    folder = only_run(project, CARD_ID)
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: the judging stopped: 8 calls in a row over 4 cells timed out after 0.3 s and no "
                           "answer came for "), line
    assert line.endswith(" s: the server takes calls but answers none (if its answers only take longer, raise "
                         f"--timeout); 0 of 20 judgements recorded. When the endpoint answers again: benchcard run "
                         f"{CARD_ID} --resume {folder.name}"), line
    assert len(judge_bodies(server)) <= 8 + 4  # the 8, and at most the calls in flight then: not 20 × 4
    assert read_jsonl(folder / "judge-outputs.jsonl") == []
    server.configure(script({"reply": "GRADE: PASS"}))
    resumed = bc(tmp_path, "run", CARD_ID, "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output
    assert len(judge_bodies(server)) == 20 and len(read_jsonl(folder / "judge-outputs.jsonl")) == 20


@pytest.fixture(scope="module")
def judges() -> Iterator[list[FakeServer]]:
    """Three fake servers for the judge's pool, each in its own process on its own port."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(FakeServer()) for _ in range(3)]


def _pool_judged(tmp_path: Path, server: FakeServer, judges: list[FakeServer]) -> Project:
    """A judged card of 3 fixtures × 2 repetitions, 3 judgements an output, its judge's provider the pool of
    `judges`; the model's server answers every cell."""
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3)
    write_judge_pool_config(tmp_path, server.base_url, [j.base_url for j in judges])
    server.configure(script({"reply": "GRADE: PASS"}))
    return project


def _run_judged_by(tmp_path: Path, project: Project, answering: list[FakeServer]) -> tuple[str, set[str]]:
    """Run the card with `answering` judging (each answers every call): the run's output and the servers its
    judge-outputs rows name, once every answering server took some of the 36 judgements and no other did."""
    for j in answering:
        j.configure(script({"reply": "GRADE: PASS"}, latency_ms=20))
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    taken = [j.stats()["calls"] for j in answering]
    assert sum(taken) == 36 and min(taken) > 0, taken
    rows = read_jsonl(only_run(project, CARD_ID) / "judge-outputs.jsonl")
    return result.output, {r["endpoint"] for r in rows}


def test_a_judge_s_pool_takes_the_judgements_spread_over_its_servers(tmp_path: Path, server: FakeServer,
                                                                     judges: list[FakeServer], key: str) -> None:
    """A judge whose provider lists three servers (base_urls): the judgements go to each, as a run's cells do,
    and each row names the server that answered. Before, every judgement went to the first: [36, 0, 0]. The
    manifest's judge block lists the pool (`endpoints`, as a run's manifest does) beside `base_url`, the first
    server as before; before (pool21b), it named the first server alone."""
    project = _pool_judged(tmp_path, server, judges)
    output, endpoints = _run_judged_by(tmp_path, project, judges)
    assert "36 judgements (3 per ok output): 36 read as grades" in output
    assert judge_bodies(server) == []  # the model's server took no judgement
    assert endpoints == {j.base_url for j in judges}
    assert max(j.stats()["max_in_flight"] for j in judges) <= 2  # each server's own width
    plan = read_manifest(only_run(project, CARD_ID)).judge
    assert plan is not None
    assert (plan.base_url, plan.endpoints) == (judges[0].base_url, [j.base_url for j in judges])


def test_a_judge_s_pool_server_refusing_every_call_leaves_its_share_to_the_others(
        tmp_path: Path, server: FakeServer, judges: list[FakeServer], key: str) -> None:
    """One server of the judge's pool answering every call 429: it is taken out after its failures in a row, the
    other two judge every output, and no judgement fails."""
    project = _pool_judged(tmp_path, server, judges)
    refusing, *others = judges
    refusing.configure({"default_reply": "GRADE: PASS",
                        "faults": [{"kind": "429", "times": 999, "retry_after": 0}]})
    output, endpoints = _run_judged_by(tmp_path, project, others)
    assert "36 judgements (3 per ok output): 36 read as grades, 0 unreadable, 0 truncated, 0 failed" in output
    assert 0 < refusing.stats()["calls"] <= 4  # out after 3 failures in a row (and a call in flight then)
    assert endpoints == {j.base_url for j in others}


def test_unreadable_and_failed_judgements_are_counted_never_scored(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=2)
    # the judge answers off-form every other time for the good outputs
    server.configure(script({"replies_cycle": ["GRADE: PASS", "Looks good!"]}))
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    assert "8 judgements (2 per ok output): 6 read as grades, 2 unreadable" in result.output
    folder = only_run(project, CARD_ID)
    scores = read_jsonl(folder / "scores.jsonl")
    assert sorted(s["score"] for s in scores) == [0.0, 0.0, 1.0, 1.0]  # the readable judgement decides
    assert "no readable judgement" not in result.output


def test_an_output_holding_a_lone_surrogate_is_judged(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Hostile audit (round 12b): a reply may escape a lone surrogate (`"\\ud800"`), which no UTF-8 body can hold,
    so every judge call quoting it failed with a UnicodeEncodeError and the judging stopped, telling the user to
    fix the card, the model or the account. The body is sent in ASCII with JSON escapes, as it was sealed."""
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=2)
    server.configure({"record_bodies": True, "replies": [{"match": "<<", "reply": "GRADE: PASS"},
                                                         {"match": "", "reply": "A tomato \ud800."}]})
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    assert "8 judgements (2 per ok output): 8 read as grades, 0 unreadable, 0 truncated, 0 failed" in result.output
    sent = [b for b in judge_bodies(server)]
    assert len(sent) == 8 and all("A tomato \ud800." in json.dumps(b, ensure_ascii=False) for b in sent)
    requests = read_jsonl(only_run(project, CARD_ID) / "sealed" / "judge-requests.jsonl")
    assert sorted(json.dumps(r["body"], sort_keys=True) for r in requests) == \
        sorted(json.dumps(b, sort_keys=True) for b in sent)  # what was sealed is what was sent


def test_a_judge_prompt_holding_an_escaped_slot_sends_its_braces_to_the_judge(tmp_path: Path, server: FakeServer,
                                                                             key: str) -> None:
    """A judge's prompt may show a slot's braces as an ab prompt may (`\\{{x}}`, `_util/slots.py`): the judge gets
    `{{x}}`, with the real slots filled beside it, and the card is sealed as written."""
    from ..helpers_judge import card_text

    asked = "Rubric: {{rubric}} Never answer \\{{grade}} or \\{{output}} literally."
    project = judge_project(tmp_path, server.base_url, fixtures=2, card_text=card_text(**{"Rubric: {{rubric}}": asked}))
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    users = [next(m["content"] for m in b["messages"] if m["role"] == "user") for b in judge_bodies(server)]
    assert len(users) == 24  # 2 fixtures × 2 variants × 2 repetitions (card_text), 3 judgements each
    shown = ("Rubric: The description names the fruit's colour as the key states it. Never answer {{grade}} or "
             "{{output}} literally.\n")
    assert all(shown in u and u.count("<<") == 1 and "<<{{output}}>>" not in u for u in users), users
    sealed = (project.root / "cards" / f"{CARD_ID}.yaml").read_text(encoding="utf-8")
    assert "Never answer \\{{grade}} or \\{{output}} literally." in sealed


def test_an_output_no_judgement_could_read_is_left_unscored(tmp_path: Path, server: FakeServer, key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=2)
    server.configure(script({"reply": "Looks good!"}))
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    assert "2 output(s) with no readable judgement, left unscored" in result.output
    folder = only_run(project, CARD_ID)
    assert len(read_jsonl(folder / "scores.jsonl")) == 2  # the two baseline outputs the judge failed readably
    refused = bc(tmp_path, "verdict", folder.name)
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"error: run {folder.name} is incomplete: 2 cells have an output but no score: none of their judgements is "
        "readable (failed, cut off or off-form: judge-outputs.jsonl), and a finished judging is not repeated by "
        "--resume; judge it anyway with --allow-incomplete, which counts those cells as failed, or start a new run "
        "(a new card version if the judge's prompt or answer form is at fault)\n")
    # what the message says: a resume calls nothing, neither the model nor the judge, and changes nothing
    judged = (folder / "judge-outputs.jsonl").read_bytes()
    server.configure(script({"reply": "GRADE: PASS"}))
    resumed = bc(tmp_path, "run", CARD_ID, "--resume", folder.name)
    assert resumed.exit_code == 0 and f"run {folder.name} is finished: nothing to call" in resumed.output
    assert server.stats()["calls"] == 0 and (folder / "judge-outputs.jsonl").read_bytes() == judged
    assert bc(tmp_path, "verdict", folder.name).stderr == refused.stderr
    allowed = bc(tmp_path, "verdict", folder.name, "--allow-incomplete")
    assert allowed.exit_code == 0 and "finding: incomplete" in allowed.output


def test_the_judge_key_is_required_before_any_call(tmp_path: Path, server: FakeServer, key: str) -> None:
    judge_project(tmp_path, server.base_url)
    write_judge_config(tmp_path, server.base_url)
    config = (tmp_path / "benchcard.yaml").read_text()
    (tmp_path / "benchcard.yaml").write_text(config.replace(
        "judge: {type: openai", "judge: {type: openai, api_key_env: JUDGE_KEY_UNSET").replace(
        ", api_key_env: BENCHCARD_TEST_KEY}\n", "}\n", 2).replace(
        "fake: {type: openai,", "fake: {type: openai, api_key_env: BENCHCARD_TEST_KEY,"))
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 1
    assert "JUDGE_KEY_UNSET is not set" in result.output
    assert server.stats()["calls"] == 0 and not list(Project(tmp_path).results_dir.glob("*/v1/*"))


@pytest.mark.local_model
def test_the_demo_judge_card_runs_end_to_end_on_the_embedded_model(tmp_path: Path) -> None:
    """cards/demo-judge-colour.yaml: SmolLM2 answers, SmolLM2 judges, offline, through to a verdict. The card as
    written, with two of its six fixtures (and their keys): 8 cells and their judgements instead of 24, a third of
    the suite's costliest test, and every step the same."""
    root = copy_project(tmp_path / "proj", ("demo-judge-colour",))
    for left_out in [*(root / "fixtures" / "demo-judge-colour").glob("item-0[3-6].txt"),
                     *(root / "keys" / "demo-judge-colour").glob("item-0[3-6].json")]:
        left_out.unlink()
    assert bc(root, "check", "demo-judge-colour").exit_code == 0
    assert bc(root, "seal", "demo-judge-colour").exit_code == 0
    result = bc(root, "run", "demo-judge-colour")
    assert result.exit_code == 0, result.output
    assert "judge SmolLM2-135M-Instruct · local:" in result.output
    folder = only_run(Project(root), "demo-judge-colour")
    outputs = read_jsonl(folder / "outputs.jsonl")
    requests = read_jsonl(folder / "sealed" / "judge-requests.jsonl")
    assert len(requests) == 3 * sum(o["status"] == "ok" for o in outputs)
    assert len(read_jsonl(folder / "judge-outputs.jsonl")) == len(requests)
    # the local judge's three calls of one output were planned with three different seeds
    seeds: dict[str, set[int]] = {}
    for r in requests:
        seeds.setdefault(r["output"], set()).add(r["body"]["seed"])
    assert all(len(s) == 3 for s in seeds.values())
    verdict = bc(root, "verdict", folder.name, "--allow-incomplete")
    assert verdict.exit_code == 0, verdict.output
    assert "self-agreement: Krippendorff's alpha (nominal)" in verdict.output
    assert "note: the judge is the model under test" in verdict.output
    judge = json.loads((folder / "verdict.json").read_text())["judge"]
    assert judge["floor"] == 0.4 and judge["same_model_as_run"] is True


def test_human_grades_are_compared_with_the_judge(tmp_path: Path, server: FakeServer, key: str) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=1)
    server.configure(script({"reply": "GRADE: PASS"}))
    assert bc(tmp_path, "run", CARD_ID).exit_code == 0
    folder = only_run(project, CARD_ID)
    sheet = tmp_path / "sheet.csv"
    assert bc(tmp_path, "blind-sheet", folder.name, "--out", str(sheet)).exit_code == 0
    with open(sheet, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # the person agrees with the judge everywhere but on one output the judge passed; the sheet shows each output
    # as the judge was shown it, the echo of the variant's text written […]
    shown = blind_output(ECHO, [VARIANT_TEXT]).text
    assert shown == "A RED tomato. […]" and not any(VARIANT_TEXT.strip() in r["output"] for r in rows)
    flipped = next(r for r in rows if r["output"] == shown)
    for r in rows:
        r["grade"] = ("fail" if r is flipped else "pass") if r["output"] == shown else "fail"
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert bc(tmp_path, "grade", folder.name, str(sheet)).exit_code == 0
    result = bc(tmp_path, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    judge = json.loads((folder / "verdict.json").read_text())["judge"]
    # 12 graded, 11 agree; chance agreement from 6 passes by the judge and 5 by the person, of 12 each
    expected = (11 / 12 - (6 * 5 + 6 * 7) / 144) / (1 - (6 * 5 + 6 * 7) / 144)
    assert judge["humans"]["graded"] == 12 and abs(judge["humans"]["kappa"] - expected) < 1e-9
    assert f"with human grades: Cohen's kappa {expected:.3f} over 12" in result.output


@pytest.mark.parametrize("recorded", [True, False])
def test_a_kill_while_the_judging_is_planned_loses_nothing(tmp_path: Path, server: FakeServer, key: str,
                                                           recorded: bool) -> None:
    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=2)
    server.configure(script({"reply": "GRADE: PASS"}))
    [first] = run(project, CARD_ID, RunOptions(progress=False), stop_after=4)  # 4 model calls, 4 judge calls
    folder = only_run(project, CARD_ID)
    assert first.judge is not None and not first.judge.finished
    # as a kill would leave it: the plan written beside sealed/, recorded in the manifest or not, no judge call
    (folder / "judge-outputs.jsonl").unlink()
    (folder / "sealed" / "judge-requests.jsonl").rename(folder / "judge-requests.jsonl.tmp")
    manifest = json.loads((folder / "manifest.json").read_text())
    for made_by_a_judge_pass in ("judge_replied_models", "judge_replied_rows"):
        del manifest[made_by_a_judge_pass]
    if not recorded:
        del manifest["judge"]
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    server.configure(script({"reply": "GRADE: PASS"}))
    result = bc(tmp_path, "run", CARD_ID, "--resume", folder.name)
    assert result.exit_code == 0, result.output
    assert len(judge_bodies(server)) == 8 and len(read_jsonl(folder / "judge-outputs.jsonl")) == 8
    assert not (folder / "judge-requests.jsonl.tmp").exists()
    assert bc(tmp_path, "verdict", folder.name).exit_code == 0


PROBE_JUDGE = """\
id: judged-probe
version: 1
kind: probe
title: Does the model greet?
rig: {provider: fake, model: test/model}
params: {max_tokens: 20, temperature: 0.7}
prompt: {user: Say hello to the reader.}
repetitions: 4
scoring:
  method: judge
  rig: {provider: judge, model: test/judge}
  params: {max_tokens: 20}
  judgements: 2
  scale: {min: 1, max: 3}
  answer: json
  rubric: How warm is the greeting (1 cold, 3 warm)?
  prompt: {user: "{{rubric}} Greeting: <<{{output}}>> {{format}}"}
examples:
  - {label: Warm, output: "Hello, dear reader!", expect: pass, judge_answers: '{"grade": 3}'}
history: [{version: 1, note: n}]
"""


def test_a_judged_probe_runs_to_a_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "judged-probe.yaml").write_text(PROBE_JUDGE)
    write_judge_config(tmp_path, server.base_url)
    assert bc(tmp_path, "seal", "judged-probe").exit_code == 0
    server.configure({"record_bodies": True, "replies": [
        {"match": "<<Hello", "replies_cycle": ['{"grade": 3, "reason": "warm"}', '```json\n{"grade": 2}\n```']},
        {"match": "", "reply": "Hello there"}]})
    result = bc(tmp_path, "run", "judged-probe")
    assert result.exit_code == 0, result.output
    assert "8 judgements (2 per ok output): 8 read as grades, 0 unreadable" in result.output
    folder = only_run(Project(tmp_path), "judged-probe")
    scores = [s["score"] for s in read_jsonl(folder / "scores.jsonl")]
    assert len(scores) == 4 and sum(scores) / 4 == 0.75  # four judgements of 3 (1.0) and four of 2 (0.5)
    verdict = bc(tmp_path, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    judge = json.loads((folder / "verdict.json").read_text())["judge"]
    assert judge["self_agreement"]["level"] == "interval" and judge["noise"]["share_of_gap_variance"] is None
    assert "self-agreement: Krippendorff's alpha (interval)" in verdict.output


def test_plan_counts_the_judge_apart(tmp_path: Path, server: FakeServer) -> None:
    judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3)
    with open(tmp_path / "benchcard.yaml", "a", encoding="utf-8") as fh:
        fh.write("prices:\n  test/judge: {input: 1.0, output: 2.0}\n")
    result = bc(tmp_path, "plan", CARD_ID)
    assert result.exit_code == 0, result.output
    assert "judge           ≤ 36 calls (3 per ok output) · test/judge · judge" in result.output
    assert "output ≤ 1,440 tokens" in result.output  # 36 calls × the judge's max_tokens 40
    printed = bc(tmp_path, "plan", CARD_ID, "--json").output
    golden = Path(__file__).resolve().parents[1] / "data" / "plan" / "judge.json"  # printed before it was typed
    assert printed == golden.read_text(encoding="utf-8") + "\n"
    judge = json.loads(printed)["judge"]
    assert judge["calls"] == 36 and judge["input_tokens"] > 36 * 50  # each judged output counted at max_tokens
    assert judge["max_cost"] == (judge["input_tokens"] * 1.0 + 1440 * 2.0) / 1_000_000


def test_judge_replies_naming_another_model_are_recorded_and_said_apart(tmp_path: Path, server: FakeServer,
                                                                        key: str) -> None:
    """The judge's calls may be answered by another model than the judge sealed in the card: counted per pass as
    the model's are (`judge_replied_models`), said by run, status, the verdict and the run's page."""
    from benchcard.publish.build import build_site

    project = judge_project(tmp_path, server.base_url, fixtures=2, repetitions=1, k=2)
    server.configure(script({"reply": "GRADE: PASS"}))
    with FakeServer() as judge:
        judge.configure(script({"reply": "GRADE: PASS"}, reply_model="other-judge"))
        write_judge_config(tmp_path, server.base_url, judge.base_url)
        result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    said = ("warning: 8 of 8 judge replies named another model than test/judge, the judge sealed: other-judge (8)")
    assert f"  {said}\n" in result.output and "replies named another model than test/model" not in result.output
    folder = only_run(project, CARD_ID)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judge_replied_models"] == [{"other-judge": 8}]
    assert manifest["judge_replied_rows"] == [{"rows": 8, "uncounted": 0}]
    assert manifest["replied_models"] == [{"test/model": 4}]  # the model under test's, apart
    status = bc(tmp_path, "status", folder.name)
    assert f"  {said}\n" in status.output
    assert json.loads(bc(tmp_path, "status", folder.name, "--json").stdout)["judge_replies"] == said
    verdict = bc(tmp_path, "verdict", folder.name)
    assert verdict.exit_code == 0, verdict.output
    assert said.removeprefix("warning: ") in verdict.output
    build_site(project, tmp_path / "site")
    page = next((tmp_path / "site").rglob(f"{folder.name}/index.html")).read_text(encoding="utf-8")
    assert said in page


def test_a_judge_whose_cached_input_was_priced_in_full_says_its_cost_is_an_upper_bound(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """The judge's replies read 1,000 input tokens each from the prompt cache, and its price gives no
    `cached_input`: the judge's line says `≤ $…` and why, as the run's own line does, and `judge_cost` is marked in
    the manifest, verdict.json and the ledger row (the model's price has `cached_input`: its cost stays exact).
    Before, the judge's cost read as what was billed, above it."""
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3)
    with open(tmp_path / "benchcard.yaml", "a", encoding="utf-8") as fh:
        fh.write("prices:\n  test/model: {input: 1.0, output: 2.0, cached_input: 0.1}\n"
                 "  test/judge: {input: 1.0, output: 2.0}\n")
    config = script({"reply": "GRADE: PASS"})
    server.configure({**config, "replies": [{**r, "cached_tokens": 1000} for r in config["replies"]]})
    result = bc(tmp_path, "run", CARD_ID)
    assert result.exit_code == 0, result.output
    folder = only_run(project, CARD_ID)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    rows = read_jsonl(folder / "judge-outputs.jsonl")
    assert len(rows) == 36 and all(r["cost_upper_bound"] is True for r in rows)
    assert manifest["judge_cost"] == pytest.approx(sum(r["cost"] for r in rows), abs=1e-6)
    assert manifest["judge_cost_upper_bound"] is True and "cost_upper_bound" not in read_jsonl(
        folder / "outputs.jsonl")[0]
    assert f"tokens · ≤ ${manifest['judge_cost']:,.4f} · " in result.output
    said = ("  judge cost ≤: 36 judgements read input from the prompt cache, priced at the full input price "
            "(prices.test/judge in benchcard.yaml gives no cached_input; the vendor bills them less)\n")
    assert said in result.output
    assert "12 cells: 12 ok, 0 truncated, 0 failed · $" in result.output  # the run's own: exact, no ≤
    assert bc(tmp_path, "verdict", folder.name).exit_code == 0
    judge = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))["judge"]
    [row] = read_jsonl(tmp_path / "results" / "ledger.jsonl")
    assert judge["cost_upper_bound"] is True and row["judge"]["cost_upper_bound"] is True
    assert judge["cost"] == row["judge"]["cost"] == manifest["judge_cost"]
    assert bc(tmp_path, "ledger", "--verify").exit_code == 0
