"""Fixtures from one data file (CSV or JSONL): sealed byte for byte, checked row by row with file:line errors,
run and judged through the CLI like a card whose fixtures are files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from benchcard.card.load import load_card
from benchcard.errors import CardError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.testing.fakeserver import FakeServer

from ..helpers_cli import bc, exit_and_streams, one_line_error
from ..helpers_run import only_run, write_config

CARD = """\
id: colours
version: 1
kind: ab
title: Does saying please change the colour named?
rig: {provider: fake, model: test/model}
params: {max_tokens: 20, temperature: 0.7}
prompt:
  system: Answer with one word.
  user: |-
    Name the colour.
    {{variant}}<item>PROMPT_INPUT</item>
variants: {plain: "", please: "Please.\\n"}
baseline: plain
fixtures: FIXTURES
repetitions: 2
scoring: {method: exact, expected_from_key: answer, case_sensitive: false}
win:
  all:
    - {metric: score, test: rises}
  equivalence_margin: 0.1
  accept_cannot_win: true
examples:
  - {label: Correct, fixture: q1, output: red, expect: pass}
  - {label: Rejected — a sentence, fixture: q1, output: It is red., expect: fail}
history:
  - {version: 1, note: First version.}
"""


def _rows(n: int = 6) -> list[dict[str, str]]:
    return [{"id": f"q{i}", "input": f"a ripe tomato, number {i}", "answer": "red"} for i in range(1, n + 1)]


def _project(root: Path, fixtures: str = "data/colours.jsonl", data: str | None = None,
             prompt_input: str = "{{fixture}}", name: str = "colours.jsonl") -> Path:
    (root / "cards").mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    if data is None:
        data = "".join(json.dumps(r) + "\n" for r in _rows())
    (root / "data" / name).write_text(data, encoding="utf-8")
    text = CARD.replace("FIXTURES", fixtures).replace("PROMPT_INPUT", prompt_input)
    (root / "cards" / "colours.yaml").write_text(text, encoding="utf-8")
    return root


def _load(root: Path) -> object:
    return load_card(root / "cards" / "colours.yaml", Project(root))


def _error(root: Path) -> str:
    with pytest.raises(CardError) as info:
        _load(root)
    return str(info.value)


def _four_rows(root: Path) -> Path:
    """The project with four rows, for the tests of `check` about the data file: a design `check` tells dead
    without simulating (at six rows × 2 repetitions it searches for the smallest change that can win, simulating
    designs up to 281 fixtures: about 20 CPU-seconds)."""
    return _project(root, data="".join(json.dumps(r) + "\n" for r in _rows(4)))


def test_a_jsonl_card_is_checked_and_sealed_with_the_data_file_digest(tmp_path: Path) -> None:
    root = _four_rows(tmp_path)
    result = bc(root, "check", "colours")
    assert result.exit_code == 0, result.output
    result = bc(root, "seal", "colours", "--json")
    assert result.exit_code == 0, result.output
    sealed = json.loads((root / "keys" / "colours" / "v1.seal.json").read_text())
    data = (root / "data" / "colours.jsonl").read_bytes()
    assert sealed["fixtures"] == {"data/colours.jsonl": "sha256:" + hashlib.sha256(data).hexdigest()}
    assert sealed["keys"] == {}  # the keys are in the data file, sealed with it
    # one byte of one answer changed: the seal names the data file
    (root / "data" / "colours.jsonl").write_bytes(data.replace(b'"red"', b'"Red"', 1))
    result = bc(root, "check", "colours")
    assert result.exit_code == 1
    assert "data/colours.jsonl changed after sealing v1" in result.output


def test_the_prompt_and_keys_come_from_the_rows(tmp_path: Path) -> None:
    card = _load(_project(tmp_path))
    assert card.fixture_ids() == [f"q{i}" for i in range(1, 7)]  # type: ignore[attr-defined]
    messages = card.messages("please", card.fixture_value("q3"))  # type: ignore[attr-defined]
    assert messages[1]["content"] == "Name the colour.\nPlease.\n<item>a ripe tomato, number 3</item>"
    keys = card.answer_keys(tmp_path / "keys" / "colours")  # type: ignore[attr-defined]
    assert (keys["q3"].body, keys["q3"].source) == ({"fixture": "q3", "answer": "red"}, "data/colours.jsonl:3")


def test_a_csv_with_named_columns_and_several_inputs(tmp_path: Path) -> None:
    data = ('qid,thing,colour,expected,note\n'
            'a,"a tomato, ripe",red,red,\n'
            'b,"a ""cherry""\nwith a stalk",dark red,red,two lines\n'
            'c,a brick,red,red,\n')
    spec = "{file: data/things.csv, id: qid, input: [thing, colour], key: [expected]}"
    root = _project(tmp_path, spec, data, "{{fixture.thing}} ({{fixture.colour}})", name="things.csv")
    text = (root / "cards" / "colours.yaml").read_text().replace("expected_from_key: answer",
                                                                "expected_from_key: expected")
    (root / "cards" / "colours.yaml").write_text(text.replace("fixture: q1", "fixture: a"))
    card = _load(root)
    assert card.fixture_ids() == ["a", "b", "c"]  # type: ignore[attr-defined]
    messages = card.messages("plain", card.fixture_value("b"))  # type: ignore[attr-defined]
    assert messages[1]["content"] == 'Name the colour.\n<item>a "cherry"\nwith a stalk (dark red)</item>'
    assert card.fixture_text("b") == 'thing: a "cherry"\nwith a stalk\n\ncolour: dark red'  # type: ignore[attr-defined]
    assert bc(root, "check", "colours").exit_code == 0
    # a row after the quoted two-line cell: its line is the file's line
    (root / "data" / "things.csv").write_text(data.replace("c,a brick,red,red,", "c,a brick,red,,"))
    assert _error(root) == ("data/things.csv:5: field 'expected': expected the answer as text, or a list of "
                            "accepted answers; missing")
    # an empty answer on the first row is that row's missing answer, whatever the later rows hold
    (root / "data" / "things.csv").write_text(data.replace("a,\"a tomato, ripe\",red,red,", "a,a tomato,red,,"))
    assert _error(root) == ("data/things.csv:2: field 'expected': expected the answer as text, or a list of "
                            "accepted answers; missing")


def test_a_csv_saved_with_a_byte_order_mark_reads_as_without_one(tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" opens with U+FEFF: it was read into the first column's name ('\\ufeffid', refused as
    an unknown key column); the file is still sealed byte for byte."""
    data = "id,input,answer\r\n" + "".join(f"q{i},\"a ripe tomato, number {i}\",red\r\n" for i in range(1, 5))
    root = _project(tmp_path, fixtures="data/things.csv", data="\ufeff" + data, name="things.csv")
    code, out, err = exit_and_streams(root, "check", "--no-rig")
    assert code == 0, out + err
    card = load_card(root / "cards" / "colours.yaml", Project(root))
    assert card.fixture_ids()[0] == "q1" and card.fixture_text("q1") == "a ripe tomato, number 1"


