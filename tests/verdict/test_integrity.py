"""Tampering with a real run, as a user would (editing its files), is named and refused: the sealed plan's
digests (`records.plandigest`), the assignment re-derived by the verdict, and the digests a verdict needs
(`verdict.integrity`). Runs are made by `benchcard run` against the fake server over a real socket."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from benchcard._util.hashing import file_digest
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.plandigest import plan_digest, sealed_files
from benchcard.run.options import RunOptions
from benchcard.run.runner import run
from benchcard.testing.fakeserver import FakeServer

from ..helpers_judge import CARD_ID as JUDGE_CARD
from ..helpers_judge import judge_project
from ..helpers_project import published_project
from ..helpers_run import ab_project, only_run, read_jsonl, runs_of

CARD = "colour-ab"
POLITE_IS_RIGHT = {"replies": [{"match": "Please.", "reply": "red"}], "default_reply": "blue"}


def cli_in(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def finished_run(tmp_path: Path, server: FakeServer) -> tuple[Project, Path]:
    """A finished, scored run of a 2 × 6 × 2 ab card, not yet judged."""
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    result = cli_in(project, "run", CARD, "--json")
    assert result.exit_code == 0, result.output
    return project, only_run(project, CARD)


def manifest_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")


def swap_variants(folder: Path) -> None:
    path = folder / "sealed" / "assignment.jsonl"
    rows = read_jsonl(path)
    for row in rows:
        row["variant"] = {"A": "baseline", "baseline": "A"}[row["variant"]]
    write_jsonl(path, rows)


def recompute_digests(folder: Path) -> None:
    """What a careful forger does after editing sealed files: digests in the manifest made to match again."""
    manifest = manifest_of(folder)
    manifest["sealed"] = sealed_files(folder)
    manifest["plan_digest"] = plan_digest(manifest, manifest["sealed"])
    write_manifest(folder, manifest)


def ledger_lines(project: Project) -> int:
    path = project.ledger_path
    return len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0


def test_the_plan_is_digested_when_it_is_written(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    manifest = manifest_of(folder)
    assert manifest["sealed"] == {"sealed/assignment.jsonl": file_digest(folder / "sealed" / "assignment.jsonl"),
                                  "sealed/requests.jsonl": file_digest(folder / "sealed" / "requests.jsonl")}
    assert manifest["plan_digest"].startswith("sha256:")
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    assert ledger_lines(project) == 1


def test_swapped_variant_labels_are_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    swap_variants(folder)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "sealed/assignment.jsonl changed after the plan was written" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert ledger_lines(project) == 0 and not (folder / "verdict.json").exists()


def test_swapped_labels_with_recomputed_digests_are_refused_by_the_re_derived_assignment(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    swap_variants(folder)
    recompute_digests(folder)
    first = read_jsonl(folder / "sealed" / "assignment.jsonl")[0]
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    want = {"A": "baseline", "baseline": "A"}[first["variant"]]
    assert (f"sealed/assignment.jsonl line 1 (cell {first['cell']}): variant is '{first['variant']}', but the card "
            f"and the manifest's seed {manifest_of(folder)['seed']} give '{want}'") in result.output
    assert ledger_lines(project) == 0


def test_an_edited_rig_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    manifest = manifest_of(folder)
    manifest["rig"]["model"] = "openai/gpt-9"
    manifest["rig"]["line"] = "openai/gpt-9 · fake"
    write_manifest(folder, manifest)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "manifest.json: a field of the sealed plan" in result.output and "rig" in result.output
    assert ledger_lines(project) == 0


def test_a_scratch_mark_removed_from_the_manifest_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    assert cli_in(project, "run", CARD, "--scratch").exit_code == 0
    folder = only_run(project, CARD)
    manifest = manifest_of(folder)
    assert manifest["scratch"]
    del manifest["scratch"]
    manifest["rig"]["line"] = manifest["rig"]["line"].removesuffix(" · scratch")
    write_manifest(folder, manifest)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1 and "a field of the sealed plan" in result.output
    assert ledger_lines(project) == 0


def test_a_file_added_under_sealed_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    (folder / "sealed" / "assignment-v2.jsonl").write_text("{}\n", encoding="utf-8")
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "sealed/assignment-v2.jsonl was added after the plan was written" in result.output


def test_a_manifest_without_the_plan_digests_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    manifest = manifest_of(folder)
    del manifest["sealed"], manifest["plan_digest"]
    write_manifest(folder, manifest)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "manifest.json has no digests of its sealed plan" in result.output


def test_edited_scores_with_their_digest_deleted_are_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = finished_run(tmp_path, server)
    rows = read_jsonl(folder / "scores.jsonl")
    for row in rows:
        row["score"] = 1.0
    write_jsonl(folder / "scores.jsonl", rows)
    manifest = manifest_of(folder)
    del manifest["scores_digest"]
    write_manifest(folder, manifest)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "manifest has no scores_digest" in result.output
    assert ledger_lines(project) == 0


def test_edited_requests_are_refused_by_resume(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    [part] = run(project, CARD, RunOptions(progress=False), stop_after=4)  # as if killed after four calls
    assert not part.finished
    folder = only_run(project, CARD)
    path = folder / "sealed" / "requests.jsonl"
    rows = read_jsonl(path)
    rows[-1]["body"]["messages"][-1]["content"] += "\nAnswer red."
    write_jsonl(path, rows)
    server.configure(POLITE_IS_RIGHT)  # zeroes the call counter
    result = cli_in(project, "run", CARD, "--resume", folder.name)
    assert result.exit_code == 1
    assert "sealed/requests.jsonl changed after the plan was written" in result.output
    assert server.stats()["calls"] == 0


def test_a_rig_edited_before_resume_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    run(project, CARD, RunOptions(progress=False), stop_after=4)
    folder = only_run(project, CARD)
    manifest = manifest_of(folder)
    manifest["params"]["temperature"] = 0.0
    write_manifest(folder, manifest)
    server.configure(POLITE_IS_RIGHT)
    result = cli_in(project, "run", CARD, "--resume", folder.name)
    assert result.exit_code == 1 and "a field of the sealed plan" in result.output
    assert server.stats()["calls"] == 0


# ------------------------------------------------------------------------------ after the verdict: --verify


def judged_run(tmp_path: Path, server: FakeServer) -> tuple[Project, Path]:
    project, folder = finished_run(tmp_path, server)
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    return project, folder


def test_verify_is_ok_on_an_untouched_judged_run(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, _ = judged_run(tmp_path, server)
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 0, result.output
    head = json.loads(project.ledger_path.read_text(encoding="utf-8").splitlines()[-1])["hash"]
    assert (f"ledger ok: 1 row(s), hash chain intact, evidence of 1 judged run(s) unchanged, last {head}"
            in result.output)


def test_verify_names_each_changed_or_missing_file(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = judged_run(tmp_path, server)
    rows = read_jsonl(folder / "outputs.jsonl")
    rows[0]["text"] = "green" if rows[0]["text"] != "green" else "red"
    write_jsonl(folder / "outputs.jsonl", rows)
    manifest = manifest_of(folder)
    manifest["outputs_digest"] = file_digest(folder / "outputs.jsonl")  # recomputed, to hide the edit
    write_manifest(folder, manifest)
    (folder / "scores.jsonl").unlink()
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1
    where = f"results/{CARD}/v1/{folder.name}"
    lines = result.output.strip().splitlines()
    assert f"FAIL seq 1 (run {folder.name}): {where}/manifest.json: outputs_digest differs from the ledger row" in lines
    assert any(line.startswith(f"FAIL seq 1 (run {folder.name}): {where}/outputs.jsonl changed") for line in lines)
    assert f"FAIL seq 1 (run {folder.name}): {where}/scores.jsonl is missing" in lines
    assert lines[-1].startswith("ledger NOT ok: 1 row(s), hash chain intact, 3 problem(s) above")


def test_verify_names_a_deleted_run_folder(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = judged_run(tmp_path, server)
    shutil.rmtree(folder)
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1
    assert f"results/{CARD}/v1/{folder.name}/ is missing" in result.output


@pytest.mark.parametrize("how", ["deleted", "written by hand"])
def test_the_site_names_a_row_whose_run_folder_is_not_there(tmp_path: Path, server: FakeServer, key: str,
                                                            how: str) -> None:
    """The site checked only the rows of the run folders it read: a judged run's folder deleted, or a row appended
    by hand with its hash computed (anyone can compute it), went onto the ledger page as a finding with no word in
    the build report, while `ledger --verify` failed on it."""
    project, folder = judged_run(tmp_path, server)
    if how == "deleted":
        shutil.rmtree(folder)
        seq, run = 1, folder.name
    else:
        row = json.loads(project.ledger_path.read_text(encoding="utf-8"))
        seq, run = 2, "20991231T000000Z-f0f0"
        forged = {**row, "seq": seq, "prev": row["hash"], "run": run, "evidence": f"results/{CARD}/v1/{run}"}
        forged["hash"] = ledger.row_hash(forged)
        with project.ledger_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(forged, separators=(",", ":"), ensure_ascii=False) + "\n")
    site = cli_in(project, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    assert (f"skipped: results/{CARD}/v1/{run}/ is missing (no manifest.json); the ledger page shows its row "
            f"(seq {seq}) without the evidence it rests on") in site.output


@pytest.mark.parametrize("name", ["manifest.json", "verdict.json"])
def test_a_field_written_twice_after_the_verdict_is_named(tmp_path: Path, server: FakeServer, key: str,
                                                          name: str) -> None:
    """Both files' digests are over their parsed fields, and json keeps the last of two: a `"finding": "loss"` (or
    another rig) written before the real one changed what a person or another reader sees, with every digest
    holding; `--verify` said ok."""
    project, folder = judged_run(tmp_path, server)
    path = folder / name
    field = "rig" if name == "manifest.json" else "finding"
    path.write_text(path.read_text(encoding="utf-8").replace("{", f'{{"{field}": "loss",', 1), encoding="utf-8")
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1
    assert (f"FAIL seq 1 (run {folder.name}): results/{CARD}/v1/{folder.name}/{name}: field '{field}': written "
            "twice; keep one (edited after the verdict)") in result.output.splitlines()


def test_an_edited_sealed_file_after_the_verdict_is_named(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = judged_run(tmp_path, server)
    swap_variants(folder)
    recompute_digests(folder)
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1
    assert "manifest.json: plan_digest differs from the ledger row" in result.output


def test_an_edited_finding_is_named_and_pages_show_the_ledger_row(tmp_path: Path, server: FakeServer,
                                                                 key: str) -> None:
    project, folder = judged_run(tmp_path, server)
    row = json.loads(project.ledger_path.read_text(encoding="utf-8"))
    verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    forged = "no-effect" if row["finding"] != "no-effect" else "win"
    outcome = {"no-effect": "non-result", "win": "result"}[forged]
    verdict.update(finding=forged, outcome=outcome, why="FORGED: the variant changes nothing")
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=2), encoding="utf-8")
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1
    assert f"verdict.json: finding is '{forged}', the ledger row says '{row['finding']}'" in result.output
    site = cli_in(project, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    assert "verdict.json differs from its ledger row (seq 1)" in site.output
    page = (tmp_path / "site" / "runs" / CARD / "v1" / folder.name / "index.html").read_text(encoding="utf-8")
    assert f"{row['outcome']} · {row['finding']}" in page and f"{outcome} · {forged}" not in page
    assert "FORGED" not in page


def test_an_edited_gap_is_not_the_lead_of_the_card_page(tmp_path: Path, server: FakeServer, key: str) -> None:
    """The page's lead over an edited verdict.json says what the ledger row anchors, not the edited figures."""
    project, folder = judged_run(tmp_path, server)
    shown = cli_in(project, "verdict", folder.name, "--show").output.splitlines()
    lead = shown[1:shown.index(next(line for line in shown if line.startswith("finding:")))]
    assert lead and " → " in lead[0]
    verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    for figures in verdict["metrics"].values():
        figures.update(gap=0.777, means={k: 0.5 for k in figures["means"]})
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=2), encoding="utf-8")
    site = cli_in(project, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0 and "verdict.json differs from its ledger row (seq 1)" in site.output
    page = (tmp_path / "site" / "cards" / CARD / "index.html").read_text(encoding="utf-8")
    # the row keeps the means, gap and interval (not the pairing), so the lead says what it anchors
    assert all(line.split(", paired over")[0] in page for line in lead)
    assert "+0.777" not in page and "to 0.500" not in page


def test_a_changed_verdict_figure_is_named(tmp_path: Path, server: FakeServer, key: str) -> None:
    project, folder = judged_run(tmp_path, server)
    verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    verdict["cells"] = verdict["cells"] + 1
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=2), encoding="utf-8")
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1 and "verdict.json changed after the verdict was given" in result.output


