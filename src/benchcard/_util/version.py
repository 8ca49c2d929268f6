"""The package version, kept apart so that any module may import it without importing the public API."""

__version__ = "0.1.0"
