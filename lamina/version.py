"""lamina's version, where every module can read it without the package's facade."""

__version__ = "0.1.0"
