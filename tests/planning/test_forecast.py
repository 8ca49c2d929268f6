"""`benchcard plan`: calls, tokens and cost before a run; with a pilot run, the smallest detectable gap."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import benchcard
from benchcard.cli import cli
from benchcard.errors import RunError
from benchcard.planning import power as powerplan
from benchcard.planning.forecast import plan
from benchcard.planning.result import ClausePlan
from benchcard.project import Project
from benchcard.stats import paired as stats
from benchcard.stats import simulate
from benchcard.stats.crossed import crossed
from benchcard.stats.decision import effect_evidence

from ..helpers_verdict import (
    AB_CARD,
    FIXTURES10,
    PROBE_CARD,
    SHOCKED10,
    ab_metrics,
    make_project,
    make_run,
    strong_run,
    the_card,
)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")


def _chars(project: Project) -> int:
    card = the_card(project)
    return sum(len(m["content"]) for v in card.variant_names() for f in card.fixture_ids()
               for m in card.messages(v, card.fixture_text(f)))


def test_plan_without_prices(project: Project) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab"])
    assert result.exit_code == 0, result.output
    tokens = math.ceil(_chars(project) * 3 / 4)
    assert "calls           36  (2 variants × 6 fixtures × 3 repetitions)" in result.output
    assert f"input tokens    ~{tokens:,}  (estimate: characters / 4" in result.output
    assert "output tokens   ≤ 7,200  (max_tokens 200 × 36 calls)" in result.output
    assert "no price configured for test/model-1" in result.output


def test_plan_with_prices_json(project: Project) -> None:
    (project.root / "benchcard.yaml").write_text("prices:\n  test/model-1: {input: 3, output: 15}\n")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    tokens = math.ceil(_chars(project) * 3 / 4)
    assert (data["calls"], data["input_tokens"], data["max_output_tokens"]) == (36, tokens, 7200)
    assert data["max_cost"] == pytest.approx((tokens * 3 + 7200 * 15) / 1e6)
    text = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab"]).output
    assert f"cost            ≤ ${data['max_cost']:,.4f}" in text and "$3 / $15 per million" in text
    assert "cached input    at the full input price: prices.test/model-1 gives no cached_input" in text
    assert data["price"] == {"input": 3, "output": 15, "unit": "USD per 1M tokens"}
    (project.root / "benchcard.yaml").write_text("prices:\n  test/model-1: {input: 3, output: 15, cached_input: 0.3}\n")
    data = json.loads(CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--json"]).output)
    assert data["price"] == {"input": 3, "output": 15, "unit": "USD per 1M tokens", "cached_input": 0.3}
    assert data["max_cost"] == pytest.approx((tokens * 3 + 7200 * 15) / 1e6)  # the ceiling: every token in full


def _independent_power(rate: float, fixture_sd: float, gap: float, fixtures: int, repetitions: int,
                       runs: int = 2000, seed: int = 7) -> float:
    """The rule's power at a true gap, in runs drawn here with numpy's own Beta and Binomial (not simulate.py's
    draws) and judged run by run the way a verdict is: the calibrated gap, the verdict's exact sign-flip
    (`stats.signflip_p`) and the decision's evidence."""
    rng = np.random.default_rng(seed)
    if fixture_sd > 0:
        size = rate * (1 - rate) / fixture_sd ** 2 - 1
        p = rng.beta(rate * size, (1 - rate) * size, (runs, fixtures, 1))
    else:
        p = np.full((runs, fixtures, 1), rate)
    p = np.repeat(p, repetitions, axis=2)
    base = rng.binomial(1, p).astype(float)
    var = rng.binomial(1, np.clip(p + gap, 0, 1)).astype(float)
    c = crossed(base, var)
    flips = np.array([stats.signflip_p(c.d[i]) for i in range(runs)])
    return float((effect_evidence(c, flips, True).p_hold <= 0.05).mean())


