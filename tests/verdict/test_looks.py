"""A sequential run's verdict, as a user types it: the decision of the look it stopped at (never another look),
the calls saved in the verdict, its file and its ledger row, a look record that no longer matches refused, and a
sequential probe's gate decided at the sealed confidence."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest

from benchcard.card.model import Card
from benchcard.project import Project
from benchcard.records.verdictfile import AbVerdict, LooksFigures
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.looks import _look_comparisons

from ..helpers_run import bc, only_run
from ..helpers_sequential import clear_win, futile, futile_ab, no_effect, sequential_ab, sequential_probe


def _ledger(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "results" / "ledger.jsonl").read_text().splitlines()]


def test_a_run_stopped_at_a_look_is_judged_by_that_look(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    folder = only_run(project, "colour-ab")
    result = bc(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    assert "finding: win → result" in result.output
    assert "looks: stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in result.output
    assert "  look 1: 96 cells · statistic" in result.output
    verdict = json.loads((folder / "verdict.json").read_text())
    assert verdict["finding"] == "win" and verdict["cells"] == 96
    assert verdict["why"].startswith("Stopped at look 1 of 3: win; 96 of 288 calls (67 % saved).")
    looks = verdict["sequential"]
    assert (looks["look"], looks["looks"], looks["decision"], looks["stopped"]) == (1, 3, "win", True)
    assert (looks["cells"], looks["planned"], looks["saved"]) == (96, 288, 0.6667)
    [row] = _ledger(tmp_path)
    assert row["looks"] == {"look": 1, "looks": 3, "decision": "win", "cells": 96, "planned": 288, "saved": 0.6667}
    assert row["finding"] == "win" and row["cells"] == 96
    verified = bc(project, "ledger", "--verify")
    assert verified.exit_code == 0, verified.output
    shown = bc(project, "verdict", folder.name, "--show")
    assert shown.exit_code == 0 and "looks: stopped at look 1 of 3: win" in shown.output


def test_a_run_through_every_look_never_wins_by_the_fixed_rule(tmp_path: Path, server: FakeServer,
                                                               key: str) -> None:
    server.configure(no_effect())
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3}\n")
    assert bc(project, "run", "colour-ab").exit_code == 0
    result = bc(project, "verdict", "colour-ab")
    assert result.exit_code == 0, result.output
    assert "looks: every look taken (3 of 3): inconclusive; 288 calls" in result.output
    [row] = _ledger(tmp_path)
    assert row["finding"] in ("inconclusive", "no-effect") and row["outcome"] == "non-result"
    assert row["looks"]["look"] == 3 and row["looks"]["saved"] == 0.0


def test_a_look_record_edited_after_the_run_is_refused(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    folder = only_run(project, "colour-ab")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["looks"][0]["decision"] = "loss"
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = bc(project, "verdict", folder.name)
    assert result.exit_code == 1
    assert "its manifest records look 1 as loss on 96 cells, but the cells called then give win on 96" in \
        result.stderr
    assert not (folder / "verdict.json").exists()


def test_a_sequential_probe_stops_once_its_gate_is_decided(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "negative"})
    project = sequential_probe(tmp_path, server.base_url, repetitions=80)
    result = bc(project, "run", "one-word-sentiment", "--gate")
    assert result.exit_code == 0, result.output
    assert "gate: stopped at look 1 of 4: pass; 20 of 80 calls (75 % saved) (min_score 0.5) → pass, exit 0" in \
        result.output
    folder = only_run(project, "one-word-sentiment")
    [look] = json.loads((folder / "manifest.json").read_text())["looks"]
    assert look["statistic"] == 1.0 and look["boundary"] <= 1.0 and look["decision"] == "pass"
    [row] = _ledger(tmp_path)
    assert row["looks"]["decision"] == "pass" and row["cells"] == 20
    # the look in words: the mean score, and the means that would pass and fail the gate there
    assert (f"  look 1: 20 cells · mean score 1.000 · pass at ≥ {look['boundary']:.3f}, fail at ≤ "
            f"{look['lower']:.3f} · pass\n") in result.output


def test_a_probe_look_that_cannot_pass_says_so_in_words(tmp_path: Path, server: FakeServer, key: str) -> None:
    """Ten cells all passing cannot pass a gate of 0.8 at the first of four looks' boundary, but ten failing would
    fail it: the verdict said `boundary n/a` and nothing of the failing side."""
    server.configure({"default_reply": "negative"})
    block = "sequential: {looks: 4}\ngate: {min_score: 0.8}\n"
    project = sequential_probe(tmp_path, server.base_url, repetitions=40, block=block)
    result = bc(project, "run", "one-word-sentiment", "--gate")
    assert result.exit_code == 0, result.output
    taken = json.loads((only_run(project, "one-word-sentiment") / "manifest.json").read_text())["looks"]
    assert taken[0]["boundary"] is None and taken[0]["lower"] is not None
    assert (f"  look 1: 10 cells · mean score 1.000 · pass out of reach at 10 cells, fail at ≤ "
            f"{taken[0]['lower']:.3f} · continue\n") in result.output
    assert "boundary n/a" not in result.output


def test_a_failing_probe_stops_below_its_gate(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "positive"})
    project = sequential_probe(tmp_path, server.base_url, repetitions=80)
    assert bc(project, "run", "one-word-sentiment").exit_code == 0
    result = bc(project, "verdict", "one-word-sentiment", "--gate")
    assert result.exit_code == 2, result.output
    assert "gate: stopped at look 1 of 4: fail; 20 of 80 calls (75 % saved) (min_score 0.5) → below, exit 2" in \
        result.output


@pytest.mark.parametrize("looks", [[3, 4], [2, 5]])
def test_a_probe_right_every_time_passes_a_gate_of_1(tmp_path: Path, server: FakeServer, key: str,
                                                      looks: list[int]) -> None:
    # the upper bound of a mean of exactly 1 is 1, never 0.9999999999999999 < 1 (a perfect run "below")
    server.configure({"default_reply": "negative"})
    block = f"sequential: {{looks: {looks}}}\ngate: {{min_score: 1}}\n"
    project = sequential_probe(tmp_path, server.base_url, repetitions=looks[-1], block=block)
    result = bc(project, "run", "one-word-sentiment", "--gate")
    assert result.exit_code == 0, result.output
    assert "gate: score 1.000 ≥ min_score 1 → pass, exit 0" in result.output
    taken = json.loads((only_run(project, "one-word-sentiment") / "manifest.json").read_text())["looks"]
    assert [look["decision"] for look in taken] == ["continue", "continue"]


def test_a_probe_run_is_judged_at_its_looks_as_check_warned(tmp_path: Path, server: FakeServer, key: str) -> None:
    """`check` warns that looks 1 and 2 of this design can only fail a gate of 0.8 (tests/card/test_design.py): a
    model right every time goes on past them, each said "pass out of reach" in the same words, and passes at look
    3."""
    server.configure({"default_reply": "negative"})
    project = sequential_probe(tmp_path, server.base_url, repetitions=40,
                               block="sequential: {looks: 4}\ngate: {min_score: 0.8}\n")
    checked = bc(project, "check", "one-word-sentiment").output
    assert "looks 1, 2 can only fail gate min_score 0.8, never pass (look 1: pass out of reach at 10 cells" in checked
    result = bc(project, "run", "one-word-sentiment", "--gate")
    assert result.exit_code == 0, result.output
    assert "  look 1: 10 cells · mean score 1.000 · pass out of reach at 10 cells, fail at ≤ 0.240 · continue" in \
        result.output
    assert "  look 2: 20 cells · mean score 1.000 · pass out of reach at 20 cells" in result.output
    assert "gate: stopped at look 3 of 4: pass; 30 of 40 calls (25 % saved) (min_score 0.8) → pass, exit 0" in \
        result.output


def test_a_stopped_runs_frame_holds_the_cells_it_called(tmp_path: Path, server: FakeServer, key: str) -> None:
    from benchcard.records.frames import read_run

    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    folder = only_run(project, "colour-ab")
    assert bc(project, "verdict", folder.name).exit_code == 0
    frame = read_run(folder)
    assert len(frame) == 96 and set(frame["status"]) == {"ok"} and set(frame["repetition"]) == {0, 1, 2}


def test_a_clear_loss_stops_at_the_first_look_as_a_loss(tmp_path: Path, server: FakeServer, key: str) -> None:
    from ..helpers_sequential import clear_loss

    server.configure(clear_loss())
    project = sequential_ab(tmp_path, server.base_url)
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0 and "stopped at look 1 of 3: loss; 96 of 288 calls (67 % saved)" in ran.output
    result = bc(project, "verdict", "colour-ab", "--gate")
    assert result.exit_code == 2, result.output
    assert "finding: loss → result" in result.output and "gate: loss → exit 2" in result.output


def test_an_hsd_card_is_run_judged_and_planned_at_its_sealed_gamma(tmp_path: Path, server: FakeServer,
                                                                    key: str) -> None:
    from benchcard.stats import sequential as seq

    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3, spending: hsd, gamma: 1}\n")
    checked = bc(project, "check", "colour-ab")
    assert checked.exit_code == 0, checked.output
    assert "sequential: 3 looks, after repetitions 3, 6, 9 of 9 (96, 192, 288 calls); α spent hsd (γ = 1); " \
           "never stops for futility" in checked.output
    planned = bc(project, "plan", "colour-ab")
    assert planned.exit_code == 0, planned.output
    assert "sequential: 3 looks, after repetitions 3, 6, 9 of 9; α 0.05 spent hsd (γ = 1); never stops for " \
           "futility" in planned.output
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0 and "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)" in ran.output
    folder = only_run(project, "colour-ab")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sequential"] == {"looks": [3, 6, 9], "cells": [96, 192, 288], "spending": "hsd",
                                      "futility": False, "alpha": 0.05, "gamma": 1.0, "decide_from": 3,
                                      "grid": {"points": 801, "sds": 9.0, "cap": 12.0}}
    hsd = seq.boundaries(seq.Schedule((3, 6, 9), "hsd", False, 0.05, 1.0)).efficacy[0]
    obf = seq.boundaries(seq.Schedule((3, 6, 9), "obrien-fleming", False, 0.05)).efficacy[0]
    [look] = manifest["looks"]
    assert look["boundary"] == pytest.approx(hsd) and abs(hsd - obf) > 0.5  # the card's γ, not the default
    result = bc(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    assert "finding: win → result" in result.output
    assert json.loads((folder / "verdict.json").read_text())["sequential"]["schedule"]["gamma"] == 1.0
    [row] = _ledger(tmp_path)
    assert row["looks"]["decision"] == "win"


def test_a_run_ruling_out_the_effect_that_matters_stops_for_futility(tmp_path: Path, server: FakeServer,
                                                                      key: str) -> None:
    server.configure(futile())
    project = futile_ab(tmp_path, server.base_url)
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    assert "  stopped at look 2 of 3: futility; 192 of 288 calls (33 % saved)" in ran.output
    assert server.stats()["calls"] == 192
    folder = only_run(project, "colour-ab")
    looks = json.loads((folder / "manifest.json").read_text())["looks"]
    assert [(lk["look"], lk["repetitions"], lk["cells"], lk["decision"]) for lk in looks] == [
        (1, 3, 96, "continue"), (2, 6, 192, "futility")]
    first, second = looks
    assert first["futility_statistic"] < first["futility"] and second["futility_statistic"] >= second["futility"]
    assert abs(second["statistic"]) < second["boundary"]  # neither a win nor a loss
    result = bc(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    assert "finding: no-effect → non-result" in result.output
    assert "A vs baseline: no-effect → non-result" in result.output  # each variant as the look ruled it out
    assert "inconclusive" not in result.output
    assert ("  Stopped at look 2 of 3: futility; 192 of 288 calls (33 % saved). The effect that matters (a gap of "
            "0.4, the card's min_effect) is ruled out at this look: it stopped for futility.") in result.output
    assert "looks: stopped at look 2 of 3: futility; 192 of 288 calls (33 % saved)" in result.output
    assert "  look 1: 96 cells · statistic 0.000 · boundary 3.710 · continue" in result.output
    assert "  look 2: 192 cells · statistic 0.000 · boundary 2.511 · futility" in result.output
    verdict = json.loads((folder / "verdict.json").read_text())
    assert (verdict["finding"], verdict["outcome"], verdict["cells"]) == ("no-effect", "non-result", 192)
    assert [(c["variant"], c["finding"], c["outcome"], c["why"]) for c in verdict["comparisons"]] == [
        ("A", "no-effect", "non-result", "The effect that matters (a gap of 0.4, the card's min_effect) is ruled out "
                                         "for this variant at look 2's level: the run stopped for futility.")]
    [row] = _ledger(tmp_path)
    assert row["looks"] == {"look": 2, "looks": 3, "decision": "futility", "cells": 192, "planned": 288,
                            "saved": 0.3333}
    assert (row["finding"], row["outcome"], row["cells"]) == ("no-effect", "non-result", 192)
    assert row["comparisons"] == [{"variant": "A", "finding": "no-effect", "outcome": "non-result"}]
    gate = bc(project, "verdict", folder.name, "--gate", "--show")
    assert gate.exit_code == 3, gate.output  # a no-effect, as docs/ci.md says
    assert "gate: no-effect → exit 3 (only a win passes)" in gate.output


def test_a_look_where_no_variant_cell_was_scored_never_stops_for_futility(tmp_path: Path, server: FakeServer,
                                                                         key: str) -> None:
    """Every variant cell of the first stretch is cut off at max_tokens (within a generous allow_failed): the gap
    cannot be measured at look 1, so nothing is ruled out. Its futility p was taken as 0 and the run stopped there
    "for futility", a no-effect in the ledger with not one variant cell scored. Nor does the look read as a measured
    statistic of 0 (its p of 1 as a z): the manifest holds null, and the verdict and the page say `none`, for its
    futility statistic too."""
    server.configure({**clear_win(), "faults": [{"match": "Please.", "kind": "truncate", "times": 3}]})
    project = sequential_ab(tmp_path, server.base_url)
    card = project.card_path("colour-ab")
    card.write_text(card.read_text(encoding="utf-8").replace("  equivalence_margin: 0.05",
                                                             "  equivalence_margin: 0.05\n  allow_failed: 200"),
                    encoding="utf-8")
    for seal in (tmp_path / "keys" / "colour-ab").glob("*.seal.json"):
        seal.unlink()
    assert bc(project, "seal", "colour-ab").exit_code == 0
    ran = bc(project, "run", "colour-ab")
    assert ran.exit_code == 0, ran.output
    folder = only_run(project, "colour-ab")
    first = json.loads((folder / "manifest.json").read_text())["looks"][0]
    assert (first["look"], first["cells"], first["decision"]) == (1, 96, "continue"), first
    assert first["statistic"] is None and first["futility_statistic"] is None, first
    assert "futility" not in ran.output
    judged = bc(project, "verdict", folder.name)
    assert judged.exit_code == 0, judged.output
    assert "  look 1: 96 cells · statistic none · boundary" in judged.output, judged.output
    assert bc(project, "site", "--out", str(tmp_path / "site")).exit_code == 0
    [page] = (tmp_path / "site" / "runs" / "colour-ab").glob("v*/*/index.html")
    html = page.read_text(encoding="utf-8")
    assert '<td class="num">96</td><td class="num">none</td>' in html
    # the futility test was taken at look 1 (it has a boundary) and measured nothing: `none`, as the statistic; `—`
    # is kept for a look that took no futility test (the last), where both read `—` before
    rows = [re.findall(r'<td class="num">([^<]*)</td>', row) for row in re.findall(r"<tr><td>\d+</td>.*?</tr>", html)]
    first_row, last_row = rows[0], rows[-1]
    assert first_row[4] == "none" and first_row[5] not in ("none", "—"), first_row
    assert last_row[4:6] == ["—", "—"], last_row


def test_a_replication_of_a_sequential_run_keeps_its_looks_and_compares_decisions(tmp_path: Path,
                                                                                   server: FakeServer,
                                                                                   key: str) -> None:
    from benchcard.records.replication import SEQUENTIAL_RULE_NAME

    from ..helpers_sequential import clear_loss

    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    original = only_run(project, "colour-ab")
    assert bc(project, "verdict", original.name).exit_code == 0
    server.configure(clear_win())
    again = bc(project, "replicate", original.name, "--json")
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    assert data["run"]["looks"] == "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)"
    folder = project.root / data["run"]["folder"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sequential"] == json.loads((original / "manifest.json").read_text())["sequential"]
    assert manifest["replication_rule"]["name"] == SEQUENTIAL_RULE_NAME
    judged = data["verdict"]["replication"]
    assert judged["finding"] == "replicated"
    assert judged["text"] == ("replicated: win again, each at its own sealed looks (the original stopped at look 1 "
                              "of 3: win, the new run stopped at look 1 of 3: win; gaps not compared)")
    server.configure(clear_loss())
    flipped = bc(project, "replicate", original.name)
    assert flipped.exit_code == 0, flipped.output
    assert (f"replication of run {original.name}: not replicated: the decision flipped, win → loss (the original "
            "stopped at look 1 of 3: win, the new run stopped at look 1 of 3: loss)") in flipped.stdout
    rows = _ledger(tmp_path)
    assert [r["replication"]["finding"] for r in rows[1:]] == ["replicated", "not replicated"]
    assert rows[2]["replication"]["direction"] == "fell"
    verified = bc(project, "ledger", "--verify")
    assert verified.exit_code == 0 and "ledger ok: 3 row(s)" in verified.output, verified.output
    site = bc(project, "site")
    assert site.exit_code == 0, site.output
    pages = [p.read_text() for p in tmp_path.rglob("*.html")]
    assert any("win again, each at its own sealed looks" in page for page in pages)


def test_a_sequential_replication_judged_once_its_look_is_taken_with_failed_cells(tmp_path: Path,
                                                                                 server: FakeServer,
                                                                                 key: str) -> None:
    """A replication whose first stretch fails beyond allow_failed waits before its look; a plain resume takes
    the look with those cells failed (final: nothing to retry), and the replication is judged at once."""
    server.configure(clear_win())
    project = sequential_ab(tmp_path, server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    original = only_run(project, "colour-ab")
    assert bc(project, "verdict", original.name).exit_code == 0
    server.configure({**clear_win(), "faults": [{"match": "number 0<", "kind": "500", "times": 999}]})
    waiting = bc(project, "replicate", original.name, "--attempts", "1")
    assert waiting.exit_code == 1 and "6 cell(s) before look 1 failed" in waiting.stderr
    [new] = [p for p in original.parent.iterdir() if p.is_dir() and p != original]
    again = bc(project, "replicate", "--resume", new.name, "--json")
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    assert data["run"]["counts"]["failed"] == 6 and data["waiting"] is None
    assert data["verdict"]["finding"] == "incomplete"  # 6 failed cells against allow_failed 0
    assert data["verdict"]["replication"]["finding"] == "inconclusive"


def test_a_variants_win_at_alpha_alone_is_not_shown_as_a_result_under_a_non_result(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """The looks spend α: a variant whose gap would be a win at α alone, where the last look's level showed
    none, reads inconclusive, never `win → result` under the run's non-result."""
    server.configure(no_effect())
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3}\n")
    assert bc(project, "run", "colour-ab").exit_code == 0
    folder = only_run(project, "colour-ab")
    assert bc(project, "verdict", folder.name).exit_code == 0
    verdict = msgspec.json.decode((folder / "verdict.json").read_bytes(), type=AbVerdict)
    looks = verdict.sequential
    assert isinstance(looks, LooksFigures) and looks.decision in ("inconclusive", "no-effect")
    [line] = verdict.comparisons
    won = msgspec.structs.replace(verdict, comparisons=[msgspec.structs.replace(line, finding="win",
                                                                                 outcome="result")])
    [said] = _look_comparisons(cast(Card, None), won, looks)
    assert (said.finding, said.outcome) == ("inconclusive", "non-result")
    assert said.why.startswith("At α alone this variant's gap would be a win, but the looks spent α: at look 3")
    [kept] = _look_comparisons(cast(Card, None), verdict, looks)
    assert kept == line


