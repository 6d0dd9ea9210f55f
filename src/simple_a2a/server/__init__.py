"""The server room: executor API, request handler, task manager and the HTTP bindings."""

from .app import A2AServer, server
from .context import CallContext, Caller, CancelSignal, RequestContext, TaskHandle
from .executor import AgentExecutor, agent
from .handler import RequestHandler
from .limits import Limits
from .multi import MultiServer, multi_server
from .tasks import StreamItem, TaskManager

__all__ = [
    "A2AServer",
    "AgentExecutor",
    "CallContext",
    "Caller",
    "CancelSignal",
    "Limits",
    "MultiServer",
    "RequestContext",
    "RequestHandler",
    "StreamItem",
    "TaskHandle",
    "TaskManager",
    "agent",
    "multi_server",
    "server",
]
