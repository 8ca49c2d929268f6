"""The ledger as `benchcard ledger` shows it (_cli/ledger.py): a table of the rows, wide or narrow, a line
when there are none, the runs left unfinished below it, and the line `--repair` prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner
from msgspec import UnsetType

from benchcard._cli.ledger import repair_line
from benchcard._util.text import terminal_line
from benchcard.cli import cli
from benchcard.project import Project
from benchcard.publish.build import build_site
from benchcard.records import ledger
from benchcard.records.ledgerrow import LedgerRow, RowLooks
from benchcard.testing.fakeserver import FakeServer
from benchcard.verdict.give import give_verdict

from ..helpers_project import ledger_row, long_ledger
from ..helpers_run import bc, only_run
from ..helpers_sequential import clear_win, sequential_ab
from ..helpers_site import page
from ..helpers_verdict import ab_metrics, make_run, the_card


def _row(i: int, **extra: Any) -> LedgerRow:
    fields: dict[str, Any] = {"run": f"run-{i}", "metrics": {"score": {"gap": 0.1 * i}}, **extra}
    return ledger_row(**fields)


@pytest.fixture
def empty(tmp_path: Path) -> Project:
    (tmp_path / "cards").mkdir()
    return Project(tmp_path)


def _shown(project: Project) -> str:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger"])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_wide_table_has_a_column_each_and_a_compare_row_is_unsealed(empty: Project,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: the wide table
    ledger.append(empty, _row(1, finding="win", outcome="result"))
    ledger.append(empty, _row(2, kind="compare", version=None, card="model-a vs model-b"))
    lines = _shown(empty).splitlines()
    header = next(line for line in lines if "seq" in line)
    for col in ("seq", "date", "card", "version", "rig", "finding", "outcome", "run"):
        assert col in header, col
    first = next(line for line in lines if "run-1" in line)
    second = next(line for line in lines if "run-2" in line)
    assert "v1" in first and "win" in first and "result" in first and "m · effort high · api" in first
    assert "unsealed" in second and "model-a vs model-b" in second and "v1" not in second


def _probe_fields(i: int, gate: bool = True) -> dict[str, Any]:
    """A probe row's fields (a third of them with no gate, as rows entered before verdicts recorded it)."""
    from msgspec import UNSET

    from benchcard.records.ledgerrow import GateFigures

    sealed = GateFigures(min_score=0.8, decision="pass" if i % 2 else "below", held=0.6 + 0.01 * (i % 20))
    return {"kind": "probe", "finding": "scored", "outcome": "result", "comparisons": UNSET, "metrics": UNSET,
            "clauses": UNSET, "model": "m", "score": 0.6 + 0.01 * (i % 20), "passes": 3, "score_ci": [0.2, 0.9],
            "rules": {}, "sealed_gate": sealed if gate and i % 3 else UNSET}