@pytest.mark.parametrize(("rows", "message"), [
    ('{"id": "q1", "input": "x", "answer": "red"}\n{"id": "q1", "input": "y", "answer": "red"}\n',
     "data/colours.jsonl:2: field 'id': the fixture id 'q1' is also on line 1; ids must be unique"),
    ('{"id": "q1", "input": "x", "answer": "red"}\n\n{"id": "q2", "input": "y"}\n',
     "data/colours.jsonl:3: field 'answer': expected the answer as text, or a list of accepted answers; missing"),
    ('{"id": "q1", "input": "x", "answer": "red"}\n{"id": "q 2", "input": "y", "answer": "red"}\n',
     "data/colours.jsonl:2: field 'id': expected a fixture id (up to 128 ASCII letters, digits, '.', '_', '-', not "
     "starting with '.' or '-'); got 'q 2', which holds ' ' (SPACE)"),
    ('{"id": "q1", "input": "", "answer": "red"}\n',
     "data/colours.jsonl:1: field 'input': expected the fixture's input as text; missing"),
    ('{"id": "q1", "input": "x", "answer": "red"}\n{"id": "q2", "input": "y", "answer": "red", "level": 3}\n',
     "data/colours.jsonl:2: field 'level': not the id, an input or a key column"),
    ('{"id": "q1", "input": "x", "answer": "red", "level": 3}\n',
     "data/colours.jsonl:1: field 'level': exact scoring with expected_from_key: answer never reads the key "
     "column 'level' (it reads answer)"),
    ('{"id": "q1", "input": "x"}\n', "data/colours.jsonl:1: field 'answer': missing; exact scoring"),
    ('{"id": "q1", "input": "x", "answer": "red"}\n{"id": "q2", "input": "y", \n',
     "data/colours.jsonl:2: expected one JSON object per line"),
    ('["q1", "x", "red"]\n', "data/colours.jsonl:1: expected one JSON object per line"),
    ('{"id": "q1", "input": "x", "answer": "red"}\n{"id": "q2", "id": "q3", "input": "y", "answer": "red"}\n',
     "data/colours.jsonl:2: field 'id': written twice; keep one"),
    ('{"id": "q1", "input": "x \\ud800", "answer": "red"}\n',
     "data/colours.jsonl:1: field 'input': a lone surrogate (\\ud800-\\udfff) is not text; write the character"),
    ('{"id": "q1", "input": "x", "answer": ["red", "\\udfff"]}\n',
     "data/colours.jsonl:1: field 'answer': a lone surrogate"),
    ("", "cards/colours.yaml:14: field 'fixtures': data/colours.jsonl holds no fixture"),
])
def test_each_row_is_checked_and_an_error_names_file_line_and_field(tmp_path: Path, rows: str,
                                                                     message: str) -> None:
    assert _error(_project(tmp_path, data=rows)).startswith(message)


