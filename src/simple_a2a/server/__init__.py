"""The server room: executor API, request handler, task manager and the HTTP bindings.

``simple_a2a.server`` is this package, and calling it is :func:`server` (the seed's API,
``simple_a2a.server(card, executor)``): the package is callable, so ``import simple_a2a.server``
gives the package and never a function in its place.
"""

import sys
import types
from typing import Any

from .app import A2AServer, server
from .context import CallContext, Caller, CancelSignal, RequestContext, TaskHandle
from .executor import AgentExecutor, agent
from .handler import RequestHandler
from .limits import Limits
from .multi import MultiServer, multi_server
from .policy import Fail, RecoveryPolicy, Rerun
from .tasks import StreamItem, TaskManager

__all__ = [
    "A2AServer",
    "AgentExecutor",
    "CallContext",
    "Caller",
    "CancelSignal",
    "Fail",
    "Limits",
    "MultiServer",
    "RecoveryPolicy",
    "RequestContext",
    "RequestHandler",
    "Rerun",
    "StreamItem",
    "TaskHandle",
    "TaskManager",
    "agent",
    "multi_server",
    "server",
]


class _CallablePackage(types.ModuleType):
    """This package's module type: calling it builds a server, as :func:`server` does."""

    def __call__(self, *args: Any, **options: Any) -> A2AServer:
        return server(*args, **options)


sys.modules[__name__].__class__ = _CallablePackage
