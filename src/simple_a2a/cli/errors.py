"""Exit codes of the ``simple-a2a`` command, and the one mapping from exceptions to them.

=====  ==========================================================================================
code   meaning
=====  ==========================================================================================
0      success
1      the task ended ``failed``, ``rejected`` or ``canceled`` (``send``, ``stream``, ``subscribe``)
2      usage error (bad option or argument; click's own code)
3      the agent answered with an A2A error (task not found, not cancelable, ...), or there is no
       usable A2A agent at the URL (no card, no interface this client speaks)
4      transport error: could not connect, timed out, the stream dropped for good
5      authentication error: the agent refused the credentials (401) or the permission (403)
6      ``serve`` could not listen on the address (in use, not permitted, unknown host)
70     internal error: a bug in simple-a2a (``SIMPLE_A2A_DEBUG=1`` prints the traceback)
130    interrupted (Ctrl-C)
=====  ==========================================================================================
"""

from __future__ import annotations

from enum import IntEnum

from simple_a2a.client import ClientError, DiscoveryError, NegotiationError, TransportError
from simple_a2a.protocol.errors import A2AError, AuthenticationError, PermissionDeniedError
from simple_a2a.protocol.models import TaskState

__all__ = ["ExitCode", "describe", "exit_code_for", "interrupted", "outcome_code"]


class ExitCode(IntEnum):
    OK = 0
    TASK_FAILED = 1
    USAGE = 2
    PROTOCOL = 3
    TRANSPORT = 4
    AUTH = 5
    CANNOT_LISTEN = 6
    INTERNAL = 70  # EX_SOFTWARE (sysexits.h)
    INTERRUPTED = 130


#: The task states that make ``send``, ``stream`` and ``subscribe`` exit with 1.
UNSUCCESSFUL = frozenset({TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED})


def interrupted(exc: BaseException) -> bool:
    """Ctrl-C, or an error raised while the program was unwinding from one."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code for an error raised while running a command."""
    if interrupted(exc):
        return ExitCode.INTERRUPTED
    if isinstance(exc, (AuthenticationError, PermissionDeniedError)):
        return ExitCode.AUTH
    if isinstance(exc, (A2AError, DiscoveryError, NegotiationError)):
        return ExitCode.PROTOCOL
    if isinstance(exc, (TransportError, ClientError)):
        return ExitCode.TRANSPORT
    return ExitCode.INTERNAL


def describe(exc: BaseException) -> str:
    """One short line for the user: the error's class and message (never a traceback)."""
    if interrupted(exc):
        return "interrupted"
    message = exc.message if isinstance(exc, A2AError) else str(exc)
    cause = exc.__cause__
    if not message and cause is not None:
        message = str(cause) or type(cause).__name__
    line = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if exit_code_for(exc) == ExitCode.INTERNAL:
        line = f"internal error (a bug; SIMPLE_A2A_DEBUG=1 shows the traceback): {line}"
    status = getattr(exc, "status_code", None)
    if (
        isinstance(exc, A2AError)
        and isinstance(status, int)
        and status >= 400
        and f"HTTP {status}" not in message
    ):
        line += f" (HTTP {status})"
    return line


def outcome_code(state: TaskState | None) -> ExitCode:
    """0, or 1 when the task ended failed, rejected or canceled."""
    return ExitCode.TASK_FAILED if state in UNSUCCESSFUL else ExitCode.OK
