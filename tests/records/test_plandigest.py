"""The sealed plan's digests: every file under sealed/ and the manifest fields that say what the run is, so an
edited, added, missing or swapped file, or a changed rig, is named and never used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchcard._util.hashing import file_digest
from benchcard.records.plandigest import PLAN_FIELDS, plan_digest, sealed_digests, sealed_files, sealed_problems


def planned(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A run folder with a sealed plan, and its manifest with the digests `sealed_digests` gives."""
    folder = tmp_path / "run"
    (folder / "sealed").mkdir(parents=True)
    (folder / "sealed" / "assignment.jsonl").write_bytes(b'{"cell":"c1","variant":"A"}\n')
    (folder / "sealed" / "requests.jsonl").write_bytes(b'{"cell":"c1","body":{"model":"m"}}\n')
    manifest: dict[str, Any] = {"run": "r1", "card": "colour-ab", "version": 1, "rig": "fake · m", "seed": 7,
                                "cells": 1, "concurrency": 4}
    manifest.update(sealed_digests(folder, manifest))
    return folder, manifest


def test_every_sealed_file_is_listed_with_its_digest(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    assert manifest["sealed"] == {
        "sealed/assignment.jsonl": file_digest(folder / "sealed" / "assignment.jsonl"),
        "sealed/requests.jsonl": file_digest(folder / "sealed" / "requests.jsonl")}
    assert manifest["plan_digest"] == plan_digest(manifest, manifest["sealed"])
    assert sealed_problems(folder, manifest) == []
    # a blind sheet's mapping, written after the run, is not part of the plan
    (folder / "sealed" / "sheet-grader1.jsonl").write_bytes(b"{}\n")
    assert "sealed/sheet-grader1.jsonl" not in sealed_files(folder) and sealed_problems(folder, manifest) == []


def test_a_field_outside_the_plan_may_change_and_one_inside_may_not(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    assert "concurrency" not in PLAN_FIELDS and "rig" in PLAN_FIELDS
    assert sealed_problems(folder, {**manifest, "concurrency": 64}) == []  # a resume may run it faster
    [problem] = sealed_problems(folder, {**manifest, "rig": "fake · another-model"})
    assert problem.startswith("manifest.json: a field of the sealed plan (run, card, version, kind, ")
    assert problem.endswith(") or the digests of sealed/ changed after the plan was written")


def test_an_edited_added_or_missing_file_is_named(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    was = manifest["sealed"]["sealed/assignment.jsonl"]
    (folder / "sealed" / "assignment.jsonl").write_bytes(b'{"cell":"c1","variant":"baseline"}\n')
    (folder / "sealed" / "requests.jsonl").unlink()
    (folder / "sealed" / "extra.jsonl").write_bytes(b"\n")
    now = file_digest(folder / "sealed" / "assignment.jsonl")
    assert sealed_problems(folder, manifest) == [
        f"sealed/assignment.jsonl changed after the plan was written (sealed {was}, now {now})",
        "sealed/extra.jsonl was added after the plan was written",
        "sealed/requests.jsonl is missing"]


def test_a_folder_made_in_a_sealed_files_place_is_named_as_such(tmp_path: Path) -> None:
    """A folder is not walked as a file: `sealed/requests.jsonl` made one was `missing` to resume and verdict,
    though `ls` shows it (hostile21)."""
    folder, manifest = planned(tmp_path)
    (folder / "sealed" / "requests.jsonl").unlink()
    (folder / "sealed" / "requests.jsonl").mkdir()
    assert sealed_problems(folder, manifest) == ["sealed/requests.jsonl is not a regular file"]


def test_a_link_never_passes_for_sealed_content(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes((folder / "sealed" / "requests.jsonl").read_bytes())
    (folder / "sealed" / "requests.jsonl").unlink()
    (folder / "sealed" / "requests.jsonl").symlink_to(target)
    assert sealed_files(folder)["sealed/requests.jsonl"] == "not a regular file"
    assert sealed_problems(folder, manifest) == ["sealed/requests.jsonl is not a regular file"]


def test_a_manifest_without_digests_never_passes(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    bare = {k: v for k, v in manifest.items() if k not in ("sealed", "plan_digest")}
    assert sealed_problems(folder, bare) == [
        "manifest.json has no digests of its sealed plan (sealed, plan_digest), so the plan cannot be shown unchanged"]


def test_the_judging_plan_is_checked_against_the_digest_written_with_it(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    judged = folder / "sealed" / "judge-requests.jsonl"
    judged.write_bytes(b'{"cell":"j1"}\n')
    assert sealed_problems(folder, manifest) == ["sealed/judge-requests.jsonl was added after the plan was written"]
    sealed = file_digest(judged)
    manifest["judge"] = {"requests_digest": sealed}
    assert sealed_problems(folder, manifest) == []
    judged.write_bytes(b'{"cell":"j2"}\n')
    assert sealed_problems(folder, manifest) == [
        f"sealed/judge-requests.jsonl changed after it was written (sealed {sealed}, now {file_digest(judged)})"]


def test_a_sequential_schedule_is_covered_and_an_older_plan_keeps_its_digest(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    older = manifest["plan_digest"]
    schedule = {"looks": [2, 4, 6], "cells": [48, 96, 144], "spending": "obrien-fleming", "futility": True,
                "alpha": 0.05}
    sequential = {k: v for k, v in manifest.items() if k not in ("sealed", "plan_digest")} | {"sequential": schedule}
    sequential.update(sealed_digests(folder, sequential))
    assert sequential["plan_digest"] != older  # the schedule is part of what the run is
    assert plan_digest(manifest, manifest["sealed"]) == older  # absent: as before
    assert sealed_problems(folder, sequential) == []
    [problem] = sealed_problems(folder, {**sequential, "sequential": {**schedule, "looks": [3, 6]}})
    assert "sequential, headers) or the digests of sealed/ changed after the plan was written" in problem


def test_a_recorded_stretch_plan_that_is_missing_is_named(tmp_path: Path) -> None:
    folder, manifest = planned(tmp_path)
    later = folder / "sealed" / "judge-requests-2.jsonl"
    later.write_bytes(b'{"cell":"j1"}\n')
    manifest["judge_stretches"] = [{"look": 2, "file": "sealed/judge-requests-2.jsonl", "judgements": 1, "seed": 1,
                                    "planned_at": "2026-12-05T10:00:00Z", "requests_digest": file_digest(later)}]
    assert sealed_problems(folder, manifest) == []
    later.rename(folder / "judge-requests-2.jsonl.tmp")  # a kill left it beside sealed/: the resume moves it in
    assert sealed_problems(folder, manifest) == []
    (folder / "judge-requests-2.jsonl.tmp").unlink()
    assert sealed_problems(folder, manifest) == [
        "sealed/judge-requests-2.jsonl is missing (manifest.json records its requests_digest)"]
