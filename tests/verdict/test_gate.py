"""`verdict --gate` and `run --gate`: one exit code per finding, a probe's sealed threshold, refusals before
anything is entered in the ledger. Exit codes are the ones docs/ci.md documents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from benchcard.card import seal
from benchcard.card.model import Card
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.testing.fakeserver import FakeServer

from ..helpers_demo import DemoRun
from ..helpers_run import KEY_ENV, PROBE, REPO, ab_project, only_run, seal_card, write_config
from ..helpers_verdict import (
    PROBE_CARD,
    STRONG_BASE,
    STRONG_VAR,
    ab_metrics,
    make_project,
    make_run,
    the_card,
)

GATED_PROBE = PROBE_CARD.replace("repetitions: 5\n", "repetitions: 5\ngate: {min_score: 0.8}\n")


def bc(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args])


def _unsupported_broken() -> np.ndarray:
    return np.array([[2, 3, 2], [3, 3, 2], [2, 2, 3], [3, 2, 2], [2, 3, 3], [3, 3, 3]], dtype=float)


@pytest.mark.parametrize(
    ("name", "metrics", "status", "code"),
    [
        ("win", ab_metrics(STRONG_BASE, STRONG_VAR), None, 0),
        ("loss", ab_metrics(STRONG_BASE, STRONG_VAR, unsupported_var=_unsupported_broken()), None, 2),
        ("no-effect", ab_metrics(STRONG_BASE, STRONG_BASE + np.array([[0.01], [-0.01], [0], [0.005], [-0.005], [0]])),
         None, 3),
        ("inconclusive", ab_metrics(STRONG_VAR, STRONG_BASE), None, 4),  # the wrong way, but 6 fixtures: no loss
        ("incomplete", ab_metrics(STRONG_BASE, STRONG_VAR), {("A", "ex-02", 0): "failed"}, 5),
    ],
)
def test_each_finding_has_its_exit_code(project: Project, name: str, metrics: dict[str, Any],
                                        status: dict[Any, str] | None, code: int) -> None:
    run_dir = make_run(project, the_card(project), metrics, status=status)
    result = bc(project, "verdict", run_dir.name, "--gate")
    assert result.exit_code == code, result.output
    assert f"finding: {name} →" in result.stdout
    assert f"gate: {name} → exit {code}" in result.stdout
    assert ledger.read(project)[-1].finding == name  # the verdict was given and entered, whatever the gate
    shown = bc(project, "verdict", run_dir.name, "--show", "--gate", "--json")
    assert shown.exit_code == code
    assert json.loads(shown.stdout)["gate"] == {"run": run_dir.name, "finding": name, "code": code,
                                                "passed": code == 0, "why": f"gate: {name} → exit {code}"
                                                + ("" if code == 0 else " (only a win passes)")}
    assert len(ledger.read(project)) == 1  # --show appends nothing


def test_without_gate_the_verdict_exits_0_whatever_it_found(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_VAR, STRONG_BASE))
    result = bc(project, "verdict", run_dir.name)
    assert result.exit_code == 0 and "finding: inconclusive" in result.stdout and "gate:" not in result.stdout


def _probe_run(project: Project, says: list[int]) -> Path:
    ones = np.ones((1, 5))
    score = np.array([says], dtype=float)
    return make_run(project, the_card(project, "say-negative"), {"score": {"probe": score}},
                    rules={"says-negative": {"probe": score}, "no-period": {"probe": ones}})


def test_a_probe_gate_is_its_sealed_min_score(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", GATED_PROBE)
    at = bc(project, "verdict", _probe_run(project, [1, 1, 1, 1, 0]).name, "--gate")
    assert at.exit_code == 0, at.output
    assert "gate: score 0.800 ≥ min_score 0.8 → pass, exit 0" in at.stdout
    below = bc(project, "verdict", _probe_run(project, [1, 1, 1, 0, 0]).name, "--gate")
    assert below.exit_code == 2
    assert "gate: score 0.600 < min_score 0.8 → below, exit 2" in below.stdout
    card = the_card(project, "say-negative")
    failed = make_run(project, card, {"score": {"probe": np.ones((1, 5))}},
                      rules={"says-negative": {"probe": np.ones((1, 5))}, "no-period": {"probe": np.ones((1, 5))}},
                      status={("probe", "say-negative", 2): "failed"})
    incomplete = bc(project, "verdict", failed.name, "--gate")
    assert incomplete.exit_code == 5 and "gate: incomplete, no score to hold to min_score 0.8" in incomplete.stdout


def test_a_gated_probe_judged_without_gate_says_what_its_gate_makes_of_it(tmp_path: Path) -> None:
    """A probe's finding is `scored` whatever its score: `benchcard verdict` on a probe sealed with a gate said
    nothing of it, and a score under its min_score read as a plain result. It now says the gate's decision and
    the code --gate would exit with, and exits 0 itself; an ungated probe and an ab card say no gate line."""
    project = make_project(tmp_path / "p", GATED_PROBE)
    below = bc(project, "verdict", _probe_run(project, [1, 1, 1, 0, 0]).name)
    assert below.exit_code == 0, below.output
    assert below.stdout.endswith("gate: score 0.600 < min_score 0.8 → below, --gate exits 2\n")
    assert "finding: scored → result" in below.stdout
    ungated = make_project(tmp_path / "q", PROBE_CARD)
    plain = bc(ungated, "verdict", _probe_run(ungated, [1, 1, 1, 0, 0]).name)
    assert plain.exit_code == 0 and "gate" not in plain.stdout


@pytest.mark.parametrize(("min_score", "says", "code", "line"), [
    (1, [1, 1, 1, 1, 1], 2, "gate: score 1.000 over 4 scored, 0.800 with the 1 cut off at max_tokens counted as "
                           "failing < min_score 1 → below, exit 2"),
    (0.8, [1, 1, 1, 1, 1], 0, "gate: score 1.000 over 4 scored, 0.800 with the 1 cut off at max_tokens counted as "
                             "failing ≥ min_score 0.8 → pass, exit 0"),
    (0.8, [1, 1, 1, 0, 1], 2, "gate: score 0.750 over 4 scored, 0.600 with the 1 cut off at max_tokens counted as "
                             "failing < min_score 0.8 → below, exit 2"),
])
def test_a_probe_gate_counts_a_cut_off_repetition_as_failing(tmp_path: Path, min_score: float, says: list[int],
                                                             code: int, line: str) -> None:
    """gate {min_score: 1}, four repetitions passing and the fifth cut off at max_tokens: the mean over the four
    scored was 1.000 and the gate passed, though the cut-off answer may have been wrong. The verdict still reports
    the score without it (a cut-off answer is not scored as wrong), but the gate is judged at the worst case for
    its claim, as an ab clause bounds truncated cells and a sequential probe's looks count them (hostile audit
    13)."""
    project = make_project(tmp_path / "p", GATED_PROBE.replace("min_score: 0.8", f"min_score: {min_score}"))
    score = np.array([says], dtype=float)
    cut = make_run(project, the_card(project, "say-negative"), {"score": {"probe": score}},
                   rules={"says-negative": {"probe": score}, "no-period": {"probe": np.ones((1, 5))}},
                   status={("probe", "say-negative", 4): "truncated"})
    result = bc(project, "verdict", cut.name, "--gate")
    assert result.exit_code == code, result.output
    assert line in result.stdout
    assert f"score {np.mean(says[:4]):.3f} over 4 scored repetition(s)" in result.stdout  # the verdict's own score
    shown = bc(project, "verdict", cut.name, "--show", "--gate")
    assert shown.exit_code == code and line in shown.stdout


def test_a_probe_without_a_gate_is_refused_before_any_verdict(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", PROBE_CARD)
    run_dir = _probe_run(project, [1, 1, 1, 1, 1])
    result = bc(project, "verdict", run_dir.name, "--gate")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: cards/say-negative.yaml: field 'gate': missing; a probe needs a sealed pass threshold for --gate, "
        "e.g. `gate: {min_score: 0.9}` (then reseal as a new version)")
    assert not (run_dir / "verdict.json").exists() and ledger.read(project) == []


def test_the_gate_is_sealed_and_validated(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", GATED_PROBE)
    run_dir = _probe_run(project, [1, 1, 1, 1, 1])
    path = project.card_path("say-negative")
    path.write_text(GATED_PROBE.replace("min_score: 0.8", "min_score: 0.2"), encoding="utf-8")
    lowered = bc(project, "verdict", run_dir.name, "--gate")
    assert lowered.exit_code == 1 and "seal changed since run" in lowered.stderr
    for bad, why in [("{min_score: 1.5}", "field 'gate.min_score': expected a number from 0 to 1, got 1.5"),
                     ("{min: 0.5}", "field 'gate.min': unknown field; expected min_score"),
                     ("0.5", "field 'gate': expected a mapping such as {min_score: 0.9}")]:
        path.write_text(GATED_PROBE.replace("{min_score: 0.8}", bad), encoding="utf-8")
        result = bc(project, "check", "say-negative")
        assert result.exit_code == 1 and why in result.output, result.output
    ab = make_project(tmp_path / "ab")
    ab_path = ab.card_path("extract-ab")
    ab_path.write_text(ab_path.read_text().replace("repetitions: 3\n", "repetitions: 3\ngate: {min_score: 1}\n"))
    result = bc(ab, "check", "extract-ab")
    assert result.exit_code == 1 and "only a probe card has a gate; an ab card's CI gate is its win rule" in \
        result.output


# ------------------------------------------------------------------------------ run --gate over real sockets


def test_run_gate_wins_over_the_fake_server(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "blue", "replies": [{"match": "Please.", "reply": "red"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=2)
    result = bc(project, "run", "colour-ab", "--gate")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "finding: win → result" in result.stdout and "gate: win → exit 0" in result.stdout
    assert "\x1b[" not in result.stdout  # piped: the verdict's colour is off
    run = only_run(project, "colour-ab").name
    assert ledger.read(project)[-1].run == run
    # the run's lines, then exactly what `verdict --show` prints of it, then the gate's line
    shown = bc(project, "verdict", run, "--show").stdout
    assert result.stdout.startswith(f"{run} · ") and result.stdout.endswith(f"\n{shown}gate: win → exit 0\n")


def test_run_gate_exits_by_the_finding_and_reports_json(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "red"})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=2)
    result = bc(project, "run", "colour-ab", "--gate", "--json")
    out = json.loads(result.stdout)
    # both arms always score 1: a ceiling, where the card cannot measure a change (never "no-effect")
    assert result.exit_code == 4 and out["code"] == 4
    assert out["gates"][0]["finding"] == "inconclusive" == out["verdicts"][0]["finding"]
    assert out["runs"][0]["run"] == out["gates"][0]["run"]


def test_run_gate_probe_below_threshold_and_unfinished(tmp_path: Path, server: FakeServer, key: str) -> None:
    (tmp_path / "cards").mkdir()
    text = (REPO / "cards" / f"{PROBE}.yaml").read_text(encoding="utf-8")
    text = text.replace("rig: {provider: openrouter,", "rig: {provider: fake,").replace(
        "repetitions: 1\n", "repetitions: 4\ngate: {min_score: 0.75}\n")
    (tmp_path / "cards" / f"{PROBE}.yaml").write_text(text, encoding="utf-8")
    write_config(tmp_path, server.base_url)
    project = seal_card(tmp_path, PROBE)
    server.configure({"default_reply": "Negative."})
    below = bc(project, "run", PROBE, "--gate")
    assert below.exit_code == 2, (below.output, below.stderr)
    assert "gate: score 0.000 < min_score 0.75 → below, exit 2" in below.stdout
    server.configure({"faults": [{"match": "", "kind": "500", "times": 100}]})
    failed = bc(project, "run", PROBE, "--gate", "--attempts", "1")
    assert failed.exit_code == 5, (failed.output, failed.stderr)
    assert "exit 5" in failed.stdout


def test_run_gate_refuses_an_ungated_probe_before_any_call(tmp_path: Path, server: FakeServer, key: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cards").mkdir()
    text = (REPO / "cards" / f"{PROBE}.yaml").read_text(encoding="utf-8")
    (tmp_path / "cards" / f"{PROBE}.yaml").write_text(text.replace("provider: openrouter,", "provider: fake,"))
    write_config(tmp_path, server.base_url)
    project = seal_card(tmp_path, PROBE)
    server.configure({"default_reply": "negative", "record_bodies": True})
    monkeypatch.setenv(KEY_ENV, "sk-test-0000")
    result = bc(project, "run", PROBE, "--gate")
    assert result.exit_code == 1 and "field 'gate': missing" in result.stderr
    assert server.stats()["bodies"] == [] and not project.results_dir.exists()


# ---------------------------------------------------------------------- run --gate on the embedded model


@pytest.mark.local_model
def test_run_gate_on_the_embedded_model_exits_by_its_finding(demo_run: DemoRun) -> None:
    """docs/ci.md's second job: the demo card on SmolLM2 through llama-cpp-python, gated by its sealed rule. The
    run is the session's one demo run (`benchcard run demo-answer-cue --provider local`, tests/helpers_demo.py);
    the same command with `--resume` of it has nothing left to call and gives the verdict and gate the job's
    `--gate` gives after its run (`run --gate` straight after a run is tested over the fake server above)."""
    from benchcard.verdict.gate import EXIT_CODES

    assert demo_run.returncode == 0, demo_run.stderr
    run_id = json.loads(demo_run.stdout)["runs"][0]["run"]
    project = Project(demo_run.root)
    result = bc(project, "run", "demo-answer-cue", "--provider", "local", "--resume", run_id, "--gate")
    [row] = ledger.read(project)
    code = EXIT_CODES[row.finding]
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert row.run == run_id
    assert f"gate: {row.finding} → exit {code}" in result.stdout
    assert f"finding: {row.finding} → {row.outcome}" in result.stdout


def test_the_gate_and_the_verdict_refuse_a_changed_card_in_the_same_words(project: Project) -> None:
    """The run's card is checked once, by one function, for the verdict and the gate alike."""
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    path = project.card_path(the_card(project).id)
    first = "  - {version: 1, note: First version.}\n"
    text = path.read_text(encoding="utf-8").replace("version: 1\n", "version: 2\n")
    path.write_text(text.replace(first, first + "  - {version: 2, note: Next.}\n"), encoding="utf-8")
    judged, gated = bc(project, "verdict", run_dir.name), bc(project, "verdict", run_dir.name, "--gate")
    assert judged.exit_code == gated.exit_code == 1
    assert judged.stderr == gated.stderr == (
        f"error: run {run_dir.name} is of {path.stem} v1, but cards/{path.name} is now v2, whose text is not the one "
        "v1 was sealed with; a run is resumed, judged and replicated only by the version that produced it: to judge "
        f"it, put back cards/{path.name} as v1 was sealed (its seal, keys/{path.stem}/v1.seal.json, checks it), or "
        f"start a run of v2 with `benchcard run {path.stem}`\n")
    assert ledger.read(project) == []


