"""The card reader: the published cards read as written, and every kind of bad input is one clear line naming
the file, the line, the field and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.card.reader import read_card
from benchcard.card.seal import seal
from benchcard.errors import CardError
from benchcard.project import Project

from ..helpers_cli import bc, exit_and_streams, one_line_error
from ..helpers_digits import MANY_DIGITS, NOT_NUMBERS, THIRTY_DIGITS
from ..helpers_project import AB_CARD, REPO, make_ab_project


def test_probe_metadata_and_history() -> None:
    card = load_card(REPO / "cards" / "one-word-sentiment.yaml", Project(REPO))
    assert (card.version, card.category, card.title) == (3, "Instruction following",
                                                         "Answer with exactly one word, and nothing else")
    v2 = next(h for h in card.history if h.version == 2)
    assert "Arrived two days late and the box was crushed" in v2.changes["prompt"]["user"]
    assert v2.published_runs[0]["model"] == "nvidia/nemotron-3-nano-30b-a3b:free"
    v3 = next(h for h in card.history if h.version == 3)
    assert "v2 runs remain attached to v2" in v3.note
    chain = load_card(REPO / "cards" / "six-step-chain.yaml", Project(REPO))
    assert "gpt-5-mini used 64 reasoning tokens" in next(h for h in chain.history if h.version == 2).note


def _write(tmp_path: Path, text: str, name: str = "tiny-ab") -> Path:
    project = make_ab_project(tmp_path)
    path = project / "cards" / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str) -> str:
    path = _write(tmp_path, text)
    with pytest.raises(CardError) as info:
        load_card(path, Project(tmp_path))
    message = str(info.value)
    assert "\n" not in message
    return message


def test_malformed_yaml_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("repetitions: 3", "repetitions: [3"))
    assert message.startswith("cards/tiny-ab.yaml:")
    assert "malformed YAML" in message
    line = int(message.split(":")[1])
    assert 18 <= line <= 21


def test_missing_field(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("params: {max_tokens: 50, temperature: 0.7}\n", ""))
    assert message == "cards/tiny-ab.yaml: field 'params': missing; expected a mapping such as " \
                      "{max_tokens: 1000, temperature: 0}"


def test_mistyped_field(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("max_tokens: 50", "max_tokens: fifty"))
    assert message == "cards/tiny-ab.yaml:9: field 'params.max_tokens': expected a whole number, got text ('fifty')"


def test_misspelt_field(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("repetitions: 3", "repetition: 3"))
    assert message.startswith("cards/tiny-ab.yaml:18: field 'repetition': unknown field")


def test_unknown_scoring_method(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("method: rules", "method: vibes"))
    assert message == ("cards/tiny-ab.yaml:20: field 'scoring.method': unknown scoring method 'vibes'; "
                       "expected one of exact, rules, fields, judge")


def test_fixture_glob_matching_nothing(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("fixtures/tiny-ab/*.txt", "fixtures/tiny-ab/*.md"))
    assert message == "cards/tiny-ab.yaml:17: field 'fixtures': the glob 'fixtures/tiny-ab/*.md' matches no file"


@pytest.mark.parametrize("path", ["../outside/*.txt", "/etc/*.conf", "fixtures/../../*.txt"])
def test_path_leaving_the_project(tmp_path: Path, path: str) -> None:
    message = _error(tmp_path, AB_CARD.replace("fixtures/tiny-ab/*.txt", path))
    assert "field 'fixtures'" in message
    assert "leaves the project" in message or "must be relative" in message


def test_example_without_expectation(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("output: red, expect: pass", "output: red"))
    assert message.startswith("cards/tiny-ab.yaml:")
    assert "field 'examples.0.expect': missing; expected pass, fail or a mapping" in message


@pytest.mark.parametrize(("written", "got"), [(".nan", "nan"), ("-.inf", "-inf"), ("1.0e+400", "inf")])
def test_an_example_expecting_no_finite_metric_is_refused(tmp_path: Path, written: str, got: str) -> None:
    """`expect: {score: .nan}` passed whatever the scorer gave (`abs(1 - nan) > 1e-9` is false), and so did
    `1.0e+400`, which YAML reads as inf, fail whatever it gave: each is now the example's one line."""
    text = AB_CARD.replace("output: red, expect: pass", f"output: red, expect: {{score: {written}}}")
    message = _error(tmp_path, text)
    assert message.startswith("cards/tiny-ab.yaml:"), message
    assert f"field 'examples.0.expect.score': expected a finite number, got a number ({got}" in message


def test_an_examples_metrics_are_met_only_by_numbers_near_them(tmp_path: Path) -> None:
    """What `check` prints for an example whose expected metric the scorer misses, or that the scorer never
    gives (NaN meets nothing: the comparison is written so that it cannot pass vacuously)."""
    text = AB_CARD.replace("output: red, expect: pass", "output: red, expect: {score: 1, rule.says_red: 0.5, x: 1}")
    code, out, _ = exit_and_streams(make_ab_project(tmp_path, text), "check", "tiny-ab")
    assert code == 1
    line = 1 + next(n for n, row in enumerate(text.splitlines()) if "label: Correct" in row)
    assert (f"error: cards/tiny-ab.yaml:{line}: example 'Correct': rule.says_red expected 0.5, got 1; x expected 1, "
            "got nan") in out


