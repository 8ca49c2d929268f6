"""Tests of blind scoring (src/benchcard/scoring/)."""
