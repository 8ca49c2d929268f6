"""Per-sample scores read from other tools' logs (compare/_logs.py): lm-eval's samples files in both their
forms, the task and model they name, and every unreadable file refused in one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.compare._logs import Sample, read_samples
from benchcard.errors import CompareError

from ..helpers_compare import LM_A, bc


def _write(path: Path, rows: list[object], as_list: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(rows) if as_list else "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_checked_in_lm_eval_log_reads_as_forty_samples_of_one_epoch() -> None:
    s = read_samples(LM_A)
    assert (s.tool, s.task, s.model) == ("lm-eval", "arc_easy", "model-a")  # model: the log's folder
    assert s.metrics == ("acc", "acc_norm") and len(s.samples) == 40
    assert {epoch for _, epoch in s.samples} == {0}
    first = s.samples[("0", 0)]
    assert first.status == "ok" and set(first.metrics) == {"acc", "acc_norm"}


def test_rows_and_a_json_list_read_alike_and_name_task_and_model_from_the_rows(tmp_path: Path) -> None:
    rows: list[object] = [{"doc_id": 1, "metrics": ["exact_match"], "exact_match": True, "task_name": "gsm8k",
                           "model_name": "org/m"},
                          {"doc_id": 0, "filter": "none", "metrics": ["exact_match"], "exact_match": 0.0}]
    as_rows = read_samples(_write(tmp_path / "a" / "x.jsonl", rows))
    as_list = read_samples(_write(tmp_path / "b" / "x.json", rows, as_list=True))
    for s in (as_rows, as_list):
        assert (s.task, s.model) == ("gsm8k", "org/m")
        assert dict(s.samples) == {("1", 0): Sample("ok", {"exact_match": 1.0}),
                                   ("0", 0): Sample("ok", {"exact_match": 0.0})}


@pytest.mark.parametrize(("name", "task"), [("samples_gsm8k_cot_2026-11-30T10.jsonl", "gsm8k_cot"),
                                            ("samples_arc_easy.jsonl", "arc_easy"), ("mine.jsonl", "mine")])
def test_the_task_is_taken_from_the_file_name_when_the_rows_do_not_say(tmp_path: Path, name: str,
                                                                        task: str) -> None:
    path = _write(tmp_path / name, [{"doc_id": 0, "metrics": ["acc"], "acc": 1}])
    assert read_samples(path).task == task


def test_values_that_are_not_numbers_are_counted_and_left_out(tmp_path: Path) -> None:
    rows: list[object] = [{"doc_id": i, "metrics": ["acc", "bleu"], "acc": 1, "bleu": [["ref"], ["pred"]]}
                          for i in range(3)]
    rows.append({"doc_id": 3, "metrics": ["acc"], "acc": float("nan")})
    s = read_samples(_write(tmp_path / "s.jsonl", rows))
    assert s.metrics == ("acc",) and dict(s.skipped) == {"bleu": 3, "acc": 1}
    assert s.samples[("3", 0)] == Sample("ok", {})


@pytest.mark.parametrize(("content", "message"), [
    ("", "{path}: no samples; expected lm-eval's --log_samples output"),
    ("{not json\n", "{path}:1: not JSON"),
    ('{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n[1]\n', "{path}:2: expected an lm-eval sample object"),
    ('{"doc_id": 0, "acc": 1}\n', "{path}:1: expected an lm-eval sample with doc_id and metrics"),
    ('{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n{"doc_id": 0, "metrics": ["acc"], "acc": 0}\n',
     "{path}:2: doc_id 0 with filter none appears twice; a comparison does not guess which of the two is the answer"),
    ("[1, 2", "{path}: not JSON: "),
    ("[3]", "{path}: item 1: expected an lm-eval sample object"),
])
def test_a_bad_log_is_one_line_naming_the_file_and_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "samples_t_2026.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CompareError) as err:
        read_samples(path)
    assert str(err.value).startswith(message.format(path=path)) and "\n" not in str(err.value)


def test_a_missing_or_undecodable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CompareError, match=r"nope\.jsonl: no such file"):
        read_samples(tmp_path / "nope.jsonl")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"doc_id": 0, "metrics": ["acc"], "acc": 1, "q": "caf\xe9"}\n')
    with pytest.raises(CompareError, match=r"latin\.jsonl:1: unreadable: "):
        read_samples(latin)


def test_lm_eval_filters_become_metrics_and_lists_are_left_out(tmp_path: Path) -> None:
    def write(path: Path, right: list[int]) -> None:
        path.parent.mkdir(parents=True)
        lines = []
        for i, r in enumerate(right):
            for filt, value in (("strict-match", r), ("flexible-extract", 1)):
                lines.append(json.dumps({"doc_id": i, "filter": filt, "metrics": ["exact_match", "bleu"],
                                         "exact_match": value, "bleu": [["ref"], ["pred"]]}))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    a, b = tmp_path / "a" / "samples_gsm8k_2026.jsonl", tmp_path / "b" / "samples_gsm8k_2026.jsonl"
    write(a, [0, 0, 1, 0, 1, 0, 0, 1])
    write(b, [1, 1, 1, 1, 1, 1, 1, 1])
    result = bc("compare", str(a), str(b), "--win", "exact_match,strict-match rises", "--json")
    assert result.exit_code == 0, result.stderr
    v = json.loads(result.stdout)
    assert v["metrics"]["exact_match,strict-match"]["gap"] == pytest.approx(5 / 8)
    assert v["sources"][0]["task"] == "gsm8k"
    assert any("8 value(s) of bleu,strict-match are not numbers and were left out" in n for n in v["notes"])
    missing = bc("compare", str(a), str(b), "--win", "bleu,strict-match rises")
    assert missing.exit_code == 1
    assert ("field 'win.all.0.metric': unknown metric 'bleu,strict-match'; the logs have "
            "exact_match,flexible-extract, exact_match,strict-match") in missing.stderr



def _rows_with_documents(path: Path, n: int, size: int) -> Path:
    """An lm-eval samples file of `n` rows, each holding a document of `size` characters (lm-eval logs the whole
    document, its prompts and responses with every row), `acc` alternating."""
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"doc_id": i, "doc": {"text": "x" * size}, "filter": "none", "metrics": ["acc"],
                                 "acc": i % 2}) + "\n")
    return path


def test_a_large_log_is_read_a_row_at_a_time_not_held_whole(tmp_path: Path) -> None:
    """Hostile audit: a samples file was read whole and every row kept (documents, prompts, responses): 264 MB took
    2.26 GB of memory, so a log at the 2 GiB limit would have needed about 17 GB. Now only what a comparison uses
    is kept: 40 rows of 1 MB are read with at most a few rows' worth of memory at a time."""
    import tracemalloc

    a = _rows_with_documents(tmp_path / "a.jsonl", 40, 1_000_000)
    tracemalloc.start()
    try:
        s = read_samples(a)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(s.samples) == 40 and s.samples[("3", 0)] == Sample("ok", {"acc": 1.0})
    assert peak < 10_000_000, peak  # the file is 40 MB