@pytest.mark.parametrize(("written", "said"), [
    ("stop: [1]", "expected a list of non-empty texts (an empty one stops every reply at once), got a number (1) "
                  "at item 0"),
    ('stop: ["###", ""]', "expected a list of non-empty texts (an empty one stops every reply at once), got text "
                          "('') at item 1"),
    ("seed: 9223372036854775808", "expected a whole number of 64 bits (-2**63 to 2**63 - 1, as an API reads a "
                                  "seed), got 9,223,372,036,854,775,808"),
])
def test_a_parameter_no_endpoint_takes_is_refused_and_a_card_sealed_with_it_still_reads(
        tmp_path: Path, written: str, said: str) -> None:
    """`stop: [1]` passed check and failed every cell on the local model ('int' object has no attribute 'encode');
    `stop: [""]` stopped every reply before its first word, each scored as a wrong answer; a seed past 64 bits is
    refused by every API. Each is `check`'s one line; a version sealed with one (before 2026-12-07) still reads."""
    text = AB_CARD.replace("max_tokens: 50", f"max_tokens: 50, {written}")
    assert text != AB_CARD
    project = make_ab_project(tmp_path, text)
    code, out, _ = exit_and_streams(project, "check", "tiny-ab")
    assert code == 1 and f"  error: cards/tiny-ab.yaml:9: field 'params.{written[:4]}': {said}" in out, out
    path = project / "cards" / "tiny-ab.yaml"
    seal(read_card(text, "cards/tiny-ab.yaml", Project(project), path), Project(project))
    card = load_card(path, Project(project))
    assert card.later_checks == (f"cards/tiny-ab.yaml:9: field 'params.{written[:4]}': {said}",)


@pytest.mark.parametrize(("old", "new", "field"), [
    ("  alpha: 0.05\n", "  alpha: 0.05\n  min_effect: .inf\n", "win.min_effect"),
    ("{metric: score, test: rises}", "{metric: score, test: holds, fixture: item-01, equals: .nan}",
     "win.all.0.equals"),
])
def test_a_nan_or_an_infinity_is_refused_at_its_line(tmp_path: Path, old: str, new: str, field: str) -> None:
    """`min_effect: .inf` and `equals: .nan` passed the reader and were caught only by the seal's canonical JSON,
    in a line with no line number under a report headed 'FAIL tiny-ab v1 (ab) · ' (its status left blank)."""
    assert old in AB_CARD
    text = AB_CARD.replace(old, new)
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if f"{field.split('.')[-1]}: " in ln)
    code, out, _ = exit_and_streams(make_ab_project(tmp_path, text), "check", "tiny-ab")
    assert code == 1 and out.startswith("FAIL cards/tiny-ab.yaml\n"), out
    assert f"  error: cards/tiny-ab.yaml:{line}: field '{field}': expected " in out
    assert "(not a finite number)" in out


@pytest.mark.parametrize(("written", "hint"), [
    ("1.10", "got a number (1.1); YAML reads it unquoted as the number 1.1: quote the text as written"),
    ("no", 'got False; YAML 1.1 reads yes, no, on, off, true and false unquoted as true/false, not as text: quote '
           'the word as written ("no", "off")'),
])
def test_a_fixture_id_yaml_reads_as_another_type_is_told_how_to_quote_it(tmp_path: Path, written: str,
                                                                        hint: str) -> None:
    """A data file's id 1.10 or no is text there; in the card, unquoted, YAML reads `fixture: 1.10` as 1.1 and
    `fixture: no` as false, and the line said only 'expected a fixture id, got a number (1.1)'."""
    text = AB_CARD.replace("{metric: score, test: rises}", f"{{metric: score, test: holds, fixture: {written}}}")
    message = _error(tmp_path, text)
    assert f"field 'win.all.0.fixture': expected a fixture id as text, {hint}" in message, message


def test_guard_without_margin(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace(", margin: 0.2", ""))
    assert "field 'win.all.1.margin'" in message
    assert "needs a margin" in message


def test_unknown_metric_in_win_rule(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("metric: score,", "metric: recall,"))
    assert "field 'win.all.0.metric': unknown metric 'recall'" in message


def test_bad_pattern_names_the_rule(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace(r"/^\s*red\s*$/i", "/(red/i"))
    assert "rule 'says_red'" in message
    assert "does not compile" in message


def test_id_must_match_file_name(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("id: tiny-ab", "id: other"))
    assert "must match the file name" in message


def test_ab_prompt_needs_both_slots(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("{{variant}}", ""))
    assert message.endswith("field 'prompt.user': an ab prompt must contain {{variant}} exactly once")
    # a slot misspelt, or given twice, is named: the line says what to change
    assert _error(tmp_path, AB_CARD.replace("{{variant}}", "{{varaint}}")).endswith(
        "an ab prompt must contain {{variant}} exactly once (it holds {{varaint}}: misspelt?)")
    assert _error(tmp_path, AB_CARD.replace("{{fixture}}", "{{fixture}} {{fixture}}")).endswith(
        "an ab prompt must contain {{fixture}} exactly once (it holds it 2 times)")


@pytest.mark.parametrize(("part", "slot"), [("user", "{{label}}"), ("user", "{{ variant }}"), ("user", "{{key}}"),
                                           ("system", "{{fixture.id}}"), ("system", "{{Fixture}}")])
def test_a_slot_no_value_fills_is_refused_not_sent_as_braces(tmp_path: Path, part: str, slot: str) -> None:
    """`{{label}}` (a fixture's key column), a slot written with spaces or another case: `check` passed them and
    every request carried the braces to the model, where the author meant a value (hostile audit, round 20)."""
    text = AB_CARD.replace("Name the colour.", f"Name the colour. {slot}") if part == "user" else AB_CARD.replace(
        "system: Answer with one word.", f"system: Answer with one word. {slot}")
    line = 12 if part == "user" else 11
    assert _error(tmp_path, text) == (
        f"cards/tiny-ab.yaml:{line}: field 'prompt.{part}': holds {slot}, which no slot of this card fills: it "
        f"would reach the model as written; expected only {{{{fixture}}}}, {{{{variant}}}} (write \\{slot} to send "
        f"{slot} as text)")


