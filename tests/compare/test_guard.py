"""Hostile logs (issue 25.6): every reader of another tool's file goes through compare/_guard.py, so each of these
is one line on stderr naming the file and what was wrong, exit 1, never a traceback and never a silent choice."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from click.testing import Result

from benchcard.compare import _guard as guard
from benchcard.compare._guard import MAX_DEPTH
from benchcard.compare._logs import read_samples

from ..helpers_compare import LM_A, LM_B, bc


def _refused(result: Result, *parts: str) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.output and line.startswith("error: "), line
    for part in parts:
        assert part in line, line
    return line


def _lm(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _row(doc_id: object, acc: str) -> str:
    return '{"doc_id": ' + json.dumps(doc_id) + ', "metrics": ["acc"], "acc": ' + acc + "}"


def _compare(tmp_path: Path, a: Path, b: Path) -> Result:
    return bc("compare", str(a), str(b), "--win", "acc rises", "--out", str(tmp_path / "cmp"))


@pytest.mark.parametrize(("acc_a", "acc_b", "said"), [
    ("1e308", "-1e308", "acc is 1e+308: expected a number from -1e+15 to 1e+15 (up to it a float holds every whole "
                        "number, and squares summed over a million cells stay finite; rescale a metric that needs "
                        "more)"),
    ("1" + "0" * 400, "0", "an integer of 401 digits (at most 30 are read); not read"),
    ("12345678901234567890", "0", "acc is 12345678901234567890: expected a number from -1e+15 to 1e+15 (up to it"),
])
def test_numbers_beyond_any_score_are_refused_naming_file_and_line(tmp_path: Path, acc_a: str, acc_b: str,
                                                                    said: str) -> None:
    a = _lm(tmp_path / "a" / "samples_t_2026.jsonl", [_row(0, "0"), _row(1, acc_a)])
    b = _lm(tmp_path / "b" / "samples_t_2026.jsonl", [_row(0, "1"), _row(1, acc_b)])
    _refused(_compare(tmp_path, a, b), f"{a}:2: ", said)


def test_a_line_nested_100000_deep_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    deep = '{"doc_id": 0, "metrics": ["acc"], "acc": 1, "doc": ' + "[" * 100_000 + "]" * 100_000 + "}"
    a = _lm(tmp_path / "a" / "samples_t_2026.jsonl", [_row(1, "0"), deep])
    _refused(_compare(tmp_path, a, LM_B), f"{a}:2: JSON nested deeper than {MAX_DEPTH} levels; not read")
    shallow = '{"doc_id": 0, "metrics": ["acc"], "acc": 1, "doc": ' + "[" * 70 + "]" * 70 + "}"  # walked, refused
    b = _lm(tmp_path / "b" / "samples_t_2026.jsonl", [shallow])
    _refused(_compare(tmp_path, LM_A, b), f"{b}:1: JSON nested deeper than {MAX_DEPTH} levels")


@pytest.mark.parametrize(("doc_ids", "said"), [
    ([True], 'doc_id true: expected an integer (lm-eval numbers its documents)'),
    (["1"], 'doc_id "1": expected an integer'),
    ([0, 0], "doc_id 0 with filter none appears twice; a comparison does not guess which of the two is the answer"),
])
def test_lm_eval_doc_ids_are_integers_seen_once(tmp_path: Path, doc_ids: list[object], said: str) -> None:
    """`doc_id: true` no longer becomes sample "True", nor "1" sample 1: an lm-eval id is an integer, refused
    otherwise (the same rule as inspect_ai's ids: one spelling, one kind)."""
    a = _lm(tmp_path / "a" / "samples_t_2026.jsonl", [_row(i, "1") for i in doc_ids])
    _refused(_compare(tmp_path, a, LM_B), f"{a}:{len(doc_ids)}: ", said)


def _rewrite(src: Path, dest: Path, change: dict[str, bytes]) -> Path:
    """A copy of an `.eval` archive with some members' bytes replaced."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, change.get(info.filename, old.read(info.filename)))
    return dest


def test_an_inspect_sample_and_epoch_twice_is_refused_not_the_last_kept(inspect_logs: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    """inspect_ai's own reader keeps the last row of a repeated (id, epoch); compare refuses, as for lm-eval."""
    a = inspect_logs["a"]
    with zipfile.ZipFile(a) as archive:
        rows = json.loads(archive.read("summaries.json"))
    twice = _rewrite(a, tmp_path / "twice.eval", {"summaries.json": json.dumps([*rows, rows[0]]).encode()})
    result = bc("compare", str(twice), str(inspect_logs["b"]), "--win", "match rises", "--out", str(tmp_path / "x"))
    _refused(result, f"{twice}: summaries.json: sample id {rows[0]['id']} epoch {rows[0]['epoch']} appears twice")
    c = inspect_logs["c"]  # a .json log: its samples list, read through inspect_ai, checked the same way
    log = json.loads(c.read_text(encoding="utf-8"))
    log["samples"].append(log["samples"][0])
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(log), encoding="utf-8")
    result = bc("compare", str(dup), str(inspect_logs["b"]), "--win", "match rises", "--out", str(tmp_path / "y"))
    _refused(result, f"{dup}: sample id q0 epoch 1 appears twice")


