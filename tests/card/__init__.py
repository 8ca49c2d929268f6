"""Tests of the card stage (src/benchcard/card/)."""
