"""An answer key typed once: read from its file with the line each field starts on, so that every error about
it names the file, the line and the field (the scorers' own checks: tests/scoring)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchcard.errors import CardError
from benchcard.records.answerkey import AnswerKey, field_lines, read_key_file


def test_a_key_file_is_its_object_as_written_with_each_fields_line(tmp_path: Path) -> None:
    path = tmp_path / "f01.json"
    path.write_text('{\n  "fixture": "f01",\n  "note": {"label": "not this one"},\n  "label":\n    ["a", "b"]\n}\n',
                    encoding="utf-8")
    key = read_key_file(path)
    assert (key.fixture, key.source, key.get("label"), key.get("nope")) == ("f01", str(path), ["a", "b"], None)
    assert key.lines == {"fixture": 2, "note": 3, "label": 4}  # a nested field is not the key's own
    assert key.where("label") == f"{path}:4: field 'label'" and key.where("missing") == f"{path}: field 'missing'"
    assert str(key.fail(None, "expected at least one value")) == f"{path}: expected at least one value"
    assert key.text() == '{"fixture": "f01", "note": {"label": "not this one"}, "label": ["a", "b"]}'


def test_a_data_files_row_is_named_by_its_line() -> None:
    key = AnswerKey("r3", "fixtures/c.jsonl:7", {"fixture": "r3", "label": "crème"})
    assert str(key.fail("label", "expected text")) == "fixtures/c.jsonl:7: field 'label': expected text"
    assert key.text() == '{"fixture": "r3", "label": "crème"}'


@pytest.mark.parametrize(("text", "says"), [("[1]", "expected a JSON object, got list"),
                                            ("{nope", "not valid JSON"), ("[" * 100_000, "nested too deeply")])
def test_a_file_that_is_not_a_json_object_is_one_line_naming_it(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "f01.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CardError) as caught:
        read_key_file(path)
    assert str(caught.value).startswith(f"{path}: ") and says in str(caught.value) and "\n" not in str(caught.value)


def test_field_lines_of_one_line_a_field_written_twice_and_escaped_names() -> None:
    assert field_lines('{"a": 1, "b": {"c": [1, {"d": 2}]}, "e\\"f": "x"}') == {"a": 1, "b": 1, 'e"f': 1}
    assert field_lines('{"a": 1,\n"a": 2}') == {"a": 1}
    assert field_lines("  {\n}") == {} and field_lines("[]") == {}


@pytest.mark.parametrize(("text", "says"), [
    ('{\n  "fixture": "f01",\n  "label": ["a"],\n  "label": ["b"]\n}\n', ":3: field 'label': written twice; keep one"),
    ('{\n  "fixture": "f01",\n  "label": [{"value": "a \\ud800"}]\n}\n',
     ":3: field 'label': a lone surrogate (\\ud800-\\udfff) is not text; write the character itself"),
    *((f'{{\n  "fixture": "f01",\n  "answer": {{"low": 0, "high": {number}}}\n}}\n',
       f":3: field 'answer': {number} is not a JSON number (JSON has no NaN or infinity, and 1e400 is beyond a "
       "double); write a finite number, or quote it as text") for number in ("NaN", "Infinity", "-Infinity", "1e400")),
])
def test_a_field_written_twice_or_a_lone_surrogate_is_one_line_naming_its_line(tmp_path: Path, text: str,
                                                                                 says: str) -> None:
    """json keeps the last of two fields silently, a lone surrogate fails later in a hash, and NaN, Infinity or a
    number beyond a double (read as inf) are not JSON, which a judge was shown as `NaN`: all are refused."""
    path = tmp_path / "f01.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CardError) as caught:
        read_key_file(path)
    assert str(caught.value) == f"{path}{says}"


def test_a_key_file_written_twice_is_refused_by_seal_in_one_line(tmp_path: Path) -> None:
    from ..helpers_cli import bc, one_line_error
    from ..helpers_project import copy_project

    root = copy_project(tmp_path / "proj", cards=("bench-01",))
    key = root / "keys" / "bench-01" / "excerpt-03.json"
    key.write_text(key.read_text(encoding="utf-8").replace('{', '{"fixture": "excerpt-99",', 1), encoding="utf-8")
    line = one_line_error(bc(root, "seal", "bench-01"))
    assert line.endswith("keys/bench-01/excerpt-03.json:1: field 'fixture': written twice; keep one")


def test_a_key_saved_with_a_byte_order_mark_reads_as_without_one(tmp_path: Path) -> None:
    """A key an editor saved as UTF-8 "with BOM" failed `check` with "not valid JSON (Unexpected UTF-8 BOM (decode
    using utf-8-sig) …)" and then "its fixture has no answer key" for every worked example; it reads as the same key
    without the mark (JSON lets a reader skip it, and no model is sent a key), as a data file's BOM does. The seal
    still digests the file's bytes as written."""
    from ..helpers_cli import bc
    from ..helpers_project import copy_project

    root = copy_project(tmp_path / "proj", cards=("bench-01",))
    key = root / "keys" / "bench-01" / "excerpt-03.json"
    plain = read_key_file(key)
    key.write_bytes(b"\xef\xbb\xbf" + key.read_bytes())
    marked = read_key_file(key)
    assert (marked.body, marked.lines) == (plain.body, plain.lines)
    checked = bc(root, "check", "bench-01", "--no-rig")
    assert checked.exit_code == 0 and "BOM" not in checked.output, checked.output
    assert bc(root, "seal", "bench-01").exit_code == 0
