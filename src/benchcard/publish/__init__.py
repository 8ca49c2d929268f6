"""Stage 4, publishing: the static site (pages, plots, templates, static files) from cards, runs and the ledger.

May import every lower stage; nothing imports it but the CLI.
"""
