"""benchcard: pre-registered, blind, sealed experiments on LLM prompts."""

__version__ = "0.1.0"