def test_a_replication_of_a_sequential_probe_stopped_at_a_look_compares_its_gate_decisions(
        tmp_path: Path, server: FakeServer, key: str) -> None:
    """`benchcard replicate` of a probe that stopped at a look: the new run takes the same sealed looks, stops
    where its own gate is decided, and is judged on the two decisions (pass again; a pass that flips to fail)."""
    from benchcard.records.replication import SEQUENTIAL_RULE_NAME

    server.configure({"default_reply": "negative"})
    project = sequential_probe(tmp_path, server.base_url, repetitions=80)
    assert bc(project, "run", "one-word-sentiment").exit_code == 0
    original = only_run(project, "one-word-sentiment")
    assert bc(project, "verdict", original.name).exit_code == 0
    again = bc(project, "replicate", original.name, "--json")
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    assert data["run"]["looks"] == "stopped at look 1 of 4: pass; 20 of 80 calls (75 % saved)"
    folder = project.root / data["run"]["folder"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sequential"] == json.loads((original / "manifest.json").read_text())["sequential"]
    assert [look["decision"] for look in manifest["looks"]] == ["pass"]
    assert manifest["replication_rule"]["name"] == SEQUENTIAL_RULE_NAME
    assert data["verdict"]["replication"]["text"] == (
        "replicated: pass again, each at its own sealed looks (the original stopped at look 1 of 4: pass, the new "
        "run stopped at look 1 of 4: pass; gaps not compared)")
    server.configure({"default_reply": "positive"})
    flipped = bc(project, "replicate", original.name)
    assert flipped.exit_code == 0, flipped.output
    assert "looks: stopped at look 1 of 4: fail; 20 of 80 calls (75 % saved)" in flipped.stdout
    assert (f"replication of run {original.name}: not replicated: the decision flipped, pass → fail (the original "
            "stopped at look 1 of 4: pass, the new run stopped at look 1 of 4: fail)") in flipped.stdout
    rows = _ledger(tmp_path)
    assert [(r["looks"]["decision"], r["cells"]) for r in rows] == [("pass", 20), ("pass", 20), ("fail", 20)]
    assert [r["replication"]["finding"] for r in rows[1:]] == ["replicated", "not replicated"]
    verified = bc(project, "ledger", "--verify")
    assert verified.exit_code == 0 and "ledger ok: 3 row(s)" in verified.output, verified.output


def _as_if_benchcard_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """This benchcard's defaults changed after a run was planned: another futility level (under which `futile()`'s
    look 2 goes on: its futility boundary 3.09, not 1.82), α first spent at 7 repetitions, another grid."""
    from benchcard.stats import sequential as seq

    monkeypatch.setattr(seq, "FUTILITY_BETAS", {**seq.FUTILITY_BETAS, "obrien-fleming": 0.001})
    monkeypatch.setattr(seq, "MIN_REPETITIONS_TO_DECIDE", 7)
    monkeypatch.setattr(seq, "GRID_POINTS", 401)


def _futile_run(tmp_path: Path, server: FakeServer) -> tuple[Project, Path]:
    """A sequential run against the fake server that stops for futility at look 2 of 3: its project and folder."""
    server.configure(futile())
    project = futile_ab(tmp_path, server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    return project, only_run(project, "colour-ab")


RECORDED = {"futility_level": 0.035, "decide_from": 3, "grid": {"points": 801, "sds": 9.0, "cap": 12.0}}
FUTILE_LOOKS = ["  look 1: 96 cells · statistic 0.000 · boundary 3.710 · continue",
                "  look 2: 192 cells · statistic 0.000 · boundary 2.511 · futility"]


def test_a_run_is_judged_by_the_rule_it_recorded_not_by_a_later_default(tmp_path: Path, server: FakeServer,
                                                                         key: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    project, folder = _futile_run(tmp_path, server)
    planned = json.loads((folder / "manifest.json").read_text())
    assert {k: planned["sequential"][k] for k in RECORDED} == RECORDED
    _as_if_benchcard_changed(monkeypatch)
    result = bc(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output  # today's rule would give look 2 another futility boundary
    assert "finding: no-effect → non-result" in result.output
    assert all(line in result.output for line in FUTILE_LOOKS)
    verdict = json.loads((folder / "verdict.json").read_text())
    assert [lk["futility"] for lk in verdict["sequential"]["taken"]] == [lk["futility"] for lk in planned["looks"]]
    assert bc(project, "ledger", "--verify").exit_code == 0
    from benchcard.card.schedule import current_rules, design
    from benchcard.stats import sequential as seq

    today = design((3, 6, 9), "obrien-fleming", None, alpha=0.05, futility=True,
                   rules=current_rules(True, "obrien-fleming"))
    assert today.futility_beta == 0.001  # today's values: under them look 2 would go on
    assert planned["looks"][1]["futility_statistic"] < (seq.boundaries(today).futility_z or ())[1]


def test_a_manifest_written_before_the_rule_was_recorded_still_verifies(tmp_path: Path, server: FakeServer,
                                                                        key: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from benchcard.records.plandigest import sealed_digests

    project, folder = _futile_run(tmp_path, server)
    manifest = json.loads((folder / "manifest.json").read_text())
    for name in RECORDED:  # as the benchcard before them wrote it, its digest over the block without them
        del manifest["sequential"][name]
    manifest.update(sealed_digests(folder, {k: v for k, v in manifest.items() if k not in ("sealed", "plan_digest")}))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    before = (folder / "manifest.json").read_bytes()
    _as_if_benchcard_changed(monkeypatch)
    result = bc(project, "verdict", folder.name)
    assert result.exit_code == 0, result.output
    assert "finding: no-effect → non-result" in result.output and all(line in result.output for line in FUTILE_LOOKS)
    assert (folder / "manifest.json").read_bytes() == before
    verified = bc(project, "ledger", "--verify")
    assert verified.exit_code == 0, verified.output


def test_a_resumed_run_keeps_the_rule_it_recorded(tmp_path: Path, server: FakeServer, key: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from ..helpers_run import answer_every_held, held_after, holding, run_and_kill, runs_of

    # the first look's 96 calls (3 of each of the 32 bodies) and 10 more answered, the next 2 held: killed there
    server.configure({**futile(), "faults": held_after(10, each=3, held=2)})
    project = futile_ab(tmp_path, server.base_url)

    def after_the_first_look() -> bool:
        runs = runs_of(project, "colour-ab")
        if not runs or not (runs[0] / "manifest.json").is_file():
            return False
        outputs = runs[0] / "outputs.jsonl"
        return bool(json.loads((runs[0] / "manifest.json").read_text()).get("looks")) and outputs.is_file() and \
            outputs.read_bytes().count(b"\n") >= 106 and holding(server, 2)

    try:
        run_and_kill(project.root, ["colour-ab", "--concurrency", "2"], after_the_first_look)
    finally:
        answer_every_held(server)
    folder = only_run(project, "colour-ab")
    first = json.loads((folder / "manifest.json").read_text())
    assert [lk["decision"] for lk in first["looks"]] == ["continue"]
    _as_if_benchcard_changed(monkeypatch)
    resumed = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output
    assert "stopped at look 2 of 3: futility; 192 of 288 calls (33 % saved)" in resumed.output
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sequential"] == first["sequential"]
    assert manifest["looks"][1]["futility"] == pytest.approx(1.82398, abs=1e-5)  # the recorded level's
    assert bc(project, "verdict", folder.name).exit_code == 0


def test_a_resumed_run_of_a_card_naming_no_spending_keeps_the_spending_it_recorded(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of a card that names no spending records the default it was planned under; a later benchcard whose
    default differs resumes it, and judges it, at the recorded spending, γ and futility level."""
    from benchcard.card import schedule
    from benchcard.card._defaults import DEFAULT_SPENDING
    from benchcard.stats import sequential as seq

    from ..helpers_run import answer_every_held, held_after, holding, run_and_kill, runs_of

    # the first look's 96 calls answered (3 of each of the 32 bodies), the next 2 held: killed after that look
    server.configure({**no_effect(), "faults": held_after(each=3, held=2)})
    project = sequential_ab(tmp_path, server.base_url, block="sequential: {looks: 3}\n")

    def after_the_first_look() -> bool:
        runs = runs_of(project, "colour-ab")
        return bool(runs) and (runs[0] / "manifest.json").is_file() and \
            bool(json.loads((runs[0] / "manifest.json").read_text()).get("looks")) and holding(server, 2)

    try:
        run_and_kill(project.root, ["colour-ab", "--concurrency", "2"], after_the_first_look)
    finally:
        answer_every_held(server)
    folder = only_run(project, "colour-ab")
    first = json.loads((folder / "manifest.json").read_text())
    assert (first["sequential"]["spending"], first["sequential"]["gamma"]) == DEFAULT_SPENDING
    assert [lk["decision"] for lk in first["looks"]] == ["continue"]
    monkeypatch.setattr(schedule, "DEFAULT_SPENDING", ("pocock", None))  # a later benchcard's default
    monkeypatch.setattr(seq, "FUTILITY_BETAS", {**seq.FUTILITY_BETAS, "hsd": 0.2, "pocock": 0.2})
    resumed = bc(project, "run", "colour-ab", "--resume", folder.name)
    assert resumed.exit_code == 0, resumed.output
    assert "every look taken (3 of 3)" in resumed.output
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sequential"] == first["sequential"] and manifest["looks"][0] == first["looks"][0]
    judged = bc(project, "verdict", folder.name)
    assert judged.exit_code == 0, judged.output