@pytest.mark.parametrize(("given", "why"), [
    ("q" * 129, "got 'qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq'…, 129 characters; shorten it to at most 128"),
    ("qé1", "got 'qé1' ('q\\xe91'), whose '\\xe9' (LATIN SMALL LETTER E WITH ACUTE) is not ASCII; write the id "
     "in ASCII"),
    ("q\u200b1", "got 'q\\u200b1', whose '\\u200b' (ZERO WIDTH SPACE) is not ASCII; write the id in ASCII"),
    (".q1", "got '.q1', which starts with '.' (FULL STOP)"),
    ("q/1", "got 'q/1', which holds '/' (SOLIDUS)"),
])
def test_a_refused_id_is_told_why(tmp_path: Path, given: str, why: str) -> None:
    """A data file's id must be ASCII and at most 128 characters: the line said only 'letters, digits…', so an id
    of 129 characters or with an accented letter read as refused for no reason shown (hostile21)."""
    rows = json.dumps({"id": given, "input": "x", "answer": "red"}, ensure_ascii=False) + "\n"
    assert _error(_project(tmp_path, data=rows)) == (
        "data/colours.jsonl:1: field 'id': expected a fixture id (up to 128 ASCII letters, digits, '.', '_', '-', "
        f"not starting with '.' or '-'); {why}")
    ok = json.dumps({"id": "q" * 128, "input": "x", "answer": "red"}) + "\n"
    assert _load(_project(tmp_path / "ok", data=ok)).fixture_ids() == ["q" * 128]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("fixtures", "data", "message"), [
    ("{file: data/colours.jsonl, key: [answer, colour]}", None,
     "cards/colours.yaml:14: field 'fixtures.key': exact scoring with expected_from_key: answer never reads the "
     "key column 'colour' (it reads answer)"),
    ("{file: data/colours.jsonl, key: []}", None,
     "cards/colours.yaml:14: field 'fixtures.key': missing; exact scoring with expected_from_key: answer reads "
     "the key column 'answer'"),
    ("{file: data/colours.jsonl, id: id, input: input, colour: x}", None,
     "cards/colours.yaml:14: field 'fixtures.colour': unknown field; expected one of file, id, input, key"),
    ("{file: data/colours.tsv}", None, "cards/colours.yaml:14: field 'fixtures.file': expected a .csv or .jsonl"),
    ("data/missing.jsonl", None, "cards/colours.yaml:14: field 'fixtures': no data file 'data/missing.jsonl'"),
    ("../colours.jsonl", None, "cards/colours.yaml: field 'fixtures': path '../colours.jsonl' leaves the project"),
    ("data/things.csv", "id,input,answer\nq1,x\n", "data/things.csv:2: expected 3 cells as in the header, got 2"),
    ("data/things.csv", "id,input,input\nq1,x,y\n", "data/things.csv:1: column 3: expected a distinct"),
    # hostile21: German or French Excel's CSV; it said `data/things.csv:2: expected 1 cells as in the header, got 2`
    ("data/things.csv", "id;input;answer\r\nq1;x, y;red\r\n", "data/things.csv:1: the header 'id;input;answer' is "
     "one column: its cells are separated by ';', as Excel saves CSV in a locale whose decimal mark is a comma"),
])
def test_the_card_field_is_checked(tmp_path: Path, fixtures: str, data: str | None, message: str) -> None:
    name = "things.csv" if fixtures.endswith(".csv") else "colours.jsonl"
    root = _project(tmp_path, fixtures, data, name=name)
    error = _error(root)
    assert error.startswith(message), error


