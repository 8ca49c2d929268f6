"""Tests of the bottom layer's helpers (src/benchcard/_util/)."""
