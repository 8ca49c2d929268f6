"""`benchcard check`: worked examples through the real scorer, seals, and variant byte-identity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.card.check import check, single_edit_mismatch, variant_problems
from benchcard.project import Project

from ..helpers_cli import as_a_user
from ..helpers_cli import exit_and_streams as _run
from ..helpers_project import AB_CARD, copy_project, make_ab_project


def test_check_lists_each_example_with_its_score_and_rules(project_dir: Path) -> None:
    code, out, _ = _run(project_dir, "check")
    assert code == 0, out
    assert "ok   six-step-chain v2 (probe) · v2 not sealed" in out
    assert "  ok   0.83 expect fail    Rejected — mentioned Pluto — the negative instruction" in out
    assert "step_4_no_pluto FAIL" in out
    assert "  ok   1.00 expect pass    Correct" in out
    assert out.rstrip().endswith("4 card(s) ok, 0 failed")


def test_a_scorer_that_accepts_a_rejected_example_fails_check(project_dir: Path) -> None:
    path = project_dir / "cards" / "one-word-sentiment.yaml"
    path.write_text(path.read_text().replace("output: negative.}", "output: negative}"))
    code, out, _ = _run(project_dir, "check", "one-word-sentiment")
    assert code == 1
    assert "FAIL 1.00 expect fail    Rejected — trailing period" in out
    # the line is the example's own, as for every other field (it named the file alone until 2026-12-08)
    rows = path.read_text().splitlines()
    line = 1 + rows.index("  - {label: Rejected — trailing period, expect: fail, output: negative}")
    assert (f"error: cards/one-word-sentiment.yaml:{line}: example 'Rejected — trailing period': expected a score "
            "below 1") in out


def test_a_scorer_that_rejects_the_correct_example_fails_check(project_dir: Path) -> None:
    path = project_dir / "cards" / "six-step-chain.yaml"
    path.write_text(path.read_text().replace("must_match: /CHECKSUM:\\s*6\\b/", "must_match: /CHECKSUM:\\s*7\\b/"))
    code, out, _ = _run(project_dir, "check", "six-step-chain")
    assert code == 1
    assert "expected a score of exactly 1, got 0.83 (failed: step_5_checksum_is_six)" in out


def test_check_verifies_seals(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    code, out, _ = _run(project, "seal", "tiny-ab")
    assert code == 0 and out.startswith("sealed tiny-ab v1 → keys/tiny-ab/v1.seal.json")
    code, out, _ = _run(project, "check")
    assert code == 0 and "v1 sealed sha256:" in out
    (project / "fixtures" / "tiny-ab" / "item-03.txt").write_text("changed\n")
    code, out, _ = _run(project, "check")
    assert code == 1
    assert "error: fixtures/tiny-ab/item-03.txt changed after sealing v1: sealed sha256:" in out
    assert out.count("sha256:") >= 2


def test_reseal_refused_on_cli(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    assert _run(project, "seal", "tiny-ab")[0] == 0
    card = project / "cards" / "tiny-ab.yaml"
    card.write_text(card.read_text().replace("repetitions: 3", "repetitions: 4"))
    code, _, err = _run(project, "seal", "tiny-ab")
    assert code == 1
    assert err.startswith("error: cards/tiny-ab.yaml: v1 is already sealed and its content differs")
    assert "make a new version" in err
    assert err.count("\n") == 1


def test_check_keeps_going_past_a_bad_card(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    (project / "cards" / "broken.yaml").write_text("id: broken\nversion: [1\n")
    code, out, _ = _run(project, "check")
    assert code == 1
    assert "error: cards/broken.yaml:3: malformed YAML" in out
    assert "ok   tiny-ab v1 (ab)" in out
    assert "1 card(s) ok, 1 failed" in out


@pytest.mark.parametrize("name", ["other.yml", "other.YAML"])
def test_a_card_file_check_would_not_read_is_named_not_passed_over(tmp_path: Path, name: str) -> None:
    """`check` read cards/*.yaml alone: a card saved as cards/other.yml (or .YAML) was passed over in silence,
    '1 card(s) ok, 0 failed', and never checked, sealed or run; it is now a failure naming the file."""
    project = make_ab_project(tmp_path)
    (project / "cards" / name).write_text(AB_CARD.replace("id: tiny-ab", "id: other"), encoding="utf-8")
    (project / "cards" / "README.md").write_text("notes on the cards\n", encoding="utf-8")  # not a card: left alone
    code, out, _ = _run(project, "check", "--no-rig")
    assert code == 1, out
    assert (f"FAIL cards/{name}\n  error: cards/{name}: a card file's name is <id>.yaml; check, seal and run never "
            "read this one: rename it (cards/other.yaml)") in out, out
    assert "ok   tiny-ab v1 (ab)" in out and "1 card(s) ok, 1 failed" in out and "README" not in out


def test_json_report(project_dir: Path) -> None:
    import json

    code, out, _ = _run(project_dir, "check", "emit-terminator", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    rules = data["cards"][0]["examples"][1]["rules"]
    assert rules["nothing_after_terminator"] is False


def test_variants_differ_only_in_the_declared_variable(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    report = check(Project(project))
    assert report.ok
    from benchcard.card.load import load_card

    card = load_card(project / "cards" / "tiny-ab.yaml", Project(project))
    assert variant_problems(card, "cards/tiny-ab.yaml") == []


def test_single_edit_detector() -> None:
    assert single_edit_mismatch(b'{"u":"ab<x>"}', b'{"u":"abHI<x>"}', b"", b"HI") is None
    assert single_edit_mismatch(b'{"t":0,"u":"a<x>"}', b'{"t":1,"u":"aHI<x>"}', b"", b"HI") == 5
    assert single_edit_mismatch(b'{"u":"a<x>"}', b'{"u":"aHI<x>!"}', b"", b"HI") is not None
    assert single_edit_mismatch(b"same", b"same", b"", b"") is None


def test_bad_inputs_are_one_line_on_the_cli(tmp_path: Path) -> None:
    cases = {
        "malformed YAML": AB_CARD.replace("repetitions: 3", "repetitions: [3"),
        "field 'params'": AB_CARD.replace("params: {max_tokens: 50, temperature: 0.7}\n", ""),
        "unknown scoring method": AB_CARD.replace("method: rules", "method: vibes"),
        "matches no file": AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/none/*.txt"),
        "leaves the project": AB_CARD.replace("fixtures/tiny-ab/*.txt", "../x/*.txt"),
        "field 'examples.0.expect': missing": AB_CARD.replace("output: red, expect: pass", "output: red"),
    }
    for i, (needle, text) in enumerate(cases.items()):
        project = make_ab_project(tmp_path / str(i), text)
        code, _, err = _run(project, "seal", "tiny-ab")
        assert code == 1, needle
        assert err.startswith("error: cards/tiny-ab.yaml"), err
        assert needle in err
        assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("content", "says"), [
    (b"", "holds no text (the file is empty or only whitespace)"),
    (b" \r\n\t\n", "holds no text (the file is empty or only whitespace)"),
    (b"\xef\xbb\xbfa ripe tomato\n", "starts with a byte-order mark (U+FEFF), which the model would receive"),
    # hostile21: UTF-16 with no byte-order mark is valid UTF-8, a NUL after every letter, and was sent as such
    ("a ripe tomato\n".encode("utf-16-le"), "holds a NUL character (U+0000) at character 2, which the model would "
     "receive and no text file holds (it reads as UTF-16); expected UTF-8 text: save it as UTF-8"),
    (b"a ripe\x00 tomato\n", "holds a NUL character (U+0000) at character 7, which the model would receive and no "
     "text file holds; expected UTF-8 text"),
])
def test_a_fixture_file_the_model_would_not_see_as_written_is_refused(tmp_path: Path, content: bytes,
                                                                      says: str) -> None:
    """An empty fixture, or one saved "UTF-8 with BOM": `check` names the file, `seal` refuses it in one line."""
    project = make_ab_project(tmp_path / "proj")
    (project / "fixtures" / "tiny-ab" / "item-03.txt").write_bytes(content)
    code, out, _ = _run(project, "check", "--no-rig")
    assert code == 1 and f"error: fixtures/tiny-ab/item-03.txt: fixture 'item-03' {says}" in out
    code, _, err = _run(project, "seal", "tiny-ab")
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"error: refusing to seal: fixtures/tiny-ab/item-03.txt: fixture 'item-03' {says}")


@pytest.mark.parametrize("block", ["Please, about {{fixture}}.\\n", "{{variant}}Please.\\n",
                                   "Please ({{fixture.question}}).\\n"])
def test_a_variant_holding_a_prompt_slot_is_refused_naming_the_file_field_and_slot(tmp_path: Path,
                                                                                   block: str) -> None:
    """A variant's text is inserted as written, never filled in: a slot in it would reach the model as braces (it
    was once filled, the fixture sent twice), so `check` and `seal` refuse it in one line."""
    project = make_ab_project(tmp_path / "proj", AB_CARD.replace('A: "Please.\\n"', f'A: "{block}"'))
    slot = block[block.index("{{"):block.index("}}") + 2]
    says = f"cards/tiny-ab.yaml: field 'variants.A': holds {slot}, which is filled only where the prompt holds it"
    code, out, _ = _run(project, "check", "--no-rig")
    assert code == 1 and f"error: {says}" in out and "at byte" not in out
    code, _, err = _run(project, "seal", "tiny-ab")
    assert code == 1 and err.count("\n") == 1 and err.startswith(f"error: refusing to seal: {says}")


def _bump(project: Path, history_v3: str) -> None:
    path = project / "cards" / "one-word-sentiment.yaml"
    text = path.read_text().replace("version: 3\n", "version: 4\n", 1)
    text = text.replace("I still have not had the refund I was promised.", "the refund never came.")
    text = text.replace("history:\n  - version: 3\n", "history:\n  - {version: 4, note: Shorter review.}\n"
                        f"  - version: 3\n{history_v3}", 1)
    path.write_text(text)


@pytest.mark.parametrize(
    ("history_v3", "message"),
    [
        # a new version must describe what the sealed old one was
        ("", "field 'history' v3 must carry 'prompt'"),
        # and a history entry cannot misstate it
        ("    prompt: {user: old}\n", "field 'history' v3 'prompt' is not what v3 sealed: sealed sha256:"),
    ],
    ids=["must-describe", "cannot-misstate"],
)
def test_a_new_version_states_the_sealed_old_one_truly(project_dir: Path, history_v3: str, message: str) -> None:
    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    _bump(project_dir, history_v3)
    code, out, _ = _run(project_dir, "check", "one-word-sentiment")
    assert code == 1
    assert message in out
    # the line is v3's entry, and the fix is said: until 2026-12-08 the line named the file alone and what to do
    # was left to docs/cards.md
    rows = (project_dir / "cards" / "one-word-sentiment.yaml").read_text().splitlines()
    assert f"error: cards/one-word-sentiment.yaml:{rows.index('  - version: 3') + 1}: {message}" in out
    if not history_v3:
        assert ("keep their meaning only if the card says what it was: add `prompt:` to that entry, written as v3 "
                "had it (checked against v3's seal)") in out


def test_a_sealed_version_without_a_history_entry_is_told_how_to_add_one(project_dir: Path) -> None:
    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    path = project_dir / "cards" / "one-word-sentiment.yaml"
    text = path.read_text().replace("version: 3\n", "version: 4\n", 1)
    path.write_text(text.replace("  - version: 3\n    date: 2026-08-10\n", "  - version: 4\n    date: 2026-08-10\n"))
    code, out, _ = _run(project_dir, "check", "one-word-sentiment")
    line = path.read_text().splitlines().index("history:") + 1
    assert code == 1 and (f"error: cards/one-word-sentiment.yaml:{line}: field 'history': v3 is sealed but has no "
                          "history entry (add one: `- {version: 3, note: …}`)") in out, out


def test_a_faithful_history_passes(project_dir: Path) -> None:
    import yaml

    assert _run(project_dir, "seal", "one-word-sentiment")[0] == 0
    old_prompt = yaml.safe_load((project_dir / "cards" / "one-word-sentiment.yaml").read_text())["prompt"]
    block = "    prompt:\n" + "".join(
        f"      {k}: {json.dumps(v)}\n" for k, v in old_prompt.items())
    _bump(project_dir, block)
    code, out, _ = _run(project_dir, "check", "one-word-sentiment")
    assert code == 0, out


def test_usage_errors_are_one_line_and_exit_1(tmp_path: Path) -> None:
    project = make_ab_project(tmp_path)
    for args, needle in [(["run"], "Missing argument 'CARD'"), (["bogus"], "No such command 'bogus'"),
                         (["run", "tiny-ab", "--concurrency", "0"], "Invalid value for '--concurrency'")]:
        code, _, err = _run(project, *args)
        assert code == 1, args
        assert err.startswith("error: ") and needle in err and err.count("\n") == 1


@pytest.mark.parametrize(("old", "new", "field", "expected"), [
    ("  alpha: 0.05", "  alpha: 0", "win.alpha", "expected a number between 0 and 0.5 (exclusive), got 0"),
    ("  alpha: 0.05", "  alpha: 0.5", "win.alpha", "expected a number between 0 and 0.5 (exclusive), got 0.5"),
    ("  alpha: 0.05", "  alpha: -0.1", "win.alpha", "expected a number between 0 and 0.5 (exclusive), got -0.1"),
    (", margin: 0.2", ", margin: 0", "win.all.1.margin", "expected a positive number"),
    (", margin: 0.2", ", margin: -0.1", "win.all.1.margin", "expected a positive number"),
    ("  equivalence_margin: 0.05", "  equivalence_margin: 0", "win.equivalence_margin",
     "expected a positive number (the smallest effect that matters on the first clause's metric), got 0"),
    ("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  min_effect: -0.01", "win.min_effect",
     "expected a number ≥ 0, got -0.01"),
    ("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  allow_failed: -1", "win.allow_failed",
     "expected a count of cells ≥ 0, got -1"),
])
def test_check_refuses_win_figures_that_would_silently_change_the_rule(
        tmp_path: Path, old: str, new: str, field: str, expected: str) -> None:
    assert old in AB_CARD
    text = AB_CARD.replace(old, new)
    project = make_ab_project(tmp_path, text)
    marker = new.strip().splitlines()[-1]
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if marker in ln)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 1
    assert f"cards/tiny-ab.yaml:{line}: field '{field}': {expected}" in out


def test_check_accepts_a_min_effect(tmp_path: Path) -> None:
    text = AB_CARD.replace("  equivalence_margin: 0.05", "  equivalence_margin: 0.05\n  min_effect: 0.1")
    code, out, _ = _run(make_ab_project(tmp_path, text), "check", "tiny-ab")
    assert code == 0, out




def test_check_says_a_sequential_cards_looks_and_the_seal_locks_them(tmp_path: Path) -> None:
    text = AB_CARD.replace("repetitions: 3", "sequential: {looks: 3, futility: true}\nrepetitions: 6")
    project = make_ab_project(tmp_path, text)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0, out
    assert ("  sequential: 3 looks, after repetitions 2, 4, 6 of 6 (16, 32, 48 calls); α spent hsd (γ = -6) (the "
            "default); may stop for futility") in out
    code, out, _ = _run(project, "check", "tiny-ab", "--json")
    assert json.loads(out)["cards"][0]["sequential"].startswith("3 looks, after repetitions 2, 4, 6")
    assert _run(project, "seal", "tiny-ab")[0] == 0
    card = project / "cards" / "tiny-ab.yaml"
    card.write_text(card.read_text().replace("futility: true", "futility: false"))
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 1
    assert "error: cards/tiny-ab.yaml (field 'sequential') changed after sealing v1" in out
    code, _, err = _run(project, "seal", "tiny-ab")
    assert code == 1 and "(cards/tiny-ab.yaml (field 'sequential') changed after sealing v1" in err


@pytest.mark.parametrize(("looks", "said"), [
    ("7", "expected 2 to 6 looks (one per block of repetitions at most, and at most 50), got 7"),
    ("0", "expected 2 to 6 looks (one per block of repetitions at most, and at most 50), got 0"),
    ("1", "expected 2 to 6 looks (one per block of repetitions at most, and at most 50), got 1"),
    ("-3", "expected 2 to 6 looks (one per block of repetitions at most, and at most 50), got -3"),
    ("2.5", "expected a whole number of looks (2 or more) or a list of whole repetition counts, got a number (2.5)"),
    ("[3, 4.5, 6]", "expected a whole number of looks (2 or more) or a list of whole repetition counts, got a list "
                    "([3, 4.5, 6])"),
    ("[3, 9]", "expected 2 or more increasing repetition counts ending at repetitions (6), got [3, 9]"),
])
def test_looks_that_do_not_fit_the_grid_are_one_line_at_check_and_seal(tmp_path: Path, looks: str,
                                                                       said: str) -> None:
    """6 repetitions: more looks than blocks, 0, 1, a negative count, a fraction, a look past the grid."""
    text = AB_CARD.replace("repetitions: 3", f"sequential: {{looks: {looks}}}\nrepetitions: 6")
    project = make_ab_project(tmp_path, text)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 1 and f"  error: cards/tiny-ab.yaml:18: field 'sequential.looks': {said}\n" in out, out
    code, out, err = _run(project, "seal", "tiny-ab")
    assert (code, out, err) == (1, "", f"error: cards/tiny-ab.yaml:18: field 'sequential.looks': {said}\n")
    assert not list((project / "keys").rglob("*.seal.json"))


def test_check_says_an_hsd_cards_gamma_and_the_seal_locks_it(tmp_path: Path) -> None:
    text = AB_CARD.replace("repetitions: 3", "sequential: {looks: [3, 6], spending: hsd, gamma: -2}\nrepetitions: 6")
    project = make_ab_project(tmp_path, text)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0, out
    assert ("  sequential: 2 looks, after repetitions 3, 6 of 6 (24, 48 calls); α spent hsd (γ = -2); never "
            "stops for futility") in out
    assert "sequential.looks" not in out  # every look may decide
    assert _run(project, "seal", "tiny-ab")[0] == 0
    card = project / "cards" / "tiny-ab.yaml"
    card.write_text(card.read_text().replace("gamma: -2", "gamma: -3"))
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 1
    assert "error: cards/tiny-ab.yaml (field 'sequential') changed after sealing v1" in out


@pytest.mark.parametrize(("block", "said"), [
    ("{looks: 3, futility: true}", "look 1 comes after 2 repetitions, before the 3 repetitions from which α is "
                                   "spent: it can stop the run only for futility, never for a win or a loss"),
    ("{looks: [2, 4, 6]}", "look 1 comes after 2 repetitions, before the 3 repetitions from which α is spent, and "
                           "futility is off: it can never stop the run (drop it: looks: [4, 6])"),
    ("{looks: [2, 6]}", "look 1 comes after 2 repetitions, before the 3 repetitions from which α is spent, and "
                        "futility is off: it can never stop the run (give more repetitions, or drop the sequential "
                        "block)"),
])
def test_check_says_a_look_before_any_alpha_is_spent_in_one_line(tmp_path: Path, block: str, said: str) -> None:
    text = AB_CARD.replace("repetitions: 3", f"sequential: {block}\nrepetitions: 6")
    project = make_ab_project(tmp_path, text)
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0, out
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if ln.startswith("sequential:"))
    [warning] = [ln for ln in out.splitlines() if "sequential.looks" in ln]
    assert warning == f"  warning: cards/tiny-ab.yaml:{line}: field 'sequential.looks': {said}"


def test_a_judge_scored_sequential_card_is_checked_and_sealed_with_its_looks(tmp_path: Path) -> None:
    """Each stretch is judged before its look (tests/run/test_judged_looks.py), so a judge card may be sequential."""
    from ..helpers_judge import CARD_ID, card_text, judge_project

    text = card_text(**{"repetitions: 2": "repetitions: 6\nsequential: {looks: [3, 6]}"})
    project = judge_project(tmp_path, seal=False, card_text=text)
    code, out, _ = _run(project.root, "check", CARD_ID)
    assert code == 0, out
    assert "sequential: 2 looks, after repetitions 3, 6 of 6 (18, 36 calls)" in out
    code, out, err = _run(project.root, "seal", CARD_ID)
    assert code == 0, (out, err)


def test_check_says_a_probes_look_before_any_alpha_can_never_stop_it(tmp_path: Path) -> None:
    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path, repetitions=20,
                               block="sequential: {looks: [2, 10, 20]}\ngate: {min_score: 0.5}\n")
    code, out, _ = _run(project.root, "check", "one-word-sentiment")
    assert code == 0, out
    assert ("field 'sequential.looks': look 1 comes after 2 repetitions, before the 3 repetitions from which α is "
            "spent, and a probe never stops for futility: it can never stop the run (drop it: looks: [10, 20])") in out



@pytest.mark.parametrize(("looks", "said"), [
    ("[1, 20]", "look 1 comes after 1 repetition, before the 3 repetitions from which α is spent, and a probe never "
                "stops for futility: it can never stop the run (give more repetitions, or drop the sequential block)"),
    ("[1, 2, 10, 20]", "looks 1, 2 come after 1, 2 repetitions, before the 3 repetitions from which α is spent, and "
                       "a probe never stops for futility: they can never stop the run (drop them: looks: [10, 20])"),
])
def test_check_words_a_probes_early_looks_by_their_number(tmp_path: Path, looks: str, said: str) -> None:
    """'look 1 comes after 1 repetitions', and two looks that 'it can never stop the run'."""
    from ..helpers_sequential import sequential_probe

    project = sequential_probe(tmp_path, repetitions=20,
                               block=f"sequential: {{looks: {looks}}}\ngate: {{min_score: 0.5}}\n")
    code, out, _ = _run(project.root, "check", "one-word-sentiment")
    assert code == 0 and f"field 'sequential.looks': {said}\n" in out, out


def test_check_judges_a_sealed_cards_looks_by_the_rule_its_seal_records(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from benchcard.stats import sequential as seq

    project = make_ab_project(tmp_path, AB_CARD.replace("repetitions: 3", "sequential: {looks: [2, 4, 6]}\n"
                                                                          "repetitions: 6"))
    code, out, err = _run(project, "seal", "tiny-ab")
    assert code == 0, (out, err)
    monkeypatch.setattr(seq, "MIN_REPETITIONS_TO_DECIDE", 1)  # a later benchcard spends α from the first look
    code, out, _ = _run(project, "check", "tiny-ab")
    assert code == 0, out
    assert ("; sealed with α spent from repetition 3, this benchcard uses 1: its runs follow the seal"
            in out)
    assert "look 1 comes after 2 repetitions, before the 3 repetitions from which α is spent" in out


def test_a_fields_keys_value_its_fixture_does_not_hold_word_for_word_is_refused(tmp_path: Path) -> None:
    """A key's `value` is copied verbatim from its fixture; one that is not (`2 March 2099` for `1 March 2024`) was
    checked and sealed, the answer no faithful extraction gives. Refused for a version not sealed yet; a warning
    for one sealed before this check (hostile audit, round 20)."""
    from ..helpers_cli import bc
    from ..helpers_run import copy_repo_card

    root = tmp_path / "proj"
    copy_repo_card(root, "bench-01")
    assert bc(root, "seal", "bench-01").exit_code == 0  # sealed as the repository's keys are: all verbatim
    key = root / "keys" / "bench-01" / "excerpt-01.json"
    said = ("keys/bench-01/excerpt-01.json:18: field 'effective_date': value '2 March 2099' is not in fixture "
            "'excerpt-01' word for word; a key's value is copied verbatim from its fixture (another form goes under "
            "accept)")
    key.write_text(key.read_text(encoding="utf-8").replace('"value": "1 March 2024"', '"value": "2 March 2099"'),
                   encoding="utf-8")
    (root / "keys" / "bench-01" / "v1.seal.json").unlink()
    checked = bc(root, "check", "bench-01")
    assert checked.exit_code == 1 and f"error: {said}" in checked.output, checked.output
    assert bc(root, "seal", "bench-01").exit_code == 1
    from benchcard.card.load import load_card
    from benchcard.card.seal import seal

    project = Project(root)
    seal(load_card(project.card_path("bench-01"), project), project)  # as a seal made before this check was
    checked = bc(root, "check", "bench-01")
    assert checked.exit_code == 0 and (f"warning: {said} (v1 was sealed before this check; fix it in v2)"
                                       in checked.output), checked.output


def test_an_unreadable_key_is_one_line_not_one_per_worked_example(tmp_path: Path) -> None:
    """Small audit (small21): `chmod 000 keys/<card>/<fixture>.json` made `check` print the right line, then 'its
    fixture has no answer key' for each of the card's ten worked examples, whose keys were all there."""
    root = copy_project(tmp_path / "proj", ("bench-01",))
    key = root / "keys" / "bench-01" / "excerpt-03.json"
    key.chmod(0o000)
    try:
        checked = as_a_user("-C", str(root), "check", "bench-01")
    finally:
        key.chmod(0o644)
    assert (checked.returncode, checked.stderr) == (1, "")
    assert checked.stdout.splitlines() == ["FAIL bench-01 v1 (ab) · v1 not sealed",
                                           "  error: keys/bench-01/excerpt-03.json: cannot read: Permission denied",
                                           "0 card(s) ok, 1 failed"]


@pytest.mark.parametrize(("row", "shown"), [
    ('{"id": "r2", "input": "A waste of an evening.", "label": "  "}', "'  '"),
    ('{"id": "r2", "input": "A waste of an evening.", "label": ["negative", "\\t"]}', "'\\t'"),
])
def test_a_blank_answer_in_a_key_is_refused_not_sealed(tmp_path: Path, row: str, shown: str) -> None:
    """A key's answer of spaces (a data file's cell `" "`) passed check and seal, and the exact scorer, trimming it
    as it trims the reply, scored an empty reply right and every real one wrong. Refused, naming the row and field;
    a version sealed before this check keeps its seal, with a warning."""
    from ..helpers_cli import bc

    assert bc(tmp_path, "init", "proj").exit_code == 0
    root = tmp_path / "proj"
    data = root / "fixtures" / "first-ab.jsonl"
    rows = data.read_text(encoding="utf-8").splitlines()
    data.write_text("\n".join([rows[0], row, *rows[2:]]) + "\n", encoding="utf-8")
    said = (f"fixtures/first-ab.jsonl:2: field 'label': the answer {shown} is blank, so an empty reply would be "
            "scored right; write the answer (an empty cell or a missing field is refused as such)")
    code, out, _ = _run(root, "check", "first-ab")
    assert code == 1 and f"  error: {said}\n" in out, out
    assert bc(root, "seal", "first-ab").exit_code == 1 and not (root / "keys" / "first-ab").exists()
    from benchcard.card.load import load_card
    from benchcard.card.seal import seal

    project = Project(root)
    seal(load_card(project.card_path("first-ab"), project), project)  # as a seal made before this check was
    code, out, _ = _run(root, "check", "first-ab")
    assert f"  warning: {said} (v1 was sealed before this check; fix it in v2)" in out, out


def test_a_blank_answer_is_taken_where_the_scorer_compares_it_as_written(tmp_path: Path) -> None:
    """Review (review23b): the blank-answer check refused `" "` under `trim: false` too, where the exact scorer
    compares the reply as written, so a card whose answer is a space (a reply of one space scored right, an empty
    one wrong) passed check before and was refused after."""
    from ..helpers_cli import bc

    assert bc(tmp_path, "init", "proj").exit_code == 0
    root = tmp_path / "proj"
    card = root / "cards" / "first-ab.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("case_sensitive: false}",
                                                             "case_sensitive: false, trim: false}"), encoding="utf-8")
    data = root / "fixtures" / "first-ab.jsonl"
    rows = data.read_text(encoding="utf-8").splitlines()
    blank = '{"id": "r2", "input": "A waste of an evening.", "label": ["negative", " "]}'
    data.write_text("\n".join([rows[0], blank, *rows[2:]]) + "\n", encoding="utf-8")
    code, out, _ = _run(root, "check", "first-ab")
    assert code == 0 and "blank" not in out and "error" not in out, out
