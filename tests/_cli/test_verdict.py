"""`benchcard verdict` and `compare` on the terminal: colour only on a terminal, FORCE_COLOR forces it, NO_COLOR
wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchcard.project import Project

from ..helpers_compare import LM_A, LM_B, bc
from ..helpers_verdict import STRONG_BASE, STRONG_VAR, ab_metrics, cli_run, make_run, the_card

ESC = "\x1b["


def test_piped_verdict_has_no_escape_codes(project: Project) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    result = cli_run(project, "verdict", run_dir.name)
    assert result.exit_code == 0, result.output
    assert "finding: win → result" in result.output
    assert ESC not in result.output


def test_forced_colour_paints_the_result_green_and_no_color_wins(project: Project,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = cli_run(project, "verdict", run_dir.name).output
    finding = next(line for line in out.splitlines() if "finding: win → result" in line)
    assert ESC in finding and "32m" in finding  # green
    monkeypatch.setenv("NO_COLOR", "1")
    shown = cli_run(project, "verdict", run_dir.name, "--show").output
    assert "finding: win → result" in shown and ESC not in shown


def test_compare_paints_its_finding_as_the_verdict_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`compare` prints through the same colour rules: its finding, which ends in `(unsealed comparison)`, was
    never painted."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    piped = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--out", str(tmp_path / "a"))
    assert piped.exit_code == 0 and ESC not in piped.stdout
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = bc("compare", str(LM_A), str(LM_B), "--win", "acc rises", "--out", str(tmp_path / "b")).stdout
    finding = next(line for line in out.splitlines() if "finding: inconclusive → non-result" in line)
    assert ESC in finding and "33m" in finding and "(unsealed comparison)" in finding  # yellow


def test_a_log_named_with_a_newline_leaves_compares_header_one_line(tmp_path: Path) -> None:
    """Audit: the header names the two logs; a folder whose name holds a newline (or a tab) broke the line in
    two, and so did the one-line error that names such a log. Each line printed is one visible line, the
    newline shown as `\\n`."""
    logs = []
    for side, log in (("a\nforged: win → result", LM_A), ("b\tb", LM_B)):
        (tmp_path / side).mkdir()
        logs.append(tmp_path / side / log.name)
        logs[-1].write_bytes(log.read_bytes())
    refused = bc("compare", str(logs[0]), str(logs[1]), "--win", "acc rises")  # the label read from the folder
    assert refused.exit_code == 1 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert "/a\\nforged: win → result/" in refused.stderr
    result = bc("compare", str(logs[0]), str(logs[1]), "--win", "acc rises", "--out", str(tmp_path / "out"),
                "--name", "A=a", "--name", "B=b")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert not any(line.startswith("forged") for line in lines), result.stdout
    assert "a\\nforged: win → result" in lines[0] and "b\\tb" in lines[0] and "\t" not in result.stdout


def test_a_gated_verdict_is_the_verdict_then_its_gate_in_words_and_under_json(project: Project) -> None:
    """`verdict` through the one report protocol: `--gate` adds its line after exactly what the verdict prints,
    and under --json its decision beside exactly verdict.json's fields; the exit code is the gate's."""
    run_dir = make_run(project, the_card(project), ab_metrics(STRONG_BASE, STRONG_VAR))
    given = cli_run(project, "verdict", run_dir.name)
    assert given.exit_code == 0 and given.stdout.splitlines()[:3] == [
        f"extract-ab v1 · run {run_dir.name} · test/model-1 · effort high · Test API",
        "A raised field_recall from 0.458 to 0.792 (+0.333, 95 % CI [0.107, 0.560]), paired over 6 of 6 fixtures; "
        "every clause holds → result",
        "finding: win → result"]
    shown = cli_run(project, "verdict", run_dir.name, "--show")
    assert shown.stdout == given.stdout
    gated = cli_run(project, "verdict", run_dir.name, "--show", "--gate")
    assert (gated.exit_code, gated.stdout) == (0, given.stdout + "gate: win → exit 0\n")
    as_json = cli_run(project, "verdict", run_dir.name, "--show", "--gate", "--json")
    data = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
    gate = {"run": run_dir.name, "finding": "win", "code": 0, "passed": True, "why": "gate: win → exit 0"}
    assert as_json.stdout == json.dumps(data | {"gate": gate}, indent=2, ensure_ascii=False) + "\n"
