"""Stage 4, publishing: the static site (pages, plots, templates, static files) from cards, runs and the ledger.

May import every lower stage; nothing imports it but the CLI.
"""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["build", "compareplots", "serve"]
