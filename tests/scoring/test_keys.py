"""Per-fixture answers: `exact` with `expected_from_key` and `rules` with `{{key.<field>}}` read
`keys/<id>/<fixture>.json`; `check` refuses key files a scorer ignores and fixtures without a key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchcard.cli import cli
from benchcard.errors import CardError
from benchcard.project import Project
from benchcard.records.answerkey import AnswerKey
from benchcard.testing.fakeserver import FakeServer

from ..helpers_run import read_jsonl, runs_of, write_config

SENTIMENT = """\
id: sentiment-ab
version: 1
kind: ab
title: Does "Answer with one word." make the label right?
question: Does the instruction change accuracy?
variable: One sentence after the review.
rig: {provider: fake, model: test/model, effort: null}
params: {max_tokens: 20, temperature: 0}
prompt:
  user: |-
    Is this review positive or negative?
    Review: {{fixture}}{{variant}}
variants: {plain: "", one-word: "\\nAnswer with one word."}
baseline: plain
fixtures: fixtures/sentiment-ab/*.txt
repetitions: 1
scoring: SCORING
win:
  all:
    - {metric: score, test: rises}
  equivalence_margin: 0.05
  accept_cannot_win: true
examples:
  - {label: Correct, fixture: r1, output: positive, expect: pass}
  - {label: Rejected — the other label, fixture: r1, output: negative, expect: fail}
history:
  - {version: 1, note: Initial version.}
"""
EXACT = "{method: exact, expected_from_key: label, case_sensitive: false}"
RULES = ("{method: rules, rules: [{id: right_label, must_match: '/^\\s*{{key.label}}\\.?\\s*$/i', "
         "why: The key's label.}]}")
LABELS = {"r1": "positive", "r2": "negative", "r3": "positive", "r4": "negative"}


def make(root: Path, scoring: str = EXACT, keys: dict[str, object] | None = None) -> Path:
    (root / "cards").mkdir(parents=True, exist_ok=True)
    (root / "cards" / "sentiment-ab.yaml").write_text(SENTIMENT.replace("SCORING", scoring), encoding="utf-8")
    (root / "fixtures" / "sentiment-ab").mkdir(parents=True, exist_ok=True)
    (root / "keys" / "sentiment-ab").mkdir(parents=True, exist_ok=True)
    for fixture in LABELS:
        (root / "fixtures" / "sentiment-ab" / f"{fixture}.txt").write_text(f"review {fixture}\n", encoding="utf-8")
    for fixture, body in (keys if keys is not None else
                          {f: {"fixture": f, "label": lab} for f, lab in LABELS.items()}).items():
        (root / "keys" / "sentiment-ab" / f"{fixture}.json").write_text(json.dumps(body), encoding="utf-8")
    return root


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


@pytest.mark.parametrize("scoring", [EXACT, RULES], ids=["exact", "rules"])
def test_each_fixture_is_scored_against_its_own_key(tmp_path: Path, server: FakeServer, key: str,
                                                    scoring: str) -> None:
    root = make(tmp_path / "proj", scoring)
    write_config(root, server.base_url)
    server.configure({"default_reply": "Positive"})
    checked = bc(root, "check")
    assert checked.exit_code == 0, checked.output
    assert "ok   1.00 expect pass    Correct" in checked.output
    assert bc(root, "seal", "sentiment-ab").exit_code == 0
    seal = json.loads((root / "keys" / "sentiment-ab" / "v1.seal.json").read_text())
    assert sorted(seal["keys"]) == [f"keys/sentiment-ab/{f}.json" for f in sorted(LABELS)]
    result = bc(root, "run", "sentiment-ab")
    assert result.exit_code == 0, result.output
    [run] = runs_of(Project(root), "sentiment-ab")
    by_fixture: dict[str, set[float]] = {}
    for row in read_jsonl(run / "scores.jsonl"):
        by_fixture.setdefault(row["fixture"], set()).add(row["score"])
    assert by_fixture == {"r1": {1.0}, "r2": {0.0}, "r3": {1.0}, "r4": {0.0}}


def test_a_key_value_is_matched_literally_in_a_rule(tmp_path: Path) -> None:
    from benchcard.scoring.scorers import RulesSpec, parse_scoring, score_output

    spec = parse_scoring({"method": "rules", "rules": [{"id": "r", "must_match": "/^{{key.answer}}$/",
                                                       "why": "w"}]}, fail=lambda w, e: CardError(e))
    assert isinstance(spec, RulesSpec)
    key = AnswerKey("f", "keys/c/f.json", {"fixture": "f", "answer": ["1+1 (two)", "a/b"]})
    assert score_output(spec, "1+1 (two)", key).score == 1.0
    assert score_output(spec, "a/b", key).score == 1.0
    assert score_output(spec, "11 (two)", key).score == 0.0  # `+` is the character, not a quantifier


def test_check_refuses_fixtures_without_a_key_and_keys_without_the_field(tmp_path: Path) -> None:
    root = make(tmp_path / "a", keys={"r1": {"fixture": "r1", "label": "positive"},
                                      "r2": {"fixture": "r2", "label": "negative"},
                                      "r3": {"fixture": "r3", "label": "positive"}})
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "keys/sentiment-ab/r4.json: missing answer key for fixture 'r4'" in result.output
    root = make(tmp_path / "b", keys={f: {"fixture": f, "answer": lab} for f, lab in LABELS.items()})
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "keys/sentiment-ab/r1.json:1: field 'answer': the scorer never reads it (it reads label)" in result.output
    assert bc(root, "seal", "sentiment-ab").exit_code == 1


def test_a_bad_key_is_named_by_file_line_and_field_as_check_shows_it(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "keys" / "sentiment-ab" / "r2.json").write_text('{\n  "fixture": "r2",\n  "label": 7\n}\n',
                                                           encoding="utf-8")
    result = bc(root, "check")
    assert result.exit_code == 1
    assert ("keys/sentiment-ab/r2.json:3: field 'label': expected the answer as text, or a list of accepted "
            "answers; got 7") in result.output
    (root / "keys" / "sentiment-ab" / "r2.json").write_text('{\n  "label": "negative"\n}\n', encoding="utf-8")
    result = bc(root, "check")  # a field that is not there has no line: the file and the field
    assert "keys/sentiment-ab/r2.json: field 'fixture': expected the fixture id 'r2'" in result.output


@pytest.mark.parametrize(("written", "said"), [
    ("-0", ":2: field 'fixture': expected the fixture id 'r2'; got the number -0"),
    ("1e0", ":2: field 'fixture': expected the fixture id 'r2'; got the number 1e0"),
    ('"r3"', ":2: field 'fixture': expected the fixture id 'r2'; got 'r3'"),
    ("true", ":2: field 'fixture': expected the fixture id 'r2'; got true"),
    ("01", ":2: field 'fixture': 01 is not JSON; expected text in double quotes, or a number as JSON writes one (no "
           "'+', no leading 0, no 0x, no '_')"),
    ("0x1", ":2: field 'fixture': 0x1 is not JSON;"),
])
def test_a_keys_fixture_field_is_named_as_written(tmp_path: Path, written: str, said: str) -> None:
    """Review (left24b): a key's `fixture` that was not its file's id said only 'expected the fixture id 'r2'',
    never what it held (`-0` read as 0, `1e0` as 1.0), and `01` said json's 'Expecting ',' delimiter: line 2 column
    16 (char 17)' with no line in front. Each names the line, the field and what is written there."""
    root = make(tmp_path)
    (root / "keys" / "sentiment-ab" / "r2.json").write_text(f'{{\n  "fixture": {written},\n  "label": "negative"\n}}\n',
                                                           encoding="utf-8")
    result = bc(root, "check")
    assert result.exit_code == 1
    assert f"  error: keys/sentiment-ab/r2.json{said}" in result.output, result.output


def test_a_numeric_fixture_id_is_its_keys_text(tmp_path: Path) -> None:
    """A fixture file `70.txt` is the fixture `70`; its key says so in double quotes: `"fixture": 70`, a number,
    is told to quote it, as written."""
    root = make(tmp_path)
    (root / "fixtures" / "sentiment-ab" / "70.txt").write_text("review 70\n", encoding="utf-8")
    (root / "keys" / "sentiment-ab" / "70.json").write_text('{"fixture": 70, "label": "positive"}', encoding="utf-8")
    result = bc(root, "check")
    assert ("keys/sentiment-ab/70.json:1: field 'fixture': expected the fixture id '70' in double quotes (\"70\"); got "
            "the number 70") in result.output, result.output
    (root / "keys" / "sentiment-ab" / "70.json").write_text('{"fixture": "70", "label": "positive"}', encoding="utf-8")
    assert "70.json" not in bc(root, "check").output


def test_check_refuses_key_files_the_scorer_ignores(tmp_path: Path) -> None:
    one_answer = "{method: exact, expected: positive, case_sensitive: false}"
    root = make(tmp_path / "a", one_answer)
    result = bc(root, "check")
    assert result.exit_code == 1
    assert ("keys/sentiment-ab/r1.json: exact scoring with one `expected` answer reads no answer key "
            "(use expected_from_key or {{key.<field>}} in a rule to read one)") in result.output
    sealed = bc(root, "seal", "sentiment-ab")
    assert sealed.exit_code == 1 and "refusing to seal" in sealed.output + sealed.stderr
    root = make(tmp_path / "b")
    (root / "keys" / "sentiment-ab" / "r9.json").write_text('{"fixture": "r9", "label": "positive"}')
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "keys/sentiment-ab/r9.json: exact scoring with expected_from_key: label reads keys only for its " \
           "fixtures, and there is no fixture 'r9'" in result.output


def test_a_literal_key_placeholder_in_expected_is_refused(tmp_path: Path) -> None:
    root = make(tmp_path / "a", "{method: exact, expected: '{{key.label}}'}")
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "field 'scoring.expected': is compared literally" in result.output
    assert "expected_from_key: <field>" in result.output


def test_a_probe_reads_its_key_named_after_the_card(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "cards").mkdir(parents=True)
    card = SENTIMENT.replace("kind: ab", "kind: probe").replace(EXACT, "")
    probe = "\n".join(line for line in card.replace("SCORING", EXACT).splitlines()
                      if not line.startswith(("question", "variable", "variants", "baseline", "fixtures", "win",
                                              "  all", "    - {metric", "  equivalence", "  accept_cannot_win")))
    probe = probe.replace("id: sentiment-ab", "id: sentiment-probe").replace(", fixture: r1", "")
    probe = probe.replace("{{fixture}}{{variant}}", "I loved it.")
    (root / "cards" / "sentiment-probe.yaml").write_text(probe, encoding="utf-8")
    result = bc(root, "check")
    assert result.exit_code == 1 and "keys/sentiment-probe/sentiment-probe.json: missing answer key" in result.output
    (root / "keys" / "sentiment-probe").mkdir(parents=True)
    (root / "keys" / "sentiment-probe" / "sentiment-probe.json").write_text(
        '{"fixture": "sentiment-probe", "label": "positive"}')
    result = bc(root, "check")
    assert result.exit_code == 0, result.output
    assert bc(root, "seal", "sentiment-probe").exit_code == 0
    seal = json.loads((root / "keys" / "sentiment-probe" / "v1.seal.json").read_text())
    assert list(seal["keys"]) == ["keys/sentiment-probe/sentiment-probe.json"]


def test_a_key_files_errors_name_it_from_the_project_as_every_other_error_does(tmp_path: Path) -> None:
    """A missing key, a key that is not JSON and a key with a field the scorer never reads: each line names the
    key file as `keys/<card>/<fixture>.json`, as a card's and a fixture's errors name theirs, not by the absolute
    path it was read from."""
    keys: dict[str, object] = {f: {"fixture": f, "label": lab} for f, lab in LABELS.items()}
    missing = make(tmp_path / "a", keys={f: k for f, k in keys.items() if f != "r4"})
    unread = make(tmp_path / "b", keys={f: {"fixture": f, "answer": lab} for f, lab in LABELS.items()})
    broken = make(tmp_path / "c", keys=keys)
    (broken / "keys" / "sentiment-ab" / "r2.json").write_text("{nope", encoding="utf-8")
    for root, said in ((missing, "keys/sentiment-ab/r4.json: missing answer key for fixture 'r4'"),
                       (unread, "keys/sentiment-ab/r1.json:1: field 'answer': the scorer never reads it"),
                       (broken, "keys/sentiment-ab/r2.json: not valid JSON")):
        result = bc(root, "check")
        assert result.exit_code == 1 and f"\n  error: {said}" in result.output, result.output
        assert str(tmp_path) not in result.output


def test_a_key_that_is_a_folder_is_said_so_not_missing(tmp_path: Path) -> None:
    """Hostile audit (hostile21): keys/<card>/<fixture>.json replaced by a folder was a `missing answer key`; the
    line says what stands there."""
    keys: dict[str, object] = {f: {"fixture": f, "label": lab} for f, lab in LABELS.items()}
    root = make(tmp_path / "a", keys=keys)
    path = root / "keys" / "sentiment-ab" / "r2.json"
    path.unlink()
    path.mkdir()
    result = bc(root, "check")
    assert result.exit_code == 1
    assert "keys/sentiment-ab/r2.json: not a regular file (a folder); expected a text file" in result.output
    assert "missing answer key" not in result.output


@pytest.mark.parametrize(("fixture", "key", "differs", "reads"), [
    ("R4", "r4", "case", "on macOS and Windows it is read"),
    ("caf\u00e9", "cafe\u0301", "Unicode form", "on macOS it is read"),
])
def test_a_key_named_but_for_its_case_or_unicode_form_is_refused(tmp_path: Path, fixture: str, key: str,
                                                                 differs: str, reads: str) -> None:
    """Hostile audit (hostile22, names across machines): fixture R4.txt with its key saved as r4.json read as
    'missing answer key' here and as its key on macOS and Windows, whose disks open r4.json for R4.json, while the
    seal, which lists the folder, left it out: the key was scored but never sealed, free to change after sealing.
    One line names the file and the name expected; the other fixtures' keys are not said to be ignored."""
    root = make(tmp_path / "proj")
    folder = root / "fixtures" / "sentiment-ab"
    (folder / "r4.txt").rename(folder / f"{fixture}.txt")
    (root / "keys" / "sentiment-ab" / "r4.json").write_text(json.dumps({"fixture": fixture, "label": "negative"}),
                                                            encoding="utf-8")
    (root / "keys" / "sentiment-ab" / "r4.json").rename(root / "keys" / "sentiment-ab" / f"{key}.json")
    result = bc(root, "check")
    shown = repr(f"{fixture}.json") + ("" if fixture.isascii() else f" ({f'{fixture}.json'!a})")
    line = (f"keys/sentiment-ab/{key}.json: named for fixture {fixture!r}"
            f"{'' if fixture.isascii() else f' ({fixture!a})'} but for its {differs}; expected {shown} exactly: "
            f"{reads} for the fixture, on Linux it is not, and the seal does not cover it; rename it")
    assert result.exit_code == 1 and f"\n  error: {line}\n" in result.output, result.output
    assert "never read" not in result.output
    sealed = bc(root, "seal", "sentiment-ab")
    assert sealed.exit_code == 1 and sealed.output == f"error: refusing to seal: {line}\n"
    (root / "keys" / "sentiment-ab" / f"{key}.json").rename(root / "keys" / "sentiment-ab" / f"{fixture}.json")
    assert bc(root, "check").exit_code == 0


def test_a_key_beside_one_named_but_for_its_case_is_said_to_be_ignored(tmp_path: Path) -> None:
    """r4.json and R4.json are one file on macOS and Windows: the one no fixture names is said, as any stray key."""
    root = make(tmp_path / "proj")
    (root / "keys" / "sentiment-ab" / "R4.json").write_text('{"fixture": "R4", "label": "negative"}',
                                                            encoding="utf-8")
    result = bc(root, "check")
    assert result.exit_code == 1
    assert ("keys/sentiment-ab/R4.json: exact scoring with expected_from_key: label reads keys only for its "
            "fixtures, and there is no fixture 'R4'") in result.output


@pytest.mark.parametrize(("moved", "name", "on_disk"), [("Keys/sentiment-ab", "keys", "Keys"),
                                                         ("keys/Sentiment-AB", "sentiment-ab", "Sentiment-AB")])
def test_a_keys_folder_made_in_another_case_is_named(tmp_path: Path, moved: str, name: str, on_disk: str) -> None:
    """A keys folder made by hand as Keys/ (or keys/Sentiment-AB/) is read and sealed on macOS and Windows, which
    open it for keys/sentiment-ab/, and a clone on Linux found none: 'missing answer key' for every fixture, the
    folder never named. The line names the folder and the name it must have; no seal is written."""
    root = make(tmp_path / "proj")
    (root / "keys" / "sentiment-ab").rename(root / "keys" / "moved")
    (root / moved).parent.mkdir(exist_ok=True)
    (root / "keys" / "moved").rename(root / moved)
    if name == "keys":
        (root / "keys").rmdir()
    line = (f"keys/sentiment-ab/: the folder '{name}' is '{on_disk}' on disk, which is opened for it on macOS and "
            f"Windows and not on Linux, so a clone there finds no answer key; rename it '{name}'")
    result = bc(root, "check")
    assert result.exit_code == 1 and f"\n  error: {line}\n" in result.output, result.output
    assert "missing answer key" not in result.output
    sealed = bc(root, "seal", "sentiment-ab")
    assert sealed.exit_code == 1 and sealed.output == f"error: refusing to seal: {line}\n"
    assert not list(root.rglob("*.seal.json"))
