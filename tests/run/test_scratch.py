"""Scratch runs: a trial is marked in the manifest, the rig line and every page, and never enters the ledger."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.project import Project
from benchcard.run._scratch import GITIGNORE
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import one_line_error
from ..helpers_run import PROBE, ab_project, only_run, probe_project


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_a_scratch_run_is_marked_everywhere_and_never_in_the_ledger(tmp_path: Path, server: FakeServer,
                                                                   key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    ran = ok(bc(project, "run", "colour-ab", "--scratch"))
    folder = only_run(project, "colour-ab")
    assert f"{folder.name} · test/model · fake · scratch → " in ran.output
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["scratch"] == "run with --scratch" and manifest["rig"]["line"] == "test/model · fake · scratch"
    judged = ok(bc(project, "verdict", folder.name))
    assert "test/model · fake · scratch" in judged.output
    assert judged.output.rstrip().endswith("scratch: a trial verdict, not entered in the ledger")
    verdict = json.loads((folder / "verdict.json").read_text())
    assert verdict["scratch"] is True and verdict["ledger"] is None
    assert not (project.root / "results" / "ledger.jsonl").exists()
    ok(bc(project, "site", "--out", str(tmp_path / "web")))
    run_page = (tmp_path / "web" / "runs").rglob("index.html").__next__().read_text(encoding="utf-8")
    card_page = (tmp_path / "web" / "cards" / "colour-ab" / "index.html").read_text(encoding="utf-8")
    index = (tmp_path / "web" / "index.html").read_text(encoding="utf-8")
    for page in (run_page, card_page):
        assert "Scratch run (run with --scratch): a trial, never entered in the ledger" in page
        assert "test/model · fake · scratch" in page
    assert "test/model · fake · scratch" in index


def test_another_endpoint_than_the_cards_rig_is_scratch(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "negative"})
    project = probe_project(tmp_path / "a", server.base_url, provider="openrouter")  # the card's own rig
    ok(bc(project, "run", PROBE, "--provider", "fake"))  # a fake server declared in benchcard.yaml
    manifest = json.loads((only_run(project, PROBE) / "manifest.json").read_text())
    assert manifest["scratch"] == "provider 'fake' (declared in benchcard.yaml) instead of the card's 'openrouter'"
    assert manifest["rig"]["line"].endswith(" · scratch")
    assert "scratch: a trial verdict" in ok(bc(project, "verdict", PROBE)).output

    project = probe_project(tmp_path / "b", server.base_url, provider="fake")
    ok(bc(project, "run", PROBE, "--base-url", server.base_url))
    manifest = json.loads((only_run(project, PROBE) / "manifest.json").read_text())
    assert manifest["scratch"].startswith("--base-url ")


def test_a_trial_of_an_unsealed_version_says_its_bootstrap_is_seeded_from_the_root_it_would_be_sealed_with(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """An unsealed version has no seal root: a trial of it records the root its material would be sealed with, and
    its verdict said "seeded from the seal root". It now says what that root is, and verdict.json `sealed: false`;
    a trial of a sealed version, and a real run, still say the seal root."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    project.seal_path("colour-ab", 1).unlink()
    ok(bc(project, "run", "colour-ab", "--scratch"))
    folder = only_run(project, "colour-ab")
    said = [line for line in ok(bc(project, "verdict", folder.name)).output.splitlines() if "bootstrap:" in line]
    assert said == ["metrics (95% intervals; bootstrap: 10,000 fixture resamples seeded from the root v1 would be "
                    "sealed with: v1 was not sealed):"]
    assert json.loads((folder / "verdict.json").read_text())["sealed"] is False
    assert said == [line for line in ok(bc(project, "verdict", folder.name, "--show")).output.splitlines()
                    if "bootstrap:" in line]

    sealed = ab_project(tmp_path / "sealed", server.base_url, fixtures=3, repetitions=2)
    for scratch in (["--scratch"], []):
        ok(bc(sealed, "run", "colour-ab", *scratch))
        run = sorted((sealed.root / "results" / "colour-ab" / "v1").iterdir())[-1]
        output = ok(bc(sealed, "verdict", run.name)).output
        assert "10,000 fixture resamples seeded from the seal root):" in output
        assert "sealed" not in json.loads((run / "verdict.json").read_text())


def test_verdict_scratch_writes_a_verdict_without_a_ledger_row(tmp_path: Path, server: FakeServer,
                                                               key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    ok(bc(project, "run", "colour-ab", "--scratch"))
    folder = only_run(project, "colour-ab")
    judged = ok(bc(project, "verdict", folder.name, "--scratch"))
    assert "scratch: a trial verdict, not entered in the ledger" in judged.output
    assert json.loads((folder / "verdict.json").read_text())["rig"] == "test/model · fake · scratch"
    assert "no verdicts yet" in ok(bc(project, "ledger")).output


def test_a_sealed_run_is_never_given_a_trial_verdict(tmp_path: Path, server: FakeServer, key: str) -> None:
    """`verdict RUN --scratch` of a sealed run (started without --scratch) unblinded it with no ledger row: a loss
    was then published as "1 scratch run, trials never entered in the ledger and never a result", and a win could
    be entered after deleting the trial's verdict.json, nothing showing it had been looked at first (hostile audit,
    round 24). A sealed run's verdict is given once, in the ledger; `--scratch` is refused before anything is read."""
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    ok(bc(project, "run", "colour-ab"))
    folder = only_run(project, "colour-ab")
    assert one_line_error(bc(project, "verdict", folder.name, "--scratch")) == (
        f"error: run {folder.name} is a sealed run, not a trial (it was started without --scratch): its verdict is "
        "given once and entered in the ledger, whatever it finds, and a trial verdict would unblind it with no "
        f"record; `benchcard verdict {folder.name}` gives it (a trial is `benchcard run colour-ab --scratch`)")
    assert not (folder / "verdict.json").exists() and not (folder / "table.csv").exists()
    assert "no verdicts yet" in ok(bc(project, "ledger")).output
    entered = json.loads(ok(bc(project, "verdict", folder.name, "--json")).stdout)
    assert entered["ledger"]["seq"] == 1


def test_git_leaves_a_scratch_run_out_and_keeps_a_real_one(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=3, repetitions=2)
    ok(bc(project, "run", "colour-ab", "--scratch"))
    [trial] = list((project.results_dir / "colour-ab" / "v1").iterdir())
    ok(bc(project, "run", "colour-ab"))
    [real] = [p for p in (project.results_dir / "colour-ab" / "v1").iterdir() if p != trial]
    assert (trial / ".gitignore").read_bytes() == GITIGNORE and not (real / ".gitignore").exists()
    git = ["git", "-c", "init.defaultBranch=main", "-C", str(project.root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    staged = subprocess.run([*git, "diff", "--cached", "--name-only"], check=True, capture_output=True,
                            text=True).stdout.splitlines()
    assert f"results/colour-ab/v1/{real.name}/manifest.json" in staged
    assert not [s for s in staged if trial.name in s]
    assert ok(bc(project, "verdict", trial.name))  # the run reads as always
