"""The one way a command reports: its lines, or its JSON under --json; colour by the verdict's rules."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from benchcard._cli.common import Said, coloured, report

ESC = "\x1b["


def test_non_result_yellow_and_failed_clause_red() -> None:
    buf = io.StringIO()
    coloured(["finding: no effect → non-result", "  FAILS  the gap is not above 0", "plain",
              "finding: win → result (unsealed comparison)", "gap (a → result)"],
             Console(file=buf, force_terminal=True, color_system="standard", soft_wrap=True))
    got = buf.getvalue().splitlines()
    assert "33m" in got[0] and "31m" in got[1] and ESC not in got[2] and "32m" in got[3] and ESC not in got[4]


def test_a_report_is_its_lines_or_under_json_its_json_never_both(capsys: pytest.CaptureFixture[str]) -> None:
    done = Said({"path": Path("results/a"), "why": "naïve"}, ("set aside results/a", "  why: naïve"))
    report(done, as_json=False)
    assert capsys.readouterr().out == "set aside results/a\n  why: naïve\n"
    report(done, as_json=True)
    assert capsys.readouterr().out == '{\n  "path": "results/a",\n  "why": "naïve"\n}\n'
    report(done, as_json=True, ascii_only=True)  # `status`, as it always printed
    assert capsys.readouterr().out == '{\n  "path": "results/a",\n  "why": "na\\u00efve"\n}\n'


def test_lines_for_a_person_show_control_characters_as_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    """Hostile audit: text read from a file (a reply, a title, a hand-edited row) never drives the terminal;
    each line stays one visible line (audit: a newline inside one broke it in two, a tab jumped)."""
    hostile = ("reply: red\x1b[2J\x1b]52;c;SGVsbG8=\x07", "\tnext\r\x9b31m", "title: a\nb\u2028c")
    report(Said({}, hostile), as_json=False)
    assert capsys.readouterr().out == ("reply: red\\x1b[2J\\x1b]52;c;SGVsbG8=\\x07\n\\tnext\\x0d\\x9b31m\n"
                                       "title: a\\nb\\u2028c\n")
    buf = io.StringIO()
    coloured(["finding: x\x1b[2J → result"], Console(file=buf, force_terminal=True, color_system="standard"))
    assert "\\x1b[2J" in buf.getvalue() and "\x1b[2J" not in buf.getvalue()
    buf = io.StringIO()
    coloured(["finding: a\nb → result"], Console(file=buf, force_terminal=True, color_system="standard"))
    assert buf.getvalue().count("\n") == 1 and "a\\nb" in buf.getvalue()
