"""The version of fpt (the package face re-exports it as ``fpt.__version__``)."""

__version__ = "0.1.0"