def test_plan_from_a_pilot_simulates_the_rule_itself(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fixtures=FIXTURES10)
    base, var = SHOCKED10 - 0.1, SHOCKED10  # a pilot with cell noise and a run shock of the variant's
    run_dir = make_run(project, the_card(project), ab_metrics(np.clip(base, 0, 1), var, shape=(10, 3)))
    # the variant's shock in one of three repetitions is a run term the pilot shows: at the card's three
    # repetitions no gap wins 80% of the time (said), at ten one does
    three = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name]).output
    assert ("field_recall rises (A): 10 fixtures × 3 repetitions → no true gap the scores allow wins in 80% of "
            "simulated runs") in three
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name,
                                      "--repetitions", "10"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"pilot {run_dir.name}:" in out
    assert "2,000 simulated runs of this size judged by the verdict's own rule, from a model of the pilot" in out
    data = plan(project, the_card(project), run_dir.name, repetitions=10).fields()  # as --json prints it
    rises = data["pilot"]["clauses"][0]
    lo, hi = rises["needed_gap_range"]
    assert 0 < lo <= rises["needed_gap"] and (hi is None or rises["needed_gap"] <= hi)
    upper = "no gap at all" if hi is None else f"{hi:.3f}"
    assert (f"field_recall rises (A): 10 fixtures × 10 repetitions → a true gap of {rises['needed_gap']:.3f} holds "
            f"in 80% of simulated runs (pilot uncertainty: {lo:.3f} to {upper})") in out
    m = rises["model"]
    assert m["model"] == "rates" and m["baseline_rate"] == pytest.approx(float(np.clip(base, 0, 1).mean()))
    assert ("simulated as scores as spread within a fixture as the pilot's (each cell drawn as the mean of "
            f"{m['levels']} pass/fail trials) fitted to the pilot: baseline rate "
            f"{m['baseline_rate']:.3f}, fixture sd {m['fixture_sd']:.3f}, run sd {m['run_sd']:.3f}, effect sd "
            f"{m['effect_sd']:.3f}; the pilot's estimates: each simulated run draws its own rate, fixture sd and run "
            "sd around them (assumes:)") in out
    # the assumption the figures rest on, on the page and in --json
    assert data["pilot"]["assumption"] == powerplan.PILOT_ASSUMPTION
    assert ("  assumes: the pilot's fixtures are a fair sample of those the run will have: the baseline rate is taken "
            "one standard error towards the rate where both arms are noisiest when the gap is harder to show there, "
            "and each simulated run draws its own rate around it and its fixture spread from what the pilot's "
            "fixture means leave uncertain") in out
    assert "power at a true gap of 0.05: " in out
    assert "unsupported_values not_rises (A): 10 fixtures × 10 repetitions → the guard (margin 0.25) holds" in out
    assert "abstains holds on ex-06 (A): pilot 3 of 3" in out
    assert data["pilot"]["observed_cost_per_call"] == pytest.approx(0.002)
    # the figure is the rule's: at the needed gap, fresh simulations of the same model (at the rate it plans at)
    # win ≈ 80%
    model = powerplan.hardest_rate(simulate.model_of(np.clip(base, 0, 1), var), 10, 10, rises["needed_gap"])
    fresh = simulate.draws(model, 10, 10, seed=99, n=4000)
    assert simulate.effect_power(fresh, rises["needed_gap"], 0.05) == pytest.approx(0.80, abs=0.03)
    # seeded: the same plan prints the same figures
    again = plan(project, the_card(project), run_dir.name, repetitions=10).fields()
    assert again["pilot"]["clauses"][0]["needed_gap"] == rises["needed_gap"]


