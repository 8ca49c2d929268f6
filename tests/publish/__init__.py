"""Tests of the static site (src/benchcard/publish/)."""