@pytest.mark.parametrize(("name", "why"), [
    ("q:1.jsonl", "holds ':', which Windows does not allow in a file name"),
    ("aux.jsonl", "is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension or case)"),
    ("c" * 130 + ".jsonl", "is 136 bytes long (UTF-8); expected at most 128 (128 ASCII letters)"),
])
def test_a_data_file_a_clone_elsewhere_cannot_hold_is_refused(tmp_path: Path, name: str, why: str) -> None:
    """Hostile audit (hostile22): a glob's fixture files were held to names Windows can check out, a data file
    was not: `fixtures: "data/q:1.jsonl"` was checked and sealed on Linux, and a clone on Windows has no file."""
    root = _project(tmp_path, fixtures=f'"data/{name}"', name=name)
    said = one_line_error(bc(root, "seal", "colours"))
    assert said == (f"error: cards/colours.yaml: field 'fixtures': data/{name}: the name {name!r} {why}, so a clone "
                    "of the project elsewhere cannot hold the file; rename it")
    assert not (root / "keys").exists()


def test_a_data_file_written_with_a_name_in_another_case_names_it(tmp_path: Path) -> None:
    """`fixtures: data/Colours.jsonl` for data/colours.jsonl is sealed on macOS and Windows and no data file on
    Linux, where it said only that there is none: the line names the file as written and as it is on disk."""
    root = _project(tmp_path, fixtures="data/Colours.jsonl")
    assert one_line_error(bc(root, "seal", "colours")) == (
        "error: cards/colours.yaml: field 'fixtures': data/Colours.jsonl: the name 'Colours.jsonl' is 'colours.jsonl' "
        "on disk, which is opened for it on macOS and Windows and not on Linux, so a clone there finds no data file; "
        "write it as it is on disk")


def test_a_data_file_that_is_a_folder_or_a_fifo_is_said_so_not_missing(tmp_path: Path) -> None:
    """Hostile audit (hostile21): a data file replaced by a folder or a FIFO was `no data file … in the project`,
    though `ls` shows it there; it is named as what it is, and nothing is read from a FIFO (no hang)."""
    import os

    root = _project(tmp_path)
    path = root / "data" / "colours.jsonl"
    said = "cards/colours.yaml:14: field 'fixtures': the data file 'data/colours.jsonl' is not a regular file"
    for make in (os.mkdir, os.mkfifo):
        path.unlink() if path.is_fifo() or path.is_file() else None
        make(path)
        assert _error(root).startswith(said)
        os.rmdir(path) if path.is_dir() else path.unlink()


@pytest.mark.parametrize(("data", "says"), [
    (b"id,input,answer\nq1,re\x00d,red\n", "data/things.csv:2: a NUL character (U+0000), which no text file holds; "),
    ("id,input,answer\nq1,red,red\n".encode("utf-16-le"),
     "data/things.csv:1: a NUL character (U+0000), which no text file holds (it reads as UTF-16); "),
])
def test_a_data_file_holding_a_nul_is_refused_as_no_text_file(tmp_path: Path, data: bytes, says: str) -> None:
    """Hostile audit (hostile21): a CSV saved as UTF-16 with no byte-order mark is valid UTF-8 with a NUL after
    every letter: its header read as columns named `i\\x00d\\x00`, and a NUL inside a cell was sent to the model."""
    root = _project(tmp_path, "data/things.csv", "", name="things.csv")
    (root / "data" / "things.csv").write_bytes(data)
    assert _error(root) == says + ("expected UTF-8 text: save it as UTF-8 (a NUL meant for the model is written "
                                   "\\u0000 in a JSONL row)")


