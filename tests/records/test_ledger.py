"""The ledger: append-only, dated, hash-chained; tampering is named by its first bad seq; appends from parallel
processes never corrupt it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchcard._util.hashing import digest
from benchcard.cli import cli
from benchcard.errors import LedgerError
from benchcard.project import Project
from benchcard.records import ledger
from benchcard.records.ledgerrow import LedgerRow

from ..helpers_project import PUBLISHED, ledger_row, long_ledger
from ..helpers_wait import wait_until


def _row(i: int, **extra: Any) -> LedgerRow:
    fields: dict[str, Any] = {"run": f"run-{i}", "metrics": {"score": {"gap": 0.1 * i}}, **extra}
    return ledger_row(**fields)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "cards").mkdir()
    return Project(tmp_path)


def _lines(project: Project) -> list[str]:
    return project.ledger_path.read_text(encoding="utf-8").splitlines(keepends=True)


def _fill(project: Project, n: int = 4) -> list[LedgerRow]:
    return [ledger.append(project, _row(i)) for i in range(1, n + 1)]


def test_rows_are_chained_and_dated(project: Project) -> None:
    rows = _fill(project, 3)
    assert [r.seq for r in rows] == [1, 2, 3]
    assert rows[0].prev is None
    assert rows[1].prev == rows[0].hash and rows[2].prev == rows[1].hash
    for r in rows:
        assert r.hash == digest({k: v for k, v in r.fields().items() if k != "hash"})
        assert r.date == r.at[:10] and r.at.endswith("Z")
    assert ledger.read(project) == rows
    ledger.verify(project)


def test_nan_and_infinity_become_null(project: Project) -> None:
    row = ledger.append(project, _row(1, metrics={"score": {"gap": float("nan"), "noise_floor": float("inf")}}))
    assert row.fields()["metrics"]["score"] == {"gap": None, "noise_floor": None}
    text = project.ledger_path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=pytest.fail)
    ledger.verify(project)


def test_a_row_may_not_set_the_chain(project: Project) -> None:
    with pytest.raises(LedgerError, match="may not set seq, hash"):
        ledger.append(project, _row(1, seq=7, hash="x"))


def test_edit_is_named_by_its_seq(project: Project) -> None:
    _fill(project)
    lines = _lines(project)
    lines[2] = lines[2].replace('"finding":"inconclusive"', '"finding":"win"')
    project.ledger_path.write_text("".join(lines))
    with pytest.raises(LedgerError, match=r"seq 3 \(line 3\) is the first bad row: its content does not match"):
        ledger.verify(project)


def test_edit_with_a_recomputed_hash_is_caught_by_the_next_row(project: Project) -> None:
    _fill(project)
    lines = _lines(project)
    row = json.loads(lines[1])
    row["finding"] = "win"
    row["hash"] = ledger.row_hash(row)
    lines[1] = json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"
    project.ledger_path.write_text("".join(lines))
    with pytest.raises(LedgerError, match=r"seq 3 \(line 3\) is the first bad row: its prev does not match"):
        ledger.verify(project)


def test_deleted_row_is_named(project: Project) -> None:
    _fill(project)
    lines = _lines(project)
    del lines[1]
    project.ledger_path.write_text("".join(lines))
    with pytest.raises(LedgerError, match=r"seq 3 \(line 2\) is the first bad row: expected seq 2; 1 row\(s\)"):
        ledger.verify(project)


def test_deleted_first_row_is_named(project: Project) -> None:
    _fill(project)
    project.ledger_path.write_text("".join(_lines(project)[1:]))
    with pytest.raises(LedgerError, match=r"seq 2 \(line 1\) is the first bad row"):
        ledger.verify(project)


def test_reordered_rows_are_named(project: Project) -> None:
    _fill(project)
    lines = _lines(project)
    lines[1], lines[2] = lines[2], lines[1]
    project.ledger_path.write_text("".join(lines))
    with pytest.raises(LedgerError, match=r"seq 3 \(line 2\) is the first bad row"):
        ledger.verify(project)


def test_renumbered_reorder_is_caught_by_prev(project: Project) -> None:
    _fill(project)
    rows = [json.loads(line) for line in _lines(project)]
    rows[1], rows[2] = rows[2], rows[1]
    rows[1]["seq"], rows[2]["seq"] = 2, 3
    project.ledger_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(LedgerError, match=r"seq 2 \(line 2\) is the first bad row: its prev"):
        ledger.verify(project)


def test_a_torn_last_line_is_skipped_refused_and_repaired_into_a_side_file(project: Project) -> None:
    rows = _fill(project, 2)
    whole = project.ledger_path.read_bytes()
    torn = json.dumps(_row(3).fields(), ensure_ascii=False).encode()[:-40]  # a third append cut short
    project.ledger_path.write_bytes(whole + torn)
    assert ledger.read(project) == rows
    ledger.verify(project)  # the chain of whole rows holds
    with pytest.raises(LedgerError, match=r"refusing to append: results/ledger.jsonl: line 3 is torn .*"
                                          r"benchcard ledger --repair"):
        ledger.append(project, _row(3))
    runner = CliRunner()
    shown = runner.invoke(cli, ["-C", str(project.root), "ledger"])
    assert shown.exit_code == 0 and "run-2" in shown.output
    repaired = runner.invoke(cli, ["-C", str(project.root), "ledger", "--repair"])
    assert repaired.exit_code == 0, repaired.output
    [side] = project.results_dir.glob("ledger.jsonl.torn-*")
    assert side.read_bytes() == torn and project.ledger_path.read_bytes() == whole
    assert f"moved the torn last line to results/{side.name}" in repaired.output
    assert ledger.append(project, _row(3)).seq == 3
    again = runner.invoke(cli, ["-C", str(project.root), "ledger", "--repair"])
    assert "nothing to repair" in again.output and side.read_bytes() == torn


def test_an_edited_line_in_the_middle_is_not_taken_for_a_torn_one(project: Project) -> None:
    _fill(project, 3)
    lines = _lines(project)
    lines[1] = lines[1][:-40] + "\n"
    project.ledger_path.write_text("".join(lines))
    with pytest.raises(LedgerError, match="line 2 is not JSON"):
        ledger.verify(project)


def test_append_refuses_a_broken_ledger(project: Project) -> None:
    _fill(project, 3)
    lines = _lines(project)
    del lines[0]
    project.ledger_path.write_text("".join(lines))
    with pytest.raises(LedgerError, match=r"refusing to append to a ledger that fails verification: .*seq 2 \("):
        ledger.append(project, _row(9))
    assert len(_lines(project)) == 2


def _edited(project: Project, index: int, rehash: bool = False) -> None:
    """Row `index` (0-based) edited to say win; with `rehash`, its hash recomputed as a forger would."""
    lines = _lines(project)
    row = json.loads(lines[index]) | {"finding": "win"}
    if rehash:
        row["hash"] = ledger.row_hash(row)
    lines[index] = json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"
    project.ledger_path.write_text("".join(lines))


@pytest.mark.parametrize(("index", "rehash", "message"), [
    (-1, False, r"seq 5 \(line 5\) is the first bad row: its content does not match its hash"),
    (-2, False, r"seq 4 \(line 4\) is the first bad row: its content does not match its hash"),
    (-2, True, r"seq 5 \(line 5\) is the first bad row: its prev does not match the hash of the row before it"),
    (1, False, r"seq 2 \(line 2\) is the first bad row: its content does not match its hash"),
    (0, True, r"seq 2 \(line 2\) is the first bad row: its prev does not match the hash of the row before it"),
])
def test_append_refuses_a_ledger_edited_anywhere_as_verify_names_it(project: Project, index: int, rehash: bool,
                                                                   message: str) -> None:
    """An append checks the whole chain, not its last rows: a row edited anywhere (its hash recomputed by a
    forger, or not) stops the next verdict with verify's own line, naming the first bad row."""
    _fill(project, 5)
    _edited(project, index, rehash)
    before = project.ledger_path.read_bytes()
    with pytest.raises(LedgerError, match="refusing to append to a ledger that fails verification: "
                                          r"results/ledger.jsonl: " + message):
        ledger.append(project, _row(9))
    assert project.ledger_path.read_bytes() == before


