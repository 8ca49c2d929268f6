"""The command line's own behaviour: its version and help, and the one boundary where any user error (a
BenchcardError, or a usage error click finds) becomes one line on stderr and exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from benchcard._util.version import __version__
from benchcard.cli import cli

from ..helpers_cli import bc, one_line_error


def test_version_and_help_exit_0_and_list_every_command() -> None:
    version = CliRunner().invoke(cli, ["--version"], prog_name="benchcard")
    assert version.exit_code == 0 and version.stdout == f"benchcard, version {__version__}\n"
    usage = CliRunner().invoke(cli, ["--help"], prog_name="benchcard")
    assert usage.exit_code == 0 and usage.stdout.startswith("Usage: benchcard [OPTIONS] COMMAND [ARGS]...")
    for command in ("check", "seal", "run", "verdict", "ledger", "site", "compare", "plan", "curl"):
        assert f"\n  {command} " in usage.stdout, command


@pytest.mark.parametrize(("args", "message"), [
    (["check", "--bogus"], "error: No such option '--bogus'. (see `benchcard check --help`)"),
    (["nosuch"], "error: No such command 'nosuch'. (see `benchcard --help`)"),
    (["verdict"], "error: Missing argument 'RUN'. (see `benchcard verdict --help`)"),
])
def test_a_usage_error_is_one_line_naming_the_help_to_read(args: list[str], message: str) -> None:
    assert one_line_error(CliRunner().invoke(cli, args, prog_name="benchcard")) == message


def test_a_folder_that_is_not_a_project_is_one_line_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert one_line_error(bc(empty, "check")) == (
        f"error: -C {empty}: not a benchcard project (no cards/ folder in {empty})")