def test_several_inputs_need_each_slot_once(tmp_path: Path) -> None:
    data = '{"id": "q1", "a": "x", "b": "y", "answer": "red"}\n'
    spec = "{file: data/colours.jsonl, input: [a, b]}"
    assert _error(_project(tmp_path, spec, data, "{{fixture.a}}")) == (
        "cards/colours.yaml:9: field 'prompt.user': an ab prompt must contain {{fixture.b}} exactly once")
    assert "not {{fixture}}" in _error(_project(tmp_path, spec, data, "{{fixture.a}}{{fixture.b}}{{fixture}}"))
    root = _project(tmp_path / "escaped", spec, data, r"{{fixture.a}}{{fixture.b}} \{{fixture}} \{{fixture.a}}")
    card = load_card(root / "cards" / "colours.yaml", Project(root))  # braces written as text: no slot of its own
    assert "xy {{fixture}} {{fixture.a}}" in card.messages(card.baseline, card.fixture_value("q1"))[-1]["content"]


def test_a_key_file_beside_a_data_file_is_refused(tmp_path: Path) -> None:
    root = _four_rows(tmp_path)
    (root / "keys" / "colours").mkdir(parents=True)
    (root / "keys" / "colours" / "q1.json").write_text('{"fixture": "q1", "answer": "red"}')
    result = bc(root, "check", "colours")
    assert result.exit_code == 1
    assert ("keys/colours/q1.json: exact scoring with expected_from_key: answer reads each fixture's key from "
            "data/colours.jsonl; the file would be sealed and never read: remove it") in result.output


def test_a_data_file_card_runs_and_wins_over_the_fake_server(tmp_path: Path, server: FakeServer, key: str) -> None:
    server.configure({"default_reply": "blue", "replies": [{"match": "Please.", "reply": "red"}]})
    root = _project(tmp_path)
    write_config(root, server.base_url)
    assert bc(root, "seal", "colours").exit_code == 0
    result = bc(root, "run", "colours")
    assert result.exit_code == 0, (result.output, result.stderr)
    run = only_run(Project(root), "colours")
    outputs = [json.loads(line) for line in (run / "outputs.jsonl").read_text().splitlines()]
    assert len(outputs) == 2 * 6 * 2 and {o["fixture"] for o in outputs} == {f"q{i}" for i in range(1, 7)}
    result = bc(root, "verdict", "colours")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "finding: win → result" in result.stdout
    assert ledger.read(Project(root))[-1].run == run.name
    # the card's page publishes the data file once, each fixture's text and key in it
    assert bc(root, "site").exit_code == 0
    assert (root / "site" / "cards" / "colours" / "fixtures" / "colours.jsonl").read_bytes() == (
        root / "data" / "colours.jsonl").read_bytes()
    page = (root / "site" / "cards" / "colours" / "index.html").read_text(encoding="utf-8")
    assert page.count('href="fixtures/colours.jsonl"') == 12  # six fixtures: text and key


def test_curl_and_plan_show_a_rows_request(tmp_path: Path) -> None:
    data = '{"id": "q1", "a": "x", "b": "a ripe tomato", "answer": "red"}\n'
    root = _project(tmp_path, "{file: data/colours.jsonl, input: [a, b]}", data, "{{fixture.b}} / {{fixture.a}}")
    write_config(root, "http://127.0.0.1:9/v1")
    result = bc(root, "curl", "colours", "--variant", "please", "--fixture", "q1")
    assert result.exit_code == 0, result.output
    assert "Please.\\n<item>a ripe tomato / x</item>" in result.stdout
    plan = bc(root, "plan", "colours", "--json")
    assert plan.exit_code == 0, plan.output
    assert '"calls": 4' in plan.stdout  # 2 variants × 1 fixture × 2 repetitions


