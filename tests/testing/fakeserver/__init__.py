"""Tests of the fake server (src/benchcard/testing/)."""
