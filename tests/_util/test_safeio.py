"""Files a user hands benchcard: a regular UTF-8 file within its size limit is read; anything else is one line
naming the file (and, for text that is not UTF-8, the line and byte), never a hang or a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchcard._util.safeio import decode_utf8, load_json_file, miscased, read_regular_bytes, read_regular_text
from benchcard.errors import CardError, ProjectError

from ..helpers_cli import as_a_user_each
from ..helpers_project import copy_project
from ..helpers_verdict import cli_run, make_project, strong_run


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    path.write_bytes(b"caf\xc3\xa9\n" * 100_000)
    assert read_regular_bytes(path, "keys/k.json", CardError) == b"caf\xc3\xa9\n" * 100_000
    assert read_regular_text(str(path), "keys/k.json", CardError) == "café\n" * 100_000


def test_a_missing_file_a_folder_and_a_fifo_are_one_line_each(tmp_path: Path) -> None:
    with pytest.raises(CardError, match=r"^cards/x\.yaml: cannot read: No such file or directory$"):
        read_regular_bytes(tmp_path / "absent.yaml", "cards/x.yaml", CardError)
    with pytest.raises(ProjectError, match=r"^cards/x\.yaml: not a regular file \(a folder\); expected a text file$"):
        read_regular_bytes(tmp_path, "cards/x.yaml", ProjectError)
    os.mkfifo(tmp_path / "pipe")  # nobody writes to it: a blocking open would hang here
    with pytest.raises(CardError, match=r"^fixtures/p\.txt: not a regular file \(a FIFO\); expected a text file$"):
        read_regular_text(tmp_path / "pipe", "fixtures/p.txt", CardError)


def test_a_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CardError, match=r"^dev: not a regular file \(a device\)"):
        read_regular_bytes("/dev/null", "dev", CardError)


def test_a_file_over_the_limit_is_refused_and_one_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2000)
    with pytest.raises(CardError, match=r"^big\.txt: 2,000 bytes; expected at most 1,999$"):
        read_regular_bytes(path, "big.txt", CardError, max_bytes=1999)
    assert len(read_regular_bytes(path, "big.txt", CardError, max_bytes=2000)) == 2000


def test_text_that_is_not_utf8_names_its_line_byte_and_offset() -> None:
    with pytest.raises(CardError, match=r"^f\.txt:3: not UTF-8 text \(byte 0xe9 at offset 8\); save the file as "
                                        r"UTF-8$"):
        decode_utf8(b"one\ntwo\n\xe9", "f.txt", CardError)
    assert decode_utf8("ſ K 😀".encode(), "f.txt", CardError) == "ſ K 😀"


def test_a_json_file_is_parsed_and_bad_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    path.write_text('{"fixture": "f1", "fields": [1, 2.5, null]}', encoding="utf-8")
    assert load_json_file(path, "keys/k.json", CardError) == {"fixture": "f1", "fields": [1, 2.5, None]}
    path.write_text('{"fixture": ', encoding="utf-8")
    with pytest.raises(CardError, match=r"^keys/k\.json: not valid JSON \(Expecting value: line 1 column 13"):
        load_json_file(path, "keys/k.json", CardError)
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(CardError, match=r"^keys/k\.json: not valid JSON \(nested too deeply\)$"):
        load_json_file(path, "keys/k.json", CardError)
    with pytest.raises(CardError, match=r"^keys/k\.json: \d[\d,]* bytes; expected at most 10$"):
        load_json_file(path, "keys/k.json", CardError, max_bytes=10)


def test_a_whole_number_of_more_digits_than_python_reads_is_one_line_in_benchcards_words(tmp_path: Path) -> None:
    """json's own error told the user to call `sys.set_int_max_str_digits()` (hostile audit, round 20)."""
    from benchcard.records.answerkey import read_key_file

    path = tmp_path / "f1.json"
    path.write_text('{"fixture": "f1",\n "n": [-' + "9" * 5000 + "]}", encoding="utf-8")
    said = ("field 'n': a whole number of 5,000 digits, more than the 4,300 digits a number is read with; quote it "
            "as text")
    with pytest.raises(CardError) as info:
        read_key_file(path)
    assert str(info.value) == f"{path}:2: {said}"
    with pytest.raises(CardError) as info:
        load_json_file(path, "keys/f1.json", CardError)
    assert str(info.value) == f"keys/f1.json: not valid JSON ({said})" and "sys." not in str(info.value)
    path.write_text('{"fixture": "f1", "n": ' + "9" * 4300 + "}", encoding="utf-8")
    assert load_json_file(path, "keys/f1.json", CardError)["n"] == int("9" * 4300)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("file", "how", "command", "said"), [
    ("results/ledger.jsonl", "append", ("ledger",), "results/ledger.jsonl: line 2 is not JSON (an edited row)"),
    ("results/ledger.jsonl", "append", ("ledger", "--verify"), "results/ledger.jsonl: line 2 is not JSON"),
    ("RUN/verdict.json", "replace", ("verdict", "RUN", "--show"), "verdict.json: not JSON"),
    ("RUN/outputs.jsonl", "append", ("status", "RUN"), "outputs.jsonl: line 37 is not JSON"),
    ("RUN/scores.jsonl", "append", ("export", "RUN", "--format", "csv", "--out", "-"), "scores.jsonl"),
    ("RUN/manifest.json", "replace", ("ledger", "--verify"), "manifest.json is unreadable"),
])
def test_a_file_of_a_run_or_the_ledger_nested_past_the_stack_is_one_line(tmp_path: Path, file: str, how: str,
                                                                          command: tuple[str, ...],
                                                                          said: str) -> None:
    """A ledger row, verdict.json, a row of outputs.jsonl or scores.jsonl, or a manifest edited to JSON
    nested 100,000 deep: json.loads raised RecursionError, which no one-line refusal caught, so `ledger`,
    `verdict --show`, `status`, `export` and `site` ended in a traceback."""
    project = make_project(tmp_path / "p")
    run_dir = strong_run(project)
    assert cli_run(project, "verdict", run_dir.name).exit_code == 0
    path = project.root / file.replace("RUN", str(run_dir.relative_to(project.root)))
    if how == "append":
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(DEEP + "\n")
    else:
        path.write_text(DEEP + "\n", encoding="utf-8")
    result = cli_run(project, *(run_dir.name if part == "RUN" else part for part in command))
    assert isinstance(result.exception, SystemExit), result.exception
    assert said in result.output and "Traceback" not in result.output