def test_a_data_file_needs_a_scorer_with_small_keys(tmp_path: Path) -> None:
    root = _project(tmp_path)
    text = (root / "cards" / "colours.yaml").read_text()
    fields = "scoring: {method: fields, fields: [colour], abstain_field: colour}"
    text = text.replace("scoring: {method: exact, expected_from_key: answer, case_sensitive: false}", fields)
    (root / "cards" / "colours.yaml").write_text(text)
    line = one_line_error(bc(root, "seal", "colours"))
    assert "field 'fixtures': fields scoring reads its keys from keys/<id>/<fixture>.json" in line


ID_RULE = "expected a fixture id (up to 128 ASCII letters, digits, '.', '_', '-', not starting with '.' or '-')"
NOT_JSON = ("is not JSON; expected text in double quotes, or a number as JSON writes one (no '+', no leading 0, no "
            "0x, no '_')")


@pytest.mark.parametrize(("written", "said"), [
    ("-0", f"field 'id': {ID_RULE}; got the number -0, which starts with '-' (HYPHEN-MINUS)"),
    ("1.0", f"field 'id': {ID_RULE}; got the number 1.0, which a JSON reader reads as 1.0 (a fraction or an "
            "exponent is no id as written); write the id in double quotes (\"1.0\")"),
    ("1e0", f"field 'id': {ID_RULE}; got the number 1e0, which a JSON reader reads as 1.0 (a fraction or an "
            "exponent is no id as written); write the id in double quotes (\"1e0\")"),
    ("1" + "0" * 200, f"field 'id': {ID_RULE}; got the number 1000000000000000000000000000000000000000…, 201 "
                      "characters; shorten it to at most 128"),
    ("true", f"field 'id': {ID_RULE}; got true"),
    ("[1]", f"field 'id': {ID_RULE}; got [1]"),
    ("01", f"field 'id': 01 {NOT_JSON}"),
    ("+1", f"field 'id': +1 {NOT_JSON}"),
    ("0x1", f"field 'id': 0x1 {NOT_JSON}"),
    ("1_0", f"field 'id': 1_0 {NOT_JSON}"),
])
def test_a_numeric_id_is_read_as_written_or_refused_naming_it_as_written(tmp_path: Path, written: str,
                                                                          said: str) -> None:
    """Review (left24b): an id `-0` was read as `0` (a fixture renamed, silently, or colliding with a row `0`);
    `1e0` was refused as 'got 1.0' and `true` as 'got True', not as written; `01`, `+1`, `0x1` and `1_0` said
    json's 'Expecting ',' delimiter: line 1 column 9 (char 8)'. An id is read as written: a JSON integer as its
    digits, anything else refused naming what the row holds."""
    rows = (f'{{"id": "q1", "input": "x", "answer": "red"}}\n'
            f'{{"id": {written}, "input": "y", "answer": "red"}}\n')
    assert _error(_project(tmp_path, data=rows)) == f"data/colours.jsonl:2: {said}"


def test_two_ids_that_read_as_one_number_are_two_ids_as_written(tmp_path: Path) -> None:
    """`0` and `-0` were one id ('the fixture id '0' is also on line 2'), the line naming neither as written; a
    whole number is the id its digits spell, and names its key as they do."""
    rows = ('{"id": "q1", "input": "x", "answer": "red"}\n{"id": 0, "input": "y", "answer": "red"}\n'
            '{"id": -0, "input": "z", "answer": "red"}\n')
    assert _error(_project(tmp_path, data=rows)).startswith(
        f"data/colours.jsonl:3: field 'id': {ID_RULE}; got the number -0, which starts with '-'")
    rows = '{"id": "q1", "input": "x", "answer": "red"}\n{"id": 70, "input": "y", "answer": "red"}\n'
    card = _load(_project(tmp_path / "whole", data=rows))
    assert card.fixture_ids() == ["70", "q1"]  # type: ignore[attr-defined]
    keys = card.answer_keys(tmp_path / "whole" / "keys" / "colours")  # type: ignore[attr-defined]
    assert keys["70"].body == {"fixture": "70", "answer": "red"}
