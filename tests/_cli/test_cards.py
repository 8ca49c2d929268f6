"""The card's commands as a user types them: `init` says what it made and what to type next; `check` reports the
same thing in words and under --json; `curl` prints a command that keeps the key a shell variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.project import Project

from ..helpers_cli import bc, one_line_error
from ..helpers_project import copy_project


def test_init_names_what_it_made_and_what_to_type_next(tmp_path: Path) -> None:
    result = bc(tmp_path, "init", str(tmp_path / "new"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"created a benchcard project in {tmp_path / 'new'}:"
    assert "  benchcard check" in lines and (tmp_path / "new" / "cards" / "first-ab.yaml").is_file()


def test_check_says_the_same_in_words_and_under_json(tmp_path: Path) -> None:
    assert bc(tmp_path, "init", str(tmp_path / "new")).exit_code == 0
    root = tmp_path / "new"
    words, as_json = bc(root, "check", "--no-rig"), bc(root, "check", "--no-rig", "--json")
    assert words.exit_code == as_json.exit_code == 0, words.output
    [card] = json.loads(as_json.stdout)["cards"]
    assert card["card"] == "first-ab" and card["ok"] is True and card["seal"] == "v1 not sealed"
    assert words.stdout.startswith("ok   first-ab v1") and "v1 not sealed" in words.stdout.splitlines()[0]


def test_curl_prints_the_request_with_the_key_left_to_the_shell(project: Project) -> None:
    result = bc(project.root, "curl", "extract-ab")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("curl https://api.openai.com/v1/chat/completions \\\n")
    assert '-H "Authorization: Bearer $OPENAI_API_KEY"' in result.stdout


def test_plan_prints_its_lines_or_under_json_its_fields(project: Project) -> None:
    """`plan` through the one report protocol: the lines it has always printed, word for word, and under --json
    the plan's fields (`Plan.fields()`), indented two spaces, nothing else."""
    from benchcard.card.load import load_named
    from benchcard.planning.forecast import plan

    words = bc(project.root, "plan", "extract-ab")
    assert words.exit_code == 0, words.output
    assert words.stdout.splitlines()[:5] == [
        "extract-ab v1 (ab) · test/model-1 · effort high · Test API",
        "calls           36  (2 variants × 6 fixtures × 3 repetitions)",
        "input tokens    ~1,445  (estimate: characters / 4 of every request's messages)",
        "output tokens   ≤ 7,200  (max_tokens 200 × 36 calls)",
        "cost            no price configured for test/model-1 (add prices: {test/model-1: {input: USD, output: "
        "USD}} per million tokens to benchcard.yaml)"]
    assert words.stdout.count("\n") == 6 and words.stdout.splitlines()[5].startswith("warning: the most this design")
    as_json = bc(project.root, "plan", "extract-ab", "--json")
    assert as_json.exit_code == 0, as_json.output
    fields = plan(project, load_named(project, "extract-ab")).fields()
    assert as_json.stdout == json.dumps(fields, indent=2, ensure_ascii=False) + "\n"


EDITS = {"card": ("cards/bench-01.yaml", "repetitions: 5", "repetitions: 6"),
         "fixture": ("fixtures/bench-01/excerpt-03.txt", "", " (amended)"),
         "key": ("keys/bench-01/excerpt-01.json", "", "\n")}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_plan_of_a_card_changed_after_its_seal_says_so_on_stderr_and_goes_on(tmp_path: Path, edit: str) -> None:
    """`plan` planned a card edited after `seal` (its card, a fixture or a key file) as if it were the version
    sealed, where `check` and `run` refuse it. Planning a draft is legitimate, so it goes on, and says on stderr, in
    one line, `check`'s own problem (the file that changed, and the remedy: a new version, sealed again); the plan,
    or its JSON (`seal_broken`), stays whole on stdout. A card sealed as it is says nothing."""
    root = copy_project(tmp_path / "proj", ("bench-01",), seals=True)
    intact = bc(root, "plan", "bench-01")
    assert (intact.exit_code, intact.stderr) == (0, ""), intact.output
    name, old, new = EDITS[edit]
    path = root / name
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(old, new) if old else text + new, encoding="utf-8")
    problem = one_line_error(bc(root, "run", "bench-01")).removeprefix("error: ")
    assert problem.startswith(f"{name} ") and problem.endswith("add a history note, `benchcard seal bench-01`)")
    assert f"  error: {problem}" in bc(root, "check", "bench-01", "--no-rig").stdout.splitlines()  # one source
    warned = f"warning: bench-01 v1 is planned as its files are now, not as sealed: {problem}\n"
    planned = bc(root, "plan", "bench-01")
    assert (planned.exit_code, planned.stderr) == (0, warned), planned.output
    assert planned.stdout.startswith("bench-01 v1 (ab) · claude-fable-5-1")
    as_json = bc(root, "plan", "bench-01", "--json")
    assert (as_json.exit_code, as_json.stderr) == (0, warned)
    assert json.loads(as_json.stdout)["seal_broken"] == problem


def test_plan_of_a_card_whose_seal_does_not_read_says_so_and_goes_on(tmp_path: Path) -> None:
    """A seal file that does not read is said as `check` and `run` refuse it, and the card is planned all the
    same (`plan` itself never refuses a card for its seal)."""
    root = copy_project(tmp_path / "proj", ("bench-01",), seals=True)
    (root / "keys" / "bench-01" / "v1.seal.json").write_text("{bad\n", encoding="utf-8")
    problem = one_line_error(bc(root, "run", "bench-01")).removeprefix("error: ")
    planned = bc(root, "plan", "bench-01")
    assert planned.exit_code == 0 and planned.stdout.startswith("bench-01 v1 (ab)"), planned.output
    assert planned.stderr == f"warning: bench-01 v1 is planned as its files are now, not as sealed: {problem}\n"
    assert problem.startswith("keys/bench-01/v1.seal.json: ")


def test_check_says_a_bad_benchcard_yaml_first_and_calls_no_card_ok(tmp_path: Path) -> None:
    """A malformed benchcard.yaml is the one line `check` says, with a card named or not, in words or under --json:
    it printed "1 card(s) ok, 0 failed" before the error."""
    assert bc(tmp_path, "init", str(tmp_path / "new")).exit_code == 0
    root = tmp_path / "new"
    (root / "benchcard.yaml").write_text("providers: [\n", encoding="utf-8")
    for args in (("check", "--no-rig"), ("check", "first-ab"), ("check", "--json")):
        result = bc(root, *args)
        line = one_line_error(result)
        assert result.stdout == "", (args, result.stdout)  # no card called ok
        assert line.startswith("error: benchcard.yaml:2: malformed YAML"), (args, line)