@pytest.mark.parametrize("kept", [slice(1, None), slice(2, None), slice(1, 2)])
def test_append_refuses_a_ledger_cut_down_to_rows_that_are_not_its_first(project: Project, kept: slice) -> None:
    """A ledger whose first rows were deleted: its first row must be seq 1 with no prev, as verify requires."""
    _fill(project, 3)
    project.ledger_path.write_text("".join(_lines(project)[kept]))
    with pytest.raises(LedgerError, match=r"refusing to append to a ledger that fails verification: .* is the "
                                          r"first bad row: expected seq 1"):
        ledger.append(project, _row(9))


def test_a_row_longer_than_a_read_from_the_end_chains_as_any_other(project: Project) -> None:
    """Rows of any length (here 150 kB, more than any buffer a reader might use) chain and verify."""
    rows = [ledger.append(project, _row(i, evidence="x" * 150_000 * (i % 2))) for i in range(1, 5)]
    assert [r.prev for r in rows[1:]] == [r.hash for r in rows[:-1]]
    ledger.verify(project)


def test_row_of_run_finds_the_runs_own_row_not_one_that_names_it(project: Project) -> None:
    """The look-up decodes only the lines that hold the id: a replication's row names its original's run first
    (in `replicates`), and the original's own row is the one found; a torn last line is passed over."""
    from benchcard.records.replication import ReplicaLink

    link = ReplicaLink(run="run-2", hash="sha256:" + "b" * 64, seq=2, evidence="results/demo/v1/run-2")
    ledger.append(project, _row(1, run="run-1", replicates=link))
    original = ledger.append(project, _row(2))
    assert ledger.row_of_run(project, "run-2") == original
    assert ledger.row_of_run(project, "run-1") == ledger.read(project)[0]
    assert ledger.row_of_run(project, "run-") is None and ledger.row_of_run(project, "run-3") is None
    whole = project.ledger_path.read_bytes()
    project.ledger_path.write_bytes(whole + json.dumps(_row(3).fields()).encode()[:-40])
    assert ledger.row_of_run(project, "run-3") is None and ledger.row_of_run(project, "run-2") == original
    lines = whole.decode().splitlines(keepends=True)
    project.ledger_path.write_text(lines[0][:-40] + "\n" + lines[1])  # line 1 holds the id, and is not JSON
    with pytest.raises(LedgerError, match="line 1 is not JSON"):
        ledger.row_of_run(project, "run-2")