def test_an_inspect_score_beyond_any_score_is_refused(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    """1e308 in an inspect_ai summary: read by inspect_ai, refused by the guard before any statistic."""
    a = inspect_logs["a"]
    with zipfile.ZipFile(a) as archive:
        rows = json.loads(archive.read("summaries.json"))
    rows[0]["scores"]["match"]["value"] = 1e308
    huge = _rewrite(a, tmp_path / "huge.eval", {"summaries.json": json.dumps(rows).encode()})
    result = bc("compare", str(huge), str(inspect_logs["b"]), "--win", "match rises", "--out", str(tmp_path / "x"))
    _refused(result, f"{huge}: sample {rows[0]['id']} epoch {rows[0]['epoch']}: match is 1e+308: expected a number "
                     "from -1e+15 to 1e+15 (up to it a float holds every whole number")


def test_integer_and_text_ids_of_one_spelling_are_never_paired(inspect_logs: dict[str, Path],
                                                              tmp_path: Path) -> None:
    log = json.loads(inspect_logs["c"].read_text(encoding="utf-8"))
    as_int, as_text = tmp_path / "int.json", tmp_path / "text.json"
    for path, value in ((as_int, 1), (as_text, "1")):
        for sample in log["samples"]:
            if sample["id"] == "q0":
                sample["id"] = value
        path.write_text(json.dumps(log), encoding="utf-8")
        for sample in log["samples"]:
            if sample["id"] == value:
                sample["id"] = "q0"
    result = bc("compare", str(as_int), str(as_text), "--win", "match rises", "--out", str(tmp_path / "x"))
    _refused(result, f"{as_text}: sample id 1 is a text here but an integer in {as_int}")


def test_a_zip_bomb_is_refused_by_its_declared_sizes_before_decompressing(inspect_logs: dict[str, Path],
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A header that unpacks to 8 MB of zeros from a few KB, against a limit lowered to 1 MB for the test (the
    real ones are 256 MiB for one member and 1 GiB in all; a real bomb of 1.6 GB in 1.7 MB is refused the same
    way, measured in docs/security.md): refused from the archive's directory, nothing inflated."""
    monkeypatch.setattr(guard, "MAX_UNPACKED_BYTES", 1024**2)
    bomb = _rewrite(inspect_logs["a"], tmp_path / "bomb.eval", {"header.json": b"0" * (8 * 1024**2)})
    assert bomb.stat().st_size < 200_000
    result = bc("compare", str(bomb), str(inspect_logs["b"]), "--win", "match rises", "--out", str(tmp_path / "x"))
    _refused(result, f"{bomb}: member header.json declares 8,388,608 bytes unpacked",
             "or 1,048,576 in all are never unpacked (refused before decompressing)")
    # whole samples (never opened by compare: their summaries are) are not counted
    big_sample = _rewrite(inspect_logs["a"], tmp_path / "big.eval",
                          {"samples/q0_epoch_1.json": b" " * (2 * 1024**2)})
    assert len(read_samples(big_sample).samples) == 24


def test_a_file_beyond_the_size_limit_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard, "MAX_FILE_BYTES", 1000)
    big = _lm(tmp_path / "a" / "samples_t_2026.jsonl", [_row(i, "1") for i in range(100)])
    _refused(_compare(tmp_path, big, LM_B), f"{big}: {big.stat().st_size:,} bytes; a log of more than 1,000 bytes "
                                            "is not read")


def test_logs_whose_samples_of_one_id_are_not_one_sample_are_refused(tmp_path: Path) -> None:
    """Hostile audit: paired by id alone, doc 3 of one dataset was compared with doc 3 of another (a win). lm-eval
    writes each document's digest (`doc_hash`): a doc_id whose digest differs is refused, naming it."""
    rows = [json.loads(line) for line in LM_B.read_text(encoding="utf-8").splitlines()]
    rows[5]["doc_hash"] = "0" * 64
    other = _lm(tmp_path / "model-c" / LM_B.name, [json.dumps(r) for r in rows])
    _refused(_compare(tmp_path, LM_A, other), f"error: {other}: doc_id 5 has doc_hash 000000000",
             f"in {LM_A}: not the same sample, so the two logs cannot be paired (logs of different tasks or datasets)")
    for row in rows:  # another task over the same documents (a prompt variant): its digests show it, so it pairs
        row["doc_hash"], row["task_name"] = json.loads(LM_A.read_text().splitlines()[row["doc_id"]])["doc_hash"], "x"
    variant = _lm(tmp_path / "model-d" / LM_B.name, [json.dumps(r) for r in rows])
    assert _compare(tmp_path, LM_A, variant).exit_code == 0


def test_logs_of_two_tasks_that_do_not_show_their_samples_are_the_same_are_refused(tmp_path: Path) -> None:
    a = _lm(tmp_path / "a.jsonl", [json.dumps({"doc_id": i, "metrics": ["acc"], "acc": 0, "task_name": "arc_easy"})
                                   for i in range(8)])
    b = _lm(tmp_path / "b.jsonl", [json.dumps({"doc_id": i, "metrics": ["acc"], "acc": 1, "task_name": "gsm8k"})
                                   for i in range(8)])
    _refused(_compare(tmp_path, a, b), f"error: {a} is a log of task arc_easy but {b} of gsm8k, and their samples "
             "do not carry a doc_hash to show they are the same; compare two logs of one task")


def test_an_inspect_sample_with_another_target_is_not_paired(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    log = json.loads(inspect_logs["c"].read_text(encoding="utf-8"))
    for sample in log["samples"]:
        if sample["id"] == "q3":
            sample["target"] = "blue"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(log), encoding="utf-8")
    result = bc("compare", str(inspect_logs["b"]), str(other), "--win", "match rises", "--out", str(tmp_path / "x"))
    _refused(result, f'error: {other}: sample q3 has target "blue" but "red" in {inspect_logs["b"]}: not the same '
             "sample")


def test_an_inspect_json_log_too_large_to_read_whole_is_refused_naming_the_conversion(
        inspect_logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit: inspect_ai reads a .json log whole, about 3.2 times its size in memory (a 57 MB log took
    180 MB more than a small one), so one at the 2 GiB limit would have needed about 7 GB; an .eval log's
    summaries are read alone. Above the .json limit the line says how to convert it."""
    from benchcard.compare import _logs

    c = inspect_logs["c"]  # a .json log
    monkeypatch.setattr(_logs, "MAX_JSON_LOG_BYTES", c.stat().st_size - 1)
    result = bc("compare", str(c), str(inspect_logs["b"]), "--win", "match rises", "--out", str(tmp_path / "x"))
    _refused(result, f"error: {c}: {c.stat().st_size:,} bytes of an inspect_ai .json log, which inspect_ai reads "
             "whole", f"inspect log convert --to eval --stream 10 --output-dir DIR {c}")
    monkeypatch.setattr(_logs, "MAX_JSON_LOG_BYTES", c.stat().st_size)
    assert bc("compare", str(c), str(inspect_logs["b"]), "--win", "match rises", "--out",
              str(tmp_path / "y")).exit_code == 0  # .eval logs (b) are not held to it
