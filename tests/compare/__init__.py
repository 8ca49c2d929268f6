"""Tests of the verdict stage (src/benchcard/verdict/)."""
