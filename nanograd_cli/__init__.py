"""nanograd: differentiate expressions from the command line or from Python."""

from .engine import Value
from .language import parse

__version__ = "0.1.0"
__all__ = ["Value", "__version__", "parse"]