def test_a_pass_fail_pilot_plans_a_gap_that_independent_runs_win_80_percent_of_the_time(tmp_path: Path) -> None:
    """The normal model of the first plan asked for gaps the rule then won 82–92% of the time on pass/fail
    scores; the pass/fail model's gap wins 80% (± 0.05) of independently drawn runs of the world the pilot came
    from."""
    rng = np.random.default_rng(3)
    fixtures = [f"ex-{i:02d}" for i in range(1, 13)]
    p = 1 / (1 + np.exp(-0.5 * rng.standard_normal((12, 1))))
    pilot_base = rng.binomial(1, np.repeat(p, 3, 1)).astype(float)
    pilot_var = rng.binomial(1, np.repeat(p, 3, 1)).astype(float)
    project = make_project(tmp_path / "p", fixtures=fixtures)
    run_dir = make_run(project, the_card(project), ab_metrics(pilot_base, pilot_var, shape=(12, 3)))
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name,
                                      "--repetitions", "5", "--json"])
    assert result.exit_code == 0, result.output
    rises = json.loads(result.output)["pilot"]["clauses"][0]
    m = rises["model"]
    assert (m["model"], m["levels"], rises["fixtures"], rises["repetitions"]) == ("rates", 1, 12, 5)
    assert m["baseline_rate"] == pytest.approx(pilot_base.mean())
    # the world the pilot came from (fixture rates spread by its logit sd 0.5), not its point estimate, which
    # the plan no longer takes as the truth (each simulated run draws the spread from the pilot's uncertainty)
    world_sd = float(np.std(1 / (1 + np.exp(-0.5 * np.random.default_rng(4).standard_normal(200_000)))))
    power = _independent_power(0.5, world_sd, rises["needed_gap"], 12, 5)
    assert 0.75 <= power <= 0.90  # a single pilot: never below 0.75 (the mean's 0.80 ± 0.05 is the benchmark's)


def test_plan_without_a_pilot_rests_on_declared_assumptions(project: Project) -> None:
    args = ["-C", str(project.root), "plan", "extract-ab", "--baseline-rate", "0.6", "--fixture-sd", "0.15",
            "--fixtures", "16", "--repetitions", "5"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert ("assumed, no pilot: these figures rest on the declared assumptions below, not on measured scores"
            in out)
    assert ("simulated as pass/fail scores as declared: baseline rate 0.600, fixture sd 0.150, run sd 0.000, "
            "effect sd 0.000") in out
    assert "only the first clause (field_recall rises) is planned" in out
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    assert data["pilot"] is None
    rises = data["assumed"]["clauses"][0]
    gap = rises["needed_gap"]
    assert f"field_recall rises (A): 16 fixtures × 5 repetitions → a true gap of {gap:.3f} holds in 80%" in out
    assert "pilot uncertainty" not in out  # nothing was estimated
    curve = dict((g, pw) for g, pw in rises["power_at"])
    assert "power at a true gap of 0.05: " + f"{curve[0.05]:.2f}, 0.10: {curve[0.1]:.2f}" in out
    # checked against runs drawn independently of simulate.py and judged run by run
    assert _independent_power(0.6, 0.15, gap, 16, 5) == pytest.approx(0.80, abs=0.035)
    assert _independent_power(0.6, 0.15, 0.10, 16, 5, seed=8) == pytest.approx(curve[0.1], abs=0.035)
    # the Python API says the same (docs/api.md)
    through_api = benchcard.plan("extract-ab", project, assumed=benchcard.assumptions(baseline_rate=0.6,
                                 fixture_sd=0.15), fixtures=16, repetitions=5)
    assert through_api.fields()["assumed"] == data["assumed"]
    # (the text and the JSON came from two invocations: seeded, the same figures); run shocks ask for more
    shocked = json.loads(CliRunner().invoke(cli, [*args, "--run-sd", "0.1", "--json"]).output)
    assert shocked["assumed"]["clauses"][0]["needed_gap"] > gap


@pytest.mark.parametrize(("args", "message"), [
    (["--baseline-rate", "1"],
     "error: --baseline-rate: expected the baseline's mean score strictly between 0 and 1, got 1"),
    (["--baseline-rate", "0.6", "--run-sd", "-0.1"],
     "error: --run-sd: expected a standard deviation of a rate, from 0 to 0.5, got -0.1"),
    (["--baseline-rate", "0.9", "--fixture-sd", "0.35"],
     "error: --fixture-sd: rates with mean 0.9 spread at most 0.300"),
    (["--baseline-rate", "0.6", "--levels", "0"], "error: --levels: expected scores in steps of 1/K with K from 1"),
    (["--baseline-rate", "0.6", "--fixtures", "1"], "error: --fixtures: expected at least 2 fixtures"),
    (["--effect-sd", "0.1"],
     "error: --effect-sd describes the score of a plan without a pilot: give --baseline-rate"),
    (["--baseline-rate", "0.6", "--from", "20261130T000001Z-3f9a"],
     "error: --from and --baseline-rate exclude each other"),
])
def test_plan_refuses_bad_assumptions_in_one_line(project: Project, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", *args])
    assert result.exit_code == 1
    assert result.output.startswith(message) and result.output.count("\n") == 1, result.output


def test_plan_of_a_probe_from_assumptions_says_there_is_nothing_to_compare(project: Project) -> None:
    make_project(project.root, PROBE_CARD)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "say-negative", "--baseline-rate", "0.5"])
    assert result.exit_code == 0, result.output
    assert "note: a probe compares nothing; there is no gap to detect" in result.output


