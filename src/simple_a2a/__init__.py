"""simple-a2a: the Agent2Agent (A2A) protocol for Python, client and server in one package.

The public API is what this module re-exports; everything else is private.
"""

# ``client`` (the function) deliberately shadows the ``simple_a2a.client`` package as an
# attribute; import the package's other names with ``from simple_a2a.client import ...``.
from .client import AsyncClient as AsyncClient
from .client import Client as Client
from .client import ClientError as ClientError
from .client import ClientTimeoutError as ClientTimeoutError
from .client import ConnectError as ConnectError
from .client import DiscoveryError as DiscoveryError
from .client import NegotiationError as NegotiationError
from .client import StreamInterruptedError as StreamInterruptedError
from .client import SyncClientInAsyncContextError as SyncClientInAsyncContextError
from .client import TransportError as TransportError
from .client import client as client
from .protocol import *  # noqa: F403
from .protocol import __all__ as _protocol_names

# ``server`` (the function) likewise shadows the ``simple_a2a.server`` package as an attribute.
from .server import A2AServer as A2AServer
from .server import AgentExecutor as AgentExecutor
from .server import MultiServer as MultiServer
from .server import RequestContext as RequestContext
from .server import agent as agent
from .server import multi_server as multi_server
from .server import server as server

__version__ = "0.1.0"

_client_names = [
    "AsyncClient",
    "Client",
    "ClientError",
    "ClientTimeoutError",
    "ConnectError",
    "DiscoveryError",
    "NegotiationError",
    "StreamInterruptedError",
    "SyncClientInAsyncContextError",
    "TransportError",
    "client",
]

_server_names = [
    "A2AServer",
    "AgentExecutor",
    "MultiServer",
    "RequestContext",
    "agent",
    "multi_server",
    "server",
]

__all__ = [*_protocol_names, *_client_names, *_server_names, "__version__"]
