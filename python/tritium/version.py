"""tritium's version (kept equal to pyproject.toml's), below every other module
so any of them can name it without importing the package."""
__version__ = "0.1.0"
