"""`python -m benchcard`: the same command line as `benchcard`."""

from benchcard.cli import main

main()