def test_row_of_run_finds_a_row_rewritten_with_ascii_escapes_and_a_run_id_needing_json_escapes(
        project: Project) -> None:
    """Review of fb81ad3: the byte scan looked for the id only as benchcard writes it, so a ledger passed through
    a JSON tool that escapes what is not ASCII (its hashes still hold) hid the row of a run named café: verdict
    would have entered it twice and set-aside set a ledgered run aside. An id needing JSON's escapes, a prefix
    of another and CRLF line ends are found as written."""
    for run in ("caf\u00e9-1", 'we"ird\\id', "run-1", "run-10"):
        ledger.append(project, _row(1, run=run))
    rows = ledger.read(project)
    lines = project.ledger_path.read_text(encoding="utf-8").splitlines()
    rewritten = "".join(json.dumps(json.loads(line), separators=(",", ":")) + "\r\n" for line in lines)
    project.ledger_path.write_text(rewritten, encoding="utf-8", newline="")
    ledger.verify(project)
    assert [ledger.row_of_run(project, r.run) for r in rows] == rows
    assert ledger.row_of_run(project, "run-") is None and ledger.row_of_run(project, "caf") is None


def test_a_cards_rows_are_read_from_the_lines_holding_its_id_alone(project: Project) -> None:
    """Picking a card's run (`cardruns.card_runs`) decoded every row of the ledger for one card's; it decodes the
    lines holding the card's id, as `row_of_run` does. Over 3,000 rows of three cards (one named with another's
    id in its run id) the card's rows are what `read` gives, in order; a row of another card that does not read
    no longer stops the look-up (`verify` names it), and one of the card's own is the very error `read` gives."""
    cards = ("demo", "demo-2", "caf\u00e9")
    rows = [ledger_row(run=f"run-{i}-{cards[(i + 1) % 3]}", card=cards[i % 3], seq=i + 1) for i in range(3000)]
    lines = [ledger.encode_row(row) + "\n" for row in rows]
    project.results_dir.mkdir()
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    whole = {card: [r for r in ledger.read(project) if r.card == card] for card in cards}
    assert [len(v) for v in whole.values()] == [1000, 1000, 1000]
    assert {card: ledger.card_rows(project, card) for card in cards} == whole
    assert ledger.card_rows(project, "dem") == [] and ledger.card_rows(project, "caf") == []
    lines[1500] = lines[1500][:-40] + "\n"  # a row of demo: not JSON
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    assert ledger.card_rows(project, "demo-2") == whole["demo-2"] and ledger.card_rows(project, "caf\u00e9")
    with pytest.raises(LedgerError) as read:
        ledger.read(project)
    with pytest.raises(LedgerError) as picked:
        ledger.card_rows(project, "demo")
    assert str(picked.value) == str(read.value) == "results/ledger.jsonl: line 1501 is not JSON (an edited row)"
    project.ledger_path.write_text("".join(json.dumps(json.loads(line)) + "\n" for line in lines[:1500]),  # escaped
                                   encoding="utf-8")
    assert ledger.card_rows(project, "caf\u00e9") == whole["caf\u00e9"][:500]


