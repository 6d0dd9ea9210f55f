"""simple-a2a: the Agent2Agent (A2A) protocol for Python, client and server in one package.

The public API is what this module re-exports; everything else is private.

``import simple_a2a`` loads the protocol models only; the client's and the server's names load
on first use (PEP 562 ``__getattr__``), so a program that only serves never imports the HTTP
client's dependencies, one that only calls agents never imports Starlette or uvicorn, and
neither pays for the other at start-up (issue #19).
"""

import importlib
from typing import TYPE_CHECKING, Any

from .protocol import *  # noqa: F403
from .protocol import __all__ as _protocol_names

# ``simple_a2a.server`` and ``simple_a2a.client`` are the subpackages, and they are callable:
# ``simple_a2a.server(card, executor)`` and ``simple_a2a.client(url)`` (the seed's API) call the
# functions of the same name, and ``import simple_a2a.server`` gives the package, as expected.
# Type checkers see the functions (a callable module has no static type).
if TYPE_CHECKING:
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
    from .server import A2AServer as A2AServer
    from .server import AgentExecutor as AgentExecutor
    from .server import Fail as Fail
    from .server import MultiServer as MultiServer
    from .server import RequestContext as RequestContext
    from .server import Rerun as Rerun
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
    "Fail",
    "MultiServer",
    "RequestContext",
    "Rerun",
    "agent",
    "multi_server",
    "server",
]

#: public name -> the subpackage that defines it, imported on first use
_LAZY = {**dict.fromkeys(_client_names, "client"), **dict.fromkeys(_server_names, "server")}


def __getattr__(name: str) -> Any:
    package = _LAZY.get(name)
    if package is None:
        raise AttributeError(f"module 'simple_a2a' has no attribute {name!r}")
    module = importlib.import_module(f".{package}", __name__)
    value = module if name == package else getattr(module, name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [*_protocol_names, *_client_names, *_server_names, "__version__"]
