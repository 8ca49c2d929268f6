"""Tests of blind human grading (src/benchcard/grading/)."""