def test_append_after_a_lost_final_newline(project: Project) -> None:
    _fill(project, 2)
    project.ledger_path.write_text(project.ledger_path.read_text().rstrip("\n"))
    ledger.append(project, _row(3))
    ledger.verify(project)
    assert [r.seq for r in ledger.read(project)] == [1, 2, 3]


APPENDER = textwrap.dedent("""
    import sys
    import time
    from pathlib import Path
    from benchcard.records import ledger
    from benchcard.records.ledgerrow import LedgerRow
    from benchcard.project import Project

    project = Project(Path(sys.argv[1]))
    worker = sys.argv[2]
    go = Path(sys.argv[4])
    (go.parent / f"ready-{worker}").touch()  # imported: the test starts every worker once all are here
    while not go.exists():  # start together, so the appends really race
        time.sleep(0.005)
    for i in range(int(sys.argv[3])):
        ledger.append(project, LedgerRow(card="demo", version=1, kind="ab", rig="m · api", run=f"w{worker}-{i}",
                                         cells=1, outcome="non-result", finding="inconclusive", seal_root=None,
                                         evidence="x" * 2000))
""")


def test_parallel_processes_never_corrupt_the_chain(project: Project, tmp_path: Path) -> None:
    script = tmp_path / "append.py"
    script.write_text(APPENDER)
    workers, each = 4, 25
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(script), str(project.root), str(w), str(each), str(go)])
             for w in range(workers)]
    # every appender imported and waiting before any starts (a sleep of 0.5 s let a late one start alone, the
    # appends then raced less); one that died is reported by its exit code below
    wait_until(lambda: len(list(tmp_path.glob("ready-*"))) == workers or any(p.poll() is not None for p in procs),
               120, "every appender to import benchcard and wait at the barrier")
    go.touch()
    assert all(p.wait(timeout=120) == 0 for p in procs)
    ledger.verify(project)
    rows = ledger.read(project)
    assert [r.seq for r in rows] == list(range(1, workers * each + 1))
    assert len({r.run for r in rows}) == workers * each
    ats = [r.at for r in rows]
    assert ats == sorted(ats)


