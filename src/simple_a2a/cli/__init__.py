"""The ``simple-a2a`` command line (``simple-a2a --help``; reference in docs/cli.md).

This is the one module of the package that uses both the client and the server.
"""

from .errors import ExitCode
from .main import cli, main

__all__ = ["ExitCode", "cli", "main"]
