"""simple-a2a: the Agent2Agent (A2A) protocol for Python, client and server in one package.

The public API is what this module re-exports; everything else is private.
"""

from .protocol import *  # noqa: F403
from .protocol import __all__ as _protocol_names

__version__ = "0.1.0"

__all__ = [*_protocol_names, "__version__"]