# ---------------------------------------------------------------------------------------- a torn ledger tail


def test_a_torn_ledger_tail_stops_verdicts_until_repaired(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    for _ in range(2):
        assert cli_in(project, "run", CARD, "--json").exit_code == 0
    first, second = runs_of(project, CARD)
    assert cli_in(project, "verdict", first.name).exit_code == 0
    whole = project.ledger_path.read_bytes()
    torn = whole.splitlines()[0][:90]  # a second row whose write was cut short
    project.ledger_path.write_bytes(whole + torn)

    refused = cli_in(project, "verdict", second.name)
    assert refused.exit_code == 1 and "line 2 is torn" in refused.output
    assert "benchcard ledger --repair" in refused.output
    assert not (second / "verdict.json").exists()
    verify = cli_in(project, "ledger", "--verify")
    assert verify.exit_code == 1 and "FAIL results/ledger.jsonl: line 2 is torn (90 bytes" in verify.output
    shown = cli_in(project, "ledger", "--json")
    assert [r["run"] for r in json.loads(shown.output)] == [first.name]
    assert cli_in(project, "site", "--out", str(tmp_path / "site")).exit_code == 0

    repaired = cli_in(project, "ledger", "--repair")
    assert repaired.exit_code == 0
    [side] = project.results_dir.glob("ledger.jsonl.torn-*")
    assert side.read_bytes() == torn and project.ledger_path.read_bytes() == whole
    assert cli_in(project, "verdict", second.name).exit_code == 0
    assert cli_in(project, "ledger", "--verify").exit_code == 0


def test_a_row_from_before_rows_carried_digests_is_checked_against_its_manifest(tmp_path: Path) -> None:
    """The repository's BENCH-01 run was judged before rows anchored their evidence; the append-only ledger can
    never give its row the digests, so --verify checks its files against its own manifest and says so."""
    root = published_project(tmp_path / "proj")
    project = Project(root)
    [row] = [json.loads(line) for line in project.ledger_path.read_text(encoding="utf-8").splitlines()]
    assert "plan_digest" not in row
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 0, result.output
    assert f"note seq 1 (run {row['run']}): entered before ledger rows carried their run's digests" in result.output
    outputs = root / row["evidence"] / "outputs.jsonl"
    outputs.write_text(outputs.read_text(encoding="utf-8").replace('"status":"ok"', '"status":"failed"', 1),
                       encoding="utf-8")
    result = cli_in(project, "ledger", "--verify")
    assert result.exit_code == 1
    assert f"FAIL seq 1 (run {row['run']}): {row['evidence']}/outputs.jsonl changed (manifest sha256:" in result.output


def test_an_edited_judging_plan_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A judge card's sealed/judge-requests.jsonl is written after the run's plan; it is checked against the
    digest the manifest's judge block records (an edited judge prompt would grade another question)."""
    project = judge_project(tmp_path, server.base_url, fixtures=3, repetitions=2, k=3)
    server.configure({"replies": [{"match": "<<", "reply": "GRADE: PASS"}, {"match": "", "reply": "A tomato."}]})
    assert cli_in(project, "run", JUDGE_CARD).exit_code == 0
    folder = only_run(project, JUDGE_CARD)
    path = folder / "sealed" / "judge-requests.jsonl"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("GRADE", "GRADE (be generous)", 1), encoding="utf-8")
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "sealed/judge-requests.jsonl changed after it was written" in result.output
    assert ledger_lines(project) == 0