def test_an_empty_variant_name_is_said_as_such(tmp_path: Path) -> None:
    """`"": text` under variants: check said each request differed from the baseline's outside the declared
    variable, at some byte, not that the name was empty (hostile audit, round 20)."""
    text = AB_CARD.replace('variants: {baseline: "", A: "Please.\\n"}', 'variants: {baseline: "", "": "Please.\\n"}')
    assert text != AB_CARD
    assert _error(tmp_path, text) == ("cards/tiny-ab.yaml:15: field 'variants': a variant's name is empty; expected a "
                                      "name such as A or with_rubric")


@pytest.mark.parametrize(("entry", "said"), [
    ("{version: 7, note: later}", "expected a version from 1 to the current 1, got 7"),
    ("{version: 0, note: before}", "expected a version from 1 to the current 1, got 0"),
    ("{version: 1, note: again}", "v1 has an entry already; keep one entry per version"),
])
def test_a_history_entry_of_no_version_or_of_one_twice_is_refused(tmp_path: Path, entry: str, said: str) -> None:
    """Entries for a version the card never had, or two for one version (the checks read one of them, the last,
    silently), were taken (hostile audit, round 20)."""
    text = AB_CARD.replace("  - {version: 1, note: Initial version.}\n",
                           f"  - {{version: 1, note: Initial version.}}\n  - {entry}\n")
    assert text != AB_CARD
    line = AB_CARD.count("\n") + 1
    assert _error(tmp_path, text) == f"cards/tiny-ab.yaml:{line}: field 'history.1.version': {said}"


def test_a_card_sealed_with_a_history_entry_twice_still_reads_with_a_warning(tmp_path: Path) -> None:
    """The history check came after cards were sealed: a version sealed with two entries for one version (as
    benchcard took it then) kept no verdict, resume or status, refused at every load. It reads as sealed now, and
    `check` warns; an unsealed one is refused (above)."""
    text = AB_CARD.replace("  - {version: 1, note: Initial version.}\n",
                           "  - {version: 1, note: Initial version.}\n  - {version: 1, note: again}\n")
    path = _write(tmp_path, text)
    project = Project(tmp_path)
    said = (f"cards/tiny-ab.yaml:{AB_CARD.count(chr(10)) + 1}: field 'history.1.version': v1 has an entry already; "
            "keep one entry per version")
    seal(read_card(text, "cards/tiny-ab.yaml", project, path), project)  # as benchcard sealed it before the check
    assert load_card(path, project).later_checks == (said,)
    again = bc(tmp_path, "check", "tiny-ab")
    assert again.exit_code == 0 and f"  warning: {said} (v1 was sealed before this check" in again.stdout, \
        again.output


def test_unknown_key_in_an_example_is_an_error(tmp_path: Path) -> None:
    """An unquoted comma in a flow mapping splits an output into a stray key: that must not pass silently."""
    message = _error(tmp_path, AB_CARD.replace('output: "red, because"', "output: red, because"))
    assert "field 'examples.1.because'" in message
    assert "unknown field" in message


def test_every_card_output_is_a_whole_seed_line() -> None:
    card = load_card(REPO / "cards" / "one-word-sentiment.yaml", Project(REPO))
    assert card.examples[3].output == "negative — broken goods, no support reply and no refund."




SEQ = "sequential: {looks: 3, spending: obrien-fleming, futility: true}\n"


def _one_variant(text: str) -> str:
    return text.replace("repetitions: 3", "repetitions: 6")


def test_a_sequential_block_is_read_with_its_looks(tmp_path: Path) -> None:
    path = _write(tmp_path, _one_variant(AB_CARD).replace("repetitions:", SEQ + "repetitions:"))
    card = load_card(path, Project(tmp_path))
    assert card.sequential is not None
    assert (card.sequential.looks, card.sequential.spending, card.sequential.futility) == ((2, 4, 6),
                                                                                            "obrien-fleming", True)
    default = _write(tmp_path, _one_variant(AB_CARD).replace("repetitions:", "sequential: {looks: 3}\nrepetitions:"))
    card = load_card(default, Project(tmp_path))  # no spending named: the seal's rules say which (card.schedule)
    assert card.sequential is not None and (card.sequential.spending, card.sequential.gamma) == (None, None)
    listed = _write(tmp_path, _one_variant(AB_CARD).replace("repetitions:", "sequential: {looks: [3, 6]}\n"
                                                                            "repetitions:"))
    card = load_card(listed, Project(tmp_path))
    assert card.sequential is not None and card.sequential.looks == (3, 6)
    assert (card.sequential.spending, card.sequential.futility) == (None, False)
    assert "sequential" in card.protocol()  # sealed: changing it is a new version
    hsd = _write(tmp_path, _one_variant(AB_CARD).replace("repetitions:", "sequential: {looks: [3, 6], spending: "
                                                                         "hsd, gamma: -2}\nrepetitions:"))
    card = load_card(hsd, Project(tmp_path))
    assert card.sequential is not None
    assert (card.sequential.spending, card.sequential.gamma) == ("hsd", -2.0)