def test_a_record_file_with_something_else_in_its_place_is_refused_not_read_as_absent(tmp_path: Path) -> None:
    """Hostile audit (hostile21, a file replaced between steps): the ledger made a folder read as `no verdicts yet`
    and `ledger --verify` said rows were deleted; a run's outputs.jsonl made a folder read as no cell recorded
    (`status`: 0 ok, finished; `run --resume`: nothing to call). Nothing there is absent; anything else is one line."""
    from benchcard._util.safeio import present

    path = tmp_path / "outputs.jsonl"
    assert present(path, "outputs.jsonl", ProjectError) is False
    assert present(path / "below", "below", ProjectError) is False  # a folder on the way that is a file: absent too
    path.write_bytes(b"")
    assert present(path, "outputs.jsonl", ProjectError) is True
    path.unlink()
    for kind, make in (("a folder", os.mkdir), ("a FIFO", os.mkfifo)):
        make(path)
        with pytest.raises(ProjectError) as refused:
            present(path, "outputs.jsonl", ProjectError)
        assert str(refused.value) == (f"outputs.jsonl: not a regular file ({kind}), where benchcard keeps one; move "
                                      "it aside and put the file back")
        os.rmdir(path) if kind == "a folder" else path.unlink()


@pytest.mark.parametrize(("shut", "said"), [
    ("keys/bench-01", "keys/bench-01/v1.seal.json: cannot read: Permission denied (the folder keys/bench-01/ may "
                      "not be opened)"),
    ("keys", "keys/bench-01/v1.seal.json: cannot read: Permission denied (the folder keys/ may not be opened)"),
    ("keys/bench-01/excerpt-03.json", "keys/bench-01/excerpt-03.json: cannot read: Permission denied"),
])
def test_a_keys_folder_that_may_not_be_opened_is_named(tmp_path: Path, shut: str, said: str) -> None:
    """`chmod 000 keys/<card>` (hostile21, permissions): `check` and `seal` said `keys/bench-01/v1.seal.json: cannot
    read: Permission denied` of a seal never written, naming no folder; `chmod 000 keys` ended them in a bare
    '/…/keys/bench-01: Permission denied'. The line names the folder that refused; a key whose own permission
    refuses is said of itself, never 'missing' nor 'no answer key'."""
    root = copy_project(tmp_path / "proj", ("bench-01",))
    (root / shut).chmod(0o000)
    try:
        checked, sealed = as_a_user_each(*(("-C", str(root), command, "bench-01") for command in ("check", "seal")))
    finally:
        (root / shut).chmod(0o755 if (root / shut).is_dir() else 0o644)
    assert checked.returncode == sealed.returncode == 1
    assert f"error: {said}" in [line.strip() for line in (checked.stdout + checked.stderr).splitlines()]
    assert sealed.stderr.splitlines()[-1] in (f"error: {said}", f"error: refusing to seal: {said}")
    assert "missing" not in checked.stdout + checked.stderr + sealed.stderr


def test_miscased_names_the_first_name_written_in_another_case_or_form(tmp_path: Path) -> None:
    (tmp_path / "fixtures" / "caf\u00e9").mkdir(parents=True)
    (tmp_path / "fixtures" / "caf\u00e9" / "a.txt").write_text("a", encoding="utf-8")
    assert miscased(tmp_path, "fixtures/caf\u00e9/a.txt") is None  # as on disk
    assert miscased(tmp_path, "Fixtures/caf\u00e9/a.txt") == ("Fixtures", "fixtures")
    assert miscased(tmp_path, "fixtures/cafe\u0301/A.txt") == ("cafe\u0301", "caf\u00e9")
    assert miscased(tmp_path, "fixtures/caf\u00e9/A.txt") == ("A.txt", "a.txt")
    assert miscased(tmp_path, "fixtures/../fixtures/caf\u00e9/b.txt") is None  # not there in any case
