"""benchcard: pre-registered, blind, sealed experiments on LLM prompts."""

from benchcard._util.version import __version__

__all__ = ["__version__"]