@pytest.mark.parametrize(("block", "expected"), [
    ("sequential: {looks: 7}", "field 'sequential.looks': expected 2 to 6 looks"),
    ("sequential: {looks: 6}", "field 'sequential.looks': the first look comes after 1 repetition(s)"),
    ("sequential: {looks: [2, 5]}", "field 'sequential.looks': expected 2 or more increasing repetition counts "
                                    "ending at repetitions (6), got [2, 5]"),
    ("sequential: {looks: [4, 2, 6]}", "field 'sequential.looks': expected 2 or more increasing"),
    ("sequential: {looks: yes}", "field 'sequential.looks': expected a number of looks or a list"),
    # a number where a whole one is meant: 'expected a number …, got a number (2.5)' read as no reason at all
    ("sequential: {looks: 2.5}", "field 'sequential.looks': expected a whole number of looks (2 or more) or a list "
                                 "of whole repetition counts, got a number (2.5)"),
    ("sequential: {looks: 3.0}", "field 'sequential.looks': expected a whole number of looks (2 or more)"),
    ("sequential: {looks: [3.5, 6]}", "field 'sequential.looks': expected a whole number of looks (2 or more) or a "
                                      "list of whole repetition counts, got a list ([3.5, 6])"),
    ("sequential: {looks: [3, yes, 6]}", "field 'sequential.looks': expected a whole number of looks"),
    ("sequential: {spending: pocock}", "field 'sequential.looks': missing"),
    ("sequential: {looks: 3, spending: haybittle}", "field 'sequential.spending': expected obrien-fleming, "
                                                    "pocock or hsd, got 'haybittle'"),
    ("sequential: {looks: 3, spending: hsd}", "field 'sequential.gamma': missing; expected Hwang–Shih–DeCani's γ, "
                                              "a number from -20 to 20 other than 0 (-4 spends like obrien-fleming"),
    ("sequential: {looks: 3, spending: hsd, gamma: 0}", "field 'sequential.gamma': expected Hwang–Shih–DeCani's γ, "
                                                        "a number from -20 to 20 other than 0 (-4 spends like "
                                                        "obrien-fleming, 1 like pocock), got 0"),
    ("sequential: {looks: 3, spending: hsd, gamma: -25}", "field 'sequential.gamma': expected Hwang–Shih–DeCani's"),
    ("sequential: {looks: 3, spending: hsd, gamma: steep}", "field 'sequential.gamma': expected Hwang–Shih–DeCani's"
                                                            " γ, a number from -20 to 20 other than 0 (-4 spends like "
                                                            "obrien-fleming, 1 like pocock), got text ('steep')"),
    ("sequential: {looks: 3, gamma: -4}", "field 'sequential.gamma': a gamma needs spending: hsd written beside it"),
    ("sequential: {looks: 3, spending: pocock, gamma: -4}", "field 'sequential.gamma': only spending: hsd takes a "
                                                            "gamma (this card spends pocock)"),
    ("sequential: {looks: 3, futility: maybe}", "field 'sequential.futility': expected true or false"),
    ("sequential: {looks: 3, peek: true}", "field 'sequential.peek': unknown field"),
    ("sequential: 3", "field 'sequential': expected a mapping such as {looks: 3"),
])
def test_a_bad_sequential_block_is_one_line_naming_its_field(tmp_path: Path, block: str, expected: str) -> None:
    message = _error(tmp_path, _one_variant(AB_CARD).replace("repetitions:", block + "\nrepetitions:"))
    assert message.startswith("cards/tiny-ab.yaml:") and expected in message, message


def test_a_sequential_card_compares_one_variant(tmp_path: Path) -> None:
    text = _one_variant(AB_CARD).replace('A: "Please.\\n"}', 'A: "Please.\\n", B: "Kindly.\\n"}')
    message = _error(tmp_path, text.replace("repetitions:", SEQ + "repetitions:"))
    assert "field 'sequential': a sequential card compares one variant with its baseline; this one has 2" in message


def test_a_sequential_probe_needs_a_gate(tmp_path: Path) -> None:
    text = (REPO / "cards" / "one-word-sentiment.yaml").read_text(encoding="utf-8")
    (tmp_path / "cards").mkdir()
    path = tmp_path / "cards" / "one-word-sentiment.yaml"
    path.write_text(text.replace("repetitions: 1", "repetitions: 20\nsequential: {looks: 4}"), encoding="utf-8")
    with pytest.raises(CardError, match=r"field 'sequential': a sequential probe stops when its gate is decided"):
        load_card(path, Project(tmp_path))
    path.write_text(text.replace("repetitions: 1", "repetitions: 20\nsequential: {looks: 4}\n"
                                                   "gate: {min_score: 0.8, alpha: 0.6}"), encoding="utf-8")
    with pytest.raises(CardError, match=r"field 'gate.alpha': expected a number between 0 and 0.5"):
        load_card(path, Project(tmp_path))
    path.write_text(text.replace("repetitions: 1", "repetitions: 20\nsequential: {looks: 4}\n"
                                                   "gate: {min_score: 0.8, alpha: 0.1}"), encoding="utf-8")
    card = load_card(path, Project(tmp_path))
    assert card.sequential is not None and card.sequential.looks == (5, 10, 15, 20)
    assert (card.gate, card.gate_alpha) == (0.8, 0.1)


