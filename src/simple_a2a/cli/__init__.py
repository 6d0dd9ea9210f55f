"""The ``simple-a2a`` command line (``simple-a2a --help``; reference in docs/cli.md).

This is the one module of the package that uses both the client and the server. Its libraries
(click, rich) are the ``cli`` extra, not core dependencies: this module is the console script's
entry point and imports them only when the command runs, so without them ``simple-a2a`` prints
how to install them instead of a traceback (issue #19). ``cli`` and ``ExitCode`` load on first
use (PEP 562).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands import cli as cli
    from .errors import ExitCode as ExitCode

__all__ = ["ExitCode", "cli", "main"]

MISSING_EXTRA = "the simple-a2a command needs the cli extra: pip install 'simple-a2a[cli]'"
USAGE_ERROR = 2  # ExitCode.USAGE, without importing the client to say so

#: public name -> the module that defines it, imported on first use
_LAZY = {"cli": "commands", "ExitCode": "errors"}


def main() -> None:
    """The console script ``simple-a2a`` (and ``python -m simple_a2a.cli``)."""
    try:
        import click  # noqa: F401
        import rich  # noqa: F401
    except ImportError:
        print(f"error: {MISSING_EXTRA}", file=sys.stderr)
        raise SystemExit(USAGE_ERROR) from None
    from .commands import run

    run()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value