def test_line_separators_inside_a_rows_strings_do_not_split_it(tmp_path: Path) -> None:
    """lm-eval writes its rows with ensure_ascii=False: a document holding U+2028, NEL or a file separator kept
    them raw, and str.splitlines cut the row there ('not JSON'). Rows end at a newline only."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "doc": {"q": "a\u2028b\x85c\x1cd\re"}, "metrics": ["acc"],
                                        "acc": 1}, ensure_ascii=False) + "\n" for i in range(3)), encoding="utf-8")
    assert sorted(read_samples(path).samples) == [("0", 0), ("1", 0), ("2", 0)]
    result = bc("compare", str(path), str(path), "--win", "acc rises", "--out", str(tmp_path / "c"))
    assert result.exit_code == 0, result.stderr


def test_a_json_list_too_large_to_parse_whole_is_refused_naming_the_way_out(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from benchcard.compare import _logs

    monkeypatch.setattr(_logs, "MAX_LIST_BYTES", 1000)
    path = _write(tmp_path / "s.json", [{"doc_id": i, "metrics": ["acc"], "acc": 1} for i in range(40)],
                  as_list=True)
    with pytest.raises(CompareError) as err:
        read_samples(path)
    assert str(err.value) == (f"{path}: {path.stat().st_size:,} bytes in one JSON list, which is parsed whole; above "
                              "1,000 bytes write it one object a line (jq -c '.[]' FILE > FILE.jsonl)")


def test_what_stands_in_a_logs_place_is_named_not_called_missing(tmp_path: Path) -> None:
    """Hostile audit: a loop of links, a FIFO and a folder were each 'no such file'."""
    import os

    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name, said in (("loop1", "a symbolic link that leads to no file (a loop of links, or its target is gone)"),
                       ("fifo", "not a regular file (a FIFO, a socket or a device); a log is a file"),
                       ("folder", "a folder; compare reads two log files")):
        with pytest.raises(CompareError) as err:
            read_samples(tmp_path / name)
        assert str(err.value).startswith(f"{tmp_path / name}: {said}")
    result = bc("compare", str(tmp_path / "fifo"), str(LM_A), "--win", "acc rises")
    assert result.exit_code == 1 and result.stderr == (f"error: {tmp_path / 'fifo'}: not a regular file (a FIFO, a "
                                                       "socket or a device); a log is a file\n")