def test_plan_says_when_a_design_can_never_win_and_names_truncation(tmp_path: Path) -> None:
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 5")
    project = make_project(tmp_path / "p", text)  # six fixtures: enough; repetitions below are the problem
    run_dir = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-02", 1): "truncated"})
    one = text.replace("repetitions: 3", "repetitions: 1").replace("version: 1", "version: 2").replace(
        "  - {version: 1, note: First version.}", "  - {version: 2, note: One repetition.}\n"
        "  - {version: 1, note: First version.}")
    (project.root / "cards" / "extract-ab.yaml").write_text(one)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name])
    assert result.exit_code == 0, result.output
    assert "field_recall rises (A): one repetition can never win" in result.output
    assert "note: 1 of 36 pilot cell(s) were cut off at max_tokens 200" in result.output


def test_several_variants_are_planned_at_holms_level(tmp_path: Path) -> None:
    """Two variants: the verdict takes Holm's step across them, so one that works beside one that does not
    must reach α/2, and the plan simulates that (six fixtures then can never win: 2/64 > 0.025)."""
    text = AB_CARD.replace('A: "Score your own output before returning it.\\n"}',
                           'A: "Score your own output before returning it.\\n", B: "Check it twice.\\n"}')
    project = make_project(tmp_path / "p", text)
    args = ["-C", str(project.root), "plan", "extract-ab", "--baseline-rate", "0.5"]
    six = CliRunner().invoke(cli, args)
    assert six.exit_code == 0, six.output
    assert "note: 2 variants: each is planned at α/2 = 0.025, Holm's first step across variants" in six.output
    assert ("field_recall rises (A, B): 6 fixture(s) can never win: the exact sign-flip p is at least 0.03125 > "
            "0.025") in six.output
    wide = json.loads(CliRunner().invoke(cli, [*args, "--fixtures", "16", "--repetitions", "5", "--json"]).output)
    gap = wide["assumed"]["clauses"][0]["needed_gap"]
    model = powerplan.Assumptions(baseline_rate=0.5).model()
    clause = ClausePlan(metric="field_recall", test="rises", fixture=None, margin=None, variant="A, B")
    assert gap == powerplan.effect_entry(clause, model, 16, 5, 0.025, ranged=False).needed_gap
    assert gap > powerplan.effect_entry(clause, model, 16, 5, 0.05, ranged=False).needed_gap + 0.03  # type: ignore[operator]