@pytest.mark.parametrize("columns", ["200", "80"])
def test_a_probe_row_shows_its_score_and_what_its_gate_decided(empty: Project, columns: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe's finding is `scored` whatever it scored: the table showed `scored · result` and nothing else. It
    now shows the score under the finding and, for a probe sealed with a gate, its min_score and the decision; a
    row entered before verdicts recorded the gate shows the score alone, and the chain of both verifies."""
    monkeypatch.setenv("COLUMNS", columns)
    ledger.append(empty, _row(1, **_probe_fields(1) | {"score": 0.9}))  # pass
    ledger.append(empty, _row(2, **_probe_fields(2) | {"score": 0.6}))  # below
    ledger.append(empty, _row(3, **_probe_fields(3, gate=False) | {"score": 0.75}))  # an older row: no gate
    shown = _shown(empty).splitlines()
    at = next(i for i, line in enumerate(shown) if "finding" in line)
    start = shown[at].index("finding")  # the finding column, wide (boxed) or narrow
    column = [line[start:].split("│")[0].split("  ")[0].strip() for line in shown[at + 1:] if len(line) > start]
    under = [] if columns == "200" else ["result"]  # narrow: the outcome under the finding
    assert [c for c in column if any(ch.isalnum() for ch in c)] == [
        "scored", "score 0.900", "gate min_score 0.8: pass", *under,
        "scored", "score 0.600", "gate min_score 0.8: below", *under,
        "scored", "score 0.750", *under]
    ledger.verify(empty)  # the chain, the new field's rows and the older row's alike
    rows = json.loads(CliRunner().invoke(cli, ["-C", str(empty.root), "ledger", "--json"]).stdout)
    assert [r.get("score") for r in rows] == [0.9, 0.6, 0.75]
    assert [r.get("sealed_gate") for r in rows] == [{"min_score": 0.8, "decision": "pass", "held": 0.61},
                                                    {"min_score": 0.8, "decision": "below", "held": 0.62}, None]


def test_an_empty_ledger_says_so(empty: Project) -> None:
    assert _shown(empty).splitlines() == ["results/ledger.jsonl: no verdicts yet"]


def test_a_run_left_unfinished_is_listed_below_the_table_with_how_to_finish_it(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(), finished=False)
    lines = _shown(project).splitlines()
    assert lines[0] == "results/ledger.jsonl: no verdicts yet"
    assert lines[1].startswith(f"extract-ab v1 · run {run_dir.name}: ")
    assert lines[1].endswith(f" — benchcard run extract-ab --resume {run_dir.name}")


def test_the_repair_line_names_the_side_file_or_says_nothing_was_torn(empty: Project) -> None:
    assert repair_line(empty, None) == "nothing to repair: the ledger's last line is whole"
    side = empty.results_dir / "ledger.torn-2026-12-01.jsonl"
    assert repair_line(empty, side) == ("moved the torn last line to results/ledger.torn-2026-12-01.jsonl; the "
                                        "ledger ends at its last whole row")


def test_the_table_keeps_card_names_whole_at_80_columns(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["one-word-sentiment", "demo-answer-cue", "reordered-input-long-name"]
    for i, name in enumerate(names, 1):
        ledger.append(project, _row(i, card=name, run=f"20261201T1200{i:02d}Z-3f9a",
                                    rig="SmolLM2-135M-Instruct · llama-cpp-python in-process"))
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    for i, name in enumerate(names, 1):
        assert any(name in line for line in lines), name  # whole, on one line
        assert any(f"20261201T1200{i:02d}Z-3f9a" in line for line in lines)
    assert "SmolLM2-135M-Instruct" in result.output  # the rig, under the card name



def test_the_table_says_where_a_sequential_run_stopped_as_the_ledger_page_does(
        tmp_path: Path, server: FakeServer, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchcard ledger` showed a sequential run stopped at its first look as `win · result` and nothing more,
    where the ledger page and `ledger --json` say the stop and the calls saved; the table now says it under the
    row's outcome, in the page's words, and at 80 columns under the card and its rig, wrapped between its words
    rather than cropped."""
    server.configure(clear_win())
    project = sequential_ab(tmp_path / "proj", server.base_url)
    assert bc(project, "run", "colour-ab").exit_code == 0
    folder = only_run(project, "colour-ab")
    assert bc(project, "verdict", folder.name).exit_code == 0
    stop = "stopped at look 1 of 3: win; 96 of 288 calls (67 % saved)"
    build_site(project, tmp_path / "site")
    lines = page(tmp_path / "site", "ledger.html").lines()
    assert lines[lines.index("result · win") + 1] == stop  # the page's words
    monkeypatch.setenv("COLUMNS", "200")
    shown = _shown(project).splitlines()
    row = next(i for i, line in enumerate(shown) if folder.name in line)
    assert [c.strip() for c in shown[row].split("│")[6:8]] == ["win", "result"]
    assert [c.strip() for c in shown[row + 1].split("│")[1:-1]] == ["", "", "", "", "", "", stop, ""]
    monkeypatch.setenv("COLUMNS", "80")
    narrow = _shown(project)
    assert max(len(line) for line in narrow.splitlines()) <= 80 and folder.name in narrow
    head = next(line for line in narrow.splitlines() if "finding" in line)
    column = [line[head.index("card · rig"):head.index(" v ")].strip() for line in narrow.splitlines()[4:]]
    rig = json.loads(project.ledger_path.read_text(encoding="utf-8"))["rig"]
    assert " ".join(c for c in column if c) == f"colour-ab {rig} {stop}"  # under the rig, wrapped between words


@pytest.mark.parametrize("columns", ["200", "121", "80", "60"])
def test_a_fixed_runs_row_is_drawn_as_before_beside_a_sequential_one_or_without(
        empty: Project, columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of fixed design keeps no looks: its row says nothing of them, and a ledger of such rows alone is drawn
    as before the stops were shown, its outcome never wrapped; beside a stop, its finding stays whole (a stop under
    the narrow table's finding, that column wrapping, cut `inconclusive` to `inconclu…` at 60 columns)."""
    monkeypatch.setenv("COLUMNS", columns)
    for i in (1, 2):
        ledger.append(empty, _row(i, run=f"20261201T12000{i}Z-3f9a", card="colour-ab", finding="inconclusive",
                                  rig="claude-fable-5-1 · effort high · Claude API"))
    alone = _shown(empty)
    assert "inconclusive" in alone and "inconclu…" not in alone and "look" not in alone
    looks = RowLooks(look=1, looks=3, decision="win", cells=96, planned=288, saved=0.6667)
    ledger.append(empty, _row(3, run="20261201T120003Z-3f9a", looks=looks, finding="win", outcome="result"))
    beside = _shown(empty)
    assert beside.count("look") == 1 and "inconclusive" in beside
    if columns == "200":
        before = [line for line in alone.splitlines() if "20261201T120001Z" in line]
        after = [line for line in beside.splitlines() if "20261201T120001Z" in line]
        assert [c.strip() for c in after[0].split("│")] == [c.strip() for c in before[0].split("│")]


EVIL = "m\x1b[2J\x1b]52;c;SGVsbG8=\x07\x9b31m"


@pytest.mark.parametrize("columns", ["200", "80"])
def test_a_row_edited_to_hold_terminal_escapes_is_shown_never_run(empty: Project, columns: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile audit: a row edited by hand (a cloned repository's ledger) could clear the screen or set the
    clipboard (OSC 52) when `benchcard ledger` drew it; its control characters are printed as escapes."""
    monkeypatch.setenv("COLUMNS", columns)
    ledger.append(empty, _row(1, rig=EVIL, card="demo\x1b[31m"))
    shown = _shown(empty)
    assert not any(ch in shown for ch in "\x1b\x07\x9b"), repr(shown)
    assert "\\x1b[2J" in shown.replace("\n", "").replace("│", "").replace(" ", "") and "\\x1b[31m" in shown


def test_ledger_json_escapes_every_control_character(empty: Project) -> None:
    ledger.append(empty, _row(1, rig=EVIL))
    result = CliRunner().invoke(cli, ["-C", str(empty.root), "ledger", "--json"])
    assert result.exit_code == 0, result.output
    assert not any(ch in result.output for ch in "\x1b\x07\x9b")
    assert json.loads(result.output)[0]["rig"] == EVIL


@pytest.mark.parametrize("args", [("--json",), ()])
def test_a_row_that_does_not_read_is_one_error_line_before_any_output(empty: Project, args: tuple[str, ...]) -> None:
    """`ledger --json` streams its rows; a row edited into something that does not read (line 2 of 3) wrote half a
    JSON list to stdout before the error (a `> rows.json` left a file no reader takes). Nothing is written then."""
    for i in (1, 2, 3):
        ledger.append(empty, _row(i))
    lines = empty.ledger_path.read_text(encoding="utf-8").splitlines(keepends=True)
    empty.ledger_path.write_text("".join([lines[0], "not json\n", lines[2]]), encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(empty.root), "ledger", *args])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "error: results/ledger.jsonl: line 2 is not JSON (an edited row)\n"


@pytest.mark.parametrize("columns", ["200", "80"])
def test_a_cell_holding_a_newline_or_a_tab_stays_one_visible_line(empty: Project, columns: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Audit: a newline in a cell (a row edited by hand, a model name) broke the table's row in two; every cell is
    one visible line, the newline shown as `\\n`, a tab as `\\t`, a line separator as `\\u2028`; --json is exact."""
    monkeypatch.setenv("COLUMNS", columns)
    rig = "m\nforged row\tx"
    ledger.append(empty, _row(1, rig=rig, card="demo\u2028b", finding="win\r\nloss"))
    shown = _shown(empty)
    assert not any(ch in shown for ch in "\t\r\u2028"), repr(shown)
    assert not any(line.strip(" │┃").startswith("forged row") for line in shown.splitlines()), shown
    assert any("m\\nforged row\\tx" in line for line in shown.splitlines()), shown
    assert any("demo\\u2028b" in line for line in shown.splitlines()), shown
    assert any("win\\x0d\\nloss" in line for line in shown.splitlines()), shown
    as_json = CliRunner().invoke(cli, ["-C", str(empty.root), "ledger", "--json"])
    assert json.loads(as_json.output)[0]["rig"] == rig


@pytest.mark.parametrize("columns", ["200", "80"])
def test_a_cell_that_reads_as_rich_markup_is_shown_as_written(empty: Project, columns: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: the table's cells were rich markup, so a rig or card holding `[/red]` stopped `benchcard ledger`
    with rich's MarkupError, and `[link=…]` would have made a hyperlink; every cell is text as written."""
    monkeypatch.setenv("COLUMNS", columns)
    rig = "m [/red] [link=https://example.invalid]x[/link]"
    ledger.append(empty, _row(1, rig=rig, card="demo[bold]", run="run-[/]1"))
    shown = _shown(empty)
    squeezed = shown.replace("\n", "").replace("│", "").replace(" ", "")
    assert "[/red]" in shown and "[link=https://example.invalid]x[/link]" in squeezed  # the rig may wrap at 80
    assert "demo[bold]" in shown and "run-[/]1" in shown


def _core_calls(project: Project, *args: str) -> list[str]:
    """The functions of benchcard's stages that `benchcard ledger ARGS` calls from its own code (`_cli/`): a module's
    functions, not a result's methods or properties, nor `project.py` and `_util/`, which every command shares."""
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        caller = frame.f_back
        if event != "call" or caller is None or not caller.f_globals.get("__name__", "").startswith("benchcard._cli"):
            return
        module, code = frame.f_globals.get("__name__", ""), frame.f_code
        stage = module.split(".")[1] if module.startswith("benchcard.") else None
        if stage not in (None, "_cli", "_util", "project", "errors") and "." not in code.co_qualname:
            called.append(f"{module}.{code.co_name}")

    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(cli, ["-C", str(project.root), "ledger", *args])
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.output
    return called


@pytest.mark.parametrize("args", [(), ("--json",), ("--verify",), ("--repair",)])
def test_each_way_of_the_ledger_command_calls_one_core_function(project: Project, args: tuple[str, ...]) -> None:
    """Audit: the command composed two reads (the rows, then the runs left unfinished) and formatted --verify's
    report with a second function; the command line parses, calls one core function and prints."""
    give_verdict(project, make_run(project, the_card(project), ab_metrics()))
    make_run(project, the_card(project), ab_metrics(), finished=False)
    assert len(_core_calls(project, *args)) == 1, _core_calls(project, *args)


def test_a_row_edited_to_hold_a_lone_surrogate_is_shown_and_verified_not_a_traceback(empty: Project) -> None:
    """A ledger row edited by hand (or by a disk) to hold a lone surrogate's JSON escape (`"demo\\ud800"`, which no
    UTF-8 text can hold) ended `benchcard ledger`, `ledger --json` and `ledger --verify` (the command that names
    such an edit) in a UnicodeEncodeError traceback on a UTF-8 terminal, as on any. The character is shown as
    its escape, as a control character is, and --json stays JSON, the same data."""
    ledger.append(empty, _row(1, card="demo"))
    path = empty.ledger_path
    path.write_bytes(path.read_bytes().replace(b'"card":"demo"', b'"card":"demo\\ud800"'))
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", "COLUMNS": "200"}

    def bc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "benchcard", "-C", str(empty.root), "ledger", *args],
                              capture_output=True, text=True, env=env, timeout=120, check=False)

    shown, as_json, verified = bc(), bc("--json"), bc("--verify")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "demo\\ud800" in shown.stdout, shown.stdout
    assert as_json.returncode == 0 and json.loads(as_json.stdout)[0]["card"] == "demo\ud800", as_json.stderr
    assert (verified.returncode, verified.stdout) == (1, ""), verified.stderr
    assert verified.stderr == ("error: results/ledger.jsonl: seq 1 (line 1) is the first bad row: its content does "
                               "not match its hash (the row was edited)\n")


HELD = """
import contextlib, os, sys, tracemalloc
from benchcard.cli import cli
def ledger(root):
    with contextlib.suppress(SystemExit):
        cli.main(["-C", root, "ledger", *sys.argv[3:]], prog_name="benchcard")
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    ledger(sys.argv[1])  # once on a ledger of one row: what is imported on first use is not counted
tracemalloc.start()
ledger(sys.argv[2])
print(tracemalloc.get_traced_memory()[1], file=sys.stderr)
"""


@pytest.mark.parametrize("args", [(), ("--json",), ("--verify",)])
def test_listing_or_verifying_a_long_ledger_holds_a_piece_of_it_not_the_whole(empty: Project, tmp_path: Path,
                                                                                args: tuple[str, ...]) -> None:
    """`benchcard ledger` held every row it listed (5 GB for `--json` of a ledger of 200,000 rows, 2.5 GB for the
    table) and `--verify` every row it checked; each now reads a row at a time and draws the table a piece at a
    time. The peak of Python's allocations, the output going to a file, stays far under the ledger's size. The
    table's pieces peak at 1.0 to 1.7 MB (1,000 to 6,000 rows), so it is drawn of 6,000 rows (4.7 MB); `--json`
    and `--verify` peak at 0.1 to 0.2 MB, so 2,000 rows (1.6 MB) hold them to it for half the CPU."""
    rows = 6000 if args == () else 2000
    size = long_ledger(empty, rows, runs=args != ("--verify",))
    warm = Project(tmp_path / "warm")
    (warm.root / "cards").mkdir(parents=True)
    long_ledger(warm, 1)
    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as fh:
        done = subprocess.run([sys.executable, "-c", HELD, str(warm.root), str(empty.root), *args], stdout=fh,
                              stderr=subprocess.PIPE, text=True, timeout=300, check=False,
                              env={**os.environ, "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"})
    peak = int(done.stderr.splitlines()[-1])
    assert peak < size / 2, (peak, size, done.stderr[-2000:])  # whole, it was 7 to 14 times the size
    shown = out.read_text(encoding="utf-8")
    if args == ("--json",):
        assert [row["seq"] for row in json.loads(shown)] == list(range(1, rows + 1))
    elif args == ("--verify",):  # the first row names a run whose folder this test does not write
        assert shown.splitlines()[-1].startswith(f"ledger NOT ok: {rows} row(s), hash chain intact, 1 problem(s)")
    else:
        assert [line.split("│")[1].strip() for line in shown.splitlines()[4:-1]] == [str(n) for n in range(1, rows + 1)]


READS = """
import contextlib, os, sys
from benchcard.cli import cli
ledger = os.path.realpath(os.path.join(sys.argv[2], "results", "ledger.jsonl"))
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) and os.path.realpath(args[0]) == ledger:
        opened.append(args[0])
def read():
    with open("/proc/self/io") as fh:
        return int(next(line for line in fh if line.startswith("rchar:")).split()[1])
def table(root):
    with contextlib.suppress(SystemExit):
        cli.main(["-C", root, "ledger"], prog_name="benchcard")
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    table(sys.argv[1])  # once on a ledger of one row: what is imported on first use is not counted
sys.addaudithook(hook)
before = read()
table(sys.argv[2])
print(len(opened), read() - before, file=sys.stderr)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="the bytes a process read are counted by Linux")
def test_the_table_reads_the_ledger_once(empty: Project, tmp_path: Path) -> None:
    """The table read the ledger twice, once for each column's widest cell and once for the rows; it now reads it
    once, keeping the texts each row shows (`_Kept`). Counted in a process of its own: the opens of the ledger (an
    audit hook) and the bytes read (/proc/self/io)."""
    size = long_ledger(empty, 3000)
    warm = Project(tmp_path / "warm")
    (warm.root / "cards").mkdir(parents=True)
    long_ledger(warm, 1)
    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as fh:
        done = subprocess.run([sys.executable, "-c", READS, str(warm.root), str(empty.root)], stdout=fh,
                              stderr=subprocess.PIPE, text=True, timeout=300, check=False,
                              env={**os.environ, "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"})
    opens, read = (int(x) for x in done.stderr.split()[-2:])
    assert opens == 1 and read < 1.2 * size, (opens, read, size, done.stderr[-2000:])  # twice: 2.0 × the size
    shown = out.read_text(encoding="utf-8")
    assert [line.split("│")[1].strip() for line in shown.splitlines()[4:-1]] == [str(n) for n in range(1, 3001)]


@pytest.mark.parametrize("stops", [False, True])
@pytest.mark.parametrize("width", [200, 121, 100, 60, 30])
def test_the_table_drawn_a_piece_at_a_time_is_the_table_rich_draws_whole(width: int, stops: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 2 rows, at the widths read off rich's own layout of the widest cells, joined without a seam:
    byte for byte the table rich draws of every row at once, wide or narrow, and where the terminal is too narrow
    for the cells and rich wraps and shrinks columns (at 30, one shrinks past its padding and the table is drawn
    whole). No private part of rich is used to size them."""
    import io

    from rich.console import Console

    from benchcard._cli import ledger as shown

    rows = [_row(i, seq=i, card=f"card-{'x' * (i * 7 % 23)}", rig=f"model-{i} · effort high · " + "provider " * (i % 4),
                 finding="inconclusive" if i % 2 else "win", **({"looks": STOP} if i % 3 == 0 and stops else {}))
            for i in range(1, 8)]

    def drawn(draw: Any) -> str:
        out = io.StringIO()
        draw(Console(file=out, width=width, force_terminal=True, color_system="truecolor"))
        return out.getvalue()

    def whole(console: Console) -> None:
        narrow = console.width < shown.NARROW
        table = shown._table(narrow, max(len(terminal_line(r.card)) for r in rows),
                             stops=any(not isinstance(r.looks, UnsetType) for r in rows))
        for r in rows:
            cells, style = shown._cells_of(shown._kept(r), narrow)
            table.add_row(*cells, style=style)
        console.print(table)

    monkeypatch.setattr(shown, "CHUNK", 2)
    pieces = drawn(lambda console: shown._print_table(console, "ledger", lambda: iter(rows)))
    assert pieces == drawn(whole)
    assert pieces.count("non-result") == len(rows)  # every row drawn (at 30 columns, the card's shrinks to nothing)


STOP = RowLooks(look=2, looks=3, decision="futility", cells=192, planned=288, saved=0.3333)

AWKWARD = ["card-a", " spaced ", "", "模型-wide", "e\u0301-combining", "emoji-🙂", "a  two  spaces", "x" * 61,
           "[red]markup[/red]", "tab\there", "\u202egnirt"]


@pytest.mark.parametrize("stops", [False, True])
@pytest.mark.parametrize("colour", [True, False])
@pytest.mark.parametrize("width", [250, 160, 119, 80, 45])
def test_rows_drawn_from_a_row_of_their_shape_are_the_rows_rich_draws(width: int, colour: bool, stops: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows whose lines fit (or wrap in a column that wraps, kept whole) are drawn from rich's drawing of a row of
    `x`s of the same shape, the rest by rich: a ledger of awkward cells (spaces at the ends, empty, wide and
    combining characters, a line wider than the terminal, replications on two lines, every outcome, and with
    `stops` sequential runs' stops under their outcomes) is byte for byte rich's whole table."""
    import io

    from rich.console import Console

    from benchcard._cli import ledger as shown
    from benchcard.records.replication import ReplicaLink

    rows = []
    for i in range(1, 40):
        link = ReplicaLink(run=f"run-{i - 1}", hash="sha256:" + "b" * 64, seq=i - 1, evidence="e", transfer=i % 2 == 0)
        rows.append(_row(i, seq=i, date="2026-12-07", card=AWKWARD[i % len(AWKWARD)], rig=AWKWARD[i * 3 % len(AWKWARD)],
                         finding=AWKWARD[i * 5 % len(AWKWARD)] if i % 4 == 0 else "win",
                         outcome=("result", "non-result", "other", "")[i % 4],
                         kind="compare" if i % 9 == 0 else "ab", **({"replicates": link} if i % 3 == 0 else {}),
                         **({"looks": STOP} if i % 5 == 0 and stops else {})))
    rows += [_row(i, **{"seq": i, "date": "2026-12-07", "card": f"card-{i % 7}", "rig": "m",
                        "outcome": "result" if i % 2 else "non-result", **(_probe_fields(i) if i % 5 == 0 else {})})
             for i in range(40, 160)]  # a probe's score and gate under its finding, on two or three lines

    def drawn(draw: Any) -> str:
        out = io.StringIO()
        draw(Console(file=out, width=width, force_terminal=colour, color_system="truecolor" if colour else None))
        return out.getvalue()

    def whole(console: Console) -> None:
        narrow = console.width < shown.NARROW
        table = shown._table(narrow, max(len(terminal_line(r.card)) for r in rows),
                             stops=any(not isinstance(r.looks, UnsetType) for r in rows))
        for r in rows:
            cells, style = shown._cells_of(shown._kept(r), narrow)
            table.add_row(*cells, style=style)
        console.print(table)

    by_rich: list[int] = []
    drawing = shown._Drawn.by_rich

    def counted(self: Any, rows: list[Any], *, last: bool) -> Any:
        by_rich.extend(int(cells[0].plain) for cells, _ in rows if cells[0].plain not in ("x", "y"))  # not a probe
        return drawing(self, rows, last=last)

    monkeypatch.setattr(shown._Drawn, "by_rich", counted)
    fast = drawn(lambda console: shown._print_table(console, "ledger", lambda: iter(rows)))
    assert fast == drawn(whole)
    # the plain rows fit, or wrap in a column that wraps: each is drawn from a row of its shape, never by rich
    assert all(seq < 40 for seq in by_rich)
    assert by_rich or width < 160  # wide, an awkward cell that fits no column that wraps is drawn by rich
