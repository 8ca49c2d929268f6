"""The command line's door: `benchcard` (pyproject's script `benchcard.cli:main`) and the root group `cli` that
tests drive with click's CliRunner. The commands live in `benchcard._cli`, one module per command group."""

from benchcard._cli.main import cli, main

__all__ = ["cli", "main"]