def test_plan_warns_when_a_run_of_this_version_was_cut_off_at_max_tokens(tmp_path: Path) -> None:
    """With or without a pilot, `plan` names the runs of this version that max_tokens cut off, as `check` does;
    the pilot's own cut-off cells are named once, in its note."""
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: 5")
    project = make_project(tmp_path / "p", text)
    clean = make_run(project, the_card(project), ab_metrics())
    cut = make_run(project, the_card(project), ab_metrics(), status={("A", "ex-02", 1): "truncated"})
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if ln.startswith("params:"))
    warning = (f"warning: cards/extract-ab.yaml:{line}: field 'params.max_tokens': run {cut.name} had 1 of 36 "
               "cell(s) cut off at max_tokens 200")
    for args in ([], ["--baseline-rate", "0.5"], ["--from", clean.name]):
        result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", *args])
        assert result.exit_code == 0, result.output
        assert warning in result.output, args
    from_cut = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", cut.name]).output
    assert "warning:" not in from_cut
    assert "note: 1 of 36 pilot cell(s) were cut off at max_tokens 200" in from_cut
    check = CliRunner().invoke(cli, ["-C", str(project.root), "check", "extract-ab"]).output
    assert warning.removeprefix("warning: ") in check


def test_pilot_of_another_card_is_refused(project: Project, tmp_path: Path) -> None:
    other = make_project(project.root, PROBE_CARD)
    run_dir = make_run(other, the_card(other, "say-negative"), {"score": {"probe": np.ones((1, 5))}},
                       rules={"says-negative": {"probe": np.ones((1, 5))}})
    with pytest.raises(RunError, match="a run of say-negative, not of extract-ab"):
        plan(project, the_card(project), run_dir.name)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "say-negative"])
    assert result.exit_code == 0 and "calls           5  (5 repetitions)" in result.output


def test_plan_says_the_most_the_design_can_show_and_the_smallest_change(tmp_path: Path) -> None:
    """`plan --baseline-rate` names the best power the design can reach at all (stats/reach.py) and, for a dead
    design, the smallest change that makes it reliable, as `check` and `seal` do for the card's own design."""
    project = make_project(tmp_path / "p")
    args = ["-C", str(project.root), "plan", "extract-ab", "--baseline-rate", "0.5"]
    dead = CliRunner().invoke(cli, [*args, "--fixtures", "12", "--repetitions", "3"])
    assert dead.exit_code == 0, dead.output
    assert ("  note: the most this design can show: a treatment right every time against a baseline right about half "
            "the time wins 73% of simulated runs (12 × 3, 1 variant(s), α 0.05); no effect can win reliably here "
            "(95% needed): use 4 repetitions, or 23 fixtures\n") in dead.output
    fine = CliRunner().invoke(cli, [*args, "--fixtures", "12", "--repetitions", "5"])
    assert fine.exit_code == 0, fine.output
    assert "wins 100% of simulated runs (12 × 5, 1 variant(s), α 0.05)\n" in fine.output


def test_plan_without_a_pilot_says_the_most_the_planned_design_can_show(tmp_path: Path) -> None:
    """Without a pilot or assumptions, `plan` still names the best power the design it plans can reach (issue
    23.1): the card's own when `check` finds nothing to warn of, and the size `--fixtures`/`--repetitions` plan,
    with the smallest change when that one is dead. It said nothing of either (hostile audit 13b): a user asking
    "would 23 fixtures do?" was shown calls and cost alone."""
    project = make_project(tmp_path / "p", AB_CARD.replace("repetitions: 3", "repetitions: 5"),
                           fixtures=[f"ex-{i:02d}" for i in range(1, 13)])
    args = ["-C", str(project.root), "plan", "extract-ab"]
    own = CliRunner().invoke(cli, args)
    assert own.exit_code == 0, own.output
    assert own.output.splitlines()[-1] == ("note: the most this design can show: a treatment right every time "
                                           "against a baseline right about half the time wins 100% of simulated "
                                           "runs (12 × 5, 1 variant(s), α 0.05)")
    assert "warning" not in own.output
    dead = CliRunner().invoke(cli, [*args, "--repetitions", "3"])
    assert dead.exit_code == 0, dead.output
    assert dead.output.splitlines()[-1] == (
        "note: the most this design can show: a treatment right every time against a baseline right about half the "
        "time wins 73% of simulated runs (12 × 3, 1 variant(s), α 0.05); no effect can win reliably here (95% "
        "needed): use 4 repetitions, or 23 fixtures")
    fixed = json.loads(CliRunner().invoke(cli, [*args, "--repetitions", "3", "--fixtures", "23", "--json"]).output)
    assert fixed["reach"].endswith("wins 96% of simulated runs (23 × 3, 1 variant(s), α 0.05)")
    assumed = json.loads(CliRunner().invoke(cli, [*args, "--baseline-rate", "0.5", "--json"]).output)
    assert "reach" not in assumed  # the assumed plan's notes say it already