# ------------------------------------------------------------------------------------------------------ CLI


def test_cli_table_json_and_verify(project: Project) -> None:
    _fill(project, 2)
    runner = CliRunner()
    shown = runner.invoke(cli, ["-C", str(project.root), "ledger"])
    assert shown.exit_code == 0
    for text in ("seq", "date", "card", "rig", "finding", "outcome", "run", "demo", "run-2", "inconclusive",
                 "non-result", "m · effort high · api"):
        assert text in shown.output
    as_json = runner.invoke(cli, ["-C", str(project.root), "ledger", "--json"])
    assert [r["seq"] for r in json.loads(as_json.output)] == [1, 2]
    chain = runner.invoke(cli, ["-C", str(project.root), "ledger", "--verify"])  # rows whose run folders never existed
    assert chain.exit_code == 1 and "ledger NOT ok: 2 row(s), hash chain intact, 2 problem(s) above" in chain.output
    assert "FAIL seq 1 (run run-1): results/demo/v1/run-1/ is missing (no manifest.json)" in chain.output
    lines = _lines(project)
    project.ledger_path.write_text(lines[1])
    bad = runner.invoke(cli, ["-C", str(project.root), "ledger", "--verify"])
    assert bad.exit_code == 1
    assert bad.output.strip().splitlines() == [
        "error: results/ledger.jsonl: seq 2 (line 1) is the first bad row: expected seq 1; 1 row(s) before it "
        "are missing (deleted) or it was moved"
    ]


def test_cli_empty_ledger(project: Project) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger"])
    assert result.exit_code == 0 and "no verdicts yet" in result.output
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger", "--verify"])
    assert result.exit_code == 0 and "0 row(s)" in result.output


def test_deleted_last_row_is_caught_through_the_runs_verdict(project: Project) -> None:
    """A hash chain cannot see its own tail cut off; the run's verdict.json still names the row it entered."""
    rows = _fill(project)
    run = project.results_dir / "demo" / "v1" / "run-4"
    run.mkdir(parents=True)
    (run / "verdict.json").write_text(json.dumps({"ledger": {"seq": 4, "hash": rows[3].hash}}))
    ledger.verify(project)
    project.ledger_path.write_text("".join(_lines(project)[:3]))
    with pytest.raises(LedgerError, match=r"seq 4 is missing \(it is recorded in results/demo/v1/run-4/verdict.json\)"):
        ledger.verify(project)
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger", "--verify"])
    assert result.exit_code == 1 and "seq 4 is missing" in result.stderr


# ------------------------------------------------------------------------------------------ the typed row

REPO = Path(__file__).resolve().parents[2]
#: One row of each shape the verdict, compare, judge and grading wrote before rows were typed (2026-12-01):
#: ab, ab + judge, ab + human grades, probe, probe + judge, compare, and rows from before the evidence digests.
OLD_ROWS = REPO / "tests" / "data" / "ledger" / "rows-2026-12-01.jsonl"


@pytest.mark.parametrize("source", [OLD_ROWS, PUBLISHED / "ledger.jsonl"], ids=["every-shape", "repository"])
def test_every_old_row_reads_back_to_the_same_bytes_and_hash(project: Project, source: Path) -> None:
    lines = source.read_text(encoding="utf-8").splitlines()
    project.results_dir.mkdir()
    project.ledger_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = ledger.read(project)
    assert len(rows) == len(lines) > 0
    for line, row in zip(lines, rows, strict=True):
        assert ledger.encode_row(row) == line  # nothing gained, lost, retyped (3 stays 3, 3.0 stays 3.0) or moved
        assert ledger.row_hash(row) == row.hash == json.loads(line)["hash"]


def test_the_repositorys_ledger_verifies_and_a_new_row_chains_onto_it(project: Project) -> None:
    project.results_dir.mkdir()
    old = (PUBLISHED / "ledger.jsonl").read_bytes()
    project.ledger_path.write_bytes(old)
    ledger.verify(project)
    [first] = ledger.read(project)
    row = ledger.append(project, _row(2))
    assert row.seq == 2 and row.prev == first.hash
    assert project.ledger_path.read_bytes().startswith(old)  # the old row is never rewritten
    ledger.verify(project)


