"""Tests of the run stage (src/benchcard/run/)."""
