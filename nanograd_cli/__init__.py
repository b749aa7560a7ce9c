"""nanograd: differentiate expressions from the command line or from Python."""

from .engine import Value

__version__ = "0.1.0"
__all__ = ["Value", "__version__", "parse"]


def __getattr__(name: str):
    # The parser is imported when first asked for, so that `python -m nanograd_cli.grammar`
    # can regenerate its tables without having imported them already.
    if name == "parse":
        from .language import parse

        return parse
    raise AttributeError(f"module 'nanograd_cli' has no attribute {name!r}")