def test_a_field_from_a_newer_benchcard_is_kept_in_the_hash(project: Project) -> None:
    """A row carrying a field this version does not know still verifies: its hash covers the row as written."""
    _fill(project, 1)
    row = json.loads(_lines(project)[0])
    row["added_later"] = {"x": 1}
    row["hash"] = ledger.row_hash(row)
    project.ledger_path.write_text(json.dumps(row, separators=(",", ":")) + "\n", encoding="utf-8")
    ledger.verify(project)
    assert ledger.read(project)[0].hash == row["hash"]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r.update(cells="12"), "Expected `int`, got `str` - at `$.cells`"),
    (lambda r: r.pop("finding"), "Object missing required field `finding`"),
    (lambda r: r["clauses"].append({"variant": "A"}), "Object missing required field `metric` - at `$.clauses[0]`"),
])
def test_a_malformed_row_is_one_line_naming_file_row_and_field(project: Project, edit: Any, message: str) -> None:
    _fill(project, 3)
    lines = _lines(project)
    row = json.loads(lines[1])
    edit(row)
    lines[1] = json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    for args in (["ledger"], ["ledger", "--verify"]):
        result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
        assert result.exit_code == 1
        assert result.stderr.splitlines() == [f"error: results/ledger.jsonl: line 2 is not a ledger row: {message}"]


def test_a_row_of_the_wrong_shape_is_refused_before_it_is_written(project: Project) -> None:
    with pytest.raises(LedgerError, match=r"a ledger row for run run-1: Expected `int`, got `str` - at `\$.cells`"):
        ledger.append(project, _row(1, cells="12"))
    assert not project.ledger_path.exists() or project.ledger_path.read_text() == ""


def test_a_ledger_that_is_a_link_to_another_projects_is_neither_read_nor_appended_to(tmp_path: Path) -> None:
    """Hostile audit: results/ledger.jsonl linked to another project's ledger was shown as this project's, and a
    verdict here appended its row there (evidence that project does not hold). Every command refuses it in one
    line; the other ledger is left as it was."""
    from ..helpers_verdict import make_project, strong_run

    other = Project(tmp_path / "other")
    (other.root / "cards").mkdir(parents=True)
    ledger.append(other, _row(1))
    before = other.ledger_path.read_bytes()
    project = make_project(tmp_path / "here")
    run = strong_run(project)
    project.results_dir.mkdir(parents=True, exist_ok=True)
    project.ledger_path.symlink_to(other.ledger_path)
    said = (f"error: results/ledger.jsonl: a symbolic link (to {other.ledger_path}); a project's ledger is a file "
            "of its own, never read or appended through a link: replace the link with this project's ledger")
    for args in (["ledger"], ["ledger", "--verify"], ["verdict", run.name]):
        result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
        assert (result.exit_code, result.stderr.strip()) == (1, said), (args, result.output)
    assert other.ledger_path.read_bytes() == before and not (run / "verdict.json").exists()


def test_a_spoiled_row_that_holds_the_id_in_another_field_stops_no_look_up(project: Project) -> None:
    """A card's id or a run's may stand in another row as the value of another field: a card named `ab` in every
    ab row's `kind`, a run's id in its replication's `replicates`. Such a row was decoded as the card's or the
    run's before it was told apart, so one that does not read (a field edited to the wrong type) stopped
    `verdict ab --show`, `status ab` and the original's `verdict --show` with its error; it is `verify`'s to name."""
    rows = [ledger_row(run="run-1", card="ab", seq=1), ledger_row(run="run-2", card="demo", seq=2),
            ledger_row(run="run-3", card="ab", seq=3)]
    lines = [ledger.encode_row(row) + "\n" for row in rows]
    project.results_dir.mkdir()
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    whole = ledger.read(project)
    other = json.loads(lines[1]) | {"cells": "twelve",
                                    "replicates": {"run": "run-1", "hash": "sha256:0", "seq": 1, "evidence": "e"}}
    lines[1] = json.dumps(other, separators=(",", ":"), ensure_ascii=False) + "\n"
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    assert ledger.card_rows(project, "ab") == [whole[0], whole[2]]
    assert ledger.row_of_run(project, "run-1") == whole[0] and ledger.row_of_run(project, "run-3") == whole[2]
    with pytest.raises(LedgerError, match=r"^results/ledger\.jsonl: line 2 is not a ledger row: Expected `int`"):
        ledger.read(project)
    with pytest.raises(LedgerError, match=r"^results/ledger\.jsonl: line 2 is not a ledger row: Expected `int`"):
        ledger.card_rows(project, "demo")


