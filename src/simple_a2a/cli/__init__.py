"""The ``simple-a2a`` command line (``simple-a2a --help``; reference in docs/cli.md).

This is the one module of the package that uses both the client and the server. Its libraries
(click, rich) are the ``cli`` extra: ``pip install 'simple-a2a[cli]'``. Without them the command
says so and exits 2; ``cli`` (the click group) loads on first use.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import ExitCode

__all__ = ["ExitCode", "cli", "main"]

MISSING_EXTRA = (
    "simple-a2a: the command needs the cli extra (click and rich): pip install 'simple-a2a[cli]'"
)


def main() -> None:
    """The console script ``simple-a2a``."""
    try:
        from .main import main as run
    except ImportError as exc:
        if exc.name not in ("click", "rich") and not str(exc.name).startswith(("click.", "rich.")):
            raise
        print(f"{MISSING_EXTRA} ({exc.name} is not installed)", file=sys.stderr)
        raise SystemExit(int(ExitCode.USAGE)) from None
    run()


def __getattr__(name: str) -> Any:
    if name == "cli":  # the click group: needs the cli extra
        from .main import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
