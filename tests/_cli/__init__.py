"""Tests of the command line (src/benchcard/_cli/)."""