def test_a_field_written_twice_in_a_row_is_named_though_the_hash_holds(project: Project) -> None:
    """`{"finding":"loss", …, "finding":"win"}` parses as the row that was hashed (json keeps the last of two), so
    the chain held and `--verify` said ok while the line read, to a person or a reader keeping the first, as a
    loss; now the line is named, and no verdict is appended after it."""
    _fill(project, 3)
    lines = _lines(project)
    lines[1] = lines[1].replace('{"seq":2,', '{"seq":2,"finding":"loss",', 1)
    project.ledger_path.write_text("".join(lines), encoding="utf-8")
    for args in (["ledger"], ["ledger", "--verify"]):
        result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
        assert result.exit_code == 1
        assert result.stderr.splitlines() == [
            "error: results/ledger.jsonl: line 2: field 'finding': written twice; keep one (an edited row: its hash "
            "covers one value of a field, a reader may see the other)"]
    with pytest.raises(LedgerError, match="line 2: field 'finding': written twice"):
        ledger.append(project, _row(4))
    assert "".join(_lines(project)) == "".join(lines)


def test_checking_the_chain_before_an_append_holds_one_row_not_the_ledger(project: Project) -> None:
    """Every verdict checks the whole chain before it appends; it read the ledger whole, split it and kept every
    row, decoded and typed: about nine times the file (1.3 GB at 100,000 rows), so a ledger of a few GB stopped
    the verdict for want of memory. Now a row at a time: the peak stays far under the file's size."""
    size = long_ledger(project, 3000)
    tracemalloc.start()
    try:
        ledger.check_appendable(project)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 4, (peak, size)
    assert ledger.append(project, _row(3001)).seq == 3001


def test_looking_a_run_or_a_card_up_and_reading_every_row_hold_one_row_not_the_ledger(project: Project) -> None:
    """`verdict`'s look-up of its run and the pick of a card's run read the ledger whole (350 MB held for a
    ledger of 200,000 rows, by every verdict), and `ledger`'s rows were all held; now a line at a time."""
    size = long_ledger(project, 3000)
    tracemalloc.start()
    try:
        found = ledger.row_of_run(project, "run-2999")
        missing = ledger.row_of_run(project, "run-3001"), ledger.card_rows(project, "other")
        counted = sum(1 for _ in ledger.rows(project))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 4, (peak, size)
    assert found is not None and found.seq == 2999
    assert missing == (None, [])
    assert counted == 3000


def test_a_ledger_that_is_a_folder_is_one_line_not_an_empty_ledger(project: Project) -> None:
    """Hostile audit (hostile21): results/ledger.jsonl made a folder read as a ledger with no rows: `ledger` said
    `no verdicts yet` and `ledger --verify` that the ledger's rows were deleted from its end. Each command says
    in one line what stands there."""
    ledger.append(project, ledger_row(run="r1"))
    path = project.ledger_path
    path.rename(path.with_name("kept.jsonl"))
    path.mkdir()
    for args in (["ledger"], ["ledger", "--verify"], ["ledger", "--json"]):
        result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", (
            "error: results/ledger.jsonl: not a regular file (a folder), where benchcard keeps one; move it aside "
            "and put the file back\n")), args
