"""The card's commands as a user types them: `init` says what it made and what to type next; `check` reports the
same thing in words and under --json; `curl` prints a command that keeps the key a shell variable."""

from __future__ import annotations

import json
from pathlib import Path

from benchcard.project import Project

from ..helpers_cli import bc, one_line_error


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
