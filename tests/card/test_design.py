"""The design warnings `check` gives before anything is sealed or paid for: too few fixtures or repetitions to
ever win, and runs of this version cut off at max_tokens; each names the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchcard.card.design import fewest_fixtures

from ..helpers_cli import bc, one_line_error
from ..helpers_cli import exit_and_streams as _run
from ..helpers_project import AB_CARD, make_ab_project

MUST_WIN = AB_CARD.replace("  accept_cannot_win: true  # a test card: four fixtures cannot win\n", "")
THREE_VARIANTS = MUST_WIN.replace('variants: {baseline: "", A: "Please.\\n"}',
                                  'variants: {baseline: "", A: "Please.\\n", B: "Kindly.\\n", C: "Now.\\n"}')


def test_check_warns_when_the_design_can_never_win(tmp_path: Path) -> None:
    """Too few fixtures and one repetition: one line, at the fixtures, giving both reasons and the one change that
    is enough (no single one is: one repetition cannot be helped by fixtures, nor five fixtures by repetitions)."""
    text = MUST_WIN.replace("repetitions: 3", "repetitions: 1")
    project = make_ab_project(tmp_path, text, n_fixtures=5)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0, out  # a warning, not a failure: the card may be a pilot
    lines = text.splitlines()
    fixtures_line = 1 + next(i for i, ln in enumerate(lines) if ln.startswith("fixtures:"))
    reps_line = 1 + next(i for i, ln in enumerate(lines) if ln.startswith("repetitions:"))
    [warning] = [ln for ln in out.splitlines() if "warning" in ln]
    assert warning == (f"  warning: cards/tiny-ab.yaml:{fixtures_line}: field 'fixtures': 5 fixtures × 1 repetition "
                       "with 1 variant(s) can never win at α = 0.05: the exact sign-flip p is at least 0.0625 > 0.05 "
                       "and one repetition cannot measure the run-to-run spread; use 9 fixtures and 5 repetitions "
                       "together")
    two = make_ab_project(tmp_path / "two", MUST_WIN.replace("repetitions: 3", "repetitions: 2"), n_fixtures=6)
    code, out, _ = _run(two, "check", "tiny-ab")
    assert code == 0
    assert (f"  warning: cards/tiny-ab.yaml:{reps_line}: field 'repetitions': 6 fixtures × 2 repetitions with 1 "
            "variant(s) cannot show a win reliably at α = 0.05: a treatment right every time against a baseline "
            "right about half the time wins 0% of simulated runs (95% needed); use 19 repetitions, or 9 fixtures and "
            "5 repetitions together") in out
    fine = make_ab_project(tmp_path / "fine", MUST_WIN.replace("repetitions: 3", "repetitions: 5"), n_fixtures=12)
    code, out, _ = _run(fine, "check", "tiny-ab", "--json")
    assert code == 0 and json.loads(out)["cards"][0]["warnings"] == []


def test_the_change_named_is_enough_and_holm_counts_in_the_fixtures_a_win_needs(tmp_path: Path) -> None:
    """Six fixtures are enough for the sign-flip at α = 0.05 but not at Holm's α/3; the change `seal` names
    (both together: more repetitions alone cannot lower the sign-flip's floor) then seals without a word."""
    text = THREE_VARIANTS.replace("repetitions: 3", "repetitions: 2")
    project = make_ab_project(tmp_path, text, n_fixtures=6)
    line = one_line_error(bc(project, "seal", "tiny-ab"))
    assert line.startswith("error: refusing to seal cards/tiny-ab.yaml: 6 fixtures × 2 repetitions with 3 variant(s) "
                           "can never win at Holm's α/3 = 0.0167: the exact sign-flip p is at least 0.03125 > 0.0167; ")
    assert "use 14 fixtures and 5 repetitions together" in line, line
    fixed = make_ab_project(tmp_path / "fixed", THREE_VARIANTS.replace("repetitions: 3", "repetitions: 5"),
                            n_fixtures=14)
    result = bc(fixed, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output
    code, out, _ = _run(fixed, "check", "tiny-ab")
    assert code == 0 and "warning" not in out


def test_a_min_effect_the_plainest_effect_cannot_clear_is_a_dead_design(tmp_path: Path) -> None:
    """A gap below min_effect is no win: at 0.6 a treatment right every time against a baseline right half the
    time (a gap of about 0.5) cannot win, at 1.5 nothing on a 0–1 score can; `seal` says which min_effect can, and
    `plan` says the same before any call."""
    for effect, why in (("0.6", "cannot show a win reliably at α = 0.05: a treatment right every time against a "
                                "baseline right about half the time wins 5% of simulated runs (95% needed) with "
                                "min_effect 0.6, more than the plainest effect's gap of about 0.5"),
                        ("1.5", "can never win at α = 0.05: min_effect 1.5 is beyond any gap a score in [0, 1] can "
                                "take")):
        text = MUST_WIN.replace("repetitions: 3", "repetitions: 5").replace(
            "  equivalence_margin: 0.05\n", f"  equivalence_margin: 0.05\n  min_effect: {effect}\n")
        project = make_ab_project(tmp_path / effect, text, n_fixtures=24)
        line = one_line_error(bc(project, "seal", "tiny-ab"))
        assert line == (f"error: refusing to seal cards/tiny-ab.yaml: 24 fixtures × 5 repetitions with 1 variant(s) "
                        f"{why}; use a min_effect of at most 0.39 (or, for an A/A or pilot card, say so: win: "
                        "{accept_cannot_win: true})")
        code, out, _ = _run(project, "plan", "tiny-ab")
        shown = f"warning: the most this design can show: 24 fixtures × 5 repetitions with 1 variant(s) {why}"
        assert code == 0 and shown in out
    text = MUST_WIN.replace("repetitions: 3", "repetitions: 5").replace(
        "  equivalence_margin: 0.05\n", "  equivalence_margin: 0.05\n  min_effect: 0.39\n")
    fine = make_ab_project(tmp_path / "fine", text, n_fixtures=24)
    result = bc(fine, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output
    code, out, _ = _run(fine, "plan", "tiny-ab")
    assert code == 0 and "warning" not in out


def test_check_warns_when_a_run_was_cut_off_by_max_tokens(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path, AB_CARD, n_fixtures=6)
    run = project / "results" / "tiny-ab" / "v1" / "20261130T151200Z-3f9a"
    run.mkdir(parents=True)
    manifest = {"run": run.name, "card": "tiny-ab", "version": 1, "kind": "ab", "seal_root": "sha256:" + "a" * 64,
                "scratch": "a trial",  # a sealed run beside a card with no seal file is refused by check (its seal)
                "params": {"max_tokens": 50, "temperature": 0.7}, "repetitions": 6, "cells": 36,
                "started_at": "2026-11-30T15:12:00Z", "finished_at": "2026-11-30T15:20:00Z",
                "counts": {"ok": 33, "truncated": 3, "failed": 0}}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, out, _ = _run(project, "check", "tiny-ab")
    line = 1 + next(i for i, ln in enumerate(AB_CARD.splitlines()) if ln.startswith("params:"))
    assert code == 0
    assert (f"  warning: cards/tiny-ab.yaml:{line}: field 'params.max_tokens': run 20261130T151200Z-3f9a had 3 of 36 "
            "cell(s) cut off at max_tokens 50") in out


def test_the_fewest_fixtures_that_can_win_is_where_two_over_two_to_the_f_reaches_alpha() -> None:
    assert [fewest_fixtures(a) for a in (0.5, 0.25, 0.1, 0.0625, 0.05, 0.01)] == [2, 3, 5, 5, 6, 8]
    for alpha in (0.2, 0.05, 0.001):
        f = fewest_fixtures(alpha)
        assert 2 / 2 ** f <= alpha < 2 / 2 ** (f - 1)


def test_seal_refuses_a_dead_design_in_one_line_naming_the_smallest_change(tmp_path: Path) -> None:
    """Twelve fixtures × 3 with three variants: even a treatment right every time against a baseline right half
    the time wins about a quarter of the time at Holm's α/3; `seal` says so before anything is written."""
    assert 'B: "Kindly.' in THREE_VARIANTS
    project = make_ab_project(tmp_path, THREE_VARIANTS, n_fixtures=12)
    result = bc(project, "seal", "tiny-ab")
    line = one_line_error(result)
    assert line.startswith("error: refusing to seal cards/tiny-ab.yaml: 12 fixtures × 3 repetitions with 3 "
                           "variant(s) cannot show a win reliably at Holm's α/3 = 0.0167: a treatment right every "
                           "time against a baseline right about half the time wins ")
    assert line.endswith("of simulated runs (95% needed); use 6 repetitions, or 65 fixtures, or 14 fixtures and 5 "
                         "repetitions together (or, for an A/A or "
                         "pilot card, say so: win: {accept_cannot_win: true})")  # one variant alone: 73 %
    assert not (project / "keys" / "tiny-ab" / "v1.seal.json").exists()
    code, out, _ = _run(project, "check", "tiny-ab")  # check says the same, as a warning, before any call
    assert code == 0 and "cannot show a win reliably at Holm's α/3 = 0.0167" in out and "use 6 repetitions" in out


def test_a_design_whose_simulated_share_only_just_reaches_95_percent_is_refused_until_it_surely_does(
        tmp_path: Path) -> None:
    """22 fixtures × 3 won in 0.9525 of the 2,000 runs `seal` drew and was sealed, but a perfect treatment wins
    there 0.944 of the time (10,000 runs of fresh seeds): near 95 % the share is drawn on 8,000 runs and must
    reach it with 95 % confidence. The change named (23 fixtures) seals."""
    text = MUST_WIN
    project = make_ab_project(tmp_path, text, n_fixtures=22)
    line = one_line_error(bc(project, "seal", "tiny-ab"))
    assert line == ("error: refusing to seal cards/tiny-ab.yaml: 22 fixtures × 3 repetitions with 1 variant(s) cannot "
                    "show a win reliably at α = 0.05: a treatment right every time against a baseline right about "
                    "half the time wins 95.2% of 8,000 simulated runs, at least 94.7% with 95% confidence (95% "
                    "needed); use 4 repetitions, or 23 fixtures (or, for an A/A or pilot card, say so: win: "
                    "{accept_cannot_win: true})")
    assert not (project / "keys" / "tiny-ab" / "v1.seal.json").exists()
    fixed = make_ab_project(tmp_path / "fixed", text, n_fixtures=23)
    result = bc(fixed, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output


def test_a_card_that_accepts_it_seals_and_check_still_says_so(tmp_path: Path) -> None:
    text = THREE_VARIANTS.replace("  equivalence_margin: 0.05\n", "  equivalence_margin: 0.05\n"
                                  "  accept_cannot_win: true\n")
    project = make_ab_project(tmp_path, text, n_fixtures=12)
    result = bc(project, "seal", "tiny-ab")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("sealed tiny-ab v1 → keys/tiny-ab/v1.seal.json")
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0 and "cannot show a win reliably" in out and "(the card accepts it: win.accept_cannot_win)" in out


def test_a_design_that_can_win_seals_without_a_word(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path, THREE_VARIANTS.replace("repetitions: 3", "repetitions: 10"), n_fixtures=12)
    result = bc(project, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0 and "warning" not in out


def test_accept_cannot_win_must_be_true_or_false(tmp_path: Path) -> None:
    text = MUST_WIN.replace("  equivalence_margin: 0.05\n", "  equivalence_margin: 0.05\n  accept_cannot_win: 1\n")
    project = make_ab_project(tmp_path, text, n_fixtures=12)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 1 and "win.accept_cannot_win" in out and "expected true or false, got a number (1)" in out


POCOCK = MUST_WIN.replace("repetitions: 3", "sequential: {looks: [3, 6], spending: pocock}\nrepetitions: 6")


def test_seal_refuses_a_sequential_design_whose_looks_cannot_win_and_names_the_change(tmp_path: Path) -> None:
    """Eight fixtures × 6 win reliably when fixed, but Pocock spending decides each of two looks at about 0.03,
    just above the sign-flip's floor 2/2^8: a perfect treatment wins 87 % of seeded sequential runs."""
    project = make_ab_project(tmp_path, POCOCK, n_fixtures=8)
    line = one_line_error(bc(project, "seal", "tiny-ab"))
    assert line.startswith("error: refusing to seal cards/tiny-ab.yaml: 8 fixtures with looks after repetitions 3, 6 "
                           "(pocock spending) cannot show a win reliably at α = 0.05: a treatment right every time "
                           "against a baseline right about half the time wins 87% of simulated sequential runs")
    assert "; use obrien-fleming spending, or no sequential block, or 9 fixtures (or, for an A/A" in line
    assert not (project / "keys" / "tiny-ab" / "v1.seal.json").exists()
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0 and "field 'sequential.spending'" in out and "wins 87% of simulated sequential runs" in out


def test_a_sealed_sequential_design_is_judged_by_the_rule_its_seal_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later benchcard that spent α from 4 repetitions would give these looks 98 %; the card was sealed when α
    was spent from 3 (87 %), and its runs follow the seal, so `check` and `plan` still say 87 %."""
    from benchcard.stats import sequential as seq

    accepted = POCOCK.replace("  equivalence_margin: 0.05\n", "  equivalence_margin: 0.05\n  accept_cannot_win: true\n")
    project = make_ab_project(tmp_path, accepted, n_fixtures=8)
    assert bc(project, "seal", "tiny-ab").exit_code == 0
    unsealed = make_ab_project(tmp_path / "unsealed", accepted, n_fixtures=8)
    monkeypatch.setattr(seq, "MIN_REPETITIONS_TO_DECIDE", 4)  # a later benchcard's default
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0 and "field 'sequential.spending'" in out and "wins 87% of simulated sequential runs" in out
    planned = bc(project, "plan", "tiny-ab")
    assert planned.exit_code == 0 and "wins 87% of simulated sequential runs" in planned.output
    code, out, _ = _run(unsealed, "check", "tiny-ab")
    assert code == 0 and "simulated sequential runs" not in out


def test_the_change_named_for_a_sequential_design_seals(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path, POCOCK.replace("pocock", "obrien-fleming"), n_fixtures=8)
    result = bc(project, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output
    more = make_ab_project(tmp_path / "more", POCOCK, n_fixtures=9)
    result = bc(more, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output


def test_a_sequential_design_whose_simulated_share_only_just_reaches_95_percent_is_refused_until_it_surely_does(
        tmp_path: Path) -> None:
    """11 fixtures with Pocock looks after 3 and 5 repetitions won 0.952 of the 2,000 sequential runs `seal` drew
    and was sealed; near 95 % a sequential share is drawn on 8,000 runs too and must reach it with 95 %
    confidence, as a fixed design's must. The change named (12 fixtures) seals."""
    text = POCOCK.replace("looks: [3, 6]", "looks: [3, 5]").replace("repetitions: 6", "repetitions: 5")
    project = make_ab_project(tmp_path, text, n_fixtures=11)
    line = one_line_error(bc(project, "seal", "tiny-ab"))
    assert line == ("error: refusing to seal cards/tiny-ab.yaml: 11 fixtures with looks after repetitions 3, 5 "
                    "(pocock spending) cannot show a win reliably at α = 0.05: a treatment right every time against "
                    "a baseline right about half the time wins 95.2% of 8,000 simulated sequential runs, at least "
                    "94.7% with 95% confidence (95% needed); use obrien-fleming spending, or no sequential "
                    "block, or 12 fixtures (or, for an A/A or pilot card, say so: win: "
                    "{accept_cannot_win: true})")
    assert not (project / "keys" / "tiny-ab" / "v1.seal.json").exists()
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0 and "wins 95.2% of 8,000 simulated sequential runs, at least 94.7% with 95% confidence" in out
    more = make_ab_project(tmp_path / "more", text, n_fixtures=12)
    result = bc(more, "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output


def test_each_change_named_for_an_hsd_design_is_one_the_card_can_take(tmp_path: Path) -> None:
    """Only `hsd` takes a `gamma`: 'use obrien-fleming spending' on an hsd card, made as said, was refused
    (`field 'sequential.gamma': only spending: hsd takes a gamma`); the line says to drop the gamma, and so done
    the card seals."""
    hsd = POCOCK.replace("spending: pocock", "spending: hsd, gamma: 2")
    line = one_line_error(bc(make_ab_project(tmp_path, hsd, n_fixtures=8), "seal", "tiny-ab"))
    assert "; use obrien-fleming spending (and no gamma: only hsd takes one), or " in line
    done = hsd.replace("spending: hsd, gamma: 2", "spending: obrien-fleming")
    result = bc(make_ab_project(tmp_path / "done", done, n_fixtures=8), "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output


def test_a_clause_on_the_effects_metric_that_the_plainest_effect_breaks_is_a_dead_design(tmp_path: Path) -> None:
    """Every clause must hold for a win, not only the first: beside `score rises`, a `score falls`, a `holds`
    at 0, or a `not_rises` guard whose margin is below the gap of about 0.5 a treatment right every time shows
    leaves that treatment no win (it ran to 'loss → result'). `seal` refuses, naming the clause and the change."""
    fine = MUST_WIN.replace("repetitions: 3", "repetitions: 5")
    first = "    - {metric: score, test: rises}\n"
    for name, clause, field, why in (
            ("falls", "{metric: score, test: falls}", "win.all.1", "can never win at α = 0.05: clause 2 (score "
             "falls) asks the opposite of clause 1 (score rises), so no effect can win; drop clause 2"),
            ("holds", "{metric: score, fixture: item-01, test: holds, equals: 0}", "win.all.1", "can never win at α = "
             "0.05: clause 2 (score = 0 on item-01 in every repetition) fails for a treatment that scores 1 on every "
             "cell, the effect clause 1 seeks; drop clause 2, or hold it at equals: 1"),
            ("one", "{metric: score, fixture: item-01, test: not_falls, margin: 0.1}", "win.all.1.fixture", "can "
             "never win at α = 0.05: clause 2 (score does not fall on item-01 (margin 0.1)) is a gap over one "
             "fixture, whose run-to-run spread cannot be measured (that takes two fixtures), so it never holds; drop "
             "its fixture, or make it test: holds"),
            ("guard", "{metric: score, test: not_rises, margin: 0.05}", "win.all.1", "cannot show a win reliably "
             "at α = 0.05: clause 2 (score does not rise (margin 0.05)) needs the gap shown within 0.05, and a "
             "treatment right every time against a baseline right about half the time (a gap of about 0.5) wins "
             "0% of simulated runs (95% needed); use a margin of at least 0.74 on clause 2, or drop it")):
        project = make_ab_project(tmp_path / name, fine.replace(first, f"{first}    - {clause}\n"), n_fixtures=24)
        line = one_line_error(bc(project, "seal", "tiny-ab"))
        assert line == (f"error: refusing to seal cards/tiny-ab.yaml: 24 fixtures × 5 repetitions with 1 variant(s) "
                        f"{why} (or, for an A/A or pilot card, say so: win: {{accept_cannot_win: true}})")
        code, out, _ = _run(project, "check", "tiny-ab")
        assert code == 0 and f"cards/tiny-ab.yaml:26: field '{field}': 24 fixtures × 5 repetitions" in out, out
        code, out, _ = _run(project, "plan", "tiny-ab", "--baseline-rate", "0.5")  # not 'wins 100%'
        shown = [line for line in out.splitlines() if "the most this design can show" in line]
        assert code == 0 and len(shown) == 1 and ("no win at all, whatever the data" in shown[0] or (
            "wins 0% of simulated runs" in shown[0] and "widen the guard's margin" in shown[0])), out
    wider = fine.replace(first, f"{first}    - {{metric: score, test: not_rises, margin: 0.74}}\n")
    result = bc(make_ab_project(tmp_path / "wider", wider, n_fixtures=24), "seal", "tiny-ab")
    assert result.exit_code == 0 and result.stderr == "", result.output


def test_check_names_a_probe_look_that_can_neither_pass_nor_fail_its_gate(tmp_path: Path) -> None:
    """Three cells at O'Brien–Fleming's first boundary: a Wilson bound from 3 of 3 stays below a gate of 0.5 and
    one from 0 of 3 above it, so look 1 never stops the run whatever the model does (measured: 'continue' with
    every cell passing and with every cell failing); check says so and names the looks to keep."""
    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path, repetitions=40, block="sequential: {looks: [3, 20, 40]}\n"
                                                                "gate: {min_score: 0.5}\n")
    result = bc(project.root, "check", "one-word-sentiment")
    assert result.exit_code == 0, result.output
    assert ("field 'sequential.looks': look 1 can neither pass nor fail gate min_score 0.5 at its boundary, even "
            "with every cell passing or failing: it can never stop the run (drop it: looks: [20, 40])") in result.output
    fine = sequential_probe(tmp_path / "fine", repetitions=40, block="sequential: {looks: [20, 40]}\n"
                                                                     "gate: {min_score: 0.5}\n")
    assert "can never stop the run" not in bc(fine.root, "check", "one-word-sentiment").output


@pytest.mark.parametrize(("min_score", "line"), [
    (0.8, "looks 1, 2 can only fail gate min_score 0.8, never pass (look 1: pass out of reach at 10 cells, a pass "
          "possible from 38 cells at its boundary; look 2: pass out of reach at 20 cells, a pass possible from 31 "
          "cells at its boundary): they stop a model under the gate early, never one over it"),
    (1, "looks 1, 2, 3 can only fail gate min_score 1, never pass (look 1: pass out of reach at 10 cells; look 2: "
        "pass out of reach at 20 cells; look 3: pass out of reach at 30 cells; no count's lower bound reaches 1: "
        "only the last look, held to the mean score, can pass): they stop a model under the gate early, never one "
        "over it"),
])
def test_check_warns_of_a_probe_look_that_can_only_fail_its_gate(tmp_path: Path, min_score: float,
                                                                  line: str) -> None:
    """Four looks over 40 repetitions at min_score 0.8: after 10 and 20 cells even a perfect mean's lower bound at
    the look's boundary stays under 0.8, while a low mean can fall below it, so a model over the gate is never
    stopped there. `check` said nothing; it now says so in one line, not an error, in the verdict's words for such
    a look, with the fewest cells at which a pass becomes possible there (each checked by the bound itself below,
    and a run on this design is judged as the line says: tests/verdict/test_looks.py)."""
    from benchcard.card.load import load_card
    from benchcard.card.schedule import card_design
    from benchcard.stats.sequential import boundaries, passing_mean

    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path, repetitions=40, block=f"sequential: {{looks: 4}}\ngate: {{min_score: "
                                                                f"{min_score}}}\n")
    code, out, _ = _run(project.root, "check", "one-word-sentiment")
    assert code == 0, out
    warned = [row for row in out.splitlines() if "can only fail" in row]
    assert warned == [f"  warning: cards/one-word-sentiment.yaml:21: field 'sequential.looks': {line}"]
    card = load_card(project.card_path("one-word-sentiment"), project)
    assert card.sequential is not None
    z = boundaries(card_design(card.sequential, card.gate_alpha, False, None)).efficacy
    if min_score < 1:  # the counts named: a pass possible at them, out of reach one fewer
        assert passing_mean(0.8, 38, z[0]) is not None and passing_mean(0.8, 37, z[0]) is None
        assert passing_mean(0.8, 31, z[1]) is not None and passing_mean(0.8, 30, z[1]) is None


def test_check_says_nothing_of_looks_that_can_pass(tmp_path: Path) -> None:
    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path, repetitions=200, block="sequential: {looks: 4}\ngate: {min_score: 0.8}\n")
    code, out, _ = _run(project.root, "check", "one-word-sentiment")
    assert code == 0 and "warning" not in out, out


def test_a_large_sequential_design_is_judged_on_its_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sequential card over many fixtures (a data file of thousands of rows): its looks are judged first on
    `BOUND_FIXTURES` of them, as the fixed design is, instead of simulating 2,000 runs of every fixture (the
    fixed design's cut alone left `check` drawing the whole design at each look)."""
    from benchcard.stats import _tablecache, reach

    drawn: list[int] = []
    real = reach._baseline_runs

    def spy(fixtures: int, repetitions: int, batch: int = 0) -> np.ndarray:
        drawn.append(fixtures)
        return real(fixtures, repetitions, batch)

    monkeypatch.setattr(reach, "_baseline_runs", spy)
    monkeypatch.setenv(_tablecache.ENV, "")  # every table drawn here, and seen
    for cached in (reach._evidence, reach._crossed, reach._wins, reach._sequential_wins):
        cached.cache_clear()
    try:
        project = make_ab_project(tmp_path, POCOCK.replace("pocock", "obrien-fleming"),
                                  n_fixtures=reach.BOUND_FIXTURES + 40)
        code, out, _ = _run(project, "check", "tiny-ab")
        assert code == 0 and "warning" not in out, out
        assert drawn and max(drawn) <= reach.BOUND_FIXTURES
    finally:
        for cached in (reach._evidence, reach._crossed, reach._wins, reach._sequential_wins):
            cached.cache_clear()


@pytest.mark.parametrize("alpha", ["1.0e-19", "5.0e-324"])
def test_an_alpha_below_every_sign_flip_floor_is_told_as_a_design_that_cannot_win(tmp_path: Path, alpha: str) -> None:
    """An alpha so small that no fixture count up to the search's 63 reached its sign-flip floor ended `check` in a
    StopIteration traceback; the search now looks as far as it may draw, and says no change is enough."""
    project = make_ab_project(tmp_path, MUST_WIN.replace("alpha: 0.05", f"alpha: {alpha}"), n_fixtures=5)
    code, out, err = _run(project, "check", "tiny-ab")
    assert (code, err) == (0, ""), out + err
    [warning] = [ln for ln in out.splitlines() if "warning" in ln]
    assert "can never win at α = " in warning and "no change within 30 repetitions and 2000 fixtures does" in warning