def test_verdict_gate_hashes_the_seal_once(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate reads the card the verdict checks: the seal is verified once, by the verdict being given (with
    --show, which gives none, by the gate)."""
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    from benchcard.card._sealfile import SealFile

    computed: list[str] = []
    compute = seal.compute

    def counted(card: Card, project: Project, sealed: SealFile | None = None) -> seal.SealContent:
        computed.append(card.id)
        return compute(card, project, sealed)

    monkeypatch.setattr(seal, "compute", counted)
    assert bc(project, "verdict", run_dir.name, "--gate").exit_code == 0
    assert len(computed) == 1
    assert bc(project, "verdict", run_dir.name, "--show", "--gate").exit_code == 0
    assert len(computed) == 2


def test_a_scratch_run_of_an_unsealed_card_is_gated_as_it_is_judged(tmp_path: Path, server: FakeServer,
                                                                     key: str) -> None:
    """The loop before sealing: `verdict RUN --gate` on a scratch run of an unsealed card gives the scratch
    verdict and its exit code (no seal to check, no ledger row); `--show --gate` refuses to gate it afterwards."""
    server.configure({"default_reply": "blue", "replies": [{"match": "Please.", "reply": "red"}]})
    project = ab_project(tmp_path, server.base_url, fixtures=6, repetitions=2)
    project.seal_path("colour-ab", 1).unlink()
    assert bc(project, "run", "colour-ab", "--scratch").exit_code == 0
    run_id = only_run(project, "colour-ab").name
    gated = bc(project, "verdict", run_id, "--gate")
    assert gated.exit_code == 0, (gated.output, gated.stderr)
    assert "finding: win" in gated.stdout and "gate: win → exit 0" in gated.stdout
    assert "scratch: a trial verdict, not entered in the ledger" in gated.stdout
    assert ledger.read(project) == []
    shown = bc(project, "verdict", run_id, "--show", "--gate")
    assert shown.exit_code == 1 and "its verdict is a scratch verdict" in shown.stderr


def test_run_gated_is_the_whole_of_run_and_gates_only_when_asked(tmp_path: Path, server: FakeServer,
                                                                 key: str) -> None:
    """`benchcard run [--gate]` calls this one core function: the runs, then under --gate each one's verdict."""
    from benchcard.run.options import RunOptions
    from benchcard.verdict.gate import run_gated

    server.configure({"default_reply": "red", "latency_ms": 1})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=2, repetitions=1)
    said: list[str] = []
    plain = run_gated(project, "colour-ab", RunOptions(progress=False), gate=False, tell=said.append)
    assert plain.gated is None and plain.code == 0 and set(plain.to_json()) == {"runs", "wall_s"}
    assert not (project.root / plain.runs[0].folder / "verdict.json").exists()
    gated = run_gated(project, "colour-ab", RunOptions(progress=False), gate=True)
    assert gated.gated is not None and gated.code == gated.gated.code
    assert (project.root / gated.runs[0].folder / "verdict.json").is_file()
    assert gated.to_json()["gates"] == [g.to_json() for _, g in gated.gated.judged]


def test_a_plain_run_loads_neither_the_verdict_nor_scipy_stats(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Every `benchcard run` is a process of its own: without --gate (and before a sequential card's first look)
    it needs no verdict, and importing the verdict's statistics with scipy.stats cost it about 0.9 CPU-s of the
    1.8 a small run took on the fake server. `run --gate` still gives its verdict (the tests above)."""
    server.configure({"default_reply": "red", "latency_ms": 1})
    project = ab_project(tmp_path / "proj", server.base_url, fixtures=2, repetitions=2)
    script = "\n".join([
        "import sys", "from benchcard.cli import main",
        "sys.argv = ['benchcard', '-C', sys.argv[1], 'run', 'colour-ab', '--json']",
        "try:", "    main()", "except SystemExit as done:", "    assert done.code in (0, None)",
        "heavy = ('scipy.stats', 'benchcard.verdict.give', 'benchcard.stats.worstcase', 'benchcard.verdict.looks')",
        "print(sorted(m for m in heavy if m in sys.modules))"])
    done = subprocess.run([sys.executable, "-c", script, str(project.root)], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
    assert only_run(project, "colour-ab").joinpath("outputs.jsonl").is_file()