def test_a_sequential_probe_may_not_ask_for_futility_and_one_sealed_with_it_still_reads(tmp_path: Path) -> None:
    """A probe stops only on its gate, never for futility: `futility: true` on one was taken and `check` said the
    probe "may stop for futility". Refused in one line at `check` and `seal`; a probe sealed with it before the check
    (the reader alone, then `seal.seal`, as benchcard sealed it then) still reads, with `check`'s warning."""
    text = (REPO / "cards" / "one-word-sentiment.yaml").read_text(encoding="utf-8")
    (tmp_path / "cards").mkdir()
    path = tmp_path / "cards" / "one-word-sentiment.yaml"
    block = "sequential: {looks: 4, futility: true}\ngate: {min_score: 0.5}"
    path.write_text(text.replace("repetitions: 1", f"repetitions: 20\n{block}"), encoding="utf-8")
    line = 1 + next(i for i, ln in enumerate(path.read_text(encoding="utf-8").splitlines())
                    if ln.startswith("sequential:"))
    said = (f"cards/one-word-sentiment.yaml:{line}: field 'sequential.futility': a probe stops only once its gate is "
            "passed or failed, never for futility (futility is an ab card's: drop it)")
    checked = bc(tmp_path, "check", "one-word-sentiment")
    assert checked.exit_code == 1 and f"  error: {said}" in checked.stdout, checked.output
    assert "may stop for futility" not in checked.stdout
    assert one_line_error(bc(tmp_path, "seal", "one-word-sentiment")) == f"error: {said}"
    assert not list(tmp_path.glob("keys/*/*.seal.json"))
    project = Project(tmp_path)
    seal(read_card(path.read_text(encoding="utf-8"), "cards/one-word-sentiment.yaml", project, path), project)
    card = load_card(path, project)
    assert card.sequential is not None and card.later_checks == (said,)
    again = bc(tmp_path, "check", "one-word-sentiment")
    assert again.exit_code == 0 and f"  warning: {said} (v3 was sealed before this check" in again.stdout, \
        again.output


def test_a_probes_gate_at_0_is_refused_and_one_sealed_with_it_still_reads(tmp_path: Path) -> None:
    """`gate: {min_score: 0}` (or -0.0) was taken: a CI gate that passes every run, every answer wrong. Refused in
    one line at `check` and `seal`; a probe sealed with it before the check still reads, with `check`'s warning."""
    text = (REPO / "cards" / "one-word-sentiment.yaml").read_text(encoding="utf-8")
    (tmp_path / "cards").mkdir()
    path = tmp_path / "cards" / "one-word-sentiment.yaml"
    path.write_text(text + "gate: {min_score: 0}\n", encoding="utf-8")
    line = len(path.read_text(encoding="utf-8").splitlines())
    said = (f"cards/one-word-sentiment.yaml:{line}: field 'gate.min_score': a gate at 0 passes every run, every "
            "answer wrong; expected a number above 0, up to 1")
    checked = bc(tmp_path, "check", "one-word-sentiment")
    assert checked.exit_code == 1 and f"  error: {said}" in checked.stdout, checked.output
    assert one_line_error(bc(tmp_path, "seal", "one-word-sentiment")) == f"error: {said}"
    project = Project(tmp_path)
    seal(read_card(path.read_text(encoding="utf-8"), "cards/one-word-sentiment.yaml", project, path), project)
    card = load_card(path, project)
    assert card.gate == 0 and card.later_checks == (said,)
    again = bc(tmp_path, "check", "one-word-sentiment")
    assert again.exit_code == 0 and f"  warning: {said} (v3 was sealed before this check" in again.stdout, \
        again.output


@pytest.mark.parametrize(("clause", "field", "why"), [
    ("{metric: score, test: rises, margin: 0.1}", "win.all.0.margin",
     "only a not_rises or not_falls guard takes a margin (the smallest gap worth a win is win.min_effect)"),
    ("{metric: score, test: rises, equals: 0}", "win.all.0.equals",
     "only a holds clause takes equals (a rises clause compares the two arms' means)"),
])
def test_a_clause_field_its_test_never_reads_is_refused_not_ignored(tmp_path: Path, clause: str, field: str,
                                                                      why: str) -> None:
    # `rises` with a margin sealed and ran as a plain `rises`: the margin was read by nothing
    message = _error(tmp_path, AB_CARD.replace("{metric: score, test: rises}", clause))
    assert message == f"cards/tiny-ab.yaml:25: field '{field}': {why}"


@pytest.mark.parametrize(("field", "value", "says"), [
    ("repetitions: 3", "repetitions: 1000000000", "field 'repetitions': 2 variant(s) × 4 fixture(s) × "
     "1,000,000,000 repetition(s) is 8,000,000,000 calls, more than the 1,000,000 a run may plan (its grid is drawn "
     "and sealed whole before the first call); expected at most 125,000 repetitions"),
    ("repetitions: 3", "repetitions: 2000\nsequential: {looks: 1000}", "field 'sequential.looks': expected 2 to 50 "
     "looks (one per block of repetitions at most, and at most 50), got 1,000"),
    ("max_tokens: 50", "max_tokens: 100000000000000000000", "field 'params.max_tokens': expected a positive "
     "integer of at most 1,000,000 (more than any model answers), got 100,000,000,000,000,000,000"),
])
def test_a_design_too_large_to_plan_is_one_line_before_anything_is_drawn(tmp_path: Path, field: str, value: str,
                                                                        says: str) -> None:
    """A grid of a billion repetitions once sealed (and would hang `run` planning it): `check`, `seal`, `plan` and
    `run` refuse it in one line naming the file, the field, the calls it would make and the limit."""
    project = make_ab_project(tmp_path / "proj", AB_CARD.replace(field, value))
    for command in (["check", "--no-rig"], ["seal", "tiny-ab"], ["plan", "tiny-ab"], ["run", "tiny-ab"]):
        code, out, err = exit_and_streams(project, *command)
        assert code == 1 and "cards/tiny-ab.yaml:" in out + err and says in out + err, (command, out, err)
        assert "Traceback" not in out + err



