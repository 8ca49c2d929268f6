"""A catastrophic-backtracking rule is stopped after its time limit and named, in `check` and in blind scoring."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchcard.testing.cards import COLOUR_AB as RUN_CARD
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc, one_line_error
from ..helpers_project import AB_CARD, make_ab_project
from ..helpers_run import only_run, read_jsonl, seal_card, write_config

SLOW = "a" * 40 + "!"


@pytest.mark.parametrize(("kind", "pattern", "output"), [("must_not_match", "/^(a+)+$/", SLOW),
                                                         ("must_match", "/^(\\w+\\s?)*$/", "word " * 30 + "!")])
def test_check_names_a_rule_that_hangs_on_a_worked_example(tmp_path: Path, kind: str, pattern: str,
                                                           output: str) -> None:
    root = make_ab_project(tmp_path / "proj")
    rule = f"    - {{id: runaway, {kind}: '{pattern}', why: Words only.}}\n"
    card = AB_CARD.replace("    - {id: says_red,", rule + "    - {id: says_red,", 1)
    card = card.replace("examples:\n", f"examples:\n  - {{label: Slow, output: '{output}', expect: fail}}\n", 1)
    (root / "cards" / "tiny-ab.yaml").write_text(card, encoding="utf-8")
    result = bc(root, "check")
    assert result.exit_code == 1
    problems = [line for line in result.output.splitlines() if "error:" in line]
    assert len(problems) == 1, result.output
    assert "example 'Slow'" in problems[0] and "rule 'runaway'" in problems[0]
    assert "took longer than 2 s" in problems[0]
    assert "Traceback" not in result.output


RUNAWAY = "r" * 40 + "!"


def test_a_rule_that_hangs_on_one_reply_leaves_it_unscored_and_the_run_closes(tmp_path: Path, server: FakeServer,
                                                                               key: str) -> None:
    """The audit's card: `/^(\\s*r+)+ed$/` passes 'red' at once and runs past its limit on 40 r's and '!'. That
    one output is recorded unscored, naming the rule (never a wrong, never a stopped run: `status` has nothing
    to resume), and the verdict counts it and names the rule."""
    server.configure({"default_reply": "red", "replies": [{"match": "Please.\n<item>slow", "reply": RUNAWAY}]})
    card = RUN_CARD.format(provider="fake", reps=1, effort="null", max_tokens=50).replace(
        "  rules:\n", "  rules:\n    - {id: runaway, must_match: '/^(\\s*r+)+ed$/', why: The word.}\n", 1)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "colour-ab.yaml").write_text(card, encoding="utf-8")
    (tmp_path / "fixtures" / "colour-ab").mkdir(parents=True)
    for name in ("item-0", "item-1", "slow"):
        (tmp_path / "fixtures" / "colour-ab" / f"{name}.txt").write_text(f"{name} ripe tomato", encoding="utf-8")
    write_config(tmp_path, server.base_url)
    project = seal_card(tmp_path, "colour-ab")
    ran = bc(project.root, "run", "colour-ab", "--json")
    assert ran.exit_code == 0, ran.output
    run = only_run(project, "colour-ab")
    scores = read_jsonl(run / "scores.jsonl")
    assert len(scores) == 6
    [left] = [s for s in scores if s["score"] is None]
    assert left["fixture"] == "slow" and left["status"] == "ok" and left["rules"] is None
    assert left["unscored"] == "rule 'runaway' ran past its 2 s limit (catastrophic backtracking)"
    assert all("unscored" not in s and s["score"] == 1.0 for s in scores if s is not left)
    status = bc(project.root, "status", run.name)
    assert status.exit_code == 0 and "--resume" not in status.output, status.output
    line = one_line_error(bc(project.root, "verdict", run.name))
    assert ("1 cells have an output but no score in scores.jsonl (rule 'runaway' ran past its 2 s limit "
            "(catastrophic backtracking) on 1 of them: scores.jsonl)") in line and "--allow-incomplete" in line
    judged = bc(project.root, "verdict", run.name, "--allow-incomplete", "--json")
    assert judged.exit_code == 0, judged.output
    said = json.loads(judged.stdout)
    assert said["finding"] == "incomplete"
    assert "1 cell(s) have an output but no score (rule 'runaway' ran past its 2 s limit" in said["why"]


def test_check_warns_and_seal_refuses_a_rule_that_backtracks_on_its_own_characters(tmp_path: Path) -> None:
    """No worked example hangs, but a reply of the rule's own characters and one that fails it does: `check`
    warns in one line naming the file, the rule and the input's length; `seal` refuses it in that line. A sane
    rule is said nothing of."""
    root = make_ab_project(tmp_path / "proj")
    rule = "    - {id: runaway, must_match: '/^(\\s*r+)+ed$/', why: The word.}\n"
    card = AB_CARD.replace("    - {id: says_red,", rule + "    - {id: says_red,", 1)
    (root / "cards" / "tiny-ab.yaml").write_text(card, encoding="utf-8")
    checked = bc(root, "check")
    assert checked.exit_code == 0, checked.output
    warned = [line for line in checked.output.splitlines() if "warning:" in line and "rule '" in line]
    assert len(warned) == 1, checked.output
    assert re.search(r"warning: cards/tiny-ab\.yaml:\d+: field 'scoring\.rules\.0\.must_match': rule 'runaway' took "
                     r"longer than 0\.25 s on an input of 25 characters \('rrrrrr'… and '!'", warned[0]), warned[0]
    assert "left unscored" in warned[0]
    line = one_line_error(bc(root, "seal", "tiny-ab"))
    assert re.search(r"refusing to seal: cards/tiny-ab\.yaml:\d+: field 'scoring\.rules\.0\.must_match': rule "
                     "'runaway'", line), line
    assert "input of 25 characters" in line
    assert not list((root / "keys").glob("tiny-ab/*.seal.json"))


def test_the_rules_process_holds_no_file_of_the_run(tmp_path: Path, server: FakeServer, key: str) -> None:
    """The child that matches rules is forked while the run holds outputs.jsonl locked: it must not keep that
    lock (or any other file) open, or the finished run would stay locked for as long as this process lives (a
    notebook, a script that runs and then resumes)."""
    import fcntl

    from benchcard.scoring import rulelimit

    rulelimit._MATCHER.test([], "", 1.0)
    rulelimit._MATCHER._stop()  # the next match forks a fresh child: during blind scoring, inside the lock
    server.configure({"default_reply": "red"})
    card = RUN_CARD.format(provider="fake", reps=1, effort="null", max_tokens=50)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "colour-ab.yaml").write_text(card, encoding="utf-8")
    (tmp_path / "fixtures" / "colour-ab").mkdir(parents=True)
    for i in range(3):
        (tmp_path / "fixtures" / "colour-ab" / f"item-{i}.txt").write_text(f"tomato {i}", encoding="utf-8")
    write_config(tmp_path, server.base_url)
    project = seal_card(tmp_path, "colour-ab")
    assert bc(project.root, "run", "colour-ab", "--json").exit_code == 0
    with open(only_run(project, "colour-ab") / "outputs.jsonl", "rb") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError while anyone holds it
