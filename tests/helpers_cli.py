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