def test_plan_reads_a_sequential_cards_own_looks(tmp_path: Path) -> None:
    from ..helpers_cli import bc as run_cli
    from ..helpers_sequential import sequential_ab

    project = sequential_ab(tmp_path)
    result = run_cli(project.root, "plan", "colour-ab", "--baseline-rate", "0.6")
    assert result.exit_code == 0, result.output
    assert "sequential: 3 looks, after repetitions 3, 6, 9 of 9; α 0.05 spent obrien-fleming" in result.output
    assert "under no effect            expected" in result.output


def test_plan_from_a_pilot_of_a_large_design_simulates_its_cut_and_says_so(tmp_path: Path) -> None:
    """`plan --from` on 20,000 fixtures once drew 2,000 simulated runs of every fixture (gigabytes); past the bound
    (200 fixtures or 10 repetitions) it simulates the cut, as check and seal judge a large design, and says the
    figures are what the whole design reaches at the least. The repetitions' bound is the one asked here (4 × 10
    simulated, where the fixtures' bound simulates 200 fixtures at tens of CPU-seconds; that half is `bounded`'s
    test in test_power.py)."""
    project = make_project(tmp_path / "p")
    run_dir = strong_run(project)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name,
                                      "--fixtures", "4", "--repetitions", "500", "--json"])
    assert result.exit_code == 0, result.output
    pilot = json.loads(result.stdout)["pilot"]
    assert pilot["notes"][0] == ("simulated on a cut of the design, 4 fixtures × 10 repetitions of its "
                                 "4 × 500: more of either only narrows the gap it can detect, so the "
                                 "figures are what the whole design reaches at the least")
    gaps = [c for c in pilot["clauses"] if c["fixture"] is None]
    assert gaps and all(c["fixtures"] == 4 and c["repetitions"] == 10 for c in gaps)


def test_a_pilot_set_aside_is_refused_in_one_line(project: Project) -> None:
    """Hostile audit: `plan --from` took a run set aside (never used again, its owner said) as its pilot,
    silently; it is refused, naming the run and why it was set aside."""
    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False)
    root = str(project.root)
    assert CliRunner().invoke(cli, ["-C", root, "set-aside", run_dir.name, "--why", "wrong endpoint"]).exit_code == 0
    result = CliRunner().invoke(cli, ["-C", root, "plan", "extract-ab", "--from", run_dir.name])
    assert result.exit_code == 1 and result.stdout == ""
    day = json.loads((run_dir / "set-aside.jsonl").read_text(encoding="utf-8"))["at"][:10]
    assert result.stderr == (f"error: {run_dir.name}: this run was set aside {day} (wrong endpoint); a run set "
                             "aside is never used again, as a pilot neither: plan from another run\n")


def test_a_pilot_with_failed_cells_says_how_many_the_plan_left_out(project: Project) -> None:
    """Hostile audit: a pilot's cells cut off at max_tokens were noted, its failed cells not at all; the plan
    rested on the others silently."""
    run_dir = make_run(project, the_card(project), ab_metrics(),
                       status={("A", "ex-02", 1): "failed", ("baseline", "ex-03", 0): "failed"})
    result = CliRunner().invoke(cli, ["-C", str(project.root), "plan", "extract-ab", "--from", run_dir.name])
    assert result.exit_code == 0, result.output
    assert ("  note: 2 of 36 pilot cell(s) failed in transport: the plan rests on the others; in a verdict failed "
            "cells count against allow_failed") in result.stdout.splitlines()