def test_a_judged_grid_counts_the_judge_calls_against_the_cap(tmp_path: Path) -> None:
    """A judge card multiplies the calls: 2 × 3 × 50,000 cells judged 25 times each sealed as 300,000 calls while
    the run would make 7,800,000 (its judge requests, too, are written whole). Every command refuses it in one line
    naming the field and every figure; the most it names fits."""
    from ..helpers_judge import CARD_ID, judge_project

    project = judge_project(tmp_path / "proj", seal=False, repetitions=50_000, k=25)
    says = (f"cards/{CARD_ID}.yaml:16: field 'repetitions': 2 variant(s) × 3 fixture(s) × 50,000 repetition(s) is "
            "300,000 calls and 7,500,000 judge calls (25 per output), 7,800,000 in all, more than the 1,000,000 a run "
            "may plan (its grid is drawn and sealed whole before the first call); expected at most 6,410 repetitions "
            "(or fewer than 25 judgements per output)")
    for command in (["check", "--no-rig"], ["seal", CARD_ID], ["plan", CARD_ID], ["run", CARD_ID]):
        code, out, err = exit_and_streams(project.root, *command)
        assert code == 1 and says in out + err, (command, out, err)
        assert "Traceback" not in out + err
    # The most the line names fits and one more does not, shown on 200 fixtures (400,000 cells, 10,400,000 calls
    # with the judge's): `check` of the design that fits then judges its reach on the 200 × 10 cut, where 3 × 6,410
    # made `smallest_change` draw 6 and 9 fixtures × 6,410 repetitions whole (4.7 GB, about 26 CPU-s).
    wide = judge_project(tmp_path / "wide", seal=False, fixtures=200, repetitions=1_000, k=25)
    code, out, err = exit_and_streams(wide.root, "check", "--no-rig")
    assert code == 1 and ("2 variant(s) × 200 fixture(s) × 1,000 repetition(s) is 400,000 calls and 10,000,000 judge "
                          "calls (25 per output), 10,400,000 in all, more than the 1,000,000 a run may plan (its grid "
                          "is drawn and sealed whole before the first call); expected at most 96 repetitions (or "
                          "fewer than 25 judgements per output)") in out + err, (out, err)
    over = judge_project(tmp_path / "over", seal=False, fixtures=200, repetitions=97, k=25)
    code, out, err = exit_and_streams(over.root, "check", "--no-rig")
    assert code == 1 and "expected at most 96 repetitions" in out + err, (out, err)
    fits = judge_project(tmp_path / "fits", seal=False, fixtures=200, repetitions=96, k=25)
    code, out, err = exit_and_streams(fits.root, "check", "--no-rig")
    assert code == 0 and "judge calls" not in out + err, (out, err)


@pytest.mark.parametrize(("model", "said"), [
    ("test/\u202eledom", "holds a bidirectional control character (U+202E RIGHT-TO-LEFT OVERRIDE)"),
    ("test/mo\u200bdel", "holds an invisible or control character (U+200B ZERO WIDTH SPACE)"),
    ("test/model ", "begins or ends with a space"),
])
def test_a_rig_model_that_does_not_read_as_written_is_refused_as_model_is(tmp_path: Path, model: str,
                                                                          said: str) -> None:
    """Hostile audit: `--model` refused a model name with a right-to-left override, the card's rig took it, and
    its rig line `test/<RLO>ledom · fake` read `test/ekaf · model` on every page, ledger row and verdict."""
    escaped = model.encode("unicode_escape").decode("ascii")
    root = make_ab_project(tmp_path / "p", AB_CARD.replace("model: test/model", f'model: "{escaped}"'))
    for command in (("check",), ("seal", "tiny-ab")):
        code, out, err = exit_and_streams(root, *command)
        text = out + err  # check reports each card on stdout, seal its one line on stderr
        assert code == 1 and "Traceback" not in text, (command, text)
        assert f"cards/tiny-ab.yaml:8: field 'rig.model': model name {model!r}" in text and said in text, text
    assert not list((root / "keys").glob("*/*.seal.json"))


@pytest.mark.parametrize(("rig", "field", "what"), [
    ('rig: {provider: openrouter, model: "", effort: null}', "rig.model", "a model name"),
    ('rig: {provider: "", model: test/model, effort: null}', "rig.provider", "a provider name"),
])
def test_a_rig_model_or_provider_left_empty_is_refused_before_it_is_sealed(tmp_path: Path, rig: str, field: str,
                                                                          what: str) -> None:
    """`model: ""` (a placeholder to fill in later) was checked ok and sealed: the run then asked the endpoint for a
    model named '' and every page, ledger row and verdict named the rig ` · openrouter`; `provider: ""` passed
    `check --no-rig` and was sealed too. Both are refused where the card is read, as `--model ""` is."""
    root = make_ab_project(tmp_path / "p", AB_CARD.replace("rig: {provider: openrouter, model: test/model, "
                                                           "effort: null}", rig))
    for command in (("check", "--no-rig"), ("seal", "tiny-ab")):
        code, out, err = exit_and_streams(root, *command)
        assert code == 1 and f"cards/tiny-ab.yaml:8: field '{field}': empty; expected {what}" in out + err, out + err
    assert not list((root / "keys").glob("*/*.seal.json"))


