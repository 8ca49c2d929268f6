"""Test support shipped with the package: the fake OpenAI/Anthropic server, the cards run against it, and
docs/ci.md's workflow run as a runner runs it.

Imports only `_util`."""

# The modules other stages, the command line, the API and the benchmarks import: the stage's surface
# (tests/test_architecture.py keeps it complete). A module not listed is this stage's own.
__all__ = ["cards", "cijob", "fakeserver"]
