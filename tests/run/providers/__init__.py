"""Tests of the providers (src/benchcard/run/providers/)."""
