"""The package version (one copy; pyproject.toml carries the same number)."""

__version__ = "0.1.0"