def test_a_rig_surface_is_free_text_refused_only_for_what_does_not_show(tmp_path: Path) -> None:
    """Review: the rig's surface was held to a name's rules, so a card sealed before with `ChatGPT™ app` (not in
    Unicode's normal form: ™ folds to TM) no longer loaded; a surface is refused only for a character that does
    not show or reorders what follows."""
    card = AB_CARD.replace("effort: null}", 'effort: null, surface: "ChatGPT\\u2122 app \\u2011 web"}')
    assert "surface" in card  # YAML's escapes: the card holds ™ and a non-breaking hyphen
    root = make_ab_project(tmp_path / "ok", card)
    code, out, err = exit_and_streams(root, "check", "--no-rig")
    assert code == 0 and "surface" not in out + err, (out, err)
    hidden = make_ab_project(tmp_path / "rlo", card.replace("\\u2011", "\\u202e"))
    code, out, err = exit_and_streams(hidden, "check", "--no-rig")
    assert code == 1 and "field 'rig.surface': surface name" in out + err and "U+202E" in out + err, (out, err)


def test_a_fixture_larger_than_any_model_reads_is_one_line_from_every_command(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixture file of any size was read whole by every command and sealed, and each cell would send it and write
    it into sealed/requests.jsonl (100 MB took `check` 17 s and 0.6 GB); past MAX_FIXTURE_BYTES (about four
    million tokens) it is refused in one line naming the file and the figures, before it is read."""
    from benchcard.card.model import MAX_FIXTURE_BYTES

    root = make_ab_project(tmp_path / "proj")
    with open(root / "fixtures" / "tiny-ab" / "item-01.txt", "r+b") as fh:
        fh.truncate(MAX_FIXTURE_BYTES + 1)
    says = ("fixtures/tiny-ab/item-01.txt: fixture 'item-01' is 16,777,217 bytes, more than the 16,777,216 a fixture "
            "may hold (about four million tokens: more than any model reads in one request)")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-test-0000")  # the run gets as far as building its requests
    for command in (["check", "--no-rig"], ["seal", "tiny-ab"], ["plan", "tiny-ab"], ["run", "tiny-ab", "--scratch"]):
        code, out, err = exit_and_streams(root, *command)
        assert code == 1 and says in out + err, (command, out, err)
        assert "Traceback" not in out + err
    assert not (root / "keys" / "tiny-ab" / "v1.seal.json").exists()
    assert not [p for p in (root / "results").rglob("*") if p.is_file() or p.name.startswith("2")]  # no run


@pytest.mark.parametrize(("edit", "expected"), [
    (("output: red,", "output: no,"), "field 'examples.0.output': expected the output text, got False; YAML 1.1 "
                                      "reads yes, no, on, off, true and false unquoted as true/false, not as text: "
                                      'quote the word as written ("no", "off")'),
    (('A: "Please.\\n"', "A: on"), "field 'variants.A': expected text, got true/false (True); YAML 1.1 reads yes, "
                                   'no, on, off, true and false unquoted as true/false, not as text: quote the word '
                                   'as written ("yes", "on")'),
    (("title: Does saying please change the answer?", "title: 2026-01-02"),
     "field 'title': expected text, got date (datetime.date(2026, 1, 2)); YAML reads 2026-01-02 unquoted as a "
     'date: quote it ("2026-01-02")'),
    (("why: The only right answer.", "why: 42"), "field 'scoring.rules.0.why': rule 'says_red': expected the reason "
                                                 'for the rule as text, got 42; YAML reads it unquoted as the number '
                                                 '42: quote the text as written'),
    (("why: The only right answer.", "why: 0.10"), "got 0.1; YAML reads it unquoted as the number 0.1: quote the "
                                                   "text as written"),
    (("method: rules\n  rules:\n    - {id: says_red, must_match: /^\\s*red\\s*$/i, why: The only right answer.}",
      "method: exact\n  expected: no"),  # hostile audit 11: the value was not shown
     "field 'scoring.expected': expected the exact expected output as text, got False; YAML 1.1 reads yes, no, on, "
     'off, true and false unquoted as true/false, not as text: quote the word as written ("no", "off")'),
])
def test_a_word_yaml_reads_as_another_type_where_text_is_expected_says_how_to_quote_it(
        tmp_path: Path, edit: tuple[str, str], expected: str) -> None:
    """An expected answer `no` (or a variant `on`, a title that is a date) is read by YAML 1.1 as false: the line
    says so and how to write it, not only that it is not text."""
    message = _error(tmp_path, AB_CARD.replace(*edit))
    assert expected in message and "quote" in message, message


def test_a_number_refused_for_another_reason_is_not_told_to_be_quoted(tmp_path: Path) -> None:
    message = _error(tmp_path, AB_CARD.replace("alpha: 0.05", "alpha: 0.9"))
    assert "field 'win.alpha'" in message and "quote" not in message, message
    message = _error(tmp_path, _one_variant(AB_CARD).replace("repetitions:", "sequential: {looks: yes}\nrepetitions:"))
    assert "field 'sequential.looks'" in message and "quote" not in message, message


def test_a_field_path_reads_a_list_index_only_in_ascii_digits_of_any_length() -> None:
    """The raw value a field's path leads to (what the quoting hint looks at): a list index is ASCII digits
    alone ('007' is 7); '²', '٣', a sign, a space or an underscore is no index, and 30 or 5,000 digits are an
    index out of range, where int() refused past 4,300 digits with a ValueError."""
    from benchcard.card.reader import _at

    raw = {"examples": [{"output": "a"}] * 8}
    assert _at(raw, ("examples", "0", "output")) == "a" and _at(raw, ("examples", "007", "output")) == "a"
    for key in (*NOT_NUMBERS, "8", THIRTY_DIGITS, MANY_DIGITS):
        assert _at(raw, ("examples", key, "output")) is None, key


@pytest.mark.parametrize(("old", "new", "line", "said"), [
    ("margin: 0.2}", "margin: 1.0e+300}", 26,
     "field 'win.all.1.margin': expected less than 1: a gap of rule.says_red, a value in [0, 1], is never beyond ±1, "
     "so a guard at margin 1e+300 can never be broken; got 1e+300"),
    ("margin: 0.2}", "margin: 2}", 26,
     "field 'win.all.1.margin': expected less than 1: a gap of rule.says_red, a value in [0, 1], is never beyond ±1, "
     "so a guard at margin 2 can never be broken; got 2"),
    ("equivalence_margin: 0.05", "equivalence_margin: 1", 28,
     "field 'win.equivalence_margin': expected less than 1: a gap of score, a value in [0, 1], is never beyond ±1, "
     "so an equivalence margin of 1 leaves no effect it could show to be none; got 1"),
])
def test_a_margin_no_gap_of_the_metric_can_reach_is_refused_and_one_sealed_with_it_still_reads(
        tmp_path: Path, old: str, new: str, line: int, said: str) -> None:
    """A guard whose margin a score in [0, 1] can never exceed can never be broken (noisy data passes it for free),
    and an equivalence margin of the whole range calls every effect none: `check` and `seal` refuse it in one line
    naming the field; a version sealed with it before this check (the reader alone, then `seal.seal`) still
    reads, with `check`'s warning."""
    root = make_ab_project(tmp_path, AB_CARD.replace(old, new), n_fixtures=4)
    project = Project(root)
    said = f"cards/tiny-ab.yaml:{line}: {said}"
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 1 and f"  error: {said}" in checked.stdout, checked.output
    assert one_line_error(bc(root, "seal", "tiny-ab")) == f"error: {said}"
    path = root / "cards" / "tiny-ab.yaml"
    seal(read_card(path.read_text(encoding="utf-8"), "cards/tiny-ab.yaml", project, path), project)
    assert load_card(path, project).later_checks == (said,)
    again = bc(root, "check", "tiny-ab")
    assert again.exit_code == 0 and f"  warning: {said} (v1 was sealed before this check" in again.stdout, again.output


def test_a_margin_just_inside_the_range_is_taken(tmp_path: Path) -> None:
    """The bound is the range's width, not a round figure: a guard at 0.99 can still be broken by a gap of 1."""
    root = make_ab_project(tmp_path, AB_CARD.replace("margin: 0.2}", "margin: 0.99}"), n_fixtures=4)
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 0, checked.output


#: A second version whose history lists runs published outside benchcard (`published_runs: RUNS`).
_PUBLISHED = AB_CARD.replace("version: 1\n", "version: 2\n", 1).replace(
    "history:\n  - {version: 1, note: Initial version.}",
    "history:\n  - {version: 2, note: Second.}\n  - {version: 1, note: Initial version., published_runs: RUNS}")


@pytest.mark.parametrize(("runs", "said"), [
    ("[{run: Run-1}, {run: run-1}]", "field 'history.1.published_runs.1.run': the runs 'Run-1' and 'run-1' differ "
                                     "only by case: on macOS and Windows their folders in the site are one; rename "
                                     "one"),
    ("[{run: CON}]", "field 'history.1.published_runs.0.run': the run 'CON' is a device name on Windows (CON, PRN, "
                     "AUX, NUL, COM1-9, LPT1-9, with any extension or case), and it names the run's folder in the "
                     "site; choose another"),
    ("[run-19]", "field 'history.1.published_runs.0': expected a mapping whose run is a name of ASCII letters, "
                 "digits, '.', '_' and '-', a letter or a digit first (its folder in the site), got text ('run-19')"),
    # review22: the line said 'letters', and 'ü' is one: it names what the site holds, ASCII
    ("[{run: prüfung-1}]", "field 'history.1.published_runs.0.run': expected a mapping whose run is a name of ASCII "
                           "letters, digits, '.', '_' and '-', a letter or a digit first (its folder in the site), got "
                           "text ('prüfung-1')"),
])
def test_a_published_run_whose_site_folder_no_clone_could_hold_is_refused(tmp_path: Path, runs: str,
                                                                         said: str) -> None:
    """Hostile audit (hostile22): a run published outside benchcard names its folder in the site,
    runs/<card>/v<N>/<run>/: `Run-1` and `run-1` made two folders that are one on macOS and Windows (the page
    written second replaced the first), `CON` one no Windows checkout holds, and `- run-19` (no mapping) ended
    `site` in a traceback. check and seal say it in one line; a version sealed before reads, and site skips it."""
    root = make_ab_project(tmp_path / "proj", _PUBLISHED.replace("RUNS", runs))
    line = f"error: cards/tiny-ab.yaml:35: {said}"
    assert one_line_error(bc(root, "seal", "tiny-ab")) == line
    project = Project(root)
    path = project.card_path("tiny-ab")
    seal(read_card(path.read_text(encoding="utf-8"), "cards/tiny-ab.yaml", project, path), project)
    checked = bc(root, "check", "tiny-ab")
    assert checked.exit_code == 0 and f"  warning: {line.removeprefix('error: ')} (v2 was sealed" in checked.stdout
    built = bc(root, "site", "--out", str(tmp_path / "site"))
    assert built.exit_code == 0 and "Traceback" not in built.output, built.output
    if "Run-1" in runs:  # the first keeps its folder; the second is left out, said so
        assert ("skipped: tiny-ab: history v1: published run 'run-1' differs from another only by case"
                in built.output), built.output
        assert (tmp_path / "site" / "runs" / "tiny-ab" / "v1" / "Run-1").is_dir()
        assert not (tmp_path / "site" / "runs" / "tiny-ab" / "v1" / "run-1").exists()
