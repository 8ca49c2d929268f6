"""The CLI as a user meets it: invoke `benchcard` on a project, and the shape of a user error."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from benchcard.cli import cli


def bc(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def one_line_error(result: Result) -> str:
    """A user error: exit 1, nothing on stdout, exactly one line on stderr starting `error:`, no traceback."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def exit_and_streams(project: Path, *args: str) -> tuple[int, str, str]:
    """`benchcard -C project args…` as (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, ["-C", str(project), *args])
    return result.exit_code, result.stdout, result.stderr
