"""A catastrophic-backtracking rule is stopped after its time limit and named, in `check` and in blind scoring."""

from __future__ import annotations

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


def test_blind_scoring_names_the_rule_and_keeps_the_outputs(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": SLOW})
    card = RUN_CARD.format(provider="fake", reps=1, effort="null", max_tokens=50).replace(
        "  rules:\n", "  rules:\n    - {id: runaway, must_not_match: '/^(a+)+$/', why: Nothing but a's.}\n", 1)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "colour-ab.yaml").write_text(card, encoding="utf-8")
    (tmp_path / "fixtures" / "colour-ab").mkdir(parents=True)
    (tmp_path / "fixtures" / "colour-ab" / "item-000.txt").write_text("a ripe tomato", encoding="utf-8")
    write_config(tmp_path, server.base_url)
    project = seal_card(tmp_path, "colour-ab")
    line = one_line_error(bc(project.root, "run", "colour-ab", "--json"))
    assert "cards/colour-ab.yaml: blind scoring stopped: rule 'runaway'" in line and "took longer than 2 s" in line
    run = only_run(project, "colour-ab")
    assert [r["text"] for r in read_jsonl(run / "outputs.jsonl")] == [SLOW, SLOW]
    assert not (run / "scores.jsonl").exists()


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