# ---------------------------------------------- after the verdict: every file it rests on, and who checks it


def _forge_win(folder: Path) -> None:
    verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    verdict.update(finding="win", outcome="result", why="FORGED")
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=2), encoding="utf-8")


def test_the_gate_refuses_an_edited_verdict_and_show_says_the_rows_finding(tmp_path: Path, server: FakeServer,
                                                                          key: str) -> None:
    """The issue's case: a loss edited into a win passed `--show --gate` (exit 0, "finding: win")."""
    server.configure({"replies": [{"match": "Please.", "reply": "blue"}], "default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    assert cli_in(project, "run", CARD).exit_code == 0
    folder = only_run(project, CARD)
    assert cli_in(project, "verdict", folder.name, "--gate").exit_code == 2
    row = json.loads(project.ledger_path.read_text(encoding="utf-8"))
    assert row["finding"] == "loss"
    _forge_win(folder)
    gate = cli_in(project, "verdict", folder.name, "--show", "--gate")
    assert gate.exit_code == 1 and "finding: win" not in gate.output
    assert gate.stderr.strip().splitlines()[-1].startswith(
        f"error: run {folder.name}: its record changed after the verdict: results/{CARD}/v1/{folder.name}/"
        f"verdict.json: finding is 'win', the ledger row says '{row['finding']}'")
    shown = cli_in(project, "verdict", folder.name, "--show")
    assert shown.exit_code == 0
    assert shown.stdout.startswith(f"warning: run {folder.name}'s record changed after its verdict; shown from "
                                   "its ledger row (seq 1), not verdict.json:")
    assert f"finding: {row['finding']} → {row['outcome']} (as the ledger row says)" in shown.stdout
    assert "FORGED" not in shown.stdout and "finding: win" not in shown.stdout
    as_json = json.loads(cli_in(project, "verdict", folder.name, "--show", "--json").stdout)
    assert as_json["finding"] == row["finding"] and as_json["changed"] and as_json["ledger_row"]["hash"] == row["hash"]


def test_the_gate_refuses_a_verdict_no_ledger_row_holds(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A verdict.json copied into a run that was never judged (or whose row was cut) vouches for nothing."""
    _, folder = judged_run(tmp_path, server)
    other = tmp_path / "other"
    other_project, other_folder = finished_run(other, server)
    verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    verdict.update(run=other_folder.name, finding="win", outcome="result")
    (other_folder / "verdict.json").write_text(json.dumps(verdict), encoding="utf-8")
    gate = cli_in(other_project, "verdict", other_folder.name, "--show", "--gate")
    assert gate.exit_code == 1 and f"no ledger row holds run {other_folder.name}" in gate.stderr


def _judged_judge_run(tmp_path: Path, server: FakeServer, graded: bool = True) -> tuple[Project, Path]:
    """A judge card's run, blind-graded by a person, judged and entered."""
    project = judge_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2, k=2)
    server.configure({"replies": [{"match": "<<", "reply": "GRADE: PASS"}, {"match": "", "reply": "A tomato."}]})
    assert cli_in(project, "run", JUDGE_CARD).exit_code == 0
    folder = only_run(project, JUDGE_CARD)
    if graded:
        sheet = tmp_path / "sheet.csv"
        assert cli_in(project, "blind-sheet", folder.name, "--out", str(sheet)).exit_code == 0
        sheet.write_text(sheet.read_text(encoding="utf-8").replace(",,", ",pass,"), encoding="utf-8")
        assert cli_in(project, "grade", folder.name, str(sheet)).exit_code == 0
    result = cli_in(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    return project, folder


def test_a_judged_runs_row_anchors_every_file_its_verdict_rests_on(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    project, folder = _judged_judge_run(tmp_path, server)
    row = json.loads(project.ledger_path.read_text(encoding="utf-8"))
    assert list(row["evidence_files"]) == ["grades/human.csv", "judge-outputs.jsonl", "sealed/judge-requests.jsonl",
                                           "sealed/sheet-human.jsonl", "table.csv"]
    assert all(row["evidence_files"][name] == file_digest(folder / name) for name in row["evidence_files"])
    assert cli_in(project, "ledger", "--verify").exit_code == 0
    assert cli_in(project, "verdict", folder.name, "--show", "--gate").exit_code == 4  # inconclusive, untouched


def _edit_judge_output(folder: Path) -> None:
    path = folder / "judge-outputs.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("GRADE: PASS", "GRADE: FAIL", 1), encoding="utf-8")


def _edit_judge_requests(folder: Path) -> None:
    path = folder / "sealed" / "judge-requests.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("Be strict.", "Be generous.", 1), encoding="utf-8")
    manifest = manifest_of(folder)
    manifest["judge"]["requests_digest"] = file_digest(path)  # recomputed, to hide the edit
    write_manifest(folder, manifest)


def _edit_grades(folder: Path) -> None:
    path = folder / "grades" / "human.csv"
    path.write_text(path.read_text(encoding="utf-8").replace(",pass", ",fail", 1), encoding="utf-8")


def _edit_sheet_mapping(folder: Path) -> None:
    path = folder / "sealed" / "sheet-human.jsonl"
    rows = read_jsonl(path)
    rows[0], rows[1] = {**rows[0], "cell": rows[1]["cell"]}, {**rows[1], "cell": rows[0]["cell"]}
    write_jsonl(path, rows)


@pytest.mark.parametrize(("edit", "named"), [
    (_edit_judge_output, "judge-outputs.jsonl changed after the verdict (ledger row sha256:"),
    (lambda folder: (folder / "judge-outputs.jsonl").unlink(), "judge-outputs.jsonl is missing"),
    (_edit_judge_requests, "sealed/judge-requests.jsonl changed after the verdict (ledger row sha256:"),
    (_edit_grades, "grades/human.csv changed after the verdict (ledger row sha256:"),
    (_edit_sheet_mapping, "sealed/sheet-human.jsonl changed after the verdict (ledger row sha256:"),
    (lambda folder: (folder / "table.csv").unlink(), "table.csv is missing"),
])
def test_judge_evidence_edited_after_the_verdict_is_named_by_verify_gate_show_and_site(
        tmp_path: Path, server: FakeServer, key: str, edit: Any, named: str) -> None:
    project, folder = _judged_judge_run(tmp_path, server)
    edit(folder)
    where = f"results/{JUDGE_CARD}/v1/{folder.name}/{named}"
    verify = cli_in(project, "ledger", "--verify")
    assert verify.exit_code == 1 and f"FAIL seq 1 (run {folder.name}): {where}" in verify.output
    gate = cli_in(project, "verdict", folder.name, "--show", "--gate")
    assert gate.exit_code == 1 and "its record changed after the verdict" in gate.stderr and where in gate.stderr
    shown = cli_in(project, "verdict", folder.name, "--show")
    assert shown.exit_code == 0 and any(line.startswith(f"  {where}") for line in shown.stdout.splitlines())
    site = cli_in(project, "site", "--out", str(tmp_path / "site"))
    assert site.exit_code == 0 and where in site.output


def test_a_batch_runs_journal_and_chunks_are_anchored(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=1)
    assert cli_in(project, "run", CARD, "--batch", "--poll-interval", "0.05").exit_code == 0
    folder = only_run(project, CARD)
    assert cli_in(project, "verdict", folder.name).exit_code == 0
    assert cli_in(project, "status", folder.name).exit_code == 0  # reading a finished batch run changes nothing
    row = json.loads(project.ledger_path.read_text(encoding="utf-8"))
    assert {"batch/journal.jsonl", "batch/chunk-000.jsonl"} <= set(row["evidence_files"])
    assert cli_in(project, "ledger", "--verify").exit_code == 0
    journal = folder / "batch" / "journal.jsonl"
    journal.write_text(journal.read_text(encoding="utf-8").replace('"event"', '"event" ', 1), encoding="utf-8")
    verify = cli_in(project, "ledger", "--verify")
    assert verify.exit_code == 1 and "batch/journal.jsonl changed after the verdict" in verify.output


def test_show_gate_applies_no_gate_to_a_scratch_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    """A scratch verdict has no ledger row, so nothing shows its verdict.json unedited: `--show --gate` refuses
    it (the gate of a scratch run is given as it is judged)."""
    server.configure(POLITE_IS_RIGHT)
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=6, repetitions=2)
    assert cli_in(project, "run", CARD, "--scratch").exit_code == 0
    folder = only_run(project, CARD)
    given = cli_in(project, "verdict", folder.name, "--scratch", "--gate")
    assert given.exit_code == 0 and "gate: win → exit 0" in given.output
    _forge_win(folder)  # (a win already; any edit would pass unseen)
    gate = cli_in(project, "verdict", folder.name, "--show", "--gate")
    assert gate.exit_code == 1 and "its verdict is a scratch verdict, which no ledger row vouches for" in gate.stderr
    assert cli_in(project, "verdict", folder.name, "--show").exit_code == 0  # shown, marked scratch, as before


def test_a_run_file_replaced_by_a_folder_is_said_so_by_every_command(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    """Hostile audit (hostile21, a file replaced between steps): a finished run's outputs.jsonl made a folder read
    as a run with no cell recorded (`status`: 0 ok, finished; `run --resume`: nothing to call, 12 missing), and a
    judged run's scores.jsonl made one was `missing` to `ledger --verify`, though it stands there. Each command says
    what stands in the file's place."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=1)
    assert _run(project)
    judged = only_run(project, "colour-ab")
    assert CliRunner().invoke(cli, ["-C", str(project.root), "verdict", judged.name]).exit_code == 0
    assert _run(project)
    open_run = next(r for r in runs_of(project, "colour-ab") if r != judged)
    outputs = open_run / "outputs.jsonl"
    outputs.rename(open_run / "kept")
    outputs.mkdir()
    said = (f"error: {project.relative(outputs)}: not a regular file (a folder), where benchcard keeps one; move it "
            "aside and put the file back")
    for args in (["status", open_run.name], ["run", "colour-ab", "--resume", open_run.name],
                 ["verdict", open_run.name], ["export", open_run.name, "--out", str(tmp_path / "x.csv")]):
        result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
        assert (result.exit_code, result.stderr.strip()) == (1, said), (args, result.output)
    scores = judged / "scores.jsonl"
    scores.rename(judged / "kept")
    scores.mkdir()
    verify = CliRunner().invoke(cli, ["-C", str(project.root), "ledger", "--verify"])
    assert verify.exit_code == 1 and (f"results/colour-ab/v1/{judged.name}/scores.jsonl is not a regular file any "
                                      "more (a folder, a link)") in verify.stdout, verify.output


def _run(project: Project) -> bool:
    return CliRunner().invoke(cli, ["-C", str(project.root), "run", "colour-ab"]).exit_code == 0


def test_a_row_entered_by_hand_for_a_scratch_run_is_named(tmp_path: Path) -> None:
    """A trial is never in the ledger, but `ledger.append` makes any row's hash: a scratch run's verdict entered
    through it (its verdict.json given the row's seq and hash, a field its digest leaves out) verified as a result
    of the card (hostile audit, round 24). Each judged run's manifest is read by `ledger --verify` anyway: one that
    is marked scratch is named."""
    from benchcard.records.verdictfile import decode_verdict
    from benchcard.verdict.entry import verdict_row
    from benchcard.verdict.integrity import evidence_digests, evidence_files, verdict_digest

    from ..helpers_verdict import ab_metrics, make_project, make_run, the_card

    project = make_project(tmp_path / "p")
    card = the_card(project)
    folder = make_run(project, card, ab_metrics(), scratch="run with --scratch")
    assert cli_in(project, "verdict", folder.name).exit_code == 0
    raw = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    assert raw["scratch"] is True and raw["ledger"] is None
    verdict = decode_verdict((folder / "verdict.json").read_bytes(), "verdict.json")
    manifest = manifest_of(folder)
    row = ledger.append(project, verdict_row(card, verdict, anchors=evidence_digests(manifest),
                                             digest=verdict_digest(raw), files=evidence_files(folder, manifest)))
    raw["ledger"] = {"seq": row.seq, "hash": row.hash, "at": row.at}
    (folder / "verdict.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    verify = cli_in(project, "ledger", "--verify")
    assert verify.exit_code == 1
    assert (f"FAIL seq 1 (run {folder.name}): results/extract-ab/v1/{folder.name}/manifest.json: a scratch run "
            "(run with --scratch), which is never in the ledger") in verify.output
