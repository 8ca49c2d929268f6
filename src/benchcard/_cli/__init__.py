"""The command line: one module per command group (as inspect_ai's `_cli/` has), the root group and its error
boundary in `main.py`, and the one way every command reports in `common.py` (lines on the terminal, `--json`,
the colour rules). The only package that imports click; `benchcard.cli` is its door (the `benchcard` script).

May import everything.
"""

__all__ = ["main"]
